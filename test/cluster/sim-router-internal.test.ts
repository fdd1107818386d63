/**
 * What a router's connPoolStats holds, and who the cluster's own connections are, as on a real cluster.
 *
 * The `global` pool (4.4 – 7.0): connPoolStats appends `globalConnPool.appendConnectionStats` first
 * (src/mongo/db/commands/conn_pool_stats.cpp), a `DBConnectionPool` that reports each host under the pool name
 * "global" with inUse / available / created and leased, refreshing, refreshed 0 (src/mongo/client/connpool.cpp).
 * `ConnectionPoolStats::updateStatsForHost` skips a host whose `created` is 0 ("a pool that has never been
 * successfully used does not get listed", src/mongo/executor/connection_pool_stats.cpp), and a pool is only a key of
 * `pools` once a host was added to it. The pool is filled only by `ScopedDbConnection` users, which from 4.4 are
 * all mongod-side (SessionsCollectionRS on plain replica-set secondaries, the cloner of movePrimary, remote
 * writes of secondaries): no router command path takes one. So a router's `pools` never has `global`, and its
 * totals and `hosts` are the sums over its NetworkInterfaceTL pools alone, at rest and under use.
 *
 * Internal authentication: with a keyFile, members and routers authenticate their own connections as
 * `__system@local` (`authenticateInternalUser`), a user that is not stored (`createSystemUserHandle` in
 * authorization_manager_impl.cpp), so usersInfo does not list it, `$currentOp` shows it in `effectiveUsers`, and
 * nobody logs in as it without the key.
 */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {Document} from 'bson'
import {MongoClient, MongoServerError} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'

const NUMERIC = ['inUse', 'available', 'leased', 'created', 'refreshing'] as const

function assertPoolSums(stats: Document): void {
  const pools = stats.pools as Document
  const sum = (k: string) => Object.values(pools).reduce((n: number, p: Document) => n + Number(p[k]), 0)
  assert.equal(Number(stats.totalCreated), sum('poolCreated'), 'totalCreated is the sum of the pools')
  assert.equal(Number(stats.totalInUse), sum('poolInUse'))
  assert.equal(Number(stats.totalAvailable), sum('poolAvailable'))
  // hosts: each host's figures are the sum of its entries over every pool.
  for (const [host, h] of Object.entries(stats.hosts as Document)) {
    for (const k of NUMERIC) {
      const across = Object.values(pools).reduce((n: number, p: Document) => n + Number((p[host] as Document | undefined)?.[k] ?? 0), 0)
      assert.equal(Number(h[k]), across, `hosts.${host}.${k}`)
    }
  }
}

for (const versionProfile of ['4.4', '6.0', '7.0'] as const) {
  describe(`router connPoolStats has no global pool (${versionProfile})`, () => {
    let sim: SimCluster
    let client: MongoClient
    before(async () => {
      // One router: with two, the driver may send connPoolStats to the one that served none of the operations.
      sim = await startSimCluster({topology: 'sharded', versionProfile, mongos: 1, shards: 2, shardMembers: 1, configMembers: 1})
      client = new MongoClient(sim.info.uri, {serverSelectionTimeoutMS: 10_000})
    })
    after(async () => {
      await client?.close()
      await sim?.stop()
    })

    it('lists only NetworkInterfaceTL pools at rest and after CRUD, DDL and $currentOp, with totals and hosts their sums', async () => {
      const admin = client.db('admin')
      const atRest = await admin.command({connPoolStats: 1})
      assert.ok(!('global' in atRest.pools), 'no global pool at rest')
      assert.ok(Object.keys(atRest.pools).length > 0, 'the ShardRegistry pool is there (config.mongos reports)')

      const c = client.db('poolglobal').collection('c')
      await c.insertMany([{_id: 1}, {_id: 2}])
      await c.find({}).toArray()
      await admin.command({enableSharding: 'poolglobal'})
      await admin.command({shardCollection: 'poolglobal.c', key: {_id: 1}})
      await admin.aggregate([{$currentOp: {allUsers: true, idleConnections: true}}]).toArray()
      await admin.command({listDatabases: 1})

      const used = await admin.command({connPoolStats: 1})
      assert.deepEqual(
        Object.keys(used.pools).filter((n) => !n.startsWith('NetworkInterfaceTL-')),
        [],
        `only NetworkInterfaceTL pools: ${Object.keys(used.pools).join(', ')}`,
      )
      assert.ok('NetworkInterfaceTL-TaskExecutorPool-0' in used.pools, 'the router used its task executor pool for the shards')
      assertPoolSums(used)
      // No ScopedDbConnection / DBClientConnection on a router.
      assert.equal(Number(used.numClientConnections), 0)
      assert.equal(Number(used.numAScopedConnections), 0)
    })
  })
}

describe('internal connections authenticate as __system@local (auth on, 7.0)', () => {
  let sim: SimCluster
  const clients: MongoClient[] = []
  const connect = async (uri: string) => {
    const c = new MongoClient(uri, {serverSelectionTimeoutMS: 10_000})
    clients.push(c)
    await c.connect()
    return c
  }
  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '7.0', auth: true, shards: 1, shardMembers: 2, configMembers: 1})
  })
  after(async () => {
    for (const c of clients) await c.close()
    await sim?.stop()
  })

  const direct = (host: string, user = 'pooltool', password = 'pooltool-sim', source = 'admin') =>
    `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}/?directConnection=true&authSource=${source}`

  it('a shard member shows its peers’ and the router’s connections as __system@local in $currentOp', async () => {
    const shard = sim.info.processes.find((p) => p.role === 'shard')!
    const c = await connect(direct(shard.host))
    const ops = await c
      .db('admin')
      .aggregate([{$currentOp: {allUsers: true, idleConnections: true}}, {$match: {'clientMetadata.driver.name': 'NetworkInterfaceTL'}}])
      .toArray()
    assert.ok(ops.length > 0, 'internal connections are there')
    for (const op of ops) assert.deepEqual(op.effectiveUsers, [{user: '__system', db: 'local'}], JSON.stringify(op.effectiveUsers))
  })

  it('usersInfo does not list __system (it is not a stored user)', async () => {
    const c = await connect(sim.info.uri)
    const all = await c.db('admin').command({usersInfo: {forAllDBs: true}})
    assert.deepEqual(
      all.users.map((u: Document) => `${u.user}@${u.db}`),
      ['pooltool@admin'],
    )
    const one = await c.db('admin').command({usersInfo: {user: '__system', db: 'local'}})
    assert.deepEqual(one.users, [])
  })

  it('an application cannot log in as __system without the key', async () => {
    const shard = sim.info.processes.find((p) => p.role === 'shard')!
    const c = new MongoClient(direct(shard.host, '__system', 'pooltool-sim', 'local'), {serverSelectionTimeoutMS: 5000})
    clients.push(c)
    await assert.rejects(c.connect(), (e: unknown) => e instanceof MongoServerError && e.code === 18)
  })
})

describe('a sharded cluster advertising names that do not resolve here (sh.pooltool.invalid)', () => {
  let sim: SimCluster
  let client: MongoClient
  const NAME = 'sh.pooltool.invalid'
  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '4.4', auth: true, mongos: 1, shards: 2, shardMembers: 2, configMembers: 2, advertiseHost: NAME})
    client = new MongoClient(sim.info.uri, {serverSelectionTimeoutMS: 10_000})
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  const named = (hostPort: string) => hostPort.startsWith(`${NAME}:`)
  const advertised = () => sim.info.processes.map((p) => p.advertisedAs)

  it('every process names itself by the advertised name, in every document a router shows', async () => {
    assert.ok(advertised().every((h) => h !== undefined && named(h)), JSON.stringify(advertised()))
    const admin = client.db('admin')
    const {shards} = await admin.command({listShards: 1})
    for (const s of shards as Document[]) {
      const hosts = String(s.host).split('/')[1]!.split(',')
      assert.ok(hosts.length === 2 && hosts.every(named), s.host)
    }
    const status = await admin.command({serverStatus: 1})
    assert.ok(named(status.host), status.host)
    assert.ok(String(status.sharding.configsvrConnectionString).split('/')[1]!.split(',').every(named))
    const map = await admin.command({getShardMap: 1})
    assert.ok(Object.keys(map.hosts).every(named), JSON.stringify(map.hosts))
    const mongos = await client.db('config').collection('mongos').find().toArray()
    assert.ok(mongos.length === 1 && named(String(mongos[0]!._id)))
    const pings = await client.db('config').collection('lockpings').find().toArray()
    assert.ok(pings.some((p) => named(String(p._id))), JSON.stringify(pings.map((p) => p._id)))
  })

  it('reaches its own processes by where they listen: the router pools to the shards under their advertised names', async () => {
    await client.db('adv').collection('c').insertOne({_id: 1})
    assert.equal((await client.db('adv').collection('c').find().toArray()).length, 1)
    const stats = await client.db('admin').command({connPoolStats: 1})
    const hosts = Object.keys(stats.hosts)
    assert.ok(hosts.length > 0 && hosts.every(named), JSON.stringify(hosts))
    assert.ok(Number(stats.pools['NetworkInterfaceTL-TaskExecutorPool-0'].poolCreated) > 0)
  })
})
