import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {CONNECTION_OPTIONAL_FIELDS, diffLockWaits, parseAuthCounters, parseConnections, parseGlobalLock, parseLockWaits, serverStatusCommand} from '../../src/probes/server-status.js'
import {serverStatus34, serverStatus44, serverStatus60, serverStatus70, serverStatus82, serverStatusByVersion} from '../fixtures/server-status.js'

describe('serverStatus.connections: every fixture version', () => {
  for (const [version, status] of Object.entries(serverStatusByVersion)) {
    it(`${version}: every field the server sends is read as a number; a field the version lacks stays absent, not 0`, () => {
      const expected = Object.fromEntries(Object.entries(status.connections).map(([field, value]) => [field, Number(value)]))
      assert.deepEqual(parseConnections(status), expected)
    })
  }
  it('every optional field the parser knows is in some fixture (a new field gets a fixture)', () => {
    const inFixtures = new Set(Object.values(serverStatusByVersion).flatMap((status) => Object.keys(status.connections)))
    const missing = CONNECTION_OPTIONAL_FIELDS.filter((field) => !inFixtures.has(field))
    assert.deepEqual(missing, [], `fields without a fixture in test/fixtures/server-status.ts: ${missing.join(', ')}`)
  })
  it('the version-dependent fields appear where the manual says: active from 4.0.7, threaded from 5.0, rejected from 6.3', () => {
    assert.equal('active' in parseConnections(serverStatus34)!, false)
    assert.equal(parseConnections(serverStatus44)!.active, 3)
    assert.equal('threaded' in parseConnections(serverStatus44)!, false)
    assert.equal('rejected' in parseConnections(serverStatus60)!, false)
    assert.equal(parseConnections(serverStatus70)!.rejected, 17)
  })
  it('returns undefined when the section is missing or incomplete', () => {
    assert.equal(parseConnections({ok: 1}), undefined)
    assert.equal(parseConnections({connections: {current: 1, available: 2}}), undefined)
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

describe('serverStatus.globalLock', () => {
  it('reads currentQueue and activeClients as the manual shows them (Long totalTime ignored)', () => {
    assert.deepEqual(parseGlobalLock(serverStatus34), {currentQueue: {total: 3, readers: 1, writers: 2}, activeClients: {total: 14, readers: 4, writers: 2}})
    assert.deepEqual(parseGlobalLock(serverStatus70)!.currentQueue, {total: 7, readers: 0, writers: 7})
  })
  it('zero queues are figures (0), a missing section is absent (undefined), never 0', () => {
    assert.deepEqual(parseGlobalLock(serverStatus44)!.currentQueue, {total: 0, readers: 0, writers: 0})
    assert.equal(parseGlobalLock(serverStatus60), undefined)
    assert.equal(parseGlobalLock(serverStatus82), undefined)
    assert.equal(parseLockWaits(serverStatus60), undefined)
  })
  it('a part without its numbers stays absent', () => {
    assert.deepEqual(parseGlobalLock({globalLock: {currentQueue: {total: 1, readers: 0, writers: 1}, activeClients: {total: 2}}}), {currentQueue: {total: 1, readers: 0, writers: 1}})
    assert.equal(parseGlobalLock({globalLock: {totalTime: 5}}), undefined)
  })
  it('the poll asks for globalLock and locks and switches the heavy sections off', () => {
    const command = serverStatusCommand(['connections', 'repl', 'globalLock', 'locks'])
    assert.equal(command.globalLock, undefined)
    assert.equal(command.locks, undefined)
    assert.equal(command.wiredTiger, 0)
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
