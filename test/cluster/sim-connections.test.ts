/**
 * serverStatus.connections from real sockets, 500 concurrent connections, the connection limit (7.0 profile).
 *
 * Every count here is read from the server's own serverStatus once it has reached the
 * state under test (waitForState), never after a sleep: a driver's close() returns before
 * the server has seen its sockets go, and connection set-up on a loaded machine takes as
 * long as it takes.
 */
import {after, before, beforeEach, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {Document} from 'bson'
import {MongoClient} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {RawClient, portOf, waitForState} from '../helpers/sim.js'

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

  const status = (): Promise<Document> => asker.command('admin', {serverStatus: 1})
  const connections = async (): Promise<Document> => (await status()).connections

  // Each test starts from the asking socket alone: a socket the previous test closed but the
  // server has not yet seen go would shift every count (and the connection limit) below.
  beforeEach(async () => {
    await waitForState('only the asking socket open', connections, (c) => c.current === 1)
  })

  it('reports the 7.0 connection fields', async () => {
    const c = await connections()
    assert.deepEqual(Object.keys(c), [
      'current', 'available', 'totalCreated', 'rejected', 'active', 'threaded',
      'exhaustIsMaster', 'exhaustHello', 'awaitingTopologyChanges', 'loadBalanced',
    ])
    assert.equal(c.current, 1, 'only the asking socket is open')
    assert.ok(c.active >= 1, `the asking operation is active, saw active ${c.active}`)
    assert.equal(c.available, 65536 - c.current)
  })

  it('counts exactly the sockets that are open, and totalCreated only grows', async () => {
    const base = await connections()
    const sockets = await Promise.all(Array.from({length: 25}, () => RawClient.open(port)))
    const up = await waitForState('25 more sockets open', connections, (c) => c.current === base.current + 25)
    assert.equal(up.totalCreated, base.totalCreated + 25)
    assert.equal(up.available, 65536 - up.current)
    await Promise.all(sockets.slice(0, 10).map((s) => s.close()))
    const partly = await waitForState('10 of them closed', connections, (c) => c.current === base.current + 15)
    assert.equal(partly.totalCreated, up.totalCreated, 'totalCreated never decreases')
    await Promise.all(sockets.slice(10).map((s) => s.close()))
    const down = await waitForState('all 25 closed', connections, (c) => c.current === base.current)
    assert.equal(down.totalCreated, up.totalCreated)
  })

  it('counts a driver pool of known size', async () => {
    const base = await connections()
    const client = new MongoClient(sim.info.uri, {minPoolSize: 4, maxPoolSize: 4, serverMonitoringMode: 'poll'})
    try {
      await client.connect()
      // The pool fills itself up to minPoolSize in the background.
      const filled = await waitForState('4 pooled connections and 1 polling monitor', connections, (c) => c.current === base.current + 5)
      assert.equal(filled.totalCreated, base.totalCreated + 5)
      await client.db('admin').command({ping: 1})
      const after = await connections()
      assert.equal(after.current, base.current + 5, 'a full pool serves from its own connections')
      assert.equal(after.totalCreated, filled.totalCreated)
    } finally {
      await client.close()
    }
    await waitForState('the pool and its monitor closed', connections, (c) => c.current === base.current)
  })

  it('serves 500 concurrent connections, each with a write in flight', async () => {
    const base = await status()
    // fsyncLock holds every write at the server, so no connection goes back to the pool
    // before fsyncUnlock and the driver has to open one per write. (A service latency
    // only keeps them all busy while connection set-up outpaces it, which a loaded
    // machine does not: the pool then reuses connections and stops short of 500.)
    await asker.command('admin', {fsync: 1, lock: true})
    let locked = true
    const client = new MongoClient(sim.info.uri, {maxPoolSize: 500, maxConnecting: 100, serverMonitoringMode: 'poll'})
    try {
      const coll = client.db('load').collection('c')
      const writes = Promise.all(Array.from({length: 500}, (_, i) => coll.insertOne({_id: i as never})))
      const held = await waitForState('500 writes held by the fsync lock', status, (s) => s.globalLock.currentQueue.writers === 500)
      assert.equal(held.connections.current, base.connections.current + 501, '500 pooled connections and the polling monitor')
      assert.equal(held.connections.totalCreated, base.connections.totalCreated + 501)
      assert.ok(held.connections.active >= 501, `the 500 writes and the asking serverStatus are active, saw active ${held.connections.active}`)
      const unlocked = await asker.command('admin', {fsyncUnlock: 1})
      locked = false
      assert.equal(unlocked.lockCount, 0)
      const results = await writes
      assert.equal(results.filter((r) => r.acknowledged).length, 500)
      assert.equal(await coll.countDocuments(), 500)
      const served = await status()
      assert.equal(served.globalLock.currentQueue.writers, 0)
      assert.equal(served.connections.current, base.connections.current + 501, 'the pool keeps its 500 connections')
    } finally {
      if (locked) await asker.command('admin', {fsyncUnlock: 1})
      await client.close()
    }
  })

  it('queues concurrent writes to one collection and reports lock waits', async () => {
    const client = new MongoClient(sim.info.uri, {maxPoolSize: 10})
    let locked = false
    try {
      const coll = client.db('locks').collection('c')
      await coll.insertOne({warm: 1})
      assert.notEqual(await coll.findOne({warm: 1}), null)
      const before = await status()
      // Hold 6 writes at the fsync lock, then let them go at once with 40 ms of service
      // time: the first takes the collection's queue and the other 5 wait behind it.
      await asker.command('admin', {fsync: 1, lock: true})
      locked = true
      const writes = Promise.all(Array.from({length: 6}, (_, i) => coll.insertOne({i})))
      await waitForState('6 writes held by the fsync lock', status, (s) => s.globalLock.currentQueue.writers === 6)
      await sim.control({kind: 'latency', ms: 40})
      const released = Date.now()
      await asker.command('admin', {fsyncUnlock: 1})
      locked = false
      await writes
      const elapsed = Date.now() - released
      assert.ok(elapsed >= 6 * 40 - 10, `writes were serialized: 6 x 40 ms took ${elapsed} ms`)
      const after = await status()
      const delta = (path: (d: Document) => unknown) => Number(path(after) ?? 0) - Number(path(before) ?? 0)
      assert.equal(delta((s) => s.locks.Collection.acquireCount.w), 6)
      assert.equal(delta((s) => s.locks.Collection.acquireWaitCount?.w), 5, 'all but the first waited for the collection')
      assert.ok(delta((s) => s.locks.Collection.timeAcquiringMicros?.w) > 0, 'time spent waiting for the collection is counted')
      assert.equal(delta((s) => s.locks.Global.acquireWaitCount?.w), 6, 'the 6 writes waited on Global while fsync-locked')
      assert.ok(after.locks.Global.acquireCount.r >= 1, 'the find took Global r')
      assert.equal(after.locks.Collection.acquireWaitCount.r, undefined, 'sparse: no read waits')
      assert.equal(delta((s) => s.opcounters.insert), 6)
      assert.equal(delta((s) => s.metrics.commands.insert.total), 6)
      assert.ok(after.network.numRequests > before.network.numRequests, 'network.numRequests grows')
      assert.equal(after.process, 'mongod')
    } finally {
      if (locked) await asker.command('admin', {fsyncUnlock: 1})
      await sim.control({kind: 'latency', ms: 0})
      await client.close()
    }
  })

  it('rejects connections beyond maxIncomingConnections and counts them', async () => {
    const base = await connections()
    await sim.control({kind: 'max-connections', max: base.current + 3})
    const sockets = await Promise.all(Array.from({length: 8}, () => RawClient.open(port)))
    try {
      const c = await waitForState('5 connections rejected', connections, (c) => c.rejected === base.rejected + 5)
      assert.equal(c.current, base.current + 3)
      assert.equal(c.available, 0)
      // The refused sockets were closed by the server; the accepted three stay and answer.
      await waitForState('the 5 refused sockets closed', async () => sockets.filter((s) => s.isClosed).length, (n) => n === 5)
      const accepted = sockets.filter((s) => !s.isClosed)
      assert.equal(accepted.length, 3)
      for (const s of accepted) assert.equal((await s.command('admin', {ping: 1})).ok, 1)
    } finally {
      await sim.control({kind: 'max-connections', max: 65536})
      await Promise.all(sockets.map((s) => s.close()))
    }
  })
})
