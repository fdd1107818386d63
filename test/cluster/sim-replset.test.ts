/** A three-member replica set (6.0 profile): discovery, writes on the primary, reads on secondaries. */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {MongoClient, MongoServerError} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {RawClient, portOf, withParams} from '../helpers/sim.js'

describe('replica set', () => {
  let sim: SimCluster
  let client: MongoClient

  before(async () => {
    sim = await startSimCluster({topology: 'replset', versionProfile: '6.0', members: 3})
    client = new MongoClient(sim.info.uri)
    await client.connect()
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('describes three members and a replicaSet URI', () => {
    const hosts = sim.info.processes.map((p) => p.host)
    assert.deepEqual(sim.info.processes.map((p) => p.role), ['primary', 'secondary', 'secondary'])
    assert.ok(sim.info.processes.every((p) => p.setName === 'rs0'))
    assert.equal(sim.info.uri, `mongodb://${hosts.join(',')}/?replicaSet=rs0`)
  })

  it('answers hello like replica-set members', async () => {
    const [p0, p1] = sim.info.processes
    const raw = await RawClient.open(portOf(p1.host))
    try {
      const h = await raw.command('admin', {hello: 1})
      assert.equal(h.isWritablePrimary, false)
      assert.equal(h.secondary, true)
      assert.equal(h.setName, 'rs0')
      assert.equal(h.primary, p0.host)
      assert.equal(h.me, p1.host)
      assert.equal(h.hosts.length, 3)
      assert.equal(h.maxWireVersion, 17)
      assert.equal(h.electionId, undefined)
    } finally {
      await raw.close()
    }
  })

  it('writes through the primary; secondaries see the data and refuse writes', async () => {
    const coll = client.db('rs').collection('c')
    await coll.insertMany([{n: 1}, {n: 2}])
    const fromSecondary = await coll.find({}, {readPreference: 'secondary'}).toArray()
    assert.equal(fromSecondary.length, 2)
    const secondary = sim.info.processes[1].host
    const direct = new MongoClient(`mongodb://${secondary}/?directConnection=true`)
    try {
      assert.equal(await direct.db('rs').collection('c').countDocuments({}, {readPreference: 'secondaryPreferred'}), 2)
      await assert.rejects(direct.db('rs').collection('c').insertOne({n: 3}), (e: MongoServerError) => {
        assert.equal(e.code, 10107)
        assert.equal(e.codeName, 'NotWritablePrimary')
        return true
      })
    } finally {
      await direct.close()
    }
  })

  it('reports replSetGetStatus and the repl section of serverStatus', async () => {
    const status = await client.db('admin').command({replSetGetStatus: 1})
    assert.equal(status.set, 'rs0')
    assert.equal(status.myState, 1)
    assert.deepEqual(status.members.map((m: {stateStr: string}) => m.stateStr), ['PRIMARY', 'SECONDARY', 'SECONDARY'])
    const ss = await client.db('admin').command({serverStatus: 1})
    assert.equal(ss.repl.setName, 'rs0')
    assert.equal(ss.repl.isWritablePrimary, true)
    assert.equal(ss.repl.me, sim.info.processes[0].host)
    assert.ok(ss.repl.electionId)
  })

  it('applies faults to the listed hosts only', async () => {
    const [p0, p1] = sim.info.processes
    await sim.control({kind: 'latency', ms: 500, hosts: [p1.host]})
    const r0 = await RawClient.open(portOf(p0.host))
    const r1 = await RawClient.open(portOf(p1.host))
    try {
      let t = Date.now()
      await r0.command('admin', {ping: 1})
      assert.ok(Date.now() - t < 400)
      t = Date.now()
      await r1.command('admin', {ping: 1})
      assert.ok(Date.now() - t >= 490)
    } finally {
      await sim.control({kind: 'latency', ms: 0})
      await r0.close()
      await r1.close()
    }
  })

  it('uses streaming monitoring: monitors wait in awaitable hello', async () => {
    const c = new MongoClient(withParams(sim.info.uri, 'appName=streamer&serverMonitoringMode=stream'), {heartbeatFrequencyMS: 1000})
    try {
      await c.connect()
      let conns: {exhaustHello: number; awaitingTopologyChanges: number} = {exhaustHello: 0, awaitingTopologyChanges: 0}
      for (let i = 0; i < 40 && conns.exhaustHello < 2; i++) {
        await new Promise((r) => setTimeout(r, 100))
        conns = (await c.db('admin').command({serverStatus: 1})).connections
      }
      assert.ok(conns.exhaustHello >= 2, `two clients stream hello on the primary (saw ${conns.exhaustHello})`)
      assert.ok(conns.awaitingTopologyChanges >= 1)
      // heartbeats keep flowing through the exhaust stream
      let beats = 0
      c.on('serverHeartbeatSucceeded', (e) => {
        if (e.awaited) beats++
      })
      await new Promise((r) => setTimeout(r, 2500))
      assert.ok(beats >= 3, `awaited heartbeats arrived (${beats})`)
    } finally {
      await c.close()
    }
  })
})
