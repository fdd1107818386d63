/**
 * `pooltool locks list | pings | watch` against the embedded 4.4 cluster with a dead lock
 * holder, at time scale 0.01 (ping 300 ms, expiry 9 s, DDL lock wait 200 ms): the lock is
 * held, then stale after the expiry, and a later DDL overtakes it.
 *
 * The waits are for states, not for fixed times: the lock turns stale when the dead
 * holder's last ping is one expiry old, and the config server lets a DDL overtake it once
 * it has watched that ping stand still for one expiry since its first look (the first,
 * refused DDL). The sim runs on this machine's clock, so both instants are known here.
 *
 * On the same cluster, `locks watch` covers the whole --duration, prints events in time
 * order, and takes hold times from the lock documents: a DDL that takes and frees its locks
 * between two polls is a bound labelled as such, never a hold figure equal to the poll
 * interval; and `locks list` says when a released lock was last taken.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {MongoClient, MongoServerError} from 'mongodb'

import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer, serverFigureGrew} from '../helpers/faults.js'
import {runInProcess} from '../helpers/in-process.js'
import {CliOutput} from '../helpers/output.js'
import {waitForState} from '../helpers/sim.js'

const EXPIRY_MS = 9000
const PING_INTERVAL_MS = 300
/** Pinged within three intervals: alive. */
const ALIVE_MS = 3 * PING_INTERVAL_MS

/** Waits until this machine's clock (the sim's) has reached `instantMs`. */
const clockReached = (what: string, instantMs: number) => waitForState(what, async () => Date.now(), (now) => now >= instantMs)

/** finds served by the router: each locks watch poll runs at least four (config.locks, lockpings, mongos, shards). */
const finds = (status: any): number => Number(status.opcounters?.query ?? 0)

describe('locks on the 4.4 profile with a dead lock holder', {timeout: 150_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, scenarios: ['upgraded-from-3.4', 'dead-lock-holder'], mongos: 1})
  let client: MongoClient
  let router: MongoClient

  before(() => {
    client = new MongoClient(cluster.uri, {serverSelectionTimeoutMS: 5000})
    router = observer(cluster.uri)
  })

  after(async () => {
    await client?.close()
    await router?.close()
  })

  it('shows the lock held, then stale after the expiry, then overtaken by a later DDL', async () => {
    const uri = cluster.uri
    // In this process (test/helpers/in-process.ts, the path bin/run.js takes): the holder died as the cluster started,
    // and a spawned run's start at load 16 once read it only after the expiry (stale, not held). So do the other
    // reads here, sparing a Node start and CLI load each: locks list's and locks pings' real processes are in
    // snapshot-replay and hostile-strings; the two watches stopped by a signal stay spawned.
    const first = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', uri]))
    assert.equal(first.model, 'config.locks')
    assert.equal(first.serverVersion, '4.4.29')
    assert.equal(first.expiryMS, EXPIRY_MS)
    const held = first.locks.find((l: any) => l.name === 'scenario.orders')
    assert.ok(held, JSON.stringify(first.locks))
    assert.equal(held.state, 'locked')
    // Held while the holder's last ping is younger than the expiry, on the config server's clock. The holder died as the
    // cluster started: a machine loaded enough to delay this first read past the expiry must see it stale, the verdict
    // this read's own age implies (a fixed 'held' asked the machine to be fast).
    assert.ok(typeof held.holderPingAgeMS === 'number', JSON.stringify(held))
    assert.equal(held.verdict, held.holderPingAgeMS < EXPIRY_MS ? 'held' : 'stale', `the holder's last ping is ${held.holderPingAgeMS} ms old`)
    assert.match(held.process, /^127\.0\.0\.1:\d+:\d+:-?\d+$/, "host:port:epoch:signed 64-bit random")
    assert.match(held.why, /^splitting chunk .* in scenario\.orders$/)
    for (const key of ['name', 'state', 'process', 'who', 'why', 'since', 'holderLastPing', 'verdict']) assert.ok(key in held, `lock rows have ${key}`)
    assert.equal(first.locks.find((l: any) => l.name === 'balancer')?.verdict, 'balancer')
    const deadPing = first.pings.find((p: any) => p.process === held.process)
    assert.ok(deadPing && typeof deadPing.ageMS === 'number', `the dead holder's ping has an age: ${JSON.stringify(deadPing)}`)
    assert.ok(first.pings.some((p: any) => p.process === 'ConfigServer' && p.alive), 'the config server pings')

    // pings: the dead instance and its restarted successor on the same host:port. A process is
    // dead once its last ping is three ping intervals old.
    await clockReached('the dead holder\'s last ping is three ping intervals old', Date.parse(held.holderLastPing) + ALIVE_MS)
    const pings = parseJson(await runInProcess(['locks', 'pings', '--json', '--uri', uri]))
    assert.equal(pings.target.uri, uri)
    assert.equal(pings.pingIntervalMS, PING_INTERVAL_MS)
    const hostPort = held.process.split(':').slice(0, 2).join(':')
    const sameHost = pings.pings.filter((p: any) => p.process.startsWith(`${hostPort}:`))
    assert.equal(sameHost.length, 2)
    const dead = sameHost.find((p: any) => p.process === held.process)
    assert.equal(dead.alive, false)
    assert.deepEqual(dead.holds, ['scenario.orders'])
    assert.ok(sameHost.some((p: any) => p.process !== held.process && p.alive), 'the restarted instance pings')

    // The watch runs until told to stop: its baseline is the lock held by the dead process.
    let watchProcess: {kill(signal: NodeJS.Signals): boolean} | undefined
    const watch = runCli(['locks', 'watch', '--json', '--uri', uri, '--db', 'scenario', '--interval', '200ms'], {
      timeoutMs: 60_000,
      onSpawn: (child) => (watchProcess = child),
    })
    await waitForState('the watch has polled twice', serverFigureGrew(router, finds, 8).server, (grew) => grew)

    // The first DDL finds the lock held and not yet expired in the config server's eyes: LockBusy after 20 s × 0.01.
    await assert.rejects(client.db('scenario').collection('orders').drop(), (e: unknown) => {
      assert.ok(e instanceof MongoServerError, String(e))
      assert.equal(e.code, 46)
      assert.equal(e.codeName, 'LockBusy')
      assert.equal(e.message, 'timed out waiting for scenario.orders')
      return true
    })
    const firstLookBy = Date.now()

    await clockReached('the dead holder\'s last ping is one expiry old', Date.parse(held.holderLastPing) + EXPIRY_MS)
    const later = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', uri, '--state', 'stale']))
    assert.deepEqual(later.locks.map((l: any) => [l.name, l.verdict]), [['scenario.orders', 'stale']])
    assert.ok(later.locks[0].holderPingAgeMS >= EXPIRY_MS, `ping age ${later.locks[0].holderPingAgeMS} ms`)

    // Once the config server has watched the ping stand still for the expiry, a DDL overtakes the lock.
    await clockReached('the config server has watched the ping stand still for one expiry', firstLookBy + EXPIRY_MS)
    await client.db('scenario').command({drop: 'orders'})

    // Two more polls see the new holder; then Ctrl-C ends the open-ended watch with its summary (exit 0).
    await waitForState('the watch has polled twice since the overtake', serverFigureGrew(router, finds, 8).server, (grew) => grew)
    watchProcess!.kill('SIGINT')
    const run = await watch
    assert.equal(run.code, 0, run.stderr)
    const watched = parseJson(run)
    assert.equal(watched.interrupted, true)
    assert.equal(watched.intervalMS, 200)
    const overtaken = watched.events.filter((e: any) => e.kind === 'overtaken' && e.name === 'scenario.orders')
    assert.equal(overtaken.length, 1, JSON.stringify(watched.events))
    assert.equal(overtaken[0].previousProcess, held.process)
    assert.equal(overtaken[0].process, 'ConfigServer')
    assert.equal(overtaken[0].why, 'dropCollection')
    assert.ok(overtaken[0].holdMS >= EXPIRY_MS, `the dead holder held it at least the expiry (${overtaken[0].holdMS} ms)`)
    const summary = watched.locks.find((l: any) => l.name === 'scenario.orders')
    assert.equal(summary.overtaken, 1)
    assert.ok(summary.holdMS.count >= 1 && summary.holdMS.max >= EXPIRY_MS, JSON.stringify(summary.holdMS))

    const end = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', uri, '--ns', 'scenario.orders']))
    assert.deepEqual(end.locks.map((l: any) => [l.verdict, l.process, l.why]), [['free', 'ConfigServer', 'dropCollection']])
  })

  it('runs the whole --duration: the last poll is at the deadline', async () => {
    const run = await runInProcess(['locks', 'watch', '--json', '--uri', cluster.uri, '--duration', '2s', '--interval', '500ms'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.ok(result.durationMS >= 2000, `covered ${result.durationMS} ms of 2000`)
    assert.equal(result.interrupted, false)
  })

  it('DDL taken and freed between polls: bounded and labelled, kept out of the hold percentiles; events in time order', async () => {
    // --ndjson: each poll ends with its {"type":"nodes"} line, after config.locks was read, so the
    // test knows a poll happened (before, it counted the router's finds, which the node reads and
    // discovery now add to: the DDL could run before the watch's first poll and leave no event).
    const out = new CliOutput()
    const watch = runCli(['locks', 'watch', '--ndjson', '--uri', cluster.uri, '--db', 'quick', '--interval', '1s'], {timeoutMs: 60_000, onSpawn: out.attach})
    await out.until(/^\{"type":"nodes"/m)
    // Each create and drop holds the database lock for a few ms: far less than the 1 s between polls.
    for (let i = 0; i < 4; i++) {
      await client.db('quick').createCollection(`c${i}`)
      await client.db('quick').collection(`c${i}`).drop()
    }
    // A poll under way during the DDL may have read config.locks before it: two more polls' lines, so
    // the second is of a poll begun after the DDL.
    await out.until(/\{"type":"nodes"[\s\S]*\n\{"type":"nodes"/, out.mark())
    out.signal('SIGINT')
    const run = await watch
    assert.equal(run.code, 0, run.stderr)
    const summary = run.stdout.trim().split('\n').at(-1)!
    const result = JSON.parse(summary)
    assert.equal(result.type, 'summary', summary)

    const times = result.events.map((e: any) => Date.parse(e.at))
    assert.deepEqual(times, [...times].sort((a, b) => a - b), `events in time order: ${JSON.stringify(result.events.map((e: any) => [e.kind, e.name, e.at]))}`)
    const releases = result.events.filter((e: any) => e.kind === 'released')
    assert.ok(releases.length > 0, JSON.stringify(result.events))
    for (const e of releases) {
      assert.ok(e.holdBetweenPolls === true || typeof e.holdMinMS === 'number', `every hold is a range or a labelled bound: ${JSON.stringify(e)}`)
    }
    const db = result.locks.find((l: any) => l.name === 'quick')
    assert.ok(db, JSON.stringify(result.locks))
    assert.ok(db.betweenPolls.count >= 1, `holds between polls are counted apart: ${JSON.stringify(db)}`)
    assert.equal(db.holdMS.count + db.betweenPolls.count, db.released + db.overtaken, `each release has one hold, in one of the two: ${JSON.stringify(db)}`)
    assert.equal(db.holdMaxMS.count, db.released + db.overtaken, `every hold has its bounds' percentiles: ${JSON.stringify(db)}`)
    assert.ok(result.notes.some((n: string) => /both bounds are reported \(holdMinMS, holdMaxMS\), never the interval as a duration; one taken and freed between two polls is at least 0 and at most its gap/.test(n)), JSON.stringify(result.notes))
  })

  it('locks list: a released lock says when it was last taken, never "0ms ago"', async () => {
    await client.db('released').createCollection('c')
    const json = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri, '--db', 'released']))
    const db = json.locks.find((l: any) => l.name === 'released')
    assert.ok(db, JSON.stringify(json.locks))
    assert.equal(db.state, 'unlocked')
    assert.equal(db.whenMeans, 'last-taken')
    assert.equal(db.heldMS, null)
    assert.equal(typeof db.sinceAgeMS, 'number')
    assert.ok(Date.parse(db.since) <= Date.parse(json.now), 'since is the last grab, on the server clock')
    const text = await runInProcess(['locks', 'list', '--uri', cluster.uri, '--db', 'released'])
    assert.equal(text.code, 0, text.stderr)
    const row = text.stdout.split('\n').find((line) => line.includes('│ released '))
    assert.ok(row, text.stdout)
    assert.match(row!, /│ last taken [^│]* ago/)
  })
})
