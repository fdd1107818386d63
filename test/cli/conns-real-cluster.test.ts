/**
 * conns on the shapes real clusters have: one process named twice (a `localhost`
 * seed beside the `127.0.0.1` name in config.mongos) is one row; the connection
 * limit and % used; lock queues and lock-wait rates read from serverStatus (the
 * embedded cluster's fsync lock holds writes in globalLock.currentQueue, as
 * mongod's does), never waiting a fixed time.
 *
 * Runs go through this process, by the path bin/run.js takes (test/helpers/in-process.ts: the same
 * code over real TCP, output and exit code captured), sparing a Node start and CLI load each; the
 * lock-queue watch stays a real process (it is stopped by a signal). conns list's and conns
 * watch's exit 0 are spawned in conns-watch and conns-pools-limits too.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import {MongoClient} from 'mongodb'

import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {CliOutput} from '../helpers/output.js'

describe('conns on a sharded cluster reached through localhost', () => {
  // Two routers (one named twice) and two shards; one member per replica set: what is looked at is the routers'
  // names and the shards' tags, and every further member only adds its start and its polling.
  const cluster = useCluster({topology: 'sharded', mongos: 2, shards: 2, shardMembers: 1, configMembers: 1})

  it('two seeds naming one router as localhost and 127.0.0.1-in-config.mongos: one row, the other name an alias, in JSON and in a note', async () => {
    const [first, second] = cluster.sim.info.processes.filter((p) => p.role === 'mongos')
    const uri = `mongodb://localhost:${first!.port},${second!.host}/`
    const run = await runInProcess(['conns', 'list', '--uri', uri, '--no-holders', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const rows = result.hosts.filter((h: {host: string; aliases?: string[]}) => h.host.endsWith(`:${first!.port}`) || h.aliases?.some((a) => a.endsWith(`:${first!.port}`)))
    assert.equal(rows.length, 1, `one row for the router: ${JSON.stringify(result.hosts.map((h: {host: string}) => h.host))}`)
    assert.equal(rows[0].host, `localhost:${first!.port}`, 'the row discovery listed first (the seed) is kept')
    assert.deepEqual(rows[0].aliases, [first!.host])
    assert.equal(rows[0].state, 'ok')
    assert.ok(result.notes.some((n: string) => n.includes(`is also named ${first!.host}`)), result.notes.join('\n'))
    const mongos = result.hosts.filter((h: {role: string}) => h.role === 'mongos')
    assert.equal(mongos.length, 2, 'every router once')
  })

  it('watch: merged in the first round both names answer, never a row of its own after it; one summary row', async () => {
    const [first, second] = cluster.sim.info.processes.filter((p) => p.role === 'mongos')
    const uri = `mongodb://localhost:${first!.port},${second!.host}/`
    const run = await runInProcess(['conns', 'watch', '--uri', uri, '--no-holders', '--interval', '200ms', '--count', '3', '--ndjson'])
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
    const samples = lines.filter((l) => l.type === 'sample')
    // Two names are one process only once both have answered in one round (serverStatus host + pid): on a
    // loaded machine one of them may miss the first round's deadline, and until then each is its own row.
    const mergedAt = samples.find((l) => l.host === `localhost:${first!.port}` && l.aliases?.includes(first!.host))?.round
    assert.ok(mergedAt !== undefined, `the two names were merged in some round: ${JSON.stringify(samples.map((l) => [l.round, l.host, l.state]))}`)
    assert.deepEqual(samples.filter((l) => l.host === first!.host && l.round >= mergedAt), [], 'the alias is never a row of its own once merged')
    const kept = samples.filter((l) => l.host === `localhost:${first!.port}` && l.round >= mergedAt)
    for (const s of kept) assert.deepEqual(s.aliases, [first!.host])
    const summary = lines.at(-1)
    assert.deepEqual(summary.hosts.filter((h: {role: string}) => h.role === 'mongos').map((h: {host: string}) => h.host), [`localhost:${first!.port}`, second!.host])
  })

  it('one seed: the entry router is polled at the address given, named as the cluster names it, with its version from config.mongos', async () => {
    const router = cluster.sim.info.processes.find((p) => p.role === 'mongos')!
    const uri = `mongodb://localhost:${router.port}/`
    const run = await runInProcess(['conns', 'list', '--uri', uri, '--no-holders', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const entry = result.hosts.find((h: {entry?: boolean}) => h.entry)
    assert.equal(entry.host, router.host)
    assert.equal(entry.address, `localhost:${router.port}`)
    assert.equal(entry.mongoVersion, cluster.sim.info.serverVersion)
    assert.equal(entry.state, 'ok')
    assert.equal(result.hosts.filter((h: {host: string}) => h.host === router.host).length, 1)
    assert.deepEqual(result.topology.routerVersions, {[cluster.sim.info.serverVersion]: result.hosts.filter((h: {role: string}) => h.role === 'mongos').map((h: {host: string}) => h.host)})
    assert.ok(result.topology.configMongosCount >= 2, JSON.stringify(result.topology))
    const text = await runInProcess(['conns', 'list', '--uri', uri, '--no-holders'])
    assert.match(text.stdout, new RegExp(`${router.host.replaceAll('.', '\\.')} \\(entry, via localhost:${router.port}\\) +│ mongos ${cluster.sim.info.serverVersion.replaceAll('.', '\\.')}`))
  })

  // It leaves a zone on a shard: no later test in this block looks at tags.
  it('zone tags (config.shards tags, as sh.addShardToZone writes them) are shown per shard member', async () => {
    const config = cluster.sim.info.processes.find((p) => p.role === 'config')!
    const direct = new MongoClient(`mongodb://${config.host}/?directConnection=true`, {serverSelectionTimeoutMS: 5000})
    try {
      const [shard] = await direct.db('config').collection('shards').find({}).toArray()
      await direct.db('config').collection('shards').updateOne({_id: shard!._id}, {$addToSet: {tags: 'NYC'}})
      const run = await runInProcess(['conns', 'list', '--uri', cluster.uri, '--no-holders', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const members = parseJson(run).hosts.filter((h: {shard?: string}) => h.shard === shard!._id)
      assert.ok(members.length > 0)
      for (const m of members) assert.deepEqual(m.tags, ['NYC'])
      const text = await runInProcess(['conns', 'list', '--uri', cluster.uri, '--no-holders'])
      assert.match(text.stdout, new RegExp(`shard ${String(shard!._id)} P zones NYC`))
    } finally {
      await direct.close()
    }
  })

  it('--no-discover: the URI\'s routers only', async () => {
    const router = cluster.sim.info.processes.find((p) => p.role === 'mongos')!
    const run = await runInProcess(['conns', 'list', '--uri', `mongodb://${router.host}/`, '--no-holders', '--no-discover', '--json'])
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(parseJson(run).hosts.map((h: {host: string}) => h.host), [router.host])
  })
})

describe('conns: connection limit and lock queues on one mongod', () => {
  let client: MongoClient
  // Registered before the cluster's own hooks, so it runs first (after hooks run in the order they were added): the
  // client closes while its server still answers. Closed after it stopped, it waited out its server selection (5 s).
  after(async () => {
    await client?.close()
  })
  const cluster = useCluster({maxIncomingConnections: 40})

  before(() => {
    client = new MongoClient(cluster.uri, {directConnection: true, serverSelectionTimeoutMS: 5000, appName: 'conns-lock-test'})
  })

  it('list: maxIncoming is current + available (the server limit), with % used; lock queues and active clients as read', async () => {
    const run = await runInProcess(['conns', 'list', '--uri', cluster.uri, '--no-holders', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const [host] = parseJson(run).hosts
    assert.equal(host.maxIncoming, 40)
    assert.equal(host.maxIncoming, host.current + host.available)
    assert.equal(host.usedPct, Math.round((10_000 * host.current) / 40) / 100)
    assert.deepEqual(host.lockQueue, {total: 0, readers: 0, writers: 0})
    assert.equal(typeof host.activeClients.total, 'number')
    const text = await runInProcess(['conns', 'list', '--uri', cluster.uri, '--no-holders'])
    assert.match(text.stdout, new RegExp(`${host.usedPct < 10 ? host.usedPct.toFixed(1) : Math.round(host.usedPct)}% of 40`))
  })

  it('watch: a write held by the fsync lock shows in the lock queue; once released, lock waits per second', async () => {
    const out = new CliOutput()
    const watching = runCli(['conns', 'watch', '--uri', cluster.uri, '--interval', '200ms', '--no-holders', '--ndjson'], {timeoutMs: 60_000, onSpawn: out.attach})
    watching.catch(() => undefined)
    await out.until(/"type":"sample"[^\n]*"lockQueue"/)
    const admin = client.db('admin')
    await admin.command({fsync: 1, lock: true})
    const held = client.db('app').collection('orders').insertOne({n: 1})
    held.catch(() => undefined)
    await out.until(/"type":"sample"[^\n]*"lockQueue":\{"total":[1-9]\d*,"readers":\d+,"writers":[1-9]/)
    await admin.command({fsyncUnlock: 1})
    await held
    // A wait counts in acquireWaitCount when it begins and adds its time when granted (mongod's
    // LockerImpl::_lockBegin / _lockComplete): the time shows in the sample after the release.
    await out.until(/"type":"sample"[^\n]*"lockWaitUsPerSec":[1-9]/)
    out.signal()
    const run = await watching
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
    const summary = lines.at(-1)
    assert.equal(summary.type, 'summary')
    const [host] = summary.hosts
    assert.ok(host.lockQueueTotal.max >= 1, JSON.stringify(host.lockQueueTotal))
    assert.ok(host.lockWaitsPerSec.max > 0, JSON.stringify(host.lockWaitsPerSec))
    assert.ok(host.lockWaitUsPerSec.max > 0, JSON.stringify(host.lockWaitUsPerSec))
    assert.equal(host.maxIncoming, 40)
  })
})
