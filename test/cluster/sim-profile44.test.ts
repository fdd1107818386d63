/** The 4.4 profile: wire version, buildInfo, serverStatus fields that 4.4 has and lacks. */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {MongoClient} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {RawClient, delay, portOf} from '../helpers/sim.js'

describe('version profile 4.4', () => {
  let sim: SimCluster
  let client: MongoClient
  let port: number

  before(async () => {
    sim = await startSimCluster({versionProfile: '4.4', auth: true})
    port = portOf(sim.info.processes[0].host)
    client = new MongoClient(sim.info.uri)
    await client.connect()
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('reports 4.4.29 and maxWireVersion 9', async () => {
    assert.equal(sim.info.serverVersion, '4.4.29')
    const info = await client.db('admin').command({buildInfo: 1})
    assert.equal(info.version, '4.4.29')
    assert.deepEqual(info.versionArray, [4, 4, 29, 0])
    const hello = await client.db('admin').command({hello: 1})
    assert.equal(hello.maxWireVersion, 9)
    const raw = await RawClient.open(port)
    try {
      assert.equal((await raw.legacyHello({ping: 1})).ok, 1, '4.4 still answers OP_QUERY commands')
    } finally {
      await raw.close()
    }
  })

  it('has the 4.4 connection fields and no threaded/rejected/loadBalanced', async () => {
    const c = (await client.db('admin').command({serverStatus: 1})).connections
    assert.deepEqual(Object.keys(c).sort(), ['active', 'available', 'awaitingTopologyChanges', 'current', 'exhaustHello', 'exhaustIsMaster', 'totalCreated'])
  })

  it('has authentication mechanism counters but no saslSupportedMechsReceived', async () => {
    const auth = (await client.db('admin').command({serverStatus: 1})).security.authentication
    assert.equal(auth.saslSupportedMechsReceived, undefined)
    assert.ok(auth.mechanisms['SCRAM-SHA-256'].speculativeAuthenticate.received >= 1)
  })

  it('refuses connections beyond the limit without reporting rejected', async () => {
    const before = (await client.db('admin').command({serverStatus: 1})).connections
    await sim.control({kind: 'max-connections', max: before.current})
    const extra = await Promise.all([RawClient.open(port), RawClient.open(port)])
    try {
      await delay(200)
      assert.ok(extra.every((s) => s.isClosed), 'both were refused')
      const after = (await client.db('admin').command({serverStatus: 1})).connections
      assert.equal(after.rejected, undefined)
      assert.equal(after.current, before.current)
      assert.equal(after.available, 0)
    } finally {
      await sim.control({kind: 'max-connections', max: 65536})
      await Promise.all(extra.map((s) => s.close()))
    }
  })
})
