/**
 * Real lock waits on the embedded replica set, read through the real driver:
 * (a) fsyncLock's `fsyncLockWorker` holds Global S and the writes behind it wait on Global IX;
 * (b) an index build (the `lock-hold` fault) holds Collection X and operations on the collection queue
 *     behind it, with serverStatus.locks and globalLock.currentQueue moving;
 * (c) lockInfo lists the holder granted and the waiters pending on the same resource.
 * Every wait is reached by polling $currentOp, never by sleeping; the holds end by command.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import type {Document} from 'bson'
import {MongoClient, MongoServerError} from 'mongodb'
import {type SimCluster, type SimVersionProfile, startSimCluster} from '../../src/sim/index.js'
import {waitForState, withParams} from '../helpers/sim.js'

const RAW = {promoteLongs: false} as const

async function inprog(client: MongoClient): Promise<Document[]> {
  return client.db('admin').aggregate([{$currentOp: {allUsers: true, idleConnections: true}}], RAW).toArray()
}

const n = (v: unknown): number => Number(v ?? 0)

for (const versionProfile of ['4.4', '7.0'] as SimVersionProfile[]) {
  const fcv = versionProfile === '7.0'
  describe(`lock waits on a ${versionProfile} replica set`, () => {
    let sim: SimCluster
    let client: MongoClient
    let primary: string

    before(async () => {
      sim = await startSimCluster({topology: 'replset', versionProfile, members: 2})
      primary = sim.info.processes.find((p) => p.memberState === 'primary')!.host
      client = new MongoClient(withParams(sim.info.uri, 'appName=lock-waits'))
      await client.connect()
    })
    after(async () => {
      await client?.close()
      await sim?.stop()
    })

    it('(a) shows the fsyncLockWorker holding Global S while two writes wait on Global IX', async () => {
      const admin = client.db('admin')
      await admin.command({fsync: 1, lock: true})
      let writes: Promise<unknown> | undefined
      let unlocked = false
      try {
        writes = Promise.all([client.db('app').collection('a1').insertOne({a: 1}), client.db('app').collection('a2').insertOne({a: 2})])
        const waiting = (d: Document[]) => d.filter((o) => o.waitingForLock === true && /^app\.a[12]$/.test(String(o.ns)))
        const ops = await waitForState('both writes wait for the global lock', () => inprog(client), (d) => waiting(d).length === 2)
        const worker = ops.find((o) => o.desc === 'fsyncLockWorker')
        assert.ok(worker, `a fsyncLockWorker in $currentOp: ${JSON.stringify(ops.map((o) => o.desc))}`)
        assert.equal(worker.active, true)
        assert.equal(typeof worker.opid, 'number')
        assert.equal(worker.waitingForLock, false)
        assert.equal(worker.client, undefined, 'a system thread has no client')
        assert.equal(worker.connectionId, undefined)
        assert.equal(worker.op, 'none')
        assert.equal((worker.secs_running as {_bsontype?: string})._bsontype, 'Long')
        assert.ok('microsecs_running' in worker)
        assert.deepEqual(
          worker.locks,
          fcv
            ? {ParallelBatchWriterMode: 'r', FeatureCompatibilityVersion: 'r', ReplicationStateTransition: 'w', Global: 'R'}
            : {ParallelBatchWriterMode: 'r', ReplicationStateTransition: 'w', Global: 'R'},
        )
        assert.equal(n(worker.lockStats.Global.acquireCount.R), 1)
        for (const w of waiting(ops)) {
          assert.equal(w.locks.Global, 'w', JSON.stringify(w.locks))
          assert.equal(w.locks.Collection, undefined, 'no collection lock before the global one')
          assert.equal(n(w.lockStats.Global.acquireWaitCount.w), 1)
        }
        const status = await admin.command({serverStatus: 1})
        assert.ok(status.globalLock.currentQueue.writers >= 2, JSON.stringify(status.globalLock))
        assert.equal((await admin.command({currentOp: 1})).fsyncLock, true)

        // lockInfo (c): the worker granted S, both writes pending IX, on the global resource
        const info = (await admin.command({lockInfo: 1})).lockInfo as Document[]
        const global = info.find((r) => /^\{\d+: Global, 3\}$/.test(r.resourceId))
        assert.ok(global, `the global resource: ${JSON.stringify(info.map((r) => r.resourceId))}`)
        assert.deepEqual(global.granted.map((g: Document) => [g.mode, g.clientInfo.desc]), [['S', 'fsyncLockWorker']])
        const writeOpids = waiting(ops).map((o) => o.opid).sort()
        assert.deepEqual(global.pending.map((p: Document) => p.clientInfo.opid).sort(), writeOpids)
        assert.deepEqual(global.pending.map((p: Document) => p.mode), ['IX', 'IX'])
        for (const p of global.pending) assert.match(p.clientInfo.desc, /^conn\d+$/)

        await admin.command({fsyncUnlock: 1})
        unlocked = true
        await writes
        const after = await inprog(client)
        assert.equal(after.find((o) => o.desc === 'fsyncLockWorker'), undefined, 'the worker ends at the last fsyncUnlock')
      } finally {
        if (!unlocked) await admin.command({fsyncUnlock: 1})
        await writes
      }
    })

    it(`(b, c) shows an index build holding Collection X with ${fcv ? 'two writes' : 'a read and a write'} waiting behind it`, async () => {
      const admin = client.db('admin')
      const coll = client.db('app').collection('held')
      await coll.insertOne({seed: 1})
      const before = (await admin.command({serverStatus: 1}, RAW)).locks.Collection
      await sim.control({kind: 'lock-hold', ns: 'app.held', mode: 'W', ms: 600_000, hosts: [primary]})
      let waiters: Promise<unknown> | undefined
      let released = false
      try {
        // 5.0+ reads are lock-free (they never take the collection lock), so on 7.0 both waiters are writes
        const second = fcv ? coll.updateOne({seed: 1}, {$set: {b: 1}}) : coll.findOne({seed: 1})
        waiters = Promise.all([coll.insertOne({w: 1}), second])
        const waiting = (d: Document[]) => d.filter((o) => o.waitingForLock === true && o.ns === 'app.held' && o.desc !== undefined && /^conn/.test(o.desc))
        const ops = await waitForState('two operations wait behind the index build', () => inprog(client), (d) => waiting(d).length === 2)

        const holder = ops.find((o) => /^IndexBuildsCoordinatorMongod-\d+$/.test(String(o.desc)))
        assert.ok(holder, `the index build in $currentOp: ${JSON.stringify(ops.map((o) => o.desc))}`)
        assert.equal(holder.op, 'command')
        assert.equal(holder.ns, 'app.held')
        assert.equal(holder.command.createIndexes, 'held')
        assert.match(holder.msg, /^Index Build: /)
        assert.deepEqual(Object.keys(holder.progress), ['done', 'total'])
        assert.equal(holder.waitingForLock, false)
        assert.equal(holder.locks.Collection, 'W')
        assert.equal(holder.locks.Database, 'w')
        assert.equal(holder.locks.Global, 'w')

        const modes = waiting(ops).map((o) => o.locks.Collection).sort()
        assert.deepEqual(modes, fcv ? ['w', 'w'] : ['r', 'w'])
        for (const w of waiting(ops)) {
          const mode = w.locks.Collection as string
          assert.equal(n(w.lockStats.Collection.acquireWaitCount[mode]), 1)
          assert.ok('timeAcquiringMicros' in w.lockStats.Collection)
        }

        const status = await admin.command({serverStatus: 1}, RAW)
        const waitsOf = (c: Document | undefined, mode: string) => n(c?.acquireWaitCount?.[mode])
        if (fcv) assert.equal(waitsOf(status.locks.Collection, 'w') - waitsOf(before, 'w'), 2)
        else {
          assert.equal(waitsOf(status.locks.Collection, 'w') - waitsOf(before, 'w'), 1)
          assert.equal(waitsOf(status.locks.Collection, 'r') - waitsOf(before, 'r'), 1)
        }
        const queue = status.globalLock.currentQueue
        assert.equal(queue.total, 2, JSON.stringify(queue))
        assert.deepEqual([queue.readers, queue.writers], fcv ? [0, 2] : [1, 1])

        // (c) lockInfo: the holder granted X and the two waiters pending, on one collection resource
        const info = (await admin.command({lockInfo: 1})).lockInfo as Document[]
        const resource = info.find((r) => r.granted.some((g: Document) => g.mode === 'X'))
        assert.ok(resource, JSON.stringify(info))
        assert.match(resource.resourceId, /^\{\d+: Collection, \d+\}$/)
        assert.deepEqual(resource.granted.map((g: Document) => g.clientInfo.desc), [holder.desc])
        assert.equal(resource.granted[0].clientInfo.opid, holder.opid)
        assert.match(resource.granted[0].debugInfo, /^index build: [0-9a-f-]{36}$/)
        assert.deepEqual(resource.pending.map((p: Document) => p.mode).sort(), fcv ? ['IX', 'IX'] : ['IS', 'IX'])
        const waiterOpids = waiting(ops).map((o) => o.opid).sort()
        assert.deepEqual(resource.pending.map((p: Document) => p.clientInfo.opid).sort(), waiterOpids)
        for (const p of resource.pending) assert.deepEqual(Object.keys(p.clientInfo), ['desc', 'connectionId', 'client', 'opid'])

        if (fcv) {
          // a lock-free read runs while the collection is held exclusively
          assert.ok(await coll.findOne({seed: 1}))
        }

        await sim.control({kind: 'lock-hold', ns: 'app.held', mode: 'W', ms: 0, hosts: [primary]})
        released = true
        await waiters
        const done = await admin.command({serverStatus: 1}, RAW)
        assert.equal(done.globalLock.currentQueue.total, 0)
        assert.ok(n(done.locks.Collection.timeAcquiringMicros.w) >= n(status.locks.Collection.timeAcquiringMicros.w))
        assert.equal((await inprog(client)).find((o) => o.desc === holder.desc), undefined, 'the build is over')
      } finally {
        if (!released) await sim.control({kind: 'lock-hold', ns: 'app.held', mode: 'W', ms: 0, hosts: [primary]})
        await waiters
      }
    })

    it('counts an acquisition when it is requested, before its wait: acquireCount ≥ acquireWaitCount for every resource and mode', async () => {
      // LockerImpl::_lockBegin (lock_state.cpp) increments acquireCount when the lock is requested, then
      // acquireWaitCount if it has to wait; a waiter counted before its acquisition showed "acquired –" or
      // more than 100% waited in pooltool's waits table (issue 24).
      const admin = client.db('admin')
      const coll = client.db('app').collection('order')
      await coll.insertOne({seed: 1})
      const hold = (mode: 'W' | 'R', ms: number) => sim.control({kind: 'lock-hold', ns: 'app.order', mode, ms, hosts: [primary]})
      const builds = (d: Document[]) => d.filter((o) => /^IndexBuildsCoordinatorMongod-/.test(String(o.desc)) && o.ns === 'app.order')
      const locksNow = async () => (await admin.command({serverStatus: 1}, RAW)).locks as Document
      const noMoreWaitsThanAcquisitions = (locks: Document, when: string) => {
        for (const [type, entry] of Object.entries(locks)) {
          for (const [mode, waits] of Object.entries((entry as Document).acquireWaitCount ?? {})) {
            const acquired = n((entry as Document).acquireCount?.[mode])
            assert.ok(acquired >= n(waits), `${when}: ${type} ${mode} acquired ${acquired}, waited ${n(waits)}: ${JSON.stringify(entry)}`)
          }
        }
      }
      const before = (await locksNow()).Collection as Document
      let write: Promise<unknown> | undefined
      try {
        await hold('W', 600_000)
        await waitForState('the exclusive build holds the collection', () => inprog(client), (d) => builds(d).some((o) => o.waitingForLock === false && o.locks.Collection === 'W'))
        // a second build asks for S behind the X: its wait and its acquisition are both counted now
        await hold('R', 600_000)
        write = coll.insertOne({w: 1})
        await waitForState('the shared build and a write wait', () => inprog(client), (d) => builds(d).some((o) => o.waitingForLock === true && o.locks.Collection === 'R') && d.some((o) => o.ns === 'app.order' && o.waitingForLock === true && o.locks?.Collection === 'w'))
        const waiting = await locksNow()
        const c = waiting.Collection as Document
        assert.ok(n(c.acquireCount.W) - n(before?.acquireCount?.W) >= 1, `the build holding X counted its acquisition: ${JSON.stringify(c)}`)
        assert.equal(n(c.acquireWaitCount.R) - n(before?.acquireWaitCount?.R), 1, JSON.stringify(c))
        assert.equal(n(c.acquireCount.R) - n(before?.acquireCount?.R), 1, `the waiting S request counted as acquired when requested: ${JSON.stringify(c)}`)
        assert.ok(n(c.acquireCount.w) - n(before?.acquireCount?.w) >= n(c.acquireWaitCount.w) - n(before?.acquireWaitCount?.w), JSON.stringify(c))
        noMoreWaitsThanAcquisitions(waiting, 'while two requests wait')
        await hold('W', 0)
        await hold('R', 0)
        await write
        noMoreWaitsThanAcquisitions(await locksNow(), 'after the waits')
      } finally {
        await hold('W', 0)
        await hold('R', 0)
        await write
      }
    })

    if (!fcv) {
      it('queues a new reader behind a pending exclusive request (FIFO), though it is compatible with the granted shared one', async () => {
        const coll = client.db('app').collection('fifo')
        await coll.insertOne({seed: 1})
        const hold = (mode: 'W' | 'R', ms: number) => sim.control({kind: 'lock-hold', ns: 'app.fifo', mode, ms, hosts: [primary]})
        await hold('R', 600_000) // an index build's last drain holds S: reads run beside it
        assert.ok(await coll.findOne({seed: 1}), 'a read runs beside a shared hold')
        const builds = (d: Document[]) => d.filter((o) => /^IndexBuildsCoordinatorMongod-/.test(String(o.desc)) && o.ns === 'app.fifo')
        let read: Promise<unknown> | undefined
        try {
          await hold('W', 600_000) // a second build asks for X: it waits behind the S
          await waitForState('the exclusive request waits', () => inprog(client), (d) => builds(d).some((o) => o.waitingForLock === true && o.locks.Collection === 'W'))
          read = coll.findOne({seed: 1})
          const ops = await waitForState('the read queues behind the pending X', () => inprog(client), (d) => d.some((o) => o.ns === 'app.fifo' && o.waitingForLock === true && o.locks?.Collection === 'r'))
          assert.equal(builds(ops).length, 2)
          const info = (await client.db('admin').command({lockInfo: 1})).lockInfo as Document[]
          const resource = info.find((r) => r.granted.some((g: Document) => g.mode === 'S'))
          assert.ok(resource, JSON.stringify(info))
          assert.deepEqual(resource.pending.map((p: Document) => p.mode), ['X', 'IS'], 'FIFO: the read is queued after the exclusive request')
          await hold('R', 0) // the shared hold ends: X is granted, the read still waits behind it
          await waitForState('the exclusive build holds the collection', () => inprog(client), (d) => builds(d).some((o) => o.waitingForLock === false && o.locks.Collection === 'W'))
          assert.ok((await inprog(client)).some((o) => o.ns === 'app.fifo' && o.waitingForLock === true && o.locks?.Collection === 'r'))
          await hold('W', 0)
          assert.ok(await read)
        } finally {
          await hold('R', 0)
          await hold('W', 0)
          await read
        }
      })
    }
  })
}

describe('lockInfo is mongod-only and needs serverStatus on the cluster', () => {
  let sim: SimCluster

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '6.0', shards: 1, mongos: 1, shardMembers: 1, configMembers: 1, auth: true})
  })
  after(async () => {
    await sim?.stop()
  })

  it('answers CommandNotFound on a router, Unauthorized without clusterMonitor, and only on admin', async () => {
    const router = new MongoClient(sim.info.uri)
    try {
      await assert.rejects(router.db('admin').command({lockInfo: 1}), (e: MongoServerError) => e.code === 59)
      await router.db('admin').command({createUser: 'reader', pwd: 'reader-pw', roles: [{role: 'read', db: 'app'}]})
    } finally {
      await router.close()
    }
    const shard = sim.info.processes.find((p) => p.role === 'shard')!
    const c = sim.info.credentials!
    const root = new MongoClient(`mongodb://${c.username}:${c.password}@${shard.host}/?directConnection=true&authSource=admin`)
    try {
      const ok = await root.db('admin').command({lockInfo: 1})
      assert.ok(Array.isArray(ok.lockInfo))
      await assert.rejects(root.db('app').command({lockInfo: 1}), (e: MongoServerError) => e.code === 13)
      await root.db('admin').command({createUser: 'shardreader', pwd: 'reader-pw', roles: [{role: 'read', db: 'app'}]})
    } finally {
      await root.close()
    }
    const reader = new MongoClient(`mongodb://shardreader:reader-pw@${shard.host}/?directConnection=true&authSource=admin`)
    try {
      await assert.rejects(reader.db('admin').command({lockInfo: 1}), (e: MongoServerError) => e.code === 13)
    } finally {
      await reader.close()
    }
  })
})
