/** What the watches' HTML reports draw (src/report/watch-html-data.ts), from events and rounds. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {DdlOpTracker} from '../../src/locks/transitions.js'
import type {LockEvent, LocksWatchResult} from '../../src/locks/types.js'
import {locksReportData} from '../../src/report/watch-html-data.js'

const base = {target: {uri: 'mongodb://r1:27017/', source: '--uri', simulated: false}, serverVersion: '4.4.29', model: 'config.locks', polls: 10, intervalMS: 500, durationMS: 10_000} as const
const at = (s: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, 0) + s * 1000).toISOString()
const event = (kind: LockEvent['kind'], name: string, s: number, extra: Partial<LockEvent> = {}): LockEvent => ({at: at(s), kind, name, process: 'A', who: null, why: null, ...extra})

describe('locks watch report: holds per lock', () => {
  it('a hold from acquisition to release, one overtaken, one between polls, one still held at the end', () => {
    const result = {
      ...base,
      events: [
        event('held-at-start', 'db.kept', 0, {since: at(-3600)}),
        event('acquired', 'db.a', 1),
        event('released', 'db.a', 3.5, {holdMS: 2000, holdMinMS: 1800}),
        event('acquired', 'db.b', 2, {process: 'B'}),
        event('overtaken', 'db.b', 6, {process: 'C', previousProcess: 'B', holdMS: 4000}),
        event('released', 'db.c', 8, {holdMS: 400, holdBetweenPolls: true}),
      ],
    } as unknown as LocksWatchResult
    const data = locksReportData(result)
    assert.equal(data.endS, 10, 'the axis covers the whole watch')
    const holds = Object.fromEntries(data.locks.map((lock) => [lock.name, lock.holds]))
    assert.deepEqual(data.locks.map((lock) => lock.name), ['db.kept', 'db.a', 'db.b', 'db.c'])
    assert.deepEqual(holds['db.kept'], [{fromS: 0, toS: 10, open: true, betweenPolls: false, holder: 'A'}], 'held from before the watch: drawn from its start')
    assert.deepEqual(holds['db.a'], [{fromS: 1, toS: 3, open: false, betweenPolls: false, holder: 'A'}], 'the hold ends at when + holdMS')
    assert.deepEqual(holds['db.b'], [{fromS: 2, toS: 6, open: false, betweenPolls: false, holder: 'B'}, {fromS: 6, toS: 10, open: true, betweenPolls: false, holder: 'C'}])
    assert.deepEqual(holds['db.c'], [{fromS: 7.6, toS: 8, open: false, betweenPolls: true, holder: 'A'}])
  })

  it('6.1+: DDL operations on one namespace at once (a coordinator and a participant) are a bar each', () => {
    const t = new DdlOpTracker()
    const op = {ns: 'orders.items', waitingForLock: false}
    const coordinator = {...op, shard: 'shard01', host: 'h1:27018', opid: 'shard01:12', command: '_shardsvrDropCollection', runningMS: 100}
    const participant = {...op, shard: 'shard02', host: 'h2:27018', opid: 'shard02:7', command: '_shardsvrDropCollectionParticipant', runningMS: 50}
    const events = [...t.observe([], 10_000), ...t.observe([coordinator, participant], 10_500), ...t.observe([{...participant, runningMS: 550}], 11_000), ...t.observe([], 11_500)]
    const data = locksReportData({...base, model: 'in-memory', durationMS: 1500, events} as unknown as LocksWatchResult)
    assert.deepEqual(data.locks, [
      {
        name: 'orders.items',
        holds: [
          // The axis starts at the first event: the coordinator's start, 10,400.
          {fromS: 0, toS: 0.6, open: false, betweenPolls: false, holder: 'shard01'},
          {fromS: 0.05, toS: 1.1, open: false, betweenPolls: false, holder: 'shard02'},
        ],
      },
    ])
  })
})
