/** The sharded topology of the embedded cluster (4.4 profile): routing, catalog, routers, outbound pools. */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {MongoClient} from 'mongodb'

import {startSimCluster, type SimCluster} from '../../src/sim/index.js'

describe('sharded topology', {timeout: 60_000}, () => {
  let sim: SimCluster
  let client: MongoClient
  const direct = (host: string) => new MongoClient(`mongodb://${host}/?directConnection=true`, {serverSelectionTimeoutMS: 5000})

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '4.4', mongos: 2, shards: 2})
    client = new MongoClient(sim.info.uri, {serverSelectionTimeoutMS: 5000})
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('has routers, shards and a config server as separate listeners', async () => {
    const roles = sim.info.processes.map((p) => `${p.role}:${p.setName ?? ''}`)
    const three = (x: string) => [x, x, x]
    assert.deepEqual(roles, ['mongos:', 'mongos:', ...three('shard:shard01'), ...three('shard:shard02'), ...three('config:configRepl')])
    assert.equal(new Set(sim.info.processes.map((p) => p.port)).size, 11)
    assert.equal((await client.db('admin').command({hello: 1})).msg, 'isdbgrid')
    const {shards} = await client.db('admin').command({listShards: 1})
    assert.deepEqual(
      shards.map((s: any) => [s._id, s.host, s.state]),
      ['shard01', 'shard02'].map((set) => [set, `${set}/${sim.info.processes.filter((p) => p.setName === set).map((p) => p.host).join(',')}`, 1]),
    )
  })

  it('CRUD through mongos lands on the database primary shard; movePrimary moves it', async () => {
    await client.db('shop').collection('items').insertMany([{_id: 1, n: 'a'}, {_id: 2, n: 'b'}])
    const entry = await client.db('config').collection('databases').findOne({_id: 'shop' as any})
    assert.ok(entry)
    const hostOf = (name: string) => sim.info.processes.find((p) => p.setName === name)!.host
    const other = entry.primary === 'shard01' ? 'shard02' : 'shard01'
    const [onPrimary, onOther] = [direct(hostOf(entry.primary)), direct(hostOf(other))]
    try {
      assert.equal(await onPrimary.db('shop').collection('items').countDocuments(), 2)
      assert.equal(await onOther.db('shop').collection('items').countDocuments(), 0)
      await client.db('shop').collection('items').updateOne({_id: 1}, {$set: {n: 'z'}})
      assert.equal((await onPrimary.db('shop').collection('items').findOne({_id: 1}))?.n, 'z')
      // Only ok, besides the cluster-time gossip every router reply carries.
      const {$clusterTime: _t, operationTime: _o, ...moved} = await client.db('admin').command({movePrimary: 'shop', to: other})
      assert.deepEqual(moved, {ok: 1})
      assert.equal(await onOther.db('shop').collection('items').countDocuments(), 2)
      assert.equal(await onPrimary.db('shop').collection('items').countDocuments(), 0)
      assert.deepEqual((await client.db('shop').collection('items').find().sort({_id: 1}).toArray()).map((d) => d.n), ['z', 'b'])
    } finally {
      await onPrimary.close()
      await onOther.close()
    }
    const sharded = await client.db('admin').command({shardCollection: 'shop.orders', key: {customer: 1}})
    assert.equal(sharded.collectionsharded, 'shop.orders')
    const coll = await client.db('config').collection('collections').findOne({_id: 'shop.orders' as any})
    assert.deepEqual(coll?.key, {customer: 1})
  })

  it('config.mongos holds one document per router', async () => {
    const docs = await client.db('config').collection('mongos').find().sort({_id: 1}).toArray()
    const routers = sim.info.processes.filter((p) => p.role === 'mongos').map((p) => p.host).sort()
    assert.deepEqual(docs.map((d) => d._id), routers)
    for (const d of docs) {
      assert.equal(d.mongoVersion, '4.4.29')
      assert.ok(d.ping instanceof Date)
      assert.equal(typeof d.up, 'number')
    }
  })

  it('connPoolStats reports the outbound pools the router really keeps', async () => {
    const router = sim.info.processes.find((p) => p.role === 'mongos')!.host
    const r = direct(router)
    try {
      // Enough concurrent finds through this router that its pool to the shard needs more than one connection.
      await Promise.all(Array.from({length: 6}, () => r.db('shop').collection('items').find().toArray()))
      const stats = await r.db('admin').command({connPoolStats: 1})
      const shop = await r.db('config').collection('databases').findOne({_id: 'shop' as any})
      const shardHost = sim.info.processes.find((p) => p.setName === shop!.primary)!.host
      const configHost = sim.info.processes.find((p) => p.role === 'config')!.host
      const task = stats.pools['NetworkInterfaceTL-TaskExecutorPool-0']
      assert.ok(task[shardHost].created >= 1)
      assert.equal(task[shardHost].inUse + task[shardHost].available <= task[shardHost].created, true)
      assert.ok(stats.pools['NetworkInterfaceTL-ShardRegistry'][configHost].created >= 1, 'config.mongos pings and config reads use the ShardRegistry pool')
      assert.equal(stats.totalCreated, Object.values(stats.hosts).reduce((n: number, h: any) => n + h.created, 0))
      assert.equal(stats.acquisitionWaitTimes, undefined, 'acquisitionWaitTimes is 6.3+')
      assert.equal(stats.replicaSets.shard01.hosts.length, 3)
      // The shard sees those connections as clients.
      const shardClient = direct(shardHost)
      try {
        const status = await shardClient.db('admin').command({serverStatus: 1})
        assert.ok(status.connections.totalCreated >= task[shardHost].created)
      } finally {
        await shardClient.close()
      }
    } finally {
      await r.close()
    }
  })
})
