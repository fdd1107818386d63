/**
 * `pooltool snapshot` then `pooltool sim --replay` as a user runs them (built CLI, real
 * TCP, the official driver): every command against the replay gives the figures the
 * commands computed at capture time (the file's `views`), host names mapped to the
 * replay's listeners; a read that failed at capture fails the same way in the replay;
 * credentials never reach the file; --redact-hosts leaves no name or address behind.
 *
 * The replays and the first capture are real processes (`sim --replay` has to outlive the
 * commands pointed at it), and so are one locks list and one locks pings against a replay.
 * The other reads against them, the polls and the other captures run in this process by the
 * path bin/run.js takes (test/helpers/in-process.ts: the same code, real TCP, output and exit
 * code captured), sparing a Node start and CLI load per run. One run per command and exit
 * path stays spawned here or elsewhere in the suite.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {EJSON} from 'bson'
import {MongoClient, MongoServerError} from 'mongodb'
import {ConnectionString} from 'mongodb-connection-string-url'

import {MAX_SNAPSHOT_BYTES} from '../../src/replay/run.js'
import {rewriteNames} from '../../src/snapshot/rewrite.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {type ReplayHandle, startReplay} from '../helpers/replay.js'
import {waitForState} from '../helpers/sim.js'

const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-snapshot-'))
after(() => rmSync(dir, {recursive: true, force: true}))

/** The file as plain JSON values (relaxed EJSON), for comparing with the commands' --json output. */
const readSnapshot = (file: string): any => EJSON.parse(readFileSync(file, 'utf8'), {relaxed: true})

/** A captured view with every captured host name replaced by the replay's listener for it. */
const asReplayed = (view: unknown, replay: ReplayHandle): any => rewriteNames(view, new Map(Object.entries(replay.hosts)))

/** What conns list says of each host that must be the same at capture and replay. */
const connsFigures = (result: any) =>
  result.hosts.map((h: any) => ({host: h.host, role: h.role, state: h.state, current: h.current, available: h.available, totalCreated: h.totalCreated, active: h.active, holders: h.holders, pools: h.pools}))

/** How long a replayed command ran after the capture's views were computed, at most (the capture, then the replay's start, then the command). */
const REPLAY_SLACK_MS = 120_000

/**
 * The replay's clock is the capture's plus the time since it began (`offsetMS`: a test's jump ahead), and
 * every time it serves moved with it: a lock's `since` and its holder's last ping moved by as much as the
 * clock, so the ages (and the verdicts drawn from them) are the capture's.
 */
function assertFrozenAtCapture(replayed: any, captured: any, offsetMS: number): void {
  const moved = Date.parse(replayed.now) - Date.parse(captured.now)
  assert.ok(moved > offsetMS - 5_000 && moved < offsetMS + REPLAY_SLACK_MS, `the replay's clock is the capture's + ${moved} ms (offset ${offsetMS})`)
  for (const lock of replayed.locks) {
    const then = captured.locks.find((l: any) => l.name === lock.name)
    if (then.since) assert.ok(Math.abs(Date.parse(lock.since) - Date.parse(then.since) - moved) < 5_000, `${lock.name}: since moved with the clock`)
    if (then.holderPingAgeMS !== null && then.holderPingAgeMS !== undefined) {
      assert.ok(Math.abs(lock.holderPingAgeMS - then.holderPingAgeMS) < 5_000, `${lock.name}: holder ping age ${lock.holderPingAgeMS} ms, ${then.holderPingAgeMS} ms at capture`)
    }
  }
}

/** Each process's ping age is the capture's (its ping moved with the replay's clock). */
function assertPingsFrozen(replayed: any, captured: any, offsetMS: number): void {
  const moved = Date.parse(replayed.now) - Date.parse(captured.now)
  assert.ok(moved > offsetMS - 5_000 && moved < offsetMS + REPLAY_SLACK_MS, `the replay's clock is the capture's + ${moved} ms (offset ${offsetMS})`)
  for (const ping of replayed.pings) {
    const then = captured.pings.find((p: any) => p.process === ping.process)
    if (then?.ageMS !== undefined && then.ageMS !== null) assert.ok(Math.abs(ping.ageMS - then.ageMS) < 5_000, `${ping.process}: ping age ${ping.ageMS} ms, ${then.ageMS} ms at capture`)
  }
}

describe('snapshot and replay of a sharded 4.4 cluster with a dead lock holder', {timeout: 120_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, scenarios: ['upgraded-from-3.4', 'dead-lock-holder']})
  const file = path.join(dir, 'sharded.json')
  let replay: ReplayHandle
  let snapshot: any

  before(async () => {
    // Capture once the dead holder's lock is stale: a verdict that only ages further in the replay.
    await waitForState(
      'the dead holder\'s lock is stale',
      async () => parseJson(await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])),
      (r) => r.locks.some((l: any) => l.verdict === 'stale'),
    )
    const capture = await runCli(['snapshot', '--json', '--out', file, '--uri', cluster.uri])
    assert.equal(capture.code, 0, capture.stderr)
    const summary = parseJson(capture)
    assert.equal(summary.file, file)
    assert.deepEqual(summary.views, ['conns list', 'locks list', 'locks pings'])
    assert.ok(summary.hosts.length >= 4 && summary.hosts.every((h: any) => h.reads > 0 && h.errors === 0), JSON.stringify(summary.hosts))
    snapshot = readSnapshot(file)
    replay = await startReplay(file)
  })

  after(async () => {
    assert.equal(await replay?.stop(), 0, 'Ctrl-C stops the replay cleanly')
  })

  it('keeps the number types the server sent: an Int64 counter is $numberLong, not a JS number', () => {
    const typed = EJSON.parse(readFileSync(file, 'utf8'), {relaxed: false})
    // a router has no globalLock section: take a mongod's serverStatus
    const status = typed.hosts.flatMap((h: any) => h.reads).find((r: any) => r.name === 'serverStatus' && r.reply?.globalLock)?.reply
    assert.ok(status, 'a serverStatus with globalLock was captured')
    assert.equal(status.globalLock.totalTime?._bsontype, 'Long', 'globalLock.totalTime is an int64 on the server')
    assert.equal(status.connections.current?._bsontype, 'Int32', 'connections.current is an int32 on the server')
  })

  it('writes every host with its clock and reads, in canonical Extended JSON', () => {
    const text = readFileSync(file, 'utf8')
    assert.match(text, /"\$date": \{\s*"\$numberLong"/, 'canonical dates')
    assert.match(text, /"\$timestamp"/, 'Timestamps kept as such')
    assert.equal(snapshot.format, 'pooltool-snapshot')
    assert.equal(snapshot.formatVersion, 2)
    const names = snapshot.hosts.map((h: any) => h.host)
    assert.deepEqual(Object.keys(replay.hosts), names, 'one listener per captured host')
    for (const host of snapshot.hosts) {
      assert.ok(host.clock?.serverTime instanceof Date, `${host.host} has its server clock`)
      for (const name of ['hello', 'buildInfo', 'hostInfo', 'serverStatus']) assert.ok(host.reads.some((r: any) => r.name === name), `${host.host} ${name}`)
    }
    assert.equal(snapshot.hosts.filter((h: any) => h.role === 'mongos').length, 2)
  })

  it('conns list against the replay gives the captured hosts, roles, counts, pools and holders', async () => {
    const run = await runInProcess(['conns', 'list', '--json', '--uri', replay.uri])
    assert.equal(run.code, 0, run.stderr)
    const replayed = parseJson(run)
    const captured = asReplayed(snapshot.views['conns list'], replay)
    assert.equal(replayed.topology.kind, 'sharded')
    assert.deepEqual(connsFigures(replayed), connsFigures(captured))
    assert.ok(replayed.hosts.every((h: any) => typeof h.current === 'number'), 'figures, not unknowns')
  })

  it('locks list against the replay gives the captured lock rows and verdicts', async () => {
    // Spawned, as is locks pings below: each command's real process against a replay (conns list's is in conns-replay-findings).
    const run = await runCli(['locks', 'list', '--json', '--uri', replay.uri])
    assert.equal(run.code, 0, run.stderr)
    const replayed = parseJson(run)
    const captured = asReplayed(snapshot.views['locks list'], replay)
    assert.equal(replayed.serverVersion, '4.4.29')
    assert.equal(replayed.expiryMS, captured.expiryMS, 'the embedded time scale comes from the captured hostInfo')
    // A live holder's last ping is left out: the capture read config.lockpings again after this view (for locks pings),
    // and a replay serves the latest read of a request. A dead holder's ping stood still: it is the same.
    const rows = (r: any) =>
      r.locks.map((l: any) => ({name: l.name, state: l.state, process: l.process, who: l.who, why: l.why, verdict: l.verdict, holder: l.holder}))
    assert.deepEqual(rows(replayed), rows(captured))
    assert.deepEqual(replayed.locks.map((l: any) => l.verdict).sort(), ['balancer', 'stale'])
    assertFrozenAtCapture(replayed, captured, 0)
  })

  it('node locks: every shard and config primary locks list read is in the file, and the replay gives its views as captured', async () => {
    const captured = asReplayed(snapshot.views['locks list'], replay)
    const listed = snapshot.views['locks list'].nodes.map((n: any) => n.host).sort()
    assert.ok(listed.length >= 3, `the shards' and the config server's primaries: ${listed}`)
    assert.deepEqual(snapshot.hosts.filter((h: any) => h.nodeLocks).map((h: any) => h.host).sort(), listed)
    for (const host of snapshot.hosts.filter((h: any) => h.nodeLocks)) assert.deepEqual(host.nodeLocks, {currentOp: 'captured', serverStatus: 'captured', lockInfo: 'captured'}, host.host)
    assert.ok(snapshot.hosts.filter((h: any) => h.role === 'mongos').every((h: any) => h.nodeLocks === undefined), 'a router keeps no node locks')
    const replayed = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', replay.uri]))
    const nodes = (r: any) => r.nodes.map((n: any) => ({host: n.host, role: n.role, lockInfo: n.lockInfo, blocking: n.view?.blocking, waits: n.view?.waits, tickets: n.view?.tickets}))
    assert.deepEqual(nodes(replayed), nodes(captured))
    assert.deepEqual(replayed.rootBlockers, captured.rootBlockers)
  })

  it('locks pings against the replay gives the captured processes, what they hold, and the dead ones dead', async () => {
    const run = await runCli(['locks', 'pings', '--json', '--uri', replay.uri])
    assert.equal(run.code, 0, run.stderr)
    const replayed = parseJson(run)
    const captured = asReplayed(snapshot.views['locks pings'], replay)
    // Sorted by process: the command orders rows by age and liveness, which move on in the replay.
    const rows = (r: any) => r.pings.map((p: any) => ({process: p.process, holds: p.holds, role: p.role, host: p.host, alive: p.alive})).sort((a: any, b: any) => a.process.localeCompare(b.process))
    assert.deepEqual(rows(replayed), rows(captured), 'the same processes, alive or dead as at capture')
    assert.ok(captured.pings.some((p: any) => !p.alive), 'the dead holder was dead at capture')
    assertPingsFrozen(replayed, captured, 0)
  })

  it('5 minutes into the replay (its clock moved on 5 min), the verdicts are still the capture\'s: nobody declared dead, ages as captured', async () => {
    assert.ok(replay.notes.some((n) => /frozen at capture/.test(n)), `the replay says how its clocks run: ${JSON.stringify(replay.notes)}`)
    const later = await startReplay(file, {args: ['--replay-clock-offset', '5m']})
    try {
      const conns = parseJson(await runInProcess(['conns', 'list', '--json', '--uri', later.uri]))
      assert.deepEqual(connsFigures(conns), connsFigures(asReplayed(snapshot.views['conns list'], later)))
      assert.ok(conns.hosts.every((h: any) => h.state === 'ok'), JSON.stringify(conns.hosts.map((h: any) => [h.host, h.state])))
      const locks = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', later.uri]))
      const capturedLocks = asReplayed(snapshot.views['locks list'], later)
      assert.deepEqual(locks.locks.map((l: any) => [l.name, l.verdict]), capturedLocks.locks.map((l: any) => [l.name, l.verdict]))
      assertFrozenAtCapture(locks, capturedLocks, 5 * 60_000)
      const pings = parseJson(await runInProcess(['locks', 'pings', '--json', '--uri', later.uri]))
      const capturedPings = asReplayed(snapshot.views['locks pings'], later)
      const alive = (r: any) => r.pings.map((p: any) => [p.process, p.alive]).sort()
      assert.deepEqual(alive(pings), alive(capturedPings), 'no process declared dead that was alive at capture')
      assertPingsFrozen(pings, capturedPings, 5 * 60_000)
    } finally {
      await later.stop()
    }
  })

  it('says what was not captured, and refuses writes', async () => {
    const client = new MongoClient(replay.uri, {serverSelectionTimeoutMS: 5000})
    try {
      await assert.rejects(client.db('admin').command({listDatabases: 1}), (e: unknown) => e instanceof MongoServerError && e.code === 59 && /was not captured in .*sharded\.json/.test(e.message))
      await assert.rejects(client.db('shop').collection('orders').insertOne({x: 1}), /insert was not run: a replay is read only/)
    } finally {
      await client.close()
    }
  })
})

describe('snapshot of a replica set read by a user without clusterMonitor', {timeout: 120_000}, () => {
  const cluster = useCluster({topology: 'replset', auth: true})
  const file = path.join(dir, 'replset.json')
  const password = 'watcher-pw-7f3c9'
  let userUri: string
  let replay: ReplayHandle

  before(async () => {
    const admin = new MongoClient(cluster.uri, {serverSelectionTimeoutMS: 5000})
    try {
      await admin.db('admin').command({createUser: 'watcher', pwd: password, roles: [{role: 'read', db: 'shop'}]})
    } finally {
      await admin.close()
    }
    const cs = new ConnectionString(cluster.uri)
    cs.username = 'watcher'
    cs.password = password
    userUri = cs.toString()
    const capture = await runInProcess(['snapshot', '--out', file, '--uri', userUri])
    assert.equal(capture.code, 0, capture.stderr)
    replay = await startReplay(file)
  })

  after(async () => {
    await replay?.stop()
  })

  it('keeps no credentials in the file', () => {
    const text = readFileSync(file, 'utf8')
    assert.ok(!text.includes(password), 'the password is nowhere')
    assert.ok(!text.includes(cluster.sim.info.credentials!.password), 'nor the root password')
    const snapshot = readSnapshot(file)
    assert.doesNotMatch(snapshot.entry.uri, /@|watcher|authSource/)
    assert.match(snapshot.entry.uri, /replicaSet=rs0/)
  })

  it('replays the members with the captured options, and a read that failed at capture fails the same way', async () => {
    const snapshot = readSnapshot(file)
    assert.match(replay.uri, /^mongodb:\/\/127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+){2}\/\?replicaSet=rs0$/)
    const captured = snapshot.hosts[0].reads.find((r: any) => r.name === 'hostInfo')
    assert.equal(captured.error?.codeName, 'Unauthorized', JSON.stringify(captured))
    const client = new MongoClient(replay.uri, {serverSelectionTimeoutMS: 5000})
    try {
      await assert.rejects(client.db('admin').command({hostInfo: 1}), (e: unknown) => e instanceof MongoServerError && e.code === 13 && e.message === captured.error.message)
    } finally {
      await client.close()
    }
    const run = await runInProcess(['conns', 'list', '--json', '--uri', replay.uri])
    assert.equal(run.code, 0, run.stderr)
    const replayed = parseJson(run)
    const view = asReplayed(snapshot.views['conns list'], replay)
    assert.deepEqual(replayed.hosts.map((h: any) => [h.host, h.role, h.state]), view.hosts.map((h: any) => [h.host, h.role, h.state]))
    assert.ok(replayed.hosts.every((h: any) => h.state === 'unauthorized'), 'serverStatus was refused at capture: refused in the replay')
  })

  it('says the node-lock reads were not permitted, and locks list against the replay says the node locks are unknown as it did live', async () => {
    const snapshot = readSnapshot(file)
    const members = snapshot.hosts.filter((h: any) => h.nodeLocks)
    assert.equal(members.length, 3, JSON.stringify(snapshot.hosts.map((h: any) => [h.host, h.nodeLocks])))
    for (const {host, nodeLocks} of members) {
      assert.match(nodeLocks.currentOp, /^not permitted: /, host)
      assert.match(nodeLocks.lockInfo, /^not permitted: /, host)
    }
    const replayed = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', replay.uri]))
    const view = asReplayed(snapshot.views['locks list'], replay)
    assert.deepEqual(replayed.nodes.map((n: any) => [n.host, n.view, n.error?.code]), view.nodes.map((n: any) => [n.host, null, n.error?.code]))
    assert.ok(replayed.nodes.every((n: any) => n.error?.code === 'UNAUTHORIZED'), JSON.stringify(replayed.nodes.map((n: any) => n.error)))
  })

  it('refuses credentials: the driver is told to leave them out, pooltool exits as for failed authentication', async () => {
    const cs = new ConnectionString(replay.uri)
    cs.username = 'watcher'
    cs.password = password
    const client = new MongoClient(cs.toString(), {serverSelectionTimeoutMS: 5000})
    try {
      await assert.rejects(client.db('admin').command({ping: 1}), /a replay serves reads without authentication: leave credentials out of the URI/)
    } finally {
      await client.close()
    }
    const run = await runInProcess(['conns', 'list', '--uri', cs.toString()])
    assert.equal(run.code, 5, run.stderr)
    assert.match(run.stderr, /it is a replay of a snapshot, which has no users/, 'the user is told why, not to check the password')
    assert.ok(!run.stderr.includes(password))
  })
})

describe('snapshot --redact-hosts of the embedded cluster', {timeout: 120_000}, () => {
  it('leaves no host name or address in the file, and the redacted file still replays', async () => {
    const file = path.join(dir, 'redacted.json')
    const capture = await runInProcess(['snapshot', '--redact-hosts', '--out', file])
    assert.equal(capture.code, 0, capture.stderr)
    const text = readFileSync(file, 'utf8')
    assert.doesNotMatch(text, /127\.0\.0\.1|localhost/)
    assert.doesNotMatch(text, /(?<![0-9.])(?:\d{1,3}\.){3}\d{1,3}(?![0-9])/, 'no IPv4 address')
    const snapshot = readSnapshot(file)
    assert.equal(snapshot.redactedHosts, true)
    assert.ok(snapshot.hosts.every((h: any) => /^host-\d+\.redacted:\d+$/.test(h.host)), JSON.stringify(snapshot.hosts.map((h: any) => h.host)))
    const replay = await startReplay(file)
    try {
      const replayed = parseJson(await runInProcess(['conns', 'list', '--json', '--uri', replay.uri]))
      assert.deepEqual(connsFigures(replayed), connsFigures(asReplayed(snapshot.views['conns list'], replay)))
    } finally {
      await replay.stop()
    }
  })
})

describe('snapshot and replay refuse what cannot work, before any work', () => {
  it('snapshot: --json without --out, and an --out that is a directory, are usage errors', async () => {
    const json = await runCli(['snapshot', '--json', '--uri', 'mongodb://127.0.0.1:1/'])
    assert.equal(json.code, 2, json.stderr + json.stdout)
    assert.match(json.stdout, /add --out FILE/)
    const directory = await runInProcess(['snapshot', '--out', dir, '--uri', 'mongodb://127.0.0.1:1/'])
    assert.equal(directory.code, 2, directory.stderr)
    assert.match(directory.stderr, /is a directory/)
  })

  it('sim --replay: a missing file, a file that is not a snapshot, and cluster-shape flags are usage errors', async () => {
    const missing = await runCli(['sim', '--replay', path.join(dir, 'nope.json')])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /nope\.json does not exist/)
    const other = path.join(dir, 'other.json')
    writeFileSync(other, '{"format": "something-else"}')
    const wrong = await runInProcess(['sim', '--replay', other])
    assert.equal(wrong.code, 2)
    assert.match(wrong.stderr, /other\.json is not a pooltool snapshot/)
    // Over the cap (a sparse file): refused from its size, not parsed (Extended JSON holds several times a file's size).
    const huge = path.join(dir, 'huge.json')
    writeFileSync(huge, '')
    truncateSync(huge, MAX_SNAPSHOT_BYTES + 1)
    const tooBig = await runInProcess(['sim', '--replay', huge])
    assert.equal(tooBig.code, 2, tooBig.stderr)
    assert.match(tooBig.stderr, /--replay .*huge\.json is [\d,]+ bytes, over the 256 MiB a snapshot may be/)
    const shaped = await runInProcess(['sim', '--replay', other, '--topology', 'replset'])
    assert.equal(shaped.code, 2)
    assert.match(shaped.stderr, /--topology=replset cannot also be provided when using --replay/)
  })
})
