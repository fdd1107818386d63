/**
 * The command table of a real router and the version-dependent command surface: balancerStatus,
 * getShardMap, getShardVersion, the mongos replSetGetStatus stub and CommandNotFound for mongod-only
 * commands, getCmdLineOpts per role, `$collStats`, killOp with the "shard:opid" form currentOp reports
 * through a router, getnonce on 4.4, and 352 for legacy OP_QUERY commands on 5.1+.
 */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {Document} from 'bson'
import {MongoClient, MongoServerError} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {RawClient, portOf, waitForState, withParams} from '../helpers/sim.js'

const RAW = {promoteLongs: false} as const

async function serverError(p: Promise<unknown>): Promise<MongoServerError> {
  try {
    await p
  } catch (e) {
    if (e instanceof MongoServerError) return e
    throw e
  }
  throw new assert.AssertionError({message: 'expected a server error'})
}

describe('a 6.0 router answers like a real mongos', () => {
  let sim: SimCluster
  let client: MongoClient
  let admin: ReturnType<MongoClient['db']>
  const direct: MongoClient[] = []

  const directTo = async (host: string) => {
    const c = new MongoClient(`mongodb://${host}/?directConnection=true&appName=direct`)
    await c.connect()
    direct.push(c)
    return c
  }

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '6.0', shards: 2, mongos: 1, auth: false})
    client = new MongoClient(withParams(sim.info.uri, 'appName=mongos-commands'))
    await client.connect()
    admin = client.db('admin')
  })
  after(async () => {
    for (const c of direct) await c.close()
    await client?.close()
    await sim?.stop()
  })

  it('answers balancerStatus with the manual shape (numBalancerRounds int64)', async () => {
    const s = await admin.command({balancerStatus: 1}, RAW)
    assert.equal(s.mode, 'full')
    assert.equal(s.inBalancerRound, false)
    assert.equal((s.numBalancerRounds as {_bsontype?: string})._bsontype, 'Long')
  })

  it('answers getShardMap with every shard, its members and the config server', async () => {
    const m = await admin.command({getShardMap: 1})
    const shards = sim.info.processes.filter((p) => p.role === 'shard')
    const config = sim.info.processes.find((p) => p.role === 'config')!
    assert.match(String(m.map.config), /^configRepl\//)
    assert.equal(m.hosts[config.host], 'config')
    for (const p of shards) {
      const id = m.hosts[p.host] as string
      assert.ok(id, `${p.host} is in hosts`)
      assert.equal(m.connStrings[m.map[id]], id)
    }
    assert.equal(Object.keys(m.map).length, new Set(shards.map((p) => p.setName)).size + 1)
  })

  it('answers getShardVersion for a sharded collection, NamespaceNotSharded otherwise, admin only', async () => {
    await admin.command({enableSharding: 'app'})
    await admin.command({shardCollection: 'app.s', key: {_id: 1}})
    const v = await admin.command({getShardVersion: 'app.s'})
    assert.equal(v.version?._bsontype, 'Timestamp')
    assert.equal(v.versionEpoch?._bsontype, 'ObjectId')
    assert.equal(v.versionTimestamp?._bsontype, 'Timestamp')
    await client.db('app').collection('plain').insertOne({x: 1})
    assert.equal((await serverError(admin.command({getShardVersion: 'app.plain'}))).code, 118)
    assert.equal((await serverError(client.db('app').command({getShardVersion: 'app.s'}))).code, 13)
    const db = await admin.command({getShardVersion: 'app'})
    assert.ok(typeof db.primaryShard === 'string' && db.version, 'a database gives its primary shard and version')
  })

  it('fails replSetGetStatus with the mongos stub and has no mongod-only commands', async () => {
    const e = await serverError(admin.command({replSetGetStatus: 1}))
    assert.equal(e.message, 'replSetGetStatus is not supported through mongos')
    assert.notEqual(e.code, 76, 'not NoReplicationEnabled')
    assert.equal((e.errorResponse as Document).info, 'mongos')
    assert.equal((await serverError(admin.command({replSetGetConfig: 1}))).code, 59)
  })

  it('says mongos --configdb in getCmdLineOpts on the router and --shardsvr on a shard', async () => {
    const router = await admin.command({getCmdLineOpts: 1})
    assert.equal(router.argv[0], 'mongos')
    assert.match(String(router.parsed.sharding?.configDB), /^configRepl\//)
    const shard = await directTo(sim.info.processes.find((p) => p.role === 'shard')!.host)
    const opts = await shard.db('admin').command({getCmdLineOpts: 1})
    assert.equal(opts.argv[0], 'mongod')
    assert.ok(opts.argv.includes('--shardsvr'))
    assert.equal(opts.parsed.sharding?.clusterRole, 'shardsvr')
  })

  it('answers $collStats (storage and count) through the router, naming the shard', async () => {
    const coll = client.db('app').collection('stats')
    await coll.insertMany([{a: 1}, {a: 2}, {a: 3}])
    const [doc] = await coll.aggregate([{$collStats: {storageStats: {scale: 1}, count: {}}}]).toArray()
    assert.equal(doc.ns, 'app.stats')
    assert.equal(doc.count, 3)
    assert.equal(doc.storageStats.count, 3)
    assert.equal(doc.storageStats.nindexes, 1)
    assert.ok(doc.storageStats.size > 0)
    assert.match(String(doc.shard), /^shard/)
    const missing = await serverError(client.db('app').collection('nope').aggregate([{$collStats: {storageStats: {}}}]).toArray())
    assert.equal(missing.code, 26)
  })

  it('kills a shard operation with the "shard:opid" that currentOp reports through the router', async () => {
    const coll = client.db('killdb').collection('k')
    await coll.insertOne({warm: true})
    const primary = (await client.db('config').collection('databases').findOne({_id: 'killdb' as unknown as never}))!.primary as string
    const shardHost = sim.info.processes.find((p) => p.role === 'shard' && p.setName === primary)?.host
    assert.ok(shardHost, `a process for ${primary}`)
    const shardAdmin = (await directTo(shardHost)).db('admin')
    await shardAdmin.command({fsync: 1, lock: true})
    const held = coll.insertOne({held: true}).then(
      () => undefined,
      (e: unknown) => e,
    )
    try {
      const op = await waitForState(
        'the held insert shows in currentOp through the router',
        async () => ((await admin.command({currentOp: 1})).inprog as Document[]).find((o) => o.op === 'insert' && o.ns === 'killdb.k'),
        (o) => o !== undefined,
      )
      assert.match(String(op!.opid), new RegExp(`^${primary}:\\d+$`))
      const killed = await admin.command({killOp: 1, op: op!.opid})
      assert.equal(killed.shard, primary)
      assert.equal(String(killed.shardid), String(op!.opid).split(':')[1])
      assert.equal((await serverError(admin.command({killOp: 1, op: 'nope'}))).code, 28625)
    } finally {
      await shardAdmin.command({fsyncUnlock: 1})
    }
    const err = await held
    assert.ok(err instanceof MongoServerError, 'the killed insert fails')
    assert.equal(err.code, 11601)
  })
})

describe('version-dependent commands', () => {
  it('answers getnonce on 4.4 (mgo sends it first) and not on 6.0', async () => {
    const old = await startSimCluster({topology: 'standalone', versionProfile: '4.4'})
    const now = await startSimCluster({topology: 'standalone', versionProfile: '6.0'})
    const a = await RawClient.open(portOf(old.info.processes[0].host))
    const b = await RawClient.open(portOf(now.info.processes[0].host))
    try {
      const nonce = await a.command('admin', {getnonce: 1})
      assert.equal(nonce.ok, 1)
      assert.match(String(nonce.nonce), /^[0-9a-f]{16}$/)
      assert.equal((await b.command('admin', {getnonce: 1})).code, 59)
    } finally {
      await a.close()
      await b.close()
      await old.stop()
      await now.stop()
    }
  })

  it('refuses legacy OP_QUERY commands on 5.1+ with 352 before looking the name up, except the handshake family', async () => {
    const sim = await startSimCluster({topology: 'standalone', versionProfile: '7.0'})
    const raw = await RawClient.open(portOf(sim.info.processes[0].host))
    try {
      assert.equal((await raw.legacyHello({isMaster: 1})).ok, 1)
      assert.equal((await raw.legacyHello({buildInfo: 1})).ok, 1, 'buildInfo is temporarily allowed')
      const unknown = await raw.legacyHello({noSuchCommand: 1})
      assert.equal(unknown.code, 352)
      assert.equal(unknown.codeName, 'UnsupportedOpQueryCommand')
      assert.equal((await raw.legacyHello({find: 'c'})).code, 352)
    } finally {
      await raw.close()
      await sim.stop()
    }
  })
})
