/**
 * The open-loop dispatcher (src/bench/slot-dispatcher.ts): slots start in order, never more than the cap at once,
 * a returning operation starts the next due slot itself, nothing at or after the interval's end starts, and at a
 * stop every slot of the interval that never started is in exactly one unstarted range with its reason.
 * Schedules here start in the past, so the slots are due at once and no test waits on a clock.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {SlotDispatcher} from '../../src/bench/slot-dispatcher.js'
import {SlotSchedule} from '../../src/bench/stages.js'

/** An operation the test finishes by hand. */
function manualOperations() {
  const started: number[] = []
  const finishers = new Map<number, () => void>()
  const start = (slot: number): Promise<void> => {
    started.push(slot)
    return new Promise<void>((resolve) => finishers.set(slot, resolve))
  }
  const finish = async (slot: number): Promise<void> => {
    finishers.get(slot)!()
    // The dispatcher hears of it on the promise's continuation.
    await Promise.resolve()
    await Promise.resolve()
  }
  return {started, start, finish}
}

/** 1,000 slots per second, the first `dueMs` ms ago: slots 0 … dueMs are due now. */
const scheduleDue = (dueMs: number) => new SlotSchedule([{at: performance.now() - dueMs, ratePerSec: 1000}])

describe('open-loop dispatcher', () => {
  it('starts due slots in order up to the cap, and the next one as each operation returns', async () => {
    const ops = manualOperations()
    const dispatcher = new SlotDispatcher(scheduleDue(100), 3, () => Number.POSITIVE_INFINITY, ops.start)
    dispatcher.release()
    assert.deepEqual(ops.started, [0, 1, 2])
    assert.equal(dispatcher.inFlight, 3)
    await ops.finish(1)
    assert.deepEqual(ops.started, [0, 1, 2, 3], 'a returning operation starts the next due slot itself')
    await ops.finish(0)
    await ops.finish(3)
    assert.deepEqual(ops.started, [0, 1, 2, 3, 4, 5])
    assert.equal(dispatcher.latestStartedSlot, 5)
    dispatcher.stop(false)
  })

  it('starts nothing scheduled at or after the end, and is idle once stopped with nothing in flight', async () => {
    const ops = manualOperations()
    // Slots 0 … 100 are due; the interval ends just after slot 4's time.
    const schedule = scheduleDue(100)
    const dispatcher = new SlotDispatcher(schedule, 50, () => schedule.slotTime(4) + 0.5, ops.start)
    dispatcher.release()
    assert.deepEqual(ops.started, [0, 1, 2, 3, 4])
    let idle = false
    void dispatcher.idle.then(() => (idle = true))
    dispatcher.stop(true)
    for (const slot of ops.started) await ops.finish(slot)
    assert.equal(idle, true)
    assert.deepEqual(dispatcher.unstarted(0, 5, false), [])
  })

  it('at the natural end starts the due slots the cap has room for, and counts the rest as waiting on the full cap', async () => {
    const ops = manualOperations()
    let endAt = Number.POSITIVE_INFINITY
    const schedule = scheduleDue(100)
    const dispatcher = new SlotDispatcher(schedule, 2, () => endAt, ops.start)
    dispatcher.release()
    await ops.finish(0)
    assert.deepEqual(ops.started, [0, 1, 2])
    endAt = schedule.slotTime(10)
    await ops.finish(1)
    dispatcher.stop(true)
    assert.deepEqual(ops.started, [0, 1, 2, 3])
    assert.deepEqual(dispatcher.unstarted(0, 10, false), [{first: 4, end: 10, reason: 'inFlightCapFull'}])
    await ops.finish(2)
    assert.deepEqual(ops.started, [0, 1, 2, 3], 'nothing starts after the stop')
  })

  it('a stop request: the due slots the cap had room for are interrupted, the rest waited on the dispatcher', () => {
    const ops = manualOperations()
    const schedule = scheduleDue(100)
    let endAt = schedule.slotTime(2)
    const dispatcher = new SlotDispatcher(schedule, 4, () => endAt, ops.start)
    dispatcher.release()
    assert.deepEqual(ops.started, [0, 1])
    // The interval grows (as when measuring begins), but the stop comes before the dispatcher runs again.
    endAt = schedule.slotTime(9)
    dispatcher.stop(false)
    assert.deepEqual(ops.started, [0, 1])
    assert.deepEqual(dispatcher.unstarted(0, 9, true), [
      {first: 2, end: 4, reason: 'interrupted'},
      {first: 4, end: 9, reason: 'runEnded'},
    ])
    // Only the measured part of the range counts.
    assert.deepEqual(dispatcher.unstarted(6, 9, true), [{first: 6, end: 8, reason: 'interrupted'}, {first: 8, end: 9, reason: 'runEnded'}])
  })

  it('a stop from inside an operation that has not yet awaited starts nothing more', () => {
    let dispatcher!: SlotDispatcher
    const started: number[] = []
    dispatcher = new SlotDispatcher(scheduleDue(100), 10, () => Number.POSITIVE_INFINITY, (slot) => {
      started.push(slot)
      if (slot === 2) dispatcher.stop(false)
      return new Promise<void>(() => {})
    })
    dispatcher.release()
    assert.deepEqual(started, [0, 1, 2])
  })
})
