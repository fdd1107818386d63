/**
 * conns on real clusters: a failed host gets a fresh connection every round, one row per process,
 * the connection limit and % used, lock queues and lock-wait rates (absent when not sent, never 0),
 * and the findings the topology carries (an empty config.mongos, routers of mixed versions, a host
 * not reachable from here, a server clock off by more than 5 s).
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {Long} from 'bson'

import {hostnameOf} from '../../src/probes/host-connection.js'
import {connsNotes, topologyFindings} from '../../src/conns/notes.js'
import {HostPoller, type PollAnswer} from '../../src/conns/poller.js'
import {processKey, SameProcess} from '../../src/conns/same-process.js'
import {connectionLimit, HostTracker} from '../../src/conns/summary.js'
import {noHostAnswered} from '../../src/conns/watch.js'
import type {ClusterHost} from '../../src/conns/types.js'
import type {Document} from '../../src/mongo/driver.js'
import {type CommandChannel, ServerReader} from '../../src/probes/reader.js'
import {parseConnections, parseGlobalLock, parseLockWaits} from '../../src/probes/server-status.js'
import type {OpenReader} from '../../src/probes/host-connection.js'
import {serverStatus44, serverStatus60, serverStatus70, serverStatus82} from '../fixtures/server-status.js'

const host: ClusterHost = {host: 'db1.example.net:27017', role: 'primary', setName: 'rs0'}

/** A connection whose serverStatus answers `reply` (a document, or an error to throw). */
function fakeConnection(reply: () => Document, log: string[]): OpenReader {
  const channel: CommandChannel = {host: host.host, command: async () => reply()}
  log.push('open')
  return {reader: new ServerReader(channel), close: async () => void log.push('close')}
}

const settings = {appName: 'pooltool-conns', holders: false, secrets: []}

describe('a failed host gets a fresh connection every round', () => {
  test('after a failure the connection is let go and the next poll opens another; the real error is kept', async () => {
    const log: string[] = []
    let up = false
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:27017'), {name: 'MongoNetworkError'})
    const poller = new HostPoller(
      host,
      () => fakeConnection(() => {
        if (!up) throw refused
        return {host: 'db1:27017', pid: Long.fromNumber(42), localTime: new Date(), ...serverStatus70}
      }, log),
      settings,
      [host],
    )
    const first = await poller.poll(1000)
    assert.equal(first.ok, false)
    assert.match((first as Extract<PollAnswer, {ok: false}>).error, /ECONNREFUSED/)
    const second = await poller.poll(1000)
    assert.equal(second.ok, false)
    assert.doesNotMatch((second as Extract<PollAnswer, {ok: false}>).error, /Topology is closed/)
    up = true
    const third = await poller.poll(1000)
    assert.equal(third.ok, true, JSON.stringify(third))
    assert.equal((third as Extract<PollAnswer, {ok: true}>).processKey, 'db1:27017#42')
    await poller.close()
    assert.deepEqual(log, ['open', 'close', 'open', 'close', 'open', 'close'])
  })

  test('an opener that rejects (a name that does not resolve) is a failure with its error, tried again next round', async () => {
    let attempts = 0
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND rs.pooltool.invalid'), {code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname: 'rs.pooltool.invalid'})
    const poller = new HostPoller(
      host,
      async () => {
        attempts += 1
        throw notFound
      },
      settings,
      [host],
    )
    for (let i = 0; i < 2; i++) {
      const answer = (await poller.poll(1000)) as Extract<PollAnswer, {ok: false}>
      assert.equal(answer.state, 'unreachable')
      assert.match(answer.error, /does not resolve \(getaddrinfo ENOTFOUND rs\.pooltool\.invalid\)/)
    }
    assert.equal(attempts, 2)
    await poller.close()
  })

  test('host names to look up: brackets and ports stripped', () => {
    assert.equal(hostnameOf('rs.pooltool.invalid:27018'), 'rs.pooltool.invalid')
    assert.equal(hostnameOf('[::1]:27017'), '::1')
    assert.equal(hostnameOf('db1'), 'db1')
  })

  test('a host that answers keeps its one connection', async () => {
    const log: string[] = []
    const poller = new HostPoller(host, () => fakeConnection(() => ({host: 'db1:27017', ...serverStatus44}), log), settings, [host])
    for (let i = 0; i < 3; i++) assert.equal((await poller.poll(1000)).ok, true)
    await poller.close()
    assert.deepEqual(log, ['open', 'close'])
  })

  test('a retry still under way at the deadline reports the last real error, not "no answer"', async () => {
    const log: string[] = []
    let opened = 0
    const poller = new HostPoller(
      host,
      () => {
        opened += 1
        // The first connection fails at once; the retry hangs (a name that resolves slowly, a SYN that gets no answer).
        if (opened === 1) return fakeConnection(() => { throw Object.assign(new Error('getaddrinfo ENOTFOUND rs.pooltool.invalid'), {name: 'MongoServerSelectionError'}) }, log)
        return {reader: new ServerReader({host: host.host, command: () => new Promise(() => undefined)}), close: async () => void log.push('close')}
      },
      settings,
      [host],
    )
    assert.match((await poller.poll(1000) as Extract<PollAnswer, {ok: false}>).error, /ENOTFOUND/)
    assert.match((await poller.poll(20) as Extract<PollAnswer, {ok: false}>).error, /ENOTFOUND/)
    assert.equal(opened, 2)
    const fresh = new HostPoller(host, () => ({reader: new ServerReader({host: host.host, command: () => new Promise(() => undefined)}), close: async () => undefined}), settings, [host])
    assert.match((await fresh.poll(20) as Extract<PollAnswer, {ok: false}>).error, /no answer within 20 ms/, 'a host never seen failing: no answer')
    await poller.close()
    await fresh.close()
  })
})

describe('server clock', () => {
  test("the skew comes from serverStatus localTime, is kept per host and said once in the notes", async () => {
    const log: string[] = []
    const poller = new HostPoller(host, () => fakeConnection(() => ({host: 'db1:27017', ...serverStatus44, localTime: new Date(Date.now() + 10 * 60_000)}), log), settings, [host])
    const answer = (await poller.poll(1000)) as Extract<PollAnswer, {ok: true}>
    await poller.close()
    assert.ok(Math.abs(answer.clockSkewMS! - 600_000) < 5000, `skew ${answer.clockSkewMS}`)
    const t = new HostTracker(host, 60_000)
    t.record(answer)
    t.record(answer)
    const s = t.summary()
    assert.equal(s.clockSkewMS, answer.clockSkewMS)
    const notes = connsNotes({warnings: []}, [s])
    assert.equal(notes.filter((n) => n.includes('clock')).length, 1)
    assert.match(notes.find((n) => n.includes('clock'))!, /db1\.example\.net:27017's clock is 600\.\d s ahead of this machine's/)
  })
})

describe('a replay', () => {
  test('clocks as captured are not a skew: one note names the capture time instead', () => {
    const notes = connsNotes({warnings: [], replayOf: {capturedAt: '2024-05-01T12:00:00.000Z'}}, [{host: 'b:2', state: 'ok', clockSkewMS: -86_400_000}])
    assert.deepEqual(notes, ['a replay of a snapshot captured at 2024-05-01T12:00:00.000Z: figures and server clocks are as captured'])
  })
})

describe('connection limit and % used', () => {
  test('limit = current + available; % used of it', () => {
    assert.deepEqual(connectionLimit(parseConnections(serverStatus70)!), {maxIncoming: 838_860, usedPct: 0})
    assert.deepEqual(connectionLimit({current: 80, available: 20}), {maxIncoming: 100, usedPct: 80})
  })
  test('8.2 with the establishment rate limiter: queued connections count against the limit too', () => {
    const c = parseConnections(serverStatus82)!
    assert.equal(connectionLimit(c).maxIncoming, c.current + c.available + 1)
  })
  test('a limit of 0 has no percentage', () => {
    assert.deepEqual(connectionLimit({current: 0, available: 0}), {maxIncoming: 0})
  })
})

/** A poll answer built from a serverStatus document, as the poller makes it. */
function answerOf(status: Document, atMS: number): PollAnswer {
  const answer: PollAnswer = {ok: true, atMS, connections: parseConnections(status)}
  const globalLock = parseGlobalLock(status)
  if (globalLock) answer.globalLock = globalLock
  const lockWaits = parseLockWaits(status)
  if (lockWaits) answer.lockWaits = lockWaits
  return answer
}

const withWaits = (waits: number, micros: number, totalCreated = 9999) => ({
  ...serverStatus70,
  connections: {...serverStatus70.connections, totalCreated: Long.fromNumber(totalCreated)},
  locks: {Collection: {acquireWaitCount: {w: Long.fromNumber(waits)}, timeAcquiringMicros: {w: Long.fromNumber(micros)}}},
})

describe('lock queues and lock-wait rates per host', () => {
  test('queues as read; wait rates per second between two answers, summed over resources and modes', () => {
    const t = new HostTracker(host, 60_000)
    const first = t.record(answerOf(withWaits(10, 1_000), 0)).sample
    assert.deepEqual(first.lockQueue, {total: 7, readers: 0, writers: 7})
    assert.deepEqual(first.activeClients, {total: 31, readers: 1, writers: 3})
    assert.equal(first.lockWaitsPerSec, undefined, 'a rate needs two answers')
    assert.equal(first.maxIncoming, 838_860)
    const second = t.record(answerOf(withWaits(30, 501_000), 2000)).sample
    assert.equal(second.lockWaitsPerSec, 10)
    assert.equal(second.lockWaitUsPerSec, 250_000)
    const s = t.summary()
    assert.deepEqual(s.lockWaitsPerSec, {max: 10, mean: 10})
    assert.deepEqual(s.lockQueueTotal, {max: 7, last: 7})
    assert.equal(s.maxIncoming, 838_860)
    assert.deepEqual(s.usedPct, {max: 0, last: 0})
  })

  test('a server that does not send globalLock / locks: absent, never 0', () => {
    const t = new HostTracker({host: 'mongos1:27017', role: 'mongos'}, 60_000)
    t.record(answerOf(serverStatus60, 0))
    const {sample} = t.record(answerOf(serverStatus60, 1000))
    assert.equal('lockQueue' in sample, false)
    assert.equal('activeClients' in sample, false)
    assert.equal('lockWaitsPerSec' in sample, false)
    assert.equal('lockWaitUsPerSec' in sample, false)
    const s = t.summary()
    assert.deepEqual(s.lockWaitsPerSec, {max: undefined, mean: undefined})
    assert.equal(JSON.parse(JSON.stringify(s)).lockQueueTotal.max, undefined)
  })

  test('no rate across a restart (the counters start again)', () => {
    const t = new HostTracker(host, 60_000)
    t.record(answerOf(withWaits(100, 9_000, 500), 0))
    const {sample} = t.record(answerOf(withWaits(2, 100, 3), 1000))
    assert.equal(sample.counterReset, true)
    assert.equal(sample.lockWaitsPerSec, undefined)
  })
})

describe('reachable from here', () => {
  test('a host that never answered is marked reachedFromHere: false; once it answered, the mark goes', () => {
    const t = new HostTracker(host, 60_000)
    const down = t.record({ok: false, state: 'unreachable', error: 'getaddrinfo ENOTFOUND db1.example.net'}).sample
    assert.equal(down.reachedFromHere, false)
    assert.equal(t.summary().reachedFromHere, false)
    t.record(answerOf(serverStatus70, 0))
    const later = t.record({ok: false, state: 'unreachable', error: 'connect ECONNREFUSED'}).sample
    assert.equal('reachedFromHere' in later, false)
    assert.equal(t.summary().reachedFromHere, true)
  })
})

describe('conns list exit', () => {
  test('exit 4 only when no host answered; an unauthorized host answered', () => {
    assert.equal(noHostAnswered({hosts: [{host: 'a:1', role: 'primary', state: 'unreachable'}, {host: 'b:2', role: 'secondary', state: 'unreachable'}]}), true)
    assert.equal(noHostAnswered({hosts: [{host: 'a:1', role: 'primary', state: 'unreachable'}, {host: 'b:2', role: 'secondary', state: 'ok'}]}), false)
    assert.equal(noHostAnswered({hosts: [{host: 'a:1', role: 'primary', state: 'unauthorized'}]}), false)
  })
})

describe('one row per process', () => {
  test('the process key is serverStatus.host with the pid', () => {
    assert.equal(processKey('mongos1:27017', 77), 'mongos1:27017#77')
    assert.equal(processKey('mongos1:27017', undefined), 'mongos1:27017')
    assert.equal(processKey(undefined, 77), undefined)
  })
  test("two names answering as one process: the entry node's row is kept, whichever answered first", () => {
    const same = new SameProcess()
    assert.deepEqual(same.merge([{index: 0, processKey: 'm:1#1', entry: false}, {index: 2, processKey: 'm:1#1', entry: true}, {index: 1, processKey: 'x#2', entry: false}]), [{kept: 2, alias: 0}])
    // A third name turning up later is merged into the same kept row.
    assert.deepEqual(same.merge([{index: 2, processKey: 'm:1#1', entry: true}, {index: 5, processKey: 'm:1#1', entry: false}]), [{kept: 2, alias: 5}])
  })
  test('without an entry node, the one discovery listed first', () => {
    assert.deepEqual(new SameProcess().merge([{index: 3, processKey: 'k', entry: false}, {index: 1, processKey: 'k', entry: false}]), [{kept: 1, alias: 3}])
  })
  test('the kept row lists the alias', () => {
    const t = new HostTracker({host: 'localhost:27017', role: 'mongos', entry: true, address: 'localhost:27017'}, 60_000)
    t.addAlias('mongos1.example.net:27017')
    t.addAlias('mongos1.example.net:27017')
    assert.deepEqual(t.summary().aliases, ['mongos1.example.net:27017'])
    assert.equal(t.summary().entry, true)
  })
})

describe('findings', () => {
  const routers = (versions: Array<string | undefined>): ClusterHost[] =>
    versions.map((v, i) => ({host: `mongos${i}:27017`, role: 'mongos', ...(v === undefined ? {} : {mongoVersion: v})}))

  test('routers of mixed versions (from config.mongos) are a finding, ordered by version', () => {
    assert.deepEqual(topologyFindings({hosts: routers(['7.0.14', '4.4.29', '7.0.14'])}), [
      'routers run mixed versions: 4.4.29 (mongos1:27017); 7.0.14 (mongos0:27017, mongos2:27017)',
    ])
    assert.deepEqual(topologyFindings({hosts: routers(['7.0.14', '7.0.14', undefined])}), [])
  })

  test('an empty config.mongos is a finding; unread (undefined) is not', () => {
    assert.match(topologyFindings({hosts: [], configMongosCount: 0})[0]!, /config\.mongos is empty/)
    assert.deepEqual(topologyFindings({hosts: []}), [])
    assert.deepEqual(topologyFindings({hosts: [], configMongosCount: 2}), [])
  })

  test('notes: not reachable from here, aliases, and a clock off by more than 5 s, once per host', () => {
    const notes = connsNotes({warnings: []}, [
      {host: 'rs1.pooltool.invalid:27018', state: 'unreachable', reachedFromHere: false},
      {host: 'a:1', state: 'unreachable', reachedFromHere: true},
      {host: 'b:2', state: 'ok', clockSkewMS: -7200, aliases: ['localhost:2']},
      {host: 'c:3', state: 'ok', clockSkewMS: 4000},
    ])
    assert.deepEqual(notes, [
      'b:2 is also named localhost:2 (same serverStatus.host): polled once',
      'not reachable from here (never answered): rs1.pooltool.invalid:27018',
      'unreachable at the end: a:1',
      "b:2's clock is 7.2 s behind this machine's: ages are judged on the server's clock",
    ])
  })
})
