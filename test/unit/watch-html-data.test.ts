/** What the watches' HTML reports draw (src/report/watch-html-data.ts), from events and rounds. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {ConnsWatchResult, Holder, HostSample, RoundSample} from '../../src/conns/types.js'
import {DdlOpTracker} from '../../src/locks/transitions.js'
import type {LockEvent, LocksWatchResult} from '../../src/locks/types.js'
import {connsReportData, HOLDERS_SHOWN, locksReportData} from '../../src/report/watch-html-data.js'

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

describe('conns watch report: clock time, holders, verdicts', () => {
  const round = (n: number, hosts: Array<Partial<HostSample> & {host: string}>): RoundSample => ({
    round: n,
    at: new Date(Date.UTC(2026, 10, 23, 10, 0, n)).toISOString(),
    elapsedMS: n * 1000,
    roundMS: 5,
    hosts: hosts.map((h) => ({role: 'secondary', state: 'ok', ...h}) as HostSample),
  })
  const holder = (appName: string, count: number, extra: Partial<Holder> = {}): Holder => ({appName, client: '10.0.0.5', driver: 'nodejs', count, ...extra})
  const result = (extra: Record<string, unknown> = {}) =>
    ({
      target: {uri: 'mongodb://a:1/', source: '--uri', simulated: false},
      rounds: 2,
      intervalMS: 1000,
      startedAt: new Date(Date.UTC(2026, 10, 23, 10, 0, 1)).toISOString(),
      hosts: [
        {host: 'a:1', role: 'primary', neverShrank: true, neverShrankDetail: {levelAtQuiet: 90, minSinceQuiet: 90, baseline: 10, quietForMS: 20_000, heldBy: {applications: 80, cluster: 2}}},
        {host: 'b:1', role: 'secondary', neverShrank: false},
        {host: 'c:1', role: 'secondary', neverShrank: false},
      ],
      alerts: [{at: new Date(Date.UTC(2026, 10, 23, 10, 0, 2)).toISOString(), round: 2, host: 'a:1', rule: 'current>80', metric: 'current', value: 90, limit: 80, unit: ''}],
      ...extra,
    }) as unknown as ConnsWatchResult

  it('puts each round on the servers\' clock, keeps each host\'s holders round by round, says a twin series, carries the verdicts', () => {
    const many = Array.from({length: 10}, (_, i) => holder(`app${i}`, 10 - i))
    const rounds = [
      round(1, [{host: 'a:1', current: 50, clockSkewMS: 2000, holders: many}, {host: 'b:1', current: 4, clockSkewMS: 3000, holders: [holder('svc', 2)]}, {host: 'c:1', current: 4, clockSkewMS: 4000}]),
      round(2, [{host: 'a:1', current: 90, clockSkewMS: 2000, holders: [...many, holder('pooltool-conns', 1, {own: true})]}, {host: 'b:1', state: 'unreachable', clockSkewMS: 3000}, {host: 'c:1', current: 4, clockSkewMS: 4000}]),
    ]
    const data = connsReportData(result({verdicts: ['≈30 MongoClient instances from checkout-svc@10.0.0.5', {text: 'router pools kept', advice: 'lower ShardingTaskExecutorPoolMinSize', evidence: '40 of 44'}], advice: ['create one client per process']}), rounds, {timeZone: 'UTC'})
    assert.deepEqual(data.clockMS, [Date.UTC(2026, 10, 23, 10, 0, 4), Date.UTC(2026, 10, 23, 10, 0, 5)], 'the round start plus the median skew of the hosts that answered')
    assert.equal(data.timeZone, 'UTC')
    assert.equal(data.zoneText, 'UTC')
    const a = data.hosts.find((h) => h.host === 'a:1')!
    assert.equal(a.holders.length, HOLDERS_SHOWN + 1, 'the biggest holders, the rest as one band')
    assert.deepEqual(a.holders[0], {label: 'app0@10.0.0.5 (nodejs)', own: false, counts: [10, 10]})
    assert.deepEqual(a.holders.at(-1), {label: '3 other holders', own: false, counts: [3, 4]})
    const b = data.hosts.find((h) => h.host === 'b:1')!
    assert.deepEqual(b.holders, [{label: 'svc@10.0.0.5 (nodejs)', own: false, counts: [2, null]}], 'not read in a round it did not answer: null, not 0')
    assert.deepEqual(data.hosts.find((h) => h.host === 'c:1')!.holders, [], 'holders never read: none drawn')
    assert.equal(b.sameAs, undefined)
    // c's series is b's in the first round only (b did not answer the second): not a twin.
    assert.equal(data.hosts.find((h) => h.host === 'c:1')!.sameAs, undefined)
    assert.deepEqual(data.alerts, [{tS: 1, at: '10:00:04', host: 'a:1', rule: 'current>80', value: 90}], 'its time of day on the host\'s clock')
    assert.equal(data.verdicts.length, 3)
    assert.match(data.verdicts[0]!, /^NEVER-SHRANK a:1: 90 connections still open/)
    assert.equal(data.verdicts[1], '≈30 MongoClient instances from checkout-svc@10.0.0.5')
    assert.equal(data.verdicts[2], 'router pools kept — lower ShardingTaskExecutorPoolMinSize — evidence: 40 of 44')
    assert.deepEqual(data.advice, ['create one client per process'])
  })

  it('a host whose series is another\'s, round for round, is named its twin', () => {
    const rounds = [round(1, [{host: 'a:1', current: 5}, {host: 'b:1', current: 4}, {host: 'c:1', current: 4}]), round(2, [{host: 'a:1', current: 6}, {host: 'b:1', current: 4}, {host: 'c:1', current: 4}])]
    const data = connsReportData(result({alerts: []}), rounds, {timeZone: 'UTC'})
    assert.deepEqual(data.hosts.map((h) => h.sameAs), [undefined, undefined, 'b:1'])
    assert.deepEqual(data.verdicts.length, 1)
    assert.deepEqual(data.advice, [])
  })
})
