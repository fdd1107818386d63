/**
 * pooltool's own clock on the CMAP events (src/mongo/checkout-setup-timer.ts): event
 * sequences as the driver's pool emits them, with timestamps chosen by the
 * test, and the driver's whole-millisecond durationMS beside them.
 */
import assert from 'node:assert/strict'
import {EventEmitter} from 'node:events'
import {describe, it, mock} from 'node:test'

import {CheckoutSetupTimer} from '../../src/mongo/checkout-setup-timer.js'
import type {MongoClient} from '../../src/mongo/driver.js'
import {PoolTelemetry} from '../../src/mongo/pool-telemetry.js'

const A = 'h1:27017'
/** The driver's durationMS for an interval: both ends floored to whole milliseconds. */
const driverMS = (from: number, to: number) => Math.floor(to) - Math.floor(from)
const close = (actual: number | undefined, expected: number) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `expected ${expected} ms, got ${actual}`)

describe('CheckoutSetupTimer: connection set-up', () => {
  it('times connectionCreated → connectionReady per connection id, below a millisecond', () => {
    const clock = new CheckoutSetupTimer()
    clock.connectionCreated(A, 1, 10.2)
    clock.connectionCreated(A, 2, 10.3)
    close(clock.connectionReady(A, 2, 10.75), 0.45)
    close(clock.connectionReady(A, 1, 11.9), 1.7)
  })

  it('keeps pools apart: the same id on another address is another connection', () => {
    const clock = new CheckoutSetupTimer()
    clock.connectionCreated(A, 1, 5)
    clock.connectionCreated('h2:27017', 1, 7)
    close(clock.connectionReady('h2:27017', 1, 7.5), 0.5)
    close(clock.connectionReady(A, 1, 9), 4)
  })

  it('does not guess a set-up whose start it did not see', () => {
    assert.equal(new CheckoutSetupTimer().connectionReady(A, 9, 3), undefined)
  })
})

describe('CheckoutSetupTimer: checkout wait', () => {
  it('an idle connection: the wait is sub-millisecond where the driver says 0', () => {
    const clock = new CheckoutSetupTimer()
    clock.checkOutStarted(A, 100.1)
    const wait = clock.checkedOut(A, 1, driverMS(100.1, 100.4), 100.4)
    close(wait, 0.3)
    assert.equal(clock.pendingCheckouts, 0)
    assert.equal(clock.unmatched, 0)
  })

  it('waiters on a busy pool are served oldest first', () => {
    const clock = new CheckoutSetupTimer()
    clock.checkOutStarted(A, 1.0)
    clock.checkOutStarted(A, 2.5)
    clock.checkOutStarted(A, 4.2)
    close(clock.checkedOut(A, 7, driverMS(1.0, 9.1), 9.1), 8.1)
    close(clock.checkedOut(A, 8, driverMS(2.5, 9.3), 9.3), 6.8)
    close(clock.checkedOut(A, 7, driverMS(4.2, 12.0), 12.0), 7.8)
    assert.equal(clock.pendingCheckouts, 0)
    assert.equal(clock.unmatched, 0)
  })

  it('a queue of 10,000 waiters (load far past maxPoolSize, 2 connections being created) is served in order, every wait exact', () => {
    const clock = new CheckoutSetupTimer()
    const waiters = 10_000
    for (let i = 0; i < waiters; i++) clock.checkOutStarted(A, i * 0.01)
    // The pool creates connections 101 and 102 for the two oldest waiters; the rest wait for check-ins.
    clock.connectionCreated(A, 101, 100)
    clock.connectionCreated(A, 102, 100)
    let now = 200
    // A reused connection frees up first: it goes to the oldest waiter with no connection (the third).
    close(clock.checkedOut(A, 7, driverMS(0.02, now), now), now - 0.02)
    close(clock.checkedOut(A, 102, driverMS(0.01, now), now), now - 0.01)
    close(clock.checkedOut(A, 101, driverMS(0, now), now), now)
    for (let i = 3; i < waiters; i++) {
      now += 0.05
      close(clock.checkedOut(A, 7, driverMS(i * 0.01, now), now), now - i * 0.01)
    }
    assert.deepEqual({pending: clock.pendingCheckouts, unmatched: clock.unmatched, disagreed: clock.disagreed}, {pending: 0, unmatched: 0, disagreed: 0})
  })

  it('a waiter the pool creates a connection for gets that connection, even when an older connection frees up for the next waiter first', () => {
    const clock = new CheckoutSetupTimer()
    clock.checkOutStarted(A, 1.0) // waiter 1: the pool starts connection 5 for it
    clock.connectionCreated(A, 5, 1.1)
    clock.checkOutStarted(A, 1.6) // waiter 2: waits for whatever comes first
    // Connection 3 is checked in and served to waiter 2 (the front of the queue) before 5 is ready.
    close(clock.checkedOut(A, 3, driverMS(1.6, 2.4), 2.4), 0.8)
    close(clock.connectionReady(A, 5, 6.0), 4.9)
    close(clock.checkedOut(A, 5, driverMS(1.0, 6.0), 6.0), 5.0)
    assert.equal(clock.unmatched, 0)
  })

  it('a failed connection creation fails the checkout of its own waiter', () => {
    const clock = new CheckoutSetupTimer()
    clock.checkOutStarted(A, 1.0)
    clock.connectionCreated(A, 5, 1.0)
    clock.checkOutStarted(A, 3.0)
    clock.connectionClosed(A, 5, 'error')
    close(clock.checkOutFailed(A, driverMS(1.0, 4.5), 4.5), 3.5)
    close(clock.checkedOut(A, 2, driverMS(3.0, 4.7), 4.7), 1.7)
    assert.equal(clock.unmatched, 0)
  })

  it('a waiter that times out is told from the one in front of it by the driver\'s durationMS', () => {
    const clock = new CheckoutSetupTimer()
    clock.checkOutStarted(A, 1.0)
    clock.checkOutStarted(A, 40.0)
    // The second waiter gives up after 20 ms (its own timeout) while the first still waits.
    close(clock.checkOutFailed(A, driverMS(40.0, 60.2), 60.2), 20.2)
    close(clock.checkedOut(A, 1, driverMS(1.0, 70.0), 70.0), 69.0)
    assert.equal(clock.unmatched, 0)
  })

  it('pairs in the pool\'s order when a pause shifted our reading off the driver\'s millisecond, and counts it', () => {
    const clock = new CheckoutSetupTimer()
    clock.checkOutStarted(A, 10.2)
    // The driver read 12 - 10 = 2 ms; a GC pause before our listener ran made it 17.5 here.
    assert.equal(clock.checkedOut(A, 1, 2, 17.5), 17.5 - 10.2)
    assert.equal(clock.unmatched, 0)
    assert.equal(clock.disagreed, 1)
    assert.equal(clock.pendingCheckouts, 0)
  })

  it('counts an end it cannot pair, and does not invent a start', () => {
    const clock = new CheckoutSetupTimer()
    assert.equal(clock.checkedOut(A, 1, 0, 5), undefined)
    assert.equal(clock.unmatched, 1)
  })
})

/** A stand-in for MongoClient: PoolTelemetry only uses on/off. */
const fakeClient = () => new EventEmitter() as unknown as MongoClient & EventEmitter

describe('PoolTelemetry', () => {
  it('records the own clock and the driver figure side by side; a driver 0 stays 0, not 1 µs', (t) => {
    const telemetry = new PoolTelemetry()
    const client = fakeClient()
    const detach = telemetry.attach(client)
    // The own clock, set: the checkout took 0.25 ms by it, which the driver rounds to 0 (a bound on the real clock
    // failed under load, when a pause fell between the two events).
    const now = mock.method(performance, 'now', () => 1000)
    t.after(() => now.mock.restore())
    client.emit('connectionCheckOutStarted', {address: A})
    now.mock.mockImplementation(() => 1000.25)
    client.emit('connectionCheckedOut', {address: A, connectionId: 1, durationMS: 0})
    now.mock.restore()
    assert.equal(telemetry.checkoutWaitDriverMS.totalCount, 1)
    assert.equal(telemetry.checkoutWaitDriverMS.maxValue, 0, 'the driver said 0 ms')
    assert.equal(telemetry.checkoutWaitUs.totalCount, 1)
    assert.equal(telemetry.checkoutWaitUs.maxValue, 250, 'own clock: 0.25 ms, in µs')
    assert.equal(telemetry.inUse, 1)
    detach()
    assert.equal(client.listenerCount('connectionCheckedOut'), 0, 'detach removes every listener')
    assert.equal(telemetry.unmatchedCheckouts, 0)
  })

  it("gives each series interval its own checkouts: those since the previous take, warm-up's dropped at resetCounters", async () => {
    const {checkoutWaitIntervals} = await import('../../src/bench/series-gauges.js')
    const telemetry = new PoolTelemetry()
    const client = fakeClient()
    telemetry.attach(client)
    const checkout = (id: number) => {
      client.emit('connectionCheckOutStarted', {address: A})
      client.emit('connectionCheckedOut', {address: A, connectionId: id, durationMS: 0})
    }
    const interval = checkoutWaitIntervals(telemetry)
    checkout(1) // warm-up
    telemetry.resetCounters()
    checkout(2)
    checkout(3)
    assert.equal(interval().totalCount, 2)
    checkout(4)
    assert.equal(interval().totalCount, 1)
    assert.equal(interval().totalCount, 0)
    assert.equal(telemetry.checkoutWaitUs.totalCount, 3, 'the cumulative histogram keeps every measured checkout')
  })
})
