import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {diffLockWaits, parseAuthCounters, parseConnections, parseLockWaits} from '../../src/probes/server-status.js'
import {serverStatus34, serverStatus44, serverStatus60, serverStatus70} from '../fixtures/server-status.js'

describe('serverStatus.connections by version', () => {
  it('3.4 has only current/available/totalCreated: the rest stay absent, not 0', () => {
    const c = parseConnections(serverStatus34)!
    assert.deepEqual(c, {current: 12, available: 838848, totalCreated: 347})
    assert.equal('active' in c, false)
    assert.equal('rejected' in c, false)
  })
  it('4.4 adds active and the awaitable-hello counters', () => {
    const c = parseConnections(serverStatus44)!
    assert.equal(c.active, 3)
    assert.equal(c.exhaustIsMaster, 2)
    assert.equal(c.awaitingTopologyChanges, 2)
    assert.equal(c.exhaustHello, undefined)
    assert.equal(c.threaded, undefined)
  })
  it('6.0 adds threaded, exhaustHello, loadBalanced but no rejected', () => {
    const c = parseConnections(serverStatus60)!
    assert.equal(c.threaded, 31)
    assert.equal(c.exhaustHello, 3)
    assert.equal(c.loadBalanced, 0)
    assert.equal(c.rejected, undefined)
  })
  it('7.0 reports rejected', () => {
    assert.equal(parseConnections(serverStatus70)!.rejected, 17)
    assert.equal(parseConnections(serverStatus70)!.totalCreated, 9999)
  })
  it('returns undefined when the section is missing', () => {
    assert.equal(parseConnections({ok: 1}), undefined)
  })
})

describe('serverStatus.locks', () => {
  it('sums sparse modes and treats missing ones as 0', () => {
    const w = parseLockWaits(serverStatus44)!
    assert.equal(w.acquireWaitCount, 10)
    assert.equal(w.timeAcquiringMicros, 96_400)
    assert.deepEqual(w.byResource.ParallelBatchWriterMode, {acquireWaitCount: 0, timeAcquiringMicros: 0})
  })
  it('keeps unknown resource types such as 7.1 DDL locks', () => {
    const w = parseLockWaits(serverStatus70)!
    assert.deepEqual(w.byResource.DDLDatabase, {acquireWaitCount: 2, timeAcquiringMicros: 30_000})
  })
  it('diffs two samples and drops unchanged resources', () => {
    const before = parseLockWaits(serverStatus34)!
    const after = parseLockWaits({locks: {...serverStatus34.locks, Collection: {acquireWaitCount: {w: 4}, timeAcquiringMicros: {w: 800}}}})!
    assert.deepEqual(diffLockWaits(before, after), {acquireWaitCount: 4, timeAcquiringMicros: 800, byResource: {Collection: {acquireWaitCount: 4, timeAcquiringMicros: 800}}})
  })
})

describe('security.authentication.mechanisms (4.4+)', () => {
  it('reads received/successful per mechanism, speculative included', () => {
    const counters = parseAuthCounters(serverStatus44)!
    assert.deepEqual(counters['SCRAM-SHA-256'], {received: 41, successful: 39, speculativeReceived: 40, speculativeSuccessful: 39})
    assert.equal(counters['SCRAM-SHA-1']!.received, 7)
  })
  it('reads the newer ingress shape too', () => {
    const counters = parseAuthCounters({security: {authentication: {mechanisms: {'SCRAM-SHA-256': {ingress: {authenticate: {total: 5, successful: 4}, speculativeAuthenticate: {total: 3, successful: 3}}}}}}})!
    assert.deepEqual(counters['SCRAM-SHA-256'], {received: 5, successful: 4, speculativeReceived: 3, speculativeSuccessful: 3})
  })
  it('is absent before 4.4', () => {
    assert.equal(parseAuthCounters(serverStatus34), undefined)
  })
})
