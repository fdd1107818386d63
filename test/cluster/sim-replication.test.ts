/**
 * Replication facts a real replica set shows: `$clusterTime` / `operationTime` on every
 * replica-set and router reply (never on a standalone), `hello.lastWrite` optimes, and a `local.oplog.rs`
 * that `rs.printReplicationInfo()` can read (capped with a maxSize, first/last entries by `$natural`).
 */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {Document, Timestamp} from 'bson'
import {MongoClient} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {withParams} from '../helpers/sim.js'

const kind = (v: unknown) => (v as {_bsontype?: string} | undefined)?._bsontype

describe('a 7.0 replica set gossips cluster time and keeps an oplog', () => {
  let sim: SimCluster
  let client: MongoClient

  before(async () => {
    sim = await startSimCluster({topology: 'replset', versionProfile: '7.0', members: 3})
    client = new MongoClient(withParams(sim.info.uri, 'appName=replication-suite'), {promoteLongs: false})
    await client.connect()
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('sends $clusterTime and operationTime on replies, the write advancing them', async () => {
    const before = await client.db('admin').command({ping: 1}, {promoteLongs: false})
    assert.equal(kind(before.operationTime), 'Timestamp')
    assert.equal(kind(before.$clusterTime?.clusterTime), 'Timestamp')
    assert.equal(kind(before.$clusterTime?.signature?.keyId), 'Long')
    await client.db('app').collection('c').insertOne({a: 1})
    const after = await client.db('admin').command({ping: 1}, {promoteLongs: false})
    assert.ok((after.operationTime as Timestamp).greaterThan(before.operationTime as Timestamp), 'the insert moved cluster time on')
  })

  it('reports lastWrite.opTime and majorityOpTime in hello at the last oplog entry', async () => {
    await client.db('app').collection('c').insertOne({a: 2})
    const hello = await client.db('admin').command({hello: 1}, {promoteLongs: false})
    const lw = hello.lastWrite as Document
    assert.equal(kind(lw.opTime?.ts), 'Timestamp')
    assert.equal(kind(lw.opTime?.t), 'Long')
    assert.ok(lw.lastWriteDate instanceof Date)
    assert.deepEqual(lw.majorityOpTime, lw.opTime, 'instant replication: the majority has the last write')
    const last = await client.db('local').collection('oplog.rs').find().sort({$natural: -1}).limit(1).next()
    assert.ok(last)
    assert.ok((last.ts as Timestamp).equals(lw.opTime.ts))
    assert.equal(last.op, 'i')
    assert.equal(last.ns, 'app.c')
    assert.equal((last.o as Document).a, 2)
  })

  it('has a capped local.oplog.rs that rs.printReplicationInfo() can read', async () => {
    const local = client.db('local')
    const names = (await local.listCollections({}, {nameOnly: true}).toArray()).map((c) => c.name)
    assert.ok(names.includes('oplog.rs'))
    const [stats] = await local.collection('oplog.rs').aggregate([{$collStats: {storageStats: {}}}]).toArray()
    assert.equal(stats.storageStats.capped, true)
    assert.equal(stats.storageStats.maxSize, 990 * 1024 * 1024)
    assert.ok(stats.storageStats.size > 0)
    const first = await local.collection('oplog.rs').find().sort({$natural: 1}).limit(1).next()
    assert.equal(first?.op, 'n')
    assert.equal(kind(first?.ts), 'Timestamp')
    assert.equal(first?._id, undefined, 'oplog entries carry no _id')
  })
})

describe('cluster time by topology', () => {
  it('is absent on a standalone and present on a router', async () => {
    const standalone = await startSimCluster({topology: 'standalone', versionProfile: '6.0'})
    const sharded = await startSimCluster({topology: 'sharded', versionProfile: '6.0', shards: 1, mongos: 1})
    const a = new MongoClient(standalone.info.uri)
    const b = new MongoClient(sharded.info.uri)
    try {
      const plain = await a.db('admin').command({ping: 1}, {promoteLongs: false})
      assert.equal(plain.$clusterTime, undefined)
      assert.equal(plain.operationTime, undefined)
      const routed = await b.db('admin').command({ping: 1}, {promoteLongs: false})
      assert.equal(kind(routed.operationTime), 'Timestamp')
      assert.equal(kind(routed.$clusterTime?.clusterTime), 'Timestamp')
    } finally {
      await a.close()
      await b.close()
      await standalone.stop()
      await sharded.stop()
    }
  })
})
