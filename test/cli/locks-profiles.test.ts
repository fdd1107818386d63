/**
 * `pooltool locks list` on the 6.0 and 7.0 profiles (the shapes those versions really have)
 * and on a replica set (list reads the node locks; pings: no config.lockpings there, exit 7, one line).
 *
 * The commands run in this process through the path bin/run.js takes (test/helpers/in-process.ts:
 * the same code over real TCP, output and exit code captured), sparing a Node start and CLI load
 * per run; one stays spawned (locks list on the embedded cluster it starts). Their other runs'
 * real processes are in other files (exit 0: locks list and pings in hostile-strings, locks watch
 * in locks-dead-holder44; exit 2 and 7: bad-input).
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {MongoClient, MongoServerError} from 'mongodb'

import {parseJson, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'
import {useCluster} from '../helpers/cluster.js'
import {waitForState} from '../helpers/sim.js'

describe('locks on the 6.0 profile', {timeout: 60_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '6.0', timeScale: 0.01, scenarios: ['dead-lock-holder']})
  let client: MongoClient
  before(() => {
    client = new MongoClient(cluster.uri, {serverSelectionTimeoutMS: 5000})
  })
  after(async () => {
    await client?.close()
  })

  it('shows shard-name processes, fixed lock ids and terms; one ping per shard name plus config', async () => {
    await client.db('app60').createCollection('c')
    const r = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri]))
    assert.deepEqual(r.target, {uri: cluster.uri, source: '--uri', simulated: false}, 'the envelope names the cluster')
    assert.equal(r.interrupted, false)
    assert.deepEqual(r.notes, ['the embedded cluster runs at time scale 0.01: ping interval 300 ms, expiry 9000 ms'])
    assert.equal(r.model, 'config.locks')
    assert.equal(r.serverVersion, '6.0.20')
    const byName = new Map(r.locks.map((l: any) => [l.name, l]))
    const dead: any = byName.get('scenario.orders')
    assert.equal(dead.process, 'shard02')
    assert.equal(dead.ts, '020000000000000000000000')
    assert.equal(dead.term, 1)
    assert.equal(dead.verdict, 'held', 'the restarted shard pings under the same name')
    const db: any = byName.get('app60')
    assert.equal(db.state, 'unlocked')
    assert.equal(db.ts, '020000000000000000000000')
    assert.equal(db.why, 'createCollection')
    assert.equal((byName.get('app60.c') as any).process, db.process)
    assert.ok(
      r.locks.every((l: any) => l.name === 'balancer' || ['020000000000000000000000', '010000000000000000000000'].includes(l.ts)),
      `every lock has one of the two fixed lock ids: ${JSON.stringify(r.locks.map((l: any) => l.ts))}`,
    )
    assert.ok(!byName.has('balancer'), 'no balancer lock on 3.6+')
    assert.deepEqual(r.pings.map((p: any) => p.process).sort(), ['config', 'shard01', 'shard02'])

    // Shards share one lock session id: a coordinator takes the dead node's lock at once.
    await client.db('scenario').collection('orders').drop()
    const after = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri, '--db', 'scenario']))
    assert.deepEqual(after.locks.map((l: any) => [l.name, l.verdict]), [['scenario', 'free'], ['scenario.orders', 'free']])
  })
})

describe('locks on the 7.0 profile', {timeout: 60_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '7.0', timeScale: 0.01})
  let client: MongoClient
  before(() => {
    client = new MongoClient(cluster.uri, {serverSelectionTimeoutMS: 5000})
  })
  after(async () => {
    await client?.close()
  })

  /** DDL operations waiting for the in-memory lock of `db`, as the router's $currentOp shows them. */
  const waitingCreates = async (db: string): Promise<number> => {
    const ops = await client.db('admin').aggregate([{$currentOp: {allUsers: true}}]).toArray()
    return ops.filter((o) => o.waitingForLock === true && String(o.command?._shardsvrCreateCollection).startsWith(`${db}.`)).length
  }

  it('says the locks moved into memory, shows DDL waiters in $currentOp, and times out with the 6.1+ LockBusy', async () => {
    await client.db('ddl7').createCollection('seed')
    const shards = cluster.sim.info.processes.filter((p) => p.role === 'shard').map((p) => p.host)
    await cluster.sim.control({kind: 'latency', ms: 200, hosts: shards})
    // Creates in one database: its in-memory DDL lock is exclusive, each holds it ≥ 200 ms, the wait limit is 3 s.
    // 20 workers keep creating until the listing has been read, so there are waiters whenever it looks.
    let contending = true
    const errors: MongoServerError[] = []
    const worker = async (w: number) => {
      for (let n = 0; contending; n++) {
        await client.db('ddl7').createCollection(`c${w}_${n}`).catch((e: MongoServerError) => errors.push(e))
      }
    }
    const workers = Array.from({length: 20}, (_, w) => worker(w))
    let r: any
    try {
      await waitForState('a create waits for the ddl7 DDL lock', () => waitingCreates('ddl7'), (waiting) => waiting > 0, 30_000)
      r = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri]))
    } finally {
      contending = false
      await Promise.all(workers)
    }
    assert.equal(r.model, 'in-memory')
    assert.equal(r.serverVersion, '7.0.14')
    assert.match(r.message, /in memory/)
    assert.deepEqual(r.locks, [])
    assert.deepEqual(r.pings, [])
    const ops = r.inMemory.ddlOps
    assert.ok(ops.some((o: any) => o.command === '_shardsvrCreateCollection' && o.waitingForLock === true), JSON.stringify(ops))
    assert.ok(ops.every((o: any) => o.ns === null || o.ns.startsWith('ddl7')), `only ddl7 operations: ${JSON.stringify(ops)}`)
    // The shards come from the one discovery (as conns and bench see them), each read over its own connection.
    assert.deepEqual(r.inMemory.serverStatusLocks.map((s: any) => s.shard).sort(), ['shard01', 'shard02'])
    for (const s of r.inMemory.serverStatusLocks) assert.ok(shards.includes(s.host) && s.unavailable === undefined, JSON.stringify(s))

    // 20 creates at once, each holding the lock ≥ 200 ms: the last ones outwait the 3 s limit.
    assert.ok(errors.length > 0, 'some creates outwaited the 3 s limit')
    for (const e of errors) {
      assert.equal(e.code, 46)
      assert.match(e.message, /^Failed to acquire DDL lock for namespace 'ddl7' after \d+ms that is currently locked with reason 'createCollection'$/)
    }
    const names = await client.db('config').listCollections({}, {nameOnly: true}).toArray()
    assert.ok(!names.some((n) => n.name === 'locks' || n.name === 'lockpings'), `no config.locks / config.lockpings on 7.0: ${JSON.stringify(names)}`)

    const cps = await client.db('admin').command({connPoolStats: 1})
    assert.ok(cps.acquisitionWaitTimes, '6.3+ has acquisitionWaitTimes')
    assert.equal(typeof cps.totalRefreshed, 'number')
  })
})

describe('locks on a replica set', {timeout: 30_000}, () => {
  const cluster = useCluster({topology: 'replset', members: 1})

  it('list reads the node locks (exit 0); pings exits 7 with one line naming the document that cannot exist there', async () => {
    const list = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
    assert.equal(list.code, 0, list.stderr)
    assert.equal(parseJson(list).topology, 'replset')
    const run = await runInProcess(['locks', 'pings', '--uri', cluster.uri])
    assert.equal(run.code, 7)
    assert.equal(run.stdout, '')
    const lines = run.stderr.trim().split('\n')
    assert.equal(lines.length, 1, run.stderr)
    assert.match(lines[0]!, /^Error \[WRONG_TOPOLOGY\]: config\.lockpings cannot exist here: .* is a replica set member \(set 'rs0'\), .* \(hint: .*mongos.*\)$/)
    const json = parseJson(await runInProcess(['locks', 'pings', '--json', '--uri', cluster.uri]))
    assert.equal(json.error.code, 'WRONG_TOPOLOGY')
    assert.equal(json.error.exitCode, 7)
  })
})

describe('locks with no URI: the embedded cluster it starts', {timeout: 120_000}, () => {
  it('7.0 by default, with the command that shows persisted locks; --sim-profile and --sim-scenario change it', async () => {
    // Spawned: locks list's real process starting its own embedded cluster.
    const memory = parseJson(await runCli(['locks', 'list', '--json']))
    assert.equal(memory.model, 'in-memory')
    assert.ok(memory.notes.some((note: string) => note.endsWith('pooltool locks list --sim-profile 4.4 --sim-scenario dead-lock-holder')), JSON.stringify(memory.notes))
    const persisted = parseJson(await runInProcess(['locks', 'list', '--json', '--sim-profile', '4.4', '--sim-scenario', 'dead-lock-holder']))
    assert.equal(persisted.model, 'config.locks')
    assert.equal(persisted.serverVersion, '4.4.29')
    assert.ok(persisted.locks.some((lock: {name: string; state: string}) => lock.name === 'scenario.orders' && lock.state === 'locked'), JSON.stringify(persisted.locks))
    assert.ok(!persisted.notes.some((note: string) => note.includes('--sim-profile')), 'no hint where locks are persisted')
    const refused = await runInProcess(['locks', 'pings', '--sim-scenario', 'upgraded-from-3.4'])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /^Error \[USAGE\]: --sim-scenario upgraded-from-3\.4 needs --sim-profile 4\.4/)
  })
})

describe('locks watch --ndjson', {timeout: 120_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, scenarios: ['dead-lock-holder']})

  it('streams a start line, an event line per transition, and the summary last', async () => {
    const run = await runInProcess(['locks', 'watch', '--uri', cluster.uri, '--ndjson', '--duration', '600ms', '--interval', '200ms'])
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as {type: string; [key: string]: unknown})
    assert.equal(lines[0]!.type, 'start')
    assert.equal(lines[0]!.serverVersion, '4.4.29')
    assert.equal(lines.at(-1)!.type, 'summary')
    const summary = lines.at(-1)! as unknown as {events: unknown[]; polls: number}
    const events = lines.filter((line) => line.type === 'event')
    assert.deepEqual(events.map(({type: _, ...event}) => event), summary.events, 'the streamed events are the summary\'s')
    assert.ok(events.some((event) => event.kind === 'held-at-start' && event.name === 'scenario.orders'), JSON.stringify(events))
    // Beside the distributed locks' lines, each poll's node reads ("nodes"), and what they showed (episodes, wait rates, unread nodes).
    assert.deepEqual([...new Set(lines.map((line) => line.type))].filter((type) => !['start', 'event', 'pollFailure', 'summary', 'nodes', 'episode', 'waitRates', 'nodeUnread'].includes(type)), [])
    assert.ok(lines.some((line) => line.type === 'nodes'), 'the node locks are polled too')
  })
})
