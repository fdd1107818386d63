/**
 * Lock and flow-control fields as real servers report them, read through the real driver:
 * currentOp `locks` / `lockStats` of an operation that waits for a lock (held by fsyncLock) and of one
 * that holds its locks, `waitingForFlowControl` / `flowControlStats`; serverStatus.locks per version
 * (4.4: PBWM; 5.0 and 7.0: PBWM and the FeatureCompatibilityVersion lock in the global lock's intent mode;
 * 7.0+: Mutex; 8.0: neither PBWM nor FCV, the MultiDocumentTransactionsBarrier for S/X global locks only),
 * the primary's `oplog`; a router with neither `globalLock` nor
 * `locks`, and shard operations through it carrying `client_s`.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import type {Document} from 'bson'
import {MongoClient} from 'mongodb'
import {type SimCluster, type SimVersionProfile, startSimCluster} from '../../src/sim/index.js'
import {waitForState, withParams} from '../helpers/sim.js'

const RAW = {promoteLongs: false} as const

async function inprog(client: MongoClient, stage: Document = {}): Promise<Document[]> {
  return client.db('admin').aggregate([{$currentOp: {allUsers: true, ...stage}}], RAW).toArray()
}

function longType(v: unknown): string | undefined {
  return (v as {_bsontype?: string} | undefined)?._bsontype
}

/** The locks taken with an intent global lock of `mode`, as currentOp lists them, per profile. */
function globalLocksOf(versionProfile: SimVersionProfile, mode: 'r' | 'w'): Document {
  if (versionProfile === '8.0') return {ReplicationStateTransition: 'w', Global: mode}
  if (versionProfile === '5.0' || versionProfile === '7.0') return {ParallelBatchWriterMode: 'r', FeatureCompatibilityVersion: mode, ReplicationStateTransition: 'w', Global: mode}
  return {ParallelBatchWriterMode: 'r', ReplicationStateTransition: 'w', Global: mode}
}

for (const versionProfile of ['4.4', '5.0', '7.0', '8.0'] as SimVersionProfile[]) {
  describe(`a ${versionProfile} replica set reports the locks of its operations`, () => {
    let sim: SimCluster
    let client: MongoClient
    const fcv = versionProfile === '5.0' || versionProfile === '7.0'
    const mutex = versionProfile === '7.0' || versionProfile === '8.0'

    before(async () => {
      sim = await startSimCluster({topology: 'replset', versionProfile, members: 2})
      client = new MongoClient(withParams(sim.info.uri, 'appName=locks-test'))
      await client.connect()
    })
    after(async () => {
      await client?.close()
      await sim?.stop()
    })

    it('shows a write waiting behind fsyncLock with the global locks requested and its wait so far', async () => {
      const admin = client.db('admin')
      await admin.command({fsync: 1, lock: true})
      let write: Promise<unknown> | undefined
      try {
        write = client.db('app').collection('c').insertOne({a: 1})
        const ops = await waitForState('the insert waits for its lock', () => inprog(client), (d) => d.some((o) => o.waitingForLock === true && o.ns === 'app.c'))
        const op = ops.find((o) => o.waitingForLock === true && o.ns === 'app.c')!
        assert.deepEqual(op.locks, globalLocksOf(versionProfile, 'w'))
        assert.equal(longType(op.lockStats.Global.acquireCount.w), 'Long')
        assert.equal(Number(op.lockStats.Global.acquireCount.w), 1)
        assert.equal(Number(op.lockStats.Global.acquireWaitCount.w), 1)
        assert.ok('timeAcquiringMicros' in op.lockStats.Global)
        assert.equal(op.lockStats.Collection, undefined, 'no collection lock while waiting for Global')
        assert.equal(op.waitingForFlowControl, false)
        assert.equal(longType(op.flowControlStats.acquireCount), 'Long', 'a write on a replica set takes a flow-control ticket')
      } finally {
        await admin.command({fsyncUnlock: 1})
        await write
      }
    })

    it('shows a write holding its locks while it runs, with its own lock stats', async () => {
      // Writes to one collection run one at a time in the sim, each for the service latency; so does
      // $currentOp: started after the writes, it reads the server while a later write holds its locks.
      await sim.control({kind: 'latency', ms: 200})
      let writes: Promise<unknown> | undefined
      try {
        const coll = client.db('app').collection('held')
        writes = Promise.all(Array.from({length: 6}, (_, i) => coll.insertOne({i})))
        const holding = (d: Document[]) => d.find((o) => o.ns === 'app.held' && o.waitingForLock === false && o.locks?.Collection === 'w')
        const op = holding(await waitForState('an insert holds its collection lock', () => inprog(client), (d) => holding(d) !== undefined))!
        const expected: Document = {...globalLocksOf(versionProfile, 'w'), Database: 'w', Collection: 'w'}
        assert.deepEqual(op.locks, expected)
        assert.deepEqual(Object.keys(op.lockStats), Object.keys(expected))
        assert.equal(Number(op.lockStats.Collection.acquireCount.w), 1)
        assert.equal(longType(op.lockStats.Database.acquireCount.w), 'Long')
        assert.equal(op.waitingForFlowControl, false)
      } finally {
        await sim.control({kind: 'latency', ms: 0})
        await writes
      }
    })

    it('reports the version\'s global resources, and the oplog lock on the primary only', async () => {
      await client.db('app').collection('c').insertOne({c: 1})
      await client.db('app').collection('c').findOne({c: 1})
      const primary = sim.info.processes.find((p) => p.memberState === 'primary')!
      const secondary = sim.info.processes.find((p) => p.memberState === 'secondary')!
      const statusOf = async (host: string) => {
        const c = new MongoClient(`mongodb://${host}/?directConnection=true`)
        try {
          return await c.db('admin').command({serverStatus: 1}, RAW)
        } finally {
          await c.close()
        }
      }
      const locks = (await statusOf(primary.host)).locks
      assert.ok(Number(locks.oplog?.acquireCount?.w) >= 1, `oplog w on the primary: ${JSON.stringify(locks.oplog)}`)
      assert.equal(longType(locks.oplog.acquireCount.w), 'Long')
      // The fsyncLockWorker of the first test took Global S: the FCV lock counts it under IS (its intent mode).
      assert.ok(Number(locks.Global.acquireCount.R) >= 1, 'the fsync lock worker took Global S')
      if (fcv) {
        assert.deepEqual(Object.keys(locks.FeatureCompatibilityVersion.acquireCount).sort(), ['r', 'w'])
        assert.equal(
          Number(locks.FeatureCompatibilityVersion.acquireCount.r),
          Number(locks.Global.acquireCount.r ?? 0) + Number(locks.Global.acquireCount.R ?? 0),
          'every IS and S global lock took the FCV lock in IS',
        )
        assert.deepEqual(Object.keys(locks).slice(0, 3), ['ParallelBatchWriterMode', 'FeatureCompatibilityVersion', 'ReplicationStateTransition'])
      } else {
        assert.equal(locks.FeatureCompatibilityVersion, undefined)
      }
      if (mutex) assert.ok(Number(locks.Mutex?.acquireCount?.r) >= 1)
      else assert.equal(locks.Mutex, undefined)
      if (versionProfile === '8.0') {
        // 7.1 removed PBWM; 7.3's transactions barrier is taken only with S/X global locks, in that mode.
        assert.equal(locks.ParallelBatchWriterMode, undefined)
        assert.deepEqual(Object.keys(locks.MultiDocumentTransactionsBarrier.acquireCount), ['R'])
        assert.deepEqual(Object.keys(locks).slice(0, 2), ['MultiDocumentTransactionsBarrier', 'ReplicationStateTransition'])
      } else {
        assert.ok(Number(locks.ParallelBatchWriterMode.acquireCount.r) >= 1)
        assert.equal(locks.MultiDocumentTransactionsBarrier, undefined)
      }
      assert.equal((await statusOf(secondary.host)).locks.oplog, undefined, 'a secondary writes no oplog entries of its own')
    })
  })
}

describe('a router has no lock manager; shard operations through it carry client_s', () => {
  let sim: SimCluster
  let client: MongoClient

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '6.0', shards: 1, mongos: 1, shardMembers: 1, configMembers: 1})
    client = new MongoClient(withParams(sim.info.uri, 'appName=router-locks'))
    await client.connect()
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('answers serverStatus without globalLock and locks, which a shard member has', async () => {
    const router = await client.db('admin').command({serverStatus: 1})
    assert.equal(router.process, 'mongos')
    assert.equal(router.globalLock, undefined)
    assert.equal(router.locks, undefined)
    const shard = sim.info.processes.find((p) => p.role === 'shard')!
    const direct = new MongoClient(`mongodb://${shard.host}/?directConnection=true`)
    try {
      const s = await direct.db('admin').command({serverStatus: 1})
      assert.ok(s.globalLock && s.locks)
    } finally {
      await direct.close()
    }
  })

  it('reports client_s (the router side of the connection) instead of client, and no opid on idle entries', async () => {
    await client.db('app').collection('c').insertOne({a: 1})
    const docs = await inprog(client, {idleConnections: true})
    const fromShard = docs.filter((d) => d.shard === 'shard01')
    assert.ok(fromShard.length > 0)
    for (const d of fromShard) {
      assert.equal(d.client, undefined, JSON.stringify(d))
      assert.match(String(d.client_s), /^127\.0\.0\.1:\d+$/)
      if (d.active === false) assert.equal(d.opid, undefined, `idle entry without opid: ${JSON.stringify(d)}`)
      else assert.match(String(d.opid), /^shard01:\d+$/)
    }
  })
})
