/**
 * Cumulative lock waits (src/locks/node/waits.ts) and execution tickets (tickets.ts): the rankings a
 * DBA reads from published serverStatus sections, the router and unknown cases, and the ticket
 * verdicts per version. Documents marked "constructed" use the field names of the server source
 * (TicketHolder::appendTicketStats / _appendQueueStats) with values chosen for the test: no
 * published 6.x – 8.x serverStatus printout with these sections was found.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Long} from 'bson'

import {ticketsFromServerStatus} from '../../src/locks/node/tickets.js'
import {lockWaitRates, lockWaitsFromServerStatus, uptimeText} from '../../src/locks/node/waits.js'
import {serverStatus341, serverStatus42Primary} from '../fixtures/node-locks-documents.js'

const value = (v: unknown) => (v instanceof Long ? v.toNumber() : (v as number))

describe('lock waits since start', () => {
  it('3.4.1: ranked by time waited, with the share that waited and the mean wait, over 117 days', () => {
    const view = lockWaitsFromServerStatus(serverStatus341)
    assert.equal(view.state, 'counted')
    assert.equal(view.uptimeFrom, 'uptime')
    assert.equal(view.summary, 'lock waits since start, 117 days')
    const waited = view.rows.filter((row) => row.acquireWaitCount > 0)
    assert.deepEqual(waited.map((row) => `${row.resource} ${row.mode}`), ['Database r', 'Database w', 'Global r', 'Database R', 'Database W'])
    const db = serverStatus341.locks.Database
    const top = waited[0]!
    assert.equal(top.meanWaitMicros, value(db.timeAcquiringMicros.r) / value(db.acquireWaitCount.r))
    assert.equal(top.waitedShare, value(db.acquireWaitCount.r) / value(db.acquireCount.r))
    assert.equal(top.modeName, 'IS')
    const collection = view.rows.find((row) => row.resource === 'Collection' && row.mode === 'r')!
    assert.deepEqual([collection.acquireWaitCount, collection.timeAcquiringMicros, collection.meanWaitMicros], [0, 0, null], 'sparse: absent means never waited')
  })

  it('4.2 primary: every 4.2 resource type parsed, the uptime from globalLock.totalTime', () => {
    const view = lockWaitsFromServerStatus(serverStatus42Primary)
    assert.equal(view.uptimeFrom, 'globalLock.totalTime')
    assert.equal(view.summary, 'lock waits since start, 5 hours')
    assert.deepEqual([...new Set(view.rows.map((row) => row.resource))].sort(), ['Collection', 'Database', 'Global', 'Mutex', 'ParallelBatchWriterMode', 'ReplicationStateTransition', 'oplog'])
    assert.deepEqual(view.rows.filter((row) => row.acquireWaitCount > 0).map((row) => `${row.resource} ${row.mode}`), ['ParallelBatchWriterMode r', 'ReplicationStateTransition w', 'ReplicationStateTransition W'])
  })

  it('"no lock has waited since start" when only acquireCount exists (the 4.2 primary\'s Global and Database sections, 47 days)', () => {
    const {Global, Database} = serverStatus42Primary.locks
    const view = lockWaitsFromServerStatus({uptime: 47 * 86_400 + 3600, locks: {Global, Database}})
    assert.equal(view.anyWaited, false)
    assert.equal(view.summary, 'no lock has waited since start, 47 days')
  })

  it('a router keeps none; a mongod without the section is unknown, never zero', () => {
    const router = lockWaitsFromServerStatus({process: 'mongos', version: '6.0.14', uptime: 100})
    assert.equal(router.state, 'router')
    assert.equal(router.summary, 'lock waits are not kept on a router: read the shards')
    const unknown = lockWaitsFromServerStatus({process: 'mongod', uptime: 100})
    assert.equal(unknown.state, 'unknown')
    assert.equal(unknown.rows.length, 0)
    assert.match(unknown.summary, /unknown/)
  })

  it('deadlockCount is read where a server sends it (constructed: older servers send it only when non-zero)', () => {
    const view = lockWaitsFromServerStatus({uptime: 60, locks: {Global: {acquireCount: {w: Long.fromNumber(10)}, acquireWaitCount: {w: Long.fromNumber(1)}, timeAcquiringMicros: {w: Long.fromNumber(7)}, deadlockCount: {w: Long.fromNumber(2)}}}})
    assert.equal(view.rows[0]!.deadlockCount, 2)
  })

  it('the difference of two samples gives rates per interval; a restart between them gives none', () => {
    const db = serverStatus341.locks.Database
    const later = {
      ...serverStatus341,
      locks: {...serverStatus341.locks, Database: {...db, acquireWaitCount: {...db.acquireWaitCount, r: Long.fromNumber(value(db.acquireWaitCount.r) + 5)}, timeAcquiringMicros: {...db.timeAcquiringMicros, r: Long.fromNumber(value(db.timeAcquiringMicros.r) + 50_000)}}},
    }
    const rates = lockWaitRates(serverStatus341, later, 10_000)
    assert.equal(rates.reset, false)
    assert.deepEqual(rates.rows.map((row) => [row.resource, row.mode, row.acquireWaitDelta, row.waitsPerSecond, row.waitMicrosPerSecond, row.meanWaitMicros]), [['Database', 'r', 5, 0.5, 5000, 10_000]])
    const restarted = lockWaitRates(serverStatus341, serverStatus42Primary, 10_000)
    assert.equal(restarted.reset, true)
    assert.equal(restarted.rows.length, 0)
  })

  it('uptime reads as a human says it', () => {
    assert.equal(uptimeText(47 * 86_400), '47 days')
    assert.equal(uptimeText(3 * 3600), '3 hours')
    assert.equal(uptimeText(90), '90 seconds')
  })
})

describe('execution tickets', () => {
  it('4.2 primary (published; 4.2 inferred from maxWireVersion 8 in its isMaster): concurrentTransactions read, write and the global lock queue, nothing exhausted', () => {
    const view = ticketsFromServerStatus(serverStatus42Primary, '4.2')
    assert.equal(view.source, 'wiredTiger.concurrentTransactions')
    assert.equal(view.dynamicSizing, false)
    assert.deepEqual([view.read!.out, view.read!.available, view.read!.totalTickets, view.read!.verdict], [1, 127, 128, 'ok'])
    assert.deepEqual(view.currentQueue, {total: 0, readers: 0, writers: 0})
  })

  it('before 7.0: no ticket left with writers queued is exhausted; none left and nobody queued is only all in use (constructed)', () => {
    const view = ticketsFromServerStatus({
      version: '6.0.5',
      globalLock: {currentQueue: {total: 7, readers: 0, writers: 7}, activeClients: {total: 256, readers: 128, writers: 128}},
      wiredTiger: {concurrentTransactions: {write: {out: 128, available: 0, totalTickets: 128}, read: {out: 128, available: 0, totalTickets: 128}}},
    })
    assert.equal(view.write!.verdict, 'exhausted')
    assert.equal(view.read!.verdict, 'all-in-use')
  })

  it('7.0+: available 0 is throttling under dynamic sizing, never "exhausted" (constructed, queues.execution)', () => {
    const view = ticketsFromServerStatus({
      version: '7.0.14',
      globalLock: {currentQueue: {total: 0, readers: 0, writers: 0}},
      queues: {execution: {write: {out: 10, available: 0, totalTickets: 10, queueLength: 0}, read: {out: 3, available: 5, totalTickets: 8, queueLength: 0}}},
    })
    assert.equal(view.source, 'queues.execution')
    assert.equal(view.dynamicSizing, true)
    assert.equal(view.write!.verdict, 'throttled')
    assert.equal(view.read!.verdict, 'ok')
    assert.match(view.explanation, /not exhaustion/)
  })

  it('8.0: the queue under normalPriority says ops wait for a ticket (constructed)', () => {
    const view = ticketsFromServerStatus({
      version: '8.0.4',
      queues: {execution: {write: {out: 4, available: 0, totalTickets: 4, exempt: {queueLength: 0}, normalPriority: {queueLength: 6}}, read: {out: 1, available: 7, totalTickets: 8, normalPriority: {queueLength: 0}}}},
    })
    assert.equal(view.write!.queueLength, 6)
    assert.equal(view.write!.verdict, 'queued')
  })

  it('an unknown version never says exhausted', () => {
    const view = ticketsFromServerStatus({wiredTiger: {concurrentTransactions: {write: {out: 128, available: 0, totalTickets: 128}}}, globalLock: {currentQueue: {writers: 3}}}, null)
    assert.equal(view.write!.verdict, 'unknown')
  })
})
