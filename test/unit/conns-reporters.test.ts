/** conns reporters: sparkline, plain rows, the live frame's in-place redraw, ndjson lines. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {connsNotes} from '../../src/conns/notes.js'
import {HostTracker} from '../../src/conns/summary.js'
import type {RoundSample} from '../../src/conns/types.js'
import {parseConnections} from '../../src/probes/server-status.js'
import type {ConnsListResult} from '../../src/conns/types.js'
import {dateAndTime, timeOfDay, UTC_TIME, zoneNote} from '../../src/reporters/time-of-day.js'
import {heldBy} from '../../src/conns/never-shrank-advice.js'
import {ConnsLiveView, ndjsonSamples, renderList, renderNeverShrank, renderPlainRound, renderTopology} from '../../src/reporters/conns.js'
import {sparkline, sparklineWithLevel} from '../../src/reporters/sparkline.js'
import {serverStatusByVersion} from '../fixtures/server-status.js'

const round = (n: number, current: number | undefined): RoundSample => ({
  round: n,
  at: `2024-05-01T12:00:0${n}.000Z`,
  elapsedMS: n * 1000,
  roundMS: 3,
  hosts: [
    current === undefined
      ? {host: 'a:1', role: 'primary', state: 'unreachable', error: 'connect ECONNREFUSED a:1'}
      : {host: 'a:1', role: 'primary', state: 'ok', current, available: 100 - current, totalCreated: 10 + n, active: 1, totalCreatedRatePerSec: 1},
    {host: 'b:2', role: 'secondary', state: 'ok', current: 3, available: 97, totalCreated: 3},
  ],
})

describe('sparkline', () => {
  test('scaled from zero to the max, gaps as spaces, last N only', () => {
    assert.equal(sparkline([0, 7, undefined, 14]), '▁▅ █')
    assert.equal(sparkline([0, 0, 0]), '▁▁▁')
    assert.equal(sparkline([5, 5, 5]), '▁▁▁', 'a series that never moved is idle at any level, not maxed out (the level is said beside it)')
    assert.equal(sparkline([4, 5, 5]), '▇██', 'a level above zero that moved is drawn from zero')
    assert.equal(sparkline([40, 42]), '██', '40 and 42 are close')
    assert.equal(sparkline([2, 42]), '▁█', '2 and 42 are not')
    assert.equal(sparkline([1, 2, 3, 4], 2), '▇█')
    assert.equal(sparkline([]), '')
  })

  test('with the level: the top of its scale in the series unit', () => {
    assert.equal(sparklineWithLevel([2, 42], 10, (n) => `${n}/s`), '▁█ max 42/s')
    assert.equal(sparklineWithLevel([undefined], 10, String), ' ')
  })
})

describe('renderers', () => {
  test('plain: one line per host, absent fields left out, unreachable named', () => {
    const lines = renderPlainRound(round(1, 20), UTC_TIME).split('\n')
    assert.equal(lines.length, 2)
    assert.match(lines[0]!, /^12:00:01 #1 a:1 primary current=20 available=80 totalCreated=11 rate=1\/s active=1$/)
    assert.doesNotMatch(lines[1]!, /rejected|threaded|rate=/)
    assert.match(renderPlainRound(round(2, undefined)), /a:1 primary UNREACHABLE connect ECONNREFUSED/)
  })
  test('live: the second frame erases the first (cursor up by its line count), sparkline grows', () => {
    const view = new ConnsLiveView('header')
    view.push(round(1, 10))
    const first = view.frame()
    assert.equal(first.startsWith('\u001B['), false)
    view.push(round(2, undefined))
    view.push(round(3, 30))
    view.note('ALERT x')
    const second = view.frame()
    assert.ok(second.startsWith(`\u001B[${first.split('\n').length}F\u001B[0J`), 'the second frame starts by erasing the first')
    assert.match(second, /▃ █ max 30 /, '10, gap, 30 on a scale from zero, its top said')
    assert.match(second, /alerts \(1\):/)
  })
  test('ndjson: one JSON object per host', () => {
    const lines = ndjsonSamples(round(1, 20))
    assert.equal(lines.length, 2)
    const sample = JSON.parse(lines[0]!)
    assert.equal(sample.type, 'sample')
    assert.equal(sample.round, 1)
    assert.equal(sample.current, 20)
    assert.equal('rejected' in JSON.parse(lines[1]!), false)
  })
})

describe('serverStatus.connections fields reach every output (one parser drives them)', () => {
  for (const [version, status] of Object.entries(serverStatusByVersion)) {
    test(`${version}: the sample, the plain line, the ndjson line and the summary carry every field the server sent, and no other`, () => {
      const fields = Object.keys(status.connections)
      const tracker = new HostTracker({host: 'a:1', role: 'standalone'}, 30_000)
      const {sample} = tracker.record({ok: true, atMS: 0, connections: parseConnections(status)!})
      const round: RoundSample = {round: 1, at: '2024-05-01T12:00:01.000Z', elapsedMS: 0, roundMS: 1, hosts: [sample]}
      const ndjson = JSON.parse(ndjsonSamples(round)[0]!)
      const plain = renderPlainRound(round)
      for (const field of fields) {
        assert.equal(ndjson[field], Number(status.connections[field as keyof typeof status.connections]), `ndjson ${field}`)
        assert.match(plain, new RegExp(` ${field}=\\d+`), `plain line has ${field}: ${plain}`)
      }
      assert.deepEqual(Object.keys(tracker.summary().last ?? {}).sort(), [...fields].sort())
    })
  }
})

describe('result notes', () => {
  test('discovery warnings, then one line per reason naming every host it concerns', () => {
    const notes = connsNotes({warnings: ['config.mongos unreadable']}, [
      {host: 'a:1', state: 'ok', holdersUnavailable: 'not authorized on admin to execute command { aggregate: 1 }'},
      {host: 'b:2', state: 'ok', holdersUnavailable: 'not authorized on admin to execute command { aggregate: 1 }'},
      {host: 'c:3', state: 'unreachable'},
      {host: 'd:4', state: 'ok'},
    ])
    assert.deepEqual(notes, [
      'discovery: config.mongos unreadable',
      'unreachable at the end: c:3',
      'holders not read on a:1, b:2: not authorized on admin to execute command { aggregate: 1 }',
    ])
  })
})

describe('real-cluster shapes in text', () => {
  const list: ConnsListResult = {
    target: {uri: 'mongodb://127.0.0.1:30000/?directConnection=true', source: '--uri', simulated: false},
    topology: {kind: 'replset', setName: 'rs0', sources: ['hello'], warnings: [], staleRouters: []},
    at: '2024-05-01T12:00:00.000Z',
    roundMS: 4,
    hosts: [
      {
        host: 'rs.pooltool.invalid:30000', role: 'primary', setName: 'rs0', entry: true, address: '127.0.0.1:30000', state: 'ok',
        current: 80, available: 20, totalCreated: 400, maxIncoming: 100, usedPct: 80,
        lockQueue: {total: 3, readers: 1, writers: 2}, activeClients: {total: 5, readers: 3, writers: 2},
      },
      {host: 'rs.pooltool.invalid:30001', role: 'secondary', setName: 'rs0', state: 'unreachable', reachedFromHere: false, error: 'getaddrinfo ENOTFOUND rs.pooltool.invalid'},
    ],
    notes: ['not reachable from here (never answered): rs.pooltool.invalid:30001'],
    interrupted: false,
  } as ConnsListResult

  test('list: the entry node with the address it is reached at, the limit and % used, lock queues; a host not reachable from here says so', () => {
    const text = renderList(list)
    assert.match(text, /rs\.pooltool\.invalid:30000 \(entry, via 127\.0\.0\.1:30000\)/)
    assert.match(text, /% used of max/)
    assert.match(text, /│ 80% of 100 +│/)
    assert.match(text, /3 \(1r\/2w\) \/ 5 \(3r\/2w\)/)
    assert.match(text, /not reachable from here: getaddrinfo ENOTFOUND/)
    assert.match(text, /note: not reachable from here \(never answered\)/)
  })

  test('plain rows carry the limit, % used and lock figures; an unreached host is marked', () => {
    const text = renderPlainRound({round: 1, at: list.at, elapsedMS: 0, roundMS: 1, hosts: [{...list.hosts[0]!, lockWaitsPerSec: 2.5, lockWaitUsPerSec: 1200}, list.hosts[1]!]})
    assert.match(text, /maxIncoming=100 used=80% lockQueue=3\/1r\/2w lockWaits=2\.5\/s lockWaitUs=1200\/s/)
    assert.match(text, /UNREACHABLE \(not reachable from here\) getaddrinfo ENOTFOUND/)
  })

  test('topology: router versions, zone tags, an empty config.mongos', () => {
    const text = renderTopology({
      kind: 'sharded',
      sources: ['hello', 'config.mongos'],
      warnings: [],
      staleRouters: [{host: 'old:27017', mongoVersion: '4.4.29'}],
      configMongosCount: 0,
      hosts: [
        {host: 'mongos1:27017', role: 'mongos', mongoVersion: '7.0.14', entry: true, address: 'localhost:27017'},
        {host: 'sA1:27018', role: 'shard', shard: 'shardA', setName: 'shardA', tags: ['NYC', 'SF']},
      ],
    })
    assert.match(text, /mongos1:27017 \(entry, via localhost:27017\)  mongos 7\.0\.14/)
    assert.match(text, /shard shardA zones NYC,SF/)
    assert.match(text, /old:27017  mongos 4\.4\.29, stale/)
    assert.match(text, /config\.mongos is empty/)
  })
})

describe('watch times: local with the zone, or UTC', () => {
  const iso = '2026-11-23T23:59:58.250Z'
  test('a round on the clock asked for; the live view names the zone', () => {
    const kolkata = {timeZone: 'Asia/Kolkata'}
    assert.match(renderPlainRound(round(1, 20), kolkata), /^17:30:01 #1 /, '12:00:01Z is 17:30:01 in Kolkata')
    assert.match(renderPlainRound(round(1, 20), UTC_TIME), /^12:00:01 #1 /)
    assert.equal(timeOfDay(iso, kolkata, true), '05:29:58.250')
    assert.equal(dateAndTime(iso, kolkata), '2026-11-24 05:29:58')
    assert.equal(zoneNote(kolkata), 'times are Asia/Calcutta, UTC+05:30; --utc for UTC')
    assert.equal(zoneNote(UTC_TIME), 'times are UTC')
    assert.match(zoneNote({}), /^times are local, UTC[+-]\d\d:\d\d \(.+\); --utc for UTC$/)
    const view = new ConnsLiveView('header', kolkata)
    view.push(round(1, 20))
    assert.match(view.frame(), /round 1 at 17:30:01 \(times are Asia\/Calcutta, UTC\+05:30; --utc for UTC\)/)
  })
})

describe('never shrank: the advice follows who holds the connections', () => {
  const detail = {levelAtQuiet: 40, minSinceQuiet: 40, baseline: 4, quietForMS: 120_000}
  const holder = (appName: string, driver: string, count: number, own = false) => ({appName, client: '10.0.0.5', driver, count, ...(own ? {own} : {})})

  test('heldBy counts application and cluster connections; pooltool\'s own count for neither', () => {
    assert.deepEqual(heldBy([holder('shop', 'nodejs', 30), holder('(none)', 'NetworkInterfaceTL', 6), holder('OplogFetcher', 'MongoDB Internal Client', 1), holder('pooltool-conns', 'nodejs', 2, true)]), {applications: 30, cluster: 7})
    assert.equal(heldBy(undefined), undefined)
  })

  test('application clients: maxIdleTimeMS', () => {
    assert.match(renderNeverShrank('s1:27018', {...detail, heldBy: {applications: 36, cluster: 4}}), /; 36 of 40 held by application clients: set maxIdleTimeMS on them/)
  })

  test("the cluster's pools: the router's ShardingTaskExecutorPool* values, or why they are unknown", () => {
    const read = renderNeverShrank('s1:27018', {...detail, heldBy: {applications: 2, cluster: 38}, routerPools: {router: 'r1:27017', parameters: {ShardingTaskExecutorPoolHostTimeoutMS: 300_000, ShardingTaskExecutorPoolMinSize: 1}}})
    assert.match(read, /38 of 40 held by the cluster's own pools .*ShardingTaskExecutorPoolHostTimeoutMS \(300,000 ms\) and keeps ShardingTaskExecutorPoolMinSize \(1\) .*\(on r1:27017\); lower them with setParameter on the routers/)
    const refused = renderNeverShrank('s1:27018', {...detail, heldBy: {applications: 0, cluster: 38}, routerPools: {router: 'r1:27017', unavailable: 'not authorized on admin to execute command'}})
    assert.match(refused, /HostTimeoutMS \(unknown ms\).*MinSize \(unknown\).*\(not read from r1:27017: not authorized/)
  })

  test('holders not read: both fixes, and why', () => {
    assert.match(renderNeverShrank('s1:27018', detail), /who holds them was not read \(--no-holders, or \$currentOp refused\): application clients .*maxIdleTimeMS; a router keeps its pools per ShardingTaskExecutorPool\*/)
  })
})

describe('live view at narrowing widths: the trend goes last', () => {
  /** Wide numbers on every column: a busy cluster whose figures have grown. */
  const wide = (n: number): RoundSample => ({
    round: n,
    at: `2024-05-01T12:00:0${n}.000Z`,
    elapsedMS: n * 1000,
    roundMS: 3,
    hosts: ['db1.prod.example.net:27017', 'db2.prod.example.net:27017'].map((host) => ({
      host, role: 'secondary', state: 'ok', current: 12_000 + n * 900, available: 838_000, totalCreated: 9_000_000, active: 4_321, rejected: 12_345,
      totalCreatedRatePerSec: 1234.5, usedPct: 1.4, maxIncoming: 850_000, lockQueue: {total: 1234, readers: 1000, writers: 234}, lockWaitsPerSec: 9876.5,
    })),
  })

  test('at 120 and 100 columns the sparkline stays while lesser columns are left out', () => {
    for (const width of [120, 100]) {
      const view = new ConnsLiveView('header')
      for (let n = 1; n <= 6; n++) view.push(wide(n))
      const frame = view.frame({width})
      const [note] = frame.split('\n').filter((line) => line.includes('left out to fit'))
      assert.ok(note, `something had to go at ${width}: ${frame}`)
      assert.doesNotMatch(note!, /current \(last 30\)/, `the trend is not what went first at ${width}: ${note}`)
      assert.match(frame, /[▁▂▃▄▅▆▇█]+ max 17,400/, `the trend is drawn at ${width}`)
    }
  })

  test('an idle cluster reads idle: flat low bars, not full blocks', () => {
    const view = new ConnsLiveView('header')
    for (let n = 1; n <= 5; n++) view.push(round(n, 7))
    const frame = view.frame()
    assert.match(frame, /▁▁▁▁▁ max 7/)
    assert.doesNotMatch(frame, /█/)
  })
})
