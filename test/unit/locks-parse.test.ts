import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {classifyWhy, filterLocks, lockTiming, parseLockDoc, parseProcessId, toLockRows, toPingRows, verdictOf} from '../../src/locks/parse.js'
import {ddlLockEntries, ddlOpsFrom} from '../../src/locks/in-memory.js'
import {modelFor} from '../../src/locks/model.js'
import {byTime} from '../../src/locks/transitions.js'
import {DdlOpTracker, LockTransitionTracker} from '../../src/locks/watch.js'
import type {LockRow, LocksListResult, LocksWatchResult} from '../../src/locks/types.js'
import {lockTimeline} from '../../src/report/watch-html-data.js'
import {UTC_TIME} from '../../src/reporters/time-of-day.js'
import {holdText, renderLockEvent, renderLocksList, renderLocksWatch} from '../../src/reporters/locks.js'
import {NOW, NOW_UPGRADED, locks34, locks44, locks60, locksUpgraded44, mongos44, pings34, pings44, pings60, pingsUpgraded44, shards} from '../fixtures/locks-documents.js'

const timing = lockTiming()
const rows = (locks: object[], pings: object[], mongos: object[] = []) => toLockRows({locks, pings, mongos, shards, nowMs: NOW.getTime(), timing})
const byName = (list: LockRow[]) => new Map(list.map((r) => [r.name, r]))

describe('config.locks parsers', () => {
  it('reads the 3.4 shapes: permanent balancer lock, migration lock, unlocked mongos DDL', () => {
    const r = byName(rows(locks34, pings34))
    assert.equal(r.get('balancer')!.verdict, 'balancer')
    assert.equal(r.get('balancer')!.whyKind, 'balancer')
    assert.equal(r.get('test.myShardedCollection')!.verdict, 'held')
    assert.equal(r.get('test.myShardedCollection')!.whyKind, 'migration')
    assert.equal(r.get('test.myShardedCollection')!.holder, 'config server')
    const t = r.get('test')!
    assert.equal(t.state, 'unlocked')
    assert.equal(t.verdict, 'free')
    assert.equal(t.heldMS, null)
    assert.equal(t.ts, '5be0b9ede46e4f441a60d892')
  })

  it('judges 4.4 locks: held, stale after 15 min without a ping, no-ping, free', () => {
    const r = byName(rows(locks44, pings44, mongos44))
    assert.equal(r.get('orders')!.verdict, 'held')
    assert.equal(r.get('orders.items')!.whyKind, 'dropCollection')
    const archive = r.get('orders.archive')!
    assert.equal(archive.verdict, 'stale')
    assert.equal(archive.whyKind, 'split')
    assert.equal(archive.holderPingAgeMS, 16 * 60_000)
    assert.equal(archive.heldMS, 30 * 60_000)
    assert.equal(archive.holder, 'shard02 (shard2.example.net:27018)')
    assert.equal(r.get('orders.ghost')!.verdict, 'no-ping')
    assert.equal(r.get('orders.ghost')!.holderLastPing, null)
    assert.equal(r.get('orders.ghost')!.whyKind, 'mapReduce')
    assert.equal(r.get('users')!.verdict, 'free')
    assert.equal(r.get('users')!.term, undefined)
  })

  it('reads the 6.0 shapes: shard-name processes, fixed ts, term, capitalised 5.0 why strings', () => {
    const r = byName(rows(locks60, pings60))
    const orders = r.get('orders')!
    assert.equal(orders.process, 'shard01')
    assert.equal(orders.ts, '020000000000000000000000')
    assert.equal(orders.term, 3)
    assert.equal(orders.holder, 'shard01')
    assert.equal(orders.verdict, 'held')
    assert.equal(r.get('billing')!.ts, '010000000000000000000000')
    assert.equal(r.get('billing')!.holder, 'config server')
    assert.equal(r.get('billing')!.whyKind, 'createDatabase')
    // "DropCollection" (early 5.0) and "dropCollection" are one family; so are "MovePrimary" / "movePrimary".
    assert.equal(r.get('legacy')!.whyKind, 'dropCollection')
    assert.equal(r.get('billing.moves')!.whyKind, 'movePrimary')
    assert.equal(r.get('billing.moves')!.verdict, 'stale')
  })

  it('classifies why strings of every version case-insensitively', () => {
    assert.equal(classifyWhy('CSRS Balancer'), 'balancer')
    assert.equal(classifyWhy('Migrating chunk(s) in collection a.b'), 'migration')
    assert.equal(classifyWhy('merging chunks in a.b from { x: 1 } to { x: 5 }'), 'merge')
    assert.equal(classifyWhy('shardCollection'), 'shardCollection')
    assert.equal(classifyWhy('ShardCollection'), 'shardCollection')
    assert.equal(classifyWhy('createCollection'), 'createCollection')
    assert.equal(classifyWhy('refineCollectionShardKeyNoResilient'), 'refineCollectionShardKey')
    assert.equal(classifyWhy('something new'), 'other')
    assert.equal(classifyWhy(null), null)
  })

  it('parses process ids of both eras', () => {
    assert.deepEqual(parseProcessId('ConfigServer'), {kind: 'config-server'})
    assert.deepEqual(parseProcessId('example.com:30000:1350047994:16807'), {kind: 'host', host: 'example.com:30000', epochSeconds: 1350047994, random: '16807'})
    assert.deepEqual(parseProcessId('shard01'), {kind: 'name', name: 'shard01'})
    assert.equal(parseLockDoc({_id: 'x', state: 2}).process, null)
  })
})

describe('verdicts and pings', () => {
  it('stale is measured against the expiry, scaled for the embedded cluster', () => {
    const lock = parseLockDoc(locks44[2])
    const ping = {process: String(locks44[2].process), ping: new Date(NOW.getTime() - 10_000)}
    assert.equal(verdictOf(lock, ping, NOW.getTime(), lockTiming(1).expiryMS), 'held')
    assert.equal(verdictOf(lock, ping, NOW.getTime(), lockTiming(0.01).expiryMS), 'stale') // 9 s
    assert.equal(verdictOf(lock, undefined, NOW.getTime(), 1), 'no-ping')
  })

  it('pings: alive within 3 intervals, what each process holds, old per-host documents dead', () => {
    const p = toPingRows({locks: locks44, pings: pings44, mongos: mongos44, shards, nowMs: NOW.getTime(), timing})
    const get = (id: string) => p.find((x) => x.process === id)!
    assert.equal(get('ConfigServer').alive, true)
    assert.deepEqual(get('ConfigServer').holds, ['orders', 'orders.items'])
    assert.equal(get('mongos1.example.net:27017:1604300000:1804289383').role, 'mongos')
    const dead = get('shard2.example.net:27018:1604300000:1911123')
    assert.equal(dead.alive, false)
    assert.deepEqual(dead.holds, ['orders.archive'])
    assert.equal(dead.processStarted, new Date(1604300000 * 1000).toISOString())
    const p60 = toPingRows({locks: locks60, pings: pings60, mongos: [], shards, nowMs: NOW.getTime(), timing})
    assert.equal(p60.find((x) => x.process === 'shard02')!.role, 'shard')
    assert.equal(p60.find((x) => x.process === 'config')!.role, 'config')
  })

  it('filters by database, namespace and verdict or state', () => {
    const all = rows(locks44, pings44)
    assert.deepEqual(filterLocks(all, {db: 'orders'}).map((r) => r.name), ['orders', 'orders.archive', 'orders.ghost', 'orders.items'])
    assert.deepEqual(filterLocks(all, {ns: 'orders.items'}).map((r) => r.name), ['orders.items'])
    assert.deepEqual(filterLocks(all, {state: 'stale'}).map((r) => r.name), ['orders.archive'])
    assert.deepEqual(filterLocks(all, {state: 'unlocked'}).map((r) => r.name), ['users'])
    assert.equal(filterLocks(all, {state: 'locked'}).length, 4)
  })

  it('picks the lock model from the version', () => {
    assert.equal(modelFor('3.4.24'), 'config.locks')
    assert.equal(modelFor('6.0.20'), 'config.locks')
    assert.equal(modelFor('6.1.0'), 'in-memory')
    assert.equal(modelFor('8.0.4'), 'in-memory')
    assert.equal(modelFor('3.2.22'), 'unsupported')
  })

  it('reads the 6.1+ replacement: DDL ops from $currentOp and serverStatus.locks DDL entries (7.1+)', () => {
    const ops = ddlOpsFrom([
      {shard: 'shard01', host: 'h1:27018', opid: 'shard01:12', command: {_shardsvrDropCollection: 'orders.items', $db: 'admin'}, microsecs_running: 2_500_000, waitingForLock: false},
      {shard: 'shard01', host: 'h1:27018', opid: 'shard01:13', command: {create: 'items', $db: 'orders'}, microsecs_running: 400_000, waitingForLock: true},
      {shard: 'shard01', host: 'h1:27018', opid: 'shard01:14', command: {find: 'items'}, microsecs_running: 10},
    ])
    assert.deepEqual(ops.map((o) => [o.command, o.ns, o.runningMS, o.waitingForLock]), [
      ['_shardsvrDropCollection', 'orders.items', 2500, false],
      ['create', 'orders.items', 400, true],
    ])
    const entries = ddlLockEntries({Global: {acquireCount: {r: 5}}, DDLDatabase: {acquireCount: {W: 3, w: 2}, acquireWaitCount: {W: 1}, timeAcquiringMicros: {W: 1500}}, DDLCollection: {acquireCount: {W: 2}}})
    assert.deepEqual(entries, {
      DDLDatabase: {acquireCount: 5, acquireWaitCount: 1, timeAcquiringMicros: 1500},
      DDLCollection: {acquireCount: 2, acquireWaitCount: 0, timeAcquiringMicros: 0},
    })
  })
})

describe('released locks and ConfigServer holders: what `when` is', () => {
  const listOf = (locks: LockRow[], serverVersion: string): LocksListResult => ({
    target: {uri: 'mongodb://cfg:27019/', source: '--uri', simulated: false},
    entry: 'mongos',
    serverVersion,
    model: 'config.locks',
    message: '',
    now: NOW.toISOString(),
    expiryMS: timing.expiryMS,
    locks,
    pings: [],
    notes: [],
    interrupted: false,
  })

  it('a released lock says when it was last taken (its `when`), never "0ms ago"', () => {
    const test = byName(rows(locks34, pings34)).get('test')!
    assert.equal(test.state, 'unlocked')
    assert.equal(test.heldMS, null)
    assert.equal(test.since, new Date(NOW.getTime() - 40 * 60_000).toISOString())
    assert.equal(test.sinceAgeMS, 40 * 60_000)
    assert.equal(test.whenMeans, 'last-taken')
    const text = renderLocksList(listOf([test], '3.4.24'))
    assert.match(text, /last taken 40m 0s ago/)
    assert.doesNotMatch(text, /\b0ms ago/)
  })

  it('a ConfigServer lock: `when` is the config primary\'s grab or step-up; the verdict follows the ConfigServer ping', () => {
    const r = byName(toLockRows({locks: locksUpgraded44, pings: pingsUpgraded44, mongos: [], shards, nowMs: NOW_UPGRADED.getTime(), timing}))
    const migration = r.get('test.myShardedCollection')!
    assert.equal(migration.whenMeans, 'config-primary')
    assert.equal(migration.heldMS, 3 * 86_400_000 + 4 * 3_600_000)
    assert.equal(migration.verdict, 'held', 'ConfigServer pinged 12 s ago: held, however old `when` is')
    const stale = byName(toLockRows({locks: locksUpgraded44, pings: [{_id: 'ConfigServer', ping: new Date(NOW_UPGRADED.getTime() - 16 * 60_000)}], mongos: [], shards, nowMs: NOW_UPGRADED.getTime(), timing}))
    assert.equal(stale.get('test.myShardedCollection')!.verdict, 'stale', 'a ConfigServer ping 16 min old: stale')
    const text = renderLocksList(listOf([...r.values()], '4.4.29'))
    assert.match(text, /3d ago \(config primary's grab or step-up\)/)
    assert.match(text, /ConfigServer is whichever config server member is primary/)
  })

  it('a cluster upgraded from 3.4: the balancer lock held by ConfigServer for years is by design, not a finding', () => {
    const balancer = byName(toLockRows({locks: locksUpgraded44, pings: pingsUpgraded44, mongos: [], shards, nowMs: NOW_UPGRADED.getTime(), timing})).get('balancer')!
    assert.equal(balancer.verdict, 'balancer')
    assert.equal(balancer.whenMeans, 'balancer-step-up')
    assert.ok(balancer.sinceAgeMS! > 8 * 365 * 86_400_000)
    const text = renderLocksList(listOf([balancer], '4.4.29'))
    assert.match(text, /config primary step-up \d+d ago/)
    assert.match(text, /balancer: left by 3\.4, by design/)
    assert.match(text, /3\.6\+ neither takes nor frees it, so a cluster upgraded from 3\.4 shows it held by ConfigServer for years: by design, not a finding/)
    assert.doesNotMatch(text, /STALE/)
    assert.match(renderLocksList(listOf([balancer], '3.4.24')), /balancer \(3\.4, permanent\)[\s\S]*the 3\.4 balancer holds the balancer lock while its config primary runs/)
  })
})

describe('watch transitions', () => {
  const row = (over: Partial<LockRow>): LockRow => ({
    name: 'db.c', state: 'locked', process: 'A', who: 'A:conn1', why: 'dropCollection', since: new Date(1000).toISOString(), sinceAgeMS: 0, whenMeans: 'taken', holderLastPing: null,
    verdict: 'held', ts: 't1', heldMS: 0, holderPingAgeMS: 0, holder: null, whyKind: 'dropCollection', ...over,
  })
  const free = (over: Partial<LockRow>): LockRow => row({state: 'unlocked', verdict: 'free', whenMeans: 'last-taken', ...over})

  it('starts with the locks held or stale at the start, with their verdicts; free ones are not events', () => {
    const t = new LockTransitionTracker()
    const start = t.observe([row({}), row({name: 'db.d', verdict: 'stale', process: 'B'}), free({name: 'db.e'})], 2000)
    assert.deepEqual(start.map((e) => [e.kind, e.name, e.verdict, e.since]), [
      ['held-at-start', 'db.c', 'held', new Date(1000).toISOString()],
      ['held-at-start', 'db.d', 'stale', new Date(1000).toISOString()],
    ])
    assert.match(renderLockEvent(start[1]!, '', UTC_TIME), /held {6}db\.d by B since 1970-01-01 00:00:01 \(STALE: can be overtaken; dropCollection\)/)
    assert.deepEqual(t.summary(), [], 'nothing acquired or released yet')
  })

  it('a release a poll saw: the hold lies between the last poll that saw it held and the first that saw it free', () => {
    const t = new LockTransitionTracker()
    t.observe([row({})], 2000)
    const rel = t.observe([free({})], 2500)
    assert.deepEqual(rel.map((e) => [e.kind, e.holdMinMS, e.holdMS, e.holdBetweenPolls]), [['released', 1000, 1500, undefined]])
    assert.equal(holdText(rel[0]!), ' after 1.0s–1.5s')
    const s = t.summary()[0]!
    assert.equal(s.holdMS.count, 1)
    assert.deepEqual(s.betweenPolls, {count: 0, maxMS: 0})
  })

  it('taken and freed between two polls: only bounded by the gap, labelled, never counted as a hold figure', () => {
    const t = new LockTransitionTracker()
    t.observe([free({})], 1000)
    // A 12 ms hold at 1488, seen as a new `when` on a free lock by the poll at 1500.
    const events = t.observe([free({ts: 't2', since: new Date(1488).toISOString()})], 1500)
    assert.deepEqual(events.map((e) => [e.kind, e.at, e.holdMS, e.holdBetweenPolls]), [
      ['acquired', new Date(1488).toISOString(), undefined, undefined],
      ['released', new Date(1500).toISOString(), 12, true],
    ])
    assert.equal(holdText(events[1]!), ' after ≤ 12ms (between polls)')
    const s = t.summary()[0]!
    assert.equal(s.holdMS.count, 0, 'no hold a poll saw')
    assert.deepEqual(s.betweenPolls, {count: 1, maxMS: 12})
    const result = {events, locks: [s], polls: 2, failedPolls: 0, failedPollsByReason: {}, intervalMS: 500, durationMS: 1000, interrupted: false, notes: []} as unknown as LocksWatchResult
    assert.match(renderLocksWatch(result), /│ 1 × ≤ 12ms/)
  })

  it('a changed `when` between two polls that both saw it held: a release and re-take; the old hold ends at the new `when`, events in time order', () => {
    const t = new LockTransitionTracker()
    t.observe([row({})], 2000)
    // 5.0+ keeps one `ts` per process type: only `when` shows the re-take.
    const events = t.observe([row({since: new Date(2200).toISOString(), who: 'A:conn2'})], 2600)
    assert.deepEqual(events.map((e) => [e.kind, e.at, e.holdMinMS, e.holdMS]), [
      ['released', new Date(2200).toISOString(), 1000, 1200],
      ['acquired', new Date(2200).toISOString(), undefined, undefined],
    ])
  })

  it("a poll's clock runs beside its read: the next holder's `when` can fall before the release a poll stamped; its acquisition is stamped no earlier", () => {
    const t = new LockTransitionTracker()
    const start = t.observe([row({})], 2000)
    // Read free, then B took it at 2990, then the hello dated the poll 3000.
    const released = t.observe([free({})], 3000)
    const taken = t.observe([row({ts: 't2', process: 'B', since: new Date(2990).toISOString()})], 3500)
    assert.deepEqual([...released, ...taken].map((e) => [e.kind, e.process, e.at]), [
      ['released', 'A', new Date(3000).toISOString()],
      ['acquired', 'B', new Date(3000).toISOString()],
    ])
    // In one poll: C took it at 4010 and freed it, read before the hello said 4000.
    const between = t.observe([free({ts: 't3', process: 'C', since: new Date(4010).toISOString()})], 4000)
    assert.deepEqual(between.map((e) => [e.kind, e.process, e.at, e.holdMS]), [
      ['released', 'B', new Date(4010).toISOString(), 1020],
      ['acquired', 'C', new Date(4010).toISOString(), undefined],
      ['released', 'C', new Date(4010).toISOString(), 0],
    ])
    // The HTML timeline pairs each release with the acquisition before it: a bar per release, none left open.
    const events = [...start, ...released, ...taken, ...between]
    const [lane] = lockTimeline(byTime(events), 5000, 'config.locks').locks
    assert.deepEqual(lane!.holds.map((h) => [h.holder, h.open]), [['A', false], ['B', false], ['C', false]])
  })

  it('an overtake of a stale holder, a lock turning stale, and a lock document that appears mid-watch', () => {
    const t = new LockTransitionTracker()
    t.observe([row({ts: 't2', since: new Date(3500).toISOString()})], 4000)
    const stale = t.observe([row({ts: 't2', since: new Date(3500).toISOString(), verdict: 'stale'}), row({name: 'db.new', since: new Date(19_000).toISOString()})], 20_000)
    assert.deepEqual(stale.map((e) => [e.kind, e.name]), [['acquired', 'db.new'], ['stale', 'db.c']])
    const over = t.observe([row({ts: 't3', process: 'B', since: new Date(21_000).toISOString()}), row({name: 'db.new', since: new Date(19_000).toISOString()})], 21_500)
    assert.deepEqual(over.map((e) => [e.kind, e.process, e.previousProcess, e.holdMinMS, e.holdMS]), [['overtaken', 'B', 'A', 16_500, 17_500]])
    const s = t.summary().find((l) => l.name === 'db.c')!
    assert.equal(s.overtaken, 1)
    assert.equal(s.holdMS.count, 1)
    assert.ok(s.holdMS.max >= 17_000)
  })

  it('6.1+: DDL operations running at the start are held-at-start; a finished one is a bounded hold from its start', () => {
    const t = new DdlOpTracker()
    const op = {shard: 'shard01', host: 'h1:27018', opid: 'shard01:12', command: '_shardsvrDropCollection', ns: 'orders.items', runningMS: 300, waitingForLock: false}
    const start = t.observe([op], 10_000)
    assert.deepEqual(start.map((e) => [e.kind, e.since]), [['held-at-start', new Date(9700).toISOString()]])
    t.observe([{...op, runningMS: 800}], 10_500)
    const end = t.observe([], 11_000)
    assert.deepEqual(end.map((e) => [e.kind, e.holdMinMS, e.holdMS]), [['released', 800, 1300]])
  })
})
