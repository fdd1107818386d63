/** serverStatus.connections from real sockets, 500 concurrent connections, the connection limit (7.0 profile). */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {Document} from 'bson'
import {MongoClient} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import {RawClient, delay, portOf, waitFor} from './helpers.js'

describe('connection accounting', () => {
  let sim: SimCluster
  let port: number
  let asker: RawClient

  before(async () => {
    sim = await startSimCluster({versionProfile: '7.0'})
    port = portOf(sim.info.processes[0].host)
    asker = await RawClient.open(port)
  })
  after(async () => {
    await asker?.close()
    await sim?.stop()
  })

  const connections = async (): Promise<Document> => (await asker.command('admin', {serverStatus: 1})).connections

  it('reports the 7.0 connection fields', async () => {
    const c = await connections()
    assert.deepEqual(Object.keys(c), [
      'current', 'available', 'totalCreated', 'rejected', 'active', 'threaded',
      'exhaustIsMaster', 'exhaustHello', 'awaitingTopologyChanges', 'loadBalanced',
    ])
    assert.equal(c.current, 1, 'only the asking socket is open')
    assert.ok(c.active >= 1, 'the asking operation is active')
    assert.equal(c.available, 65536 - c.current)
  })

  it('counts exactly the sockets that are open, and totalCreated only grows', async () => {
    const base = await connections()
    const sockets = await Promise.all(Array.from({length: 25}, () => RawClient.open(port)))
    const up = await waitFor(connections, (c) => c.current === base.current + 25)
    assert.equal(up.current, base.current + 25)
    assert.equal(up.totalCreated, base.totalCreated + 25)
    assert.equal(up.available, 65536 - up.current)
    await Promise.all(sockets.slice(0, 10).map((s) => s.close()))
    const partly = await waitFor(connections, (c) => c.current === base.current + 15)
    assert.equal(partly.current, base.current + 15)
    assert.equal(partly.totalCreated, up.totalCreated, 'totalCreated never decreases')
    await Promise.all(sockets.slice(10).map((s) => s.close()))
    const down = await waitFor(connections, (c) => c.current === base.current)
    assert.equal(down.current, base.current)
    assert.equal(down.totalCreated, up.totalCreated)
  })

  it('counts a driver pool of known size', async () => {
    const base = await connections()
    const client = new MongoClient(sim.info.uri, {minPoolSize: 4, maxPoolSize: 4, serverMonitoringMode: 'poll'})
    await client.connect()
    await waitFor(async () => {
      await client.db('admin').command({ping: 1})
      return connections()
    }, (c) => c.current === base.current + 5)
    // 4 pooled connections + 1 polling monitor
    assert.equal((await connections()).current, base.current + 5)
    await client.close()
    assert.equal((await waitFor(connections, (c) => c.current === base.current)).current, base.current)
  })

  it('serves 500 concurrent connections with slow operations', async () => {
    await sim.control({kind: 'latency', ms: 1500})
    const client = new MongoClient(sim.info.uri, {maxPoolSize: 500, maxConnecting: 100, waitQueueTimeoutMS: 30000})
    try {
      const coll = client.db('load').collection('c')
      const started = Date.now()
      const results = await Promise.all(Array.from({length: 500}, (_, i) => coll.findOne({_id: i as never})))
      assert.equal(results.length, 500)
      assert.ok(Date.now() - started < 20_000)
      await sim.control({kind: 'latency', ms: 0})
      const c = await connections()
      assert.ok(c.current >= 500, `expected >= 500 open connections, saw ${c.current}`)
      assert.ok(c.totalCreated >= 500)
    } finally {
      await sim.control({kind: 'latency', ms: 0})
      await client.close()
    }
    await waitFor(connections, (c) => c.current === 1, 10_000)
  })

  it('queues concurrent writes to one collection and reports lock waits', async () => {
    await sim.control({kind: 'latency', ms: 40})
    const client = new MongoClient(sim.info.uri, {maxPoolSize: 10})
    try {
      const coll = client.db('locks').collection('c')
      await coll.insertOne({warm: 1})
      const started = Date.now()
      await Promise.all(Array.from({length: 6}, (_, i) => coll.insertOne({i})))
      assert.ok(Date.now() - started >= 6 * 40 - 10, 'writes were serialized')
    } finally {
      await sim.control({kind: 'latency', ms: 0})
      await client.close()
    }
    const status = await asker.command('admin', {serverStatus: 1})
    assert.ok(status.locks.Collection.acquireCount.w >= 7)
    assert.ok(status.locks.Collection.acquireWaitCount.w >= 1)
    assert.ok(status.locks.Collection.timeAcquiringMicros.w > 0)
    assert.ok(status.locks.Global.acquireCount.r >= 1)
    assert.equal(status.locks.Collection.acquireWaitCount.r, undefined, 'sparse: no read waits')
    assert.ok(status.opcounters.insert >= 7)
    assert.ok(status.metrics.commands.insert.total >= 7)
    assert.ok(status.network.numRequests > 0)
    assert.equal(status.process, 'mongod')
  })

  it('rejects connections beyond maxIncomingConnections and counts them', async () => {
    const base = await connections()
    await sim.control({kind: 'max-connections', max: base.current + 3})
    const sockets = await Promise.all(Array.from({length: 8}, () => RawClient.open(port)))
    try {
      await delay(300)
      const closed = sockets.filter((s) => s.isClosed).length
      assert.equal(closed, 5, 'five connections were refused')
      const c = await connections()
      assert.equal(c.current, base.current + 3)
      assert.equal(c.rejected, base.rejected + 5)
      assert.equal(c.available, 0)
    } finally {
      await sim.control({kind: 'max-connections', max: 65536})
      await Promise.all(sockets.map((s) => s.close()))
    }
  })
})
