/** The official driver against a standalone simulated mongod (7.0 profile, no auth): CRUD, cursors, aggregation, DDL. */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {Document} from 'bson'
import {MongoClient, MongoServerError, type Collection} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {RawClient, portOf, waitForState, withParams} from '../helpers/sim.js'

describe('standalone CRUD through the driver', () => {
  let sim: SimCluster
  let client: MongoClient
  let coll: Collection

  before(async () => {
    sim = await startSimCluster({topology: 'standalone', versionProfile: '7.0'})
    client = new MongoClient(withParams(sim.info.uri, 'appName=crud-suite'), {monitorCommands: true})
    await client.connect()
    coll = client.db('shop').collection('orders')
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('reports a plain standalone URI and process info', () => {
    assert.match(sim.info.uri, /^mongodb:\/\/127\.0\.0\.1:\d+\/$/)
    assert.equal(sim.info.processes.length, 1)
    assert.equal(sim.info.processes[0].role, 'standalone')
    assert.equal(sim.info.serverVersion, '7.0.14')
    assert.equal(sim.info.credentials, undefined)
  })

  it('inserts, finds with filter/sort/projection/skip/limit, counts', async () => {
    const docs = Array.from({length: 250}, (_, i) => ({i, g: i % 5, tags: i % 2 ? ['odd'] : ['even', 'x'], nested: {v: i}}))
    const res = await coll.insertMany(docs)
    assert.equal(res.insertedCount, 250)
    assert.equal(await coll.countDocuments({g: 2}), 50)
    assert.equal(await coll.estimatedDocumentCount(), 250)
    const top = await coll.find({i: {$gte: 100, $lt: 200}, tags: 'odd'}, {projection: {_id: 0, i: 1}}).sort({i: -1}).skip(2).limit(3).toArray()
    assert.deepEqual(top, [{i: 195}, {i: 193}, {i: 191}])
    assert.equal(await coll.countDocuments({'nested.v': {$in: [1, 2, 3]}}), 3)
    assert.equal(await coll.countDocuments({$or: [{i: 1}, {i: 2}], g: {$ne: 1}}), 1)
    assert.equal(await coll.countDocuments({tags: {$exists: true}, missing: {$exists: false}}), 250)
    const excluded = await coll.findOne({i: 7}, {projection: {tags: 0, nested: 0}})
    assert.deepEqual(Object.keys(excluded!).sort(), ['_id', 'g', 'i'])
  })

  it('iterates a cursor of more than 101 documents with getMore', async () => {
    let batches = 0
    const seen: number[] = []
    client.on('commandStarted', (e) => {
      if (e.commandName === 'getMore') batches++
    })
    const cursor = coll.find({}, {batchSize: 60}).sort({i: 1})
    for await (const d of cursor) seen.push(d.i)
    client.removeAllListeners('commandStarted')
    assert.equal(seen.length, 250)
    assert.deepEqual(seen.slice(0, 3), [0, 1, 2])
    assert.ok(batches >= 4, `expected several getMore batches, saw ${batches}`)
    // default batch size: 101 first, the rest by getMore
    assert.equal((await coll.find({}).toArray()).length, 250)
  })

  it('updates with operators, upserts and replacements', async () => {
    const many = await coll.updateMany({g: 0}, {$inc: {i: 1000}, $set: {flag: true}, $push: {tags: 'bumped'}})
    assert.equal(many.matchedCount, 50)
    assert.equal(many.modifiedCount, 50)
    assert.equal(await coll.countDocuments({flag: true, tags: 'bumped', i: {$gte: 1000}}), 50)
    const noop = await coll.updateOne({i: 1}, {$set: {g: 1}})
    assert.equal(noop.matchedCount, 1)
    assert.equal(noop.modifiedCount, 0)
    const up = await coll.updateOne({sku: 'new'}, {$set: {qty: 1}, $setOnInsert: {created: true}}, {upsert: true})
    assert.equal(up.upsertedCount, 1)
    const inserted = await coll.findOne({sku: 'new'})
    assert.equal(inserted?.qty, 1)
    assert.equal(inserted?.created, true)
    const rep = await coll.replaceOne({sku: 'new'}, {sku: 'new', qty: 5})
    assert.equal(rep.modifiedCount, 1)
    assert.deepEqual(await coll.findOne({sku: 'new'}, {projection: {_id: 0}}), {sku: 'new', qty: 5})
    await coll.updateOne({sku: 'new'}, {$unset: {qty: ''}})
    assert.deepEqual(await coll.findOne({sku: 'new'}, {projection: {_id: 0}}), {sku: 'new'})
  })

  it('findOneAndUpdate / findOneAndDelete return the right documents', async () => {
    const after = await coll.findOneAndUpdate({i: 3}, {$set: {z: 1}}, {returnDocument: 'after', projection: {_id: 0, i: 1, z: 1}})
    assert.deepEqual(after, {i: 3, z: 1})
    const before = await coll.findOneAndUpdate({i: 3}, {$inc: {z: 1}}, {returnDocument: 'before'})
    assert.equal(before?.z, 1)
    const deleted = await coll.findOneAndDelete({i: 3})
    assert.equal(deleted?.z, 2)
    assert.equal(await coll.findOne({i: 3}), null)
  })

  it('deletes one and many', async () => {
    assert.equal((await coll.deleteOne({g: 4})).deletedCount, 1)
    assert.equal((await coll.deleteMany({g: 4})).deletedCount, 49)
    assert.equal(await coll.countDocuments({g: 4}), 0)
  })

  it('aggregates with $match/$group/$sort/$project/$unwind/$count', async () => {
    const groups = await coll
      .aggregate([{$match: {g: {$in: [1, 2]}}}, {$group: {_id: '$g', n: {$sum: 1}, max: {$max: '$i'}, first: {$first: '$g'}}}, {$sort: {_id: 1}}])
      .toArray()
    assert.deepEqual(groups, [
      {_id: 1, n: 50, max: 246, first: 1},
      {_id: 2, n: 50, max: 247, first: 2},
    ])
    const unwound = await coll.aggregate([{$match: {i: 2}}, {$unwind: '$tags'}, {$project: {_id: 0, tags: 1}}]).toArray()
    assert.deepEqual(unwound, [{tags: 'even'}, {tags: 'x'}])
    const counted = await coll.aggregate([{$match: {g: 1}}, {$count: 'n'}]).toArray()
    assert.deepEqual(counted, [{n: 50}])
    const distinct = await coll.distinct('g')
    assert.deepEqual([...distinct].sort(), [0, 1, 2, 3])
  })

  it('rejects duplicate _id with E11000 and keeps going when unordered', async () => {
    const c = client.db('shop').collection('dups')
    await c.insertOne({_id: 1 as never, a: 1})
    await assert.rejects(c.insertOne({_id: 1 as never}), (e: unknown) => {
      assert.ok(e instanceof MongoServerError, `a server error, got ${String(e)}`)
      assert.equal(e.code, 11000)
      assert.match(e.message, /E11000 duplicate key error collection: shop\.dups index: _id_ dup key: \{ _id: 1 \}/)
      return true
    })
    const r = await c.insertMany([{_id: 2}, {_id: 1}, {_id: 3}] as never[], {ordered: false}).catch((e) => e)
    assert.equal(r.code, 11000)
    assert.equal(await c.countDocuments(), 3)
  })

  it('creates, lists and drops collections and indexes', async () => {
    const db = client.db('ddl')
    await db.createCollection('a')
    await assert.rejects(db.createCollection('a'), (e: MongoServerError) => e.code === 48)
    await db.collection('b').insertOne({x: 1})
    const names = (await db.listCollections({}, {nameOnly: true}).toArray()).map((c) => c.name).sort()
    assert.deepEqual(names, ['a', 'b'])
    assert.equal(await db.collection('b').createIndex({x: 1}, {unique: true}), 'x_1')
    const idx = await db.collection('b').listIndexes().toArray()
    assert.deepEqual(idx.map((i) => i.name), ['_id_', 'x_1'])
    await db.collection('b').dropIndex('x_1')
    assert.equal((await db.collection('b').listIndexes().toArray()).length, 1)
    assert.equal(await db.collection('a').drop(), true)
    const dbs = await client.db('admin').admin().listDatabases()
    assert.ok(dbs.databases.some((d) => d.name === 'ddl'), 'listDatabases lists ddl')
    await db.dropDatabase()
    const after = await client.db('admin').admin().listDatabases({nameOnly: true})
    assert.ok(!after.databases.some((d) => d.name === 'ddl'), 'ddl is gone after dropDatabase')
  })

  it('answers unknown commands like mongod', async () => {
    await assert.rejects(client.db('admin').command({frobnicate: 1}), (e: MongoServerError) => {
      assert.equal(e.code, 59)
      assert.equal(e.codeName, 'CommandNotFound')
      assert.equal(e.message, "no such command: 'frobnicate'")
      return true
    })
  })

  it('speaks the legacy OP_QUERY hello and reports the profile wire version and build info', async () => {
    const raw = await RawClient.open(portOf(sim.info.processes[0].host))
    try {
      const hello = await raw.legacyHello({isMaster: 1, helloOk: true})
      assert.equal(hello.ismaster, true)
      assert.equal(hello.helloOk, true)
      assert.equal(hello.maxWireVersion, 21)
      assert.equal(hello.minWireVersion, 0)
      assert.equal(hello.maxBsonObjectSize, 16777216)
      assert.equal(hello.maxMessageSizeBytes, 48000000)
      assert.equal(hello.maxWriteBatchSize, 100000)
      assert.equal(hello.logicalSessionTimeoutMinutes, 30)
      assert.ok(hello.topologyVersion.processId, 'hello carries topologyVersion.processId')
      assert.equal(typeof hello.connectionId, 'number')
      const legacyPing = await raw.legacyHello({ping: 1})
      assert.equal(legacyPing.code, 352, 'OP_QUERY commands other than hello are gone since 5.1')
      assert.equal(legacyPing.codeName, 'UnsupportedOpQueryCommand')
      const modern = await raw.command('admin', {hello: 1})
      assert.equal(modern.isWritablePrimary, true)
      assert.equal(modern.ismaster, undefined)
    } finally {
      await raw.close()
    }
    const info = await client.db('admin').command({buildInfo: 1})
    assert.equal(info.version, '7.0.14')
    assert.deepEqual(info.versionArray, [7, 0, 14, 0])
  })

  it('lists connections with the URI appName in $currentOp', async () => {
    // A connection known to be idle: the driver's own may be mid-command at any moment (the
    // streaming monitor sits in an awaitable hello from about 0.5 s after connect on).
    const idle = await RawClient.open(portOf(sim.info.processes[0].host))
    try {
      const idleId = (await idle.command('admin', {hello: 1, client: {application: {name: 'crud-idle'}}})).connectionId
      const ops = await client.db('admin').aggregate([{$currentOp: {allUsers: true, idleConnections: true}}]).toArray()
      const mine = ops.filter((o) => o.appName === 'crud-suite')
      assert.ok(mine.length >= 2, `monitor and pooled connections are listed, saw ${mine.length}`)
      for (const o of mine) {
        assert.equal(o.type, 'op')
        assert.match(o.desc, /^conn\d+$/)
        assert.match(o.client, /^127\.0\.0\.1:\d+$/)
        assert.equal(o.clientMetadata.application.name, 'crud-suite')
      }
      const self = ops.find((o) => o.active && o.command?.aggregate === 1)
      assert.ok(self, 'the asking operation is active')
      assert.equal(self.ns, 'admin.$cmd.aggregate')
      assert.equal(typeof self.opid, 'number')
      const idleOp = ops.find((o) => o.connectionId === idleId)
      assert.deepEqual(
        {desc: idleOp?.desc, appName: idleOp?.appName, active: idleOp?.active, command: idleOp?.command},
        {desc: `conn${idleId}`, appName: 'crud-idle', active: false, command: undefined},
        'an idle connection is listed with idleConnections, without a command',
      )

      const activeOnly = await client.db('admin').aggregate([{$currentOp: {allUsers: true}}]).toArray()
      assert.deepEqual(activeOnly.filter((o) => o.active !== true), [], 'without idleConnections only active operations are listed')
      assert.ok(activeOnly.some((o) => o.command?.aggregate === 1), 'the asking operation is listed')
      assert.equal(activeOnly.find((o) => o.connectionId === idleId), undefined, 'the idle connection is not listed')
    } finally {
      await idle.close()
    }
  })

  it('holds writes under fsyncLock until as many fsyncUnlock, and says so in currentOp', async () => {
    const admin = client.db('admin')
    const held = client.db('shop').collection('held')
    await assert.rejects(admin.command({fsyncUnlock: 1}), (e: MongoServerError) => {
      assert.deepEqual([e.code, e.message], [20, 'fsyncUnlock called when not locked'])
      return true
    })
    await assert.rejects(client.db('shop').command({fsync: 1}), (e: MongoServerError) => {
      assert.deepEqual([e.code, e.message], [13, 'fsync may only be run against the admin database.'])
      return true
    })
    assert.deepEqual(await admin.command({fsync: 1}), {numFiles: 1, ok: 1})
    const locked = await admin.command({fsync: 1, lock: true})
    assert.equal(locked.info, 'now locked against writes, use db.fsyncUnlock() to unlock')
    assert.equal(locked.lockCount, 1)
    assert.equal((await admin.command({fsync: 1, lock: true})).lockCount, 2, 'fsyncLock nests')
    let written = false
    const write = held.insertOne({held: true}).then(() => (written = true))
    try {
      const heldWrite = (r: Document) => r.inprog.some((o: Document) => o.ns === 'shop.held' && o.waitingForLock === true)
      const shown = await waitForState('the insert waiting for the fsync lock', () => admin.command({currentOp: 1}), heldWrite)
      assert.equal(shown.fsyncLock, true)
      assert.notEqual(await coll.findOne({}), null, 'reads are served while writes are held')
      assert.equal((await admin.command({fsyncUnlock: 1})).lockCount, 1)
      assert.ok(heldWrite(await admin.command({currentOp: 1})), 'one fsyncUnlock of two leaves the write held')
      assert.equal(written, false)
    } finally {
      assert.equal((await admin.command({fsyncUnlock: 1})).lockCount, 0)
    }
    await write
    assert.equal(await held.countDocuments({held: true}), 1)
    assert.equal((await admin.command({currentOp: 1})).fsyncLock, undefined)
  })

  it('serves getParameter and rejects too-low setParameter values', async () => {
    const admin = client.db('admin')
    const p = await admin.command({getParameter: 1, scramIterationCount: 1, scramSHA256IterationCount: 1})
    assert.equal(p.scramIterationCount, 10000)
    assert.equal(p.scramSHA256IterationCount, 15000)
    const all = await admin.command({getParameter: '*'})
    assert.deepEqual(all.authenticationMechanisms, ['MONGODB-X509', 'SCRAM-SHA-1', 'SCRAM-SHA-256'])
    await assert.rejects(admin.command({setParameter: 1, scramIterationCount: 4999}), (e: MongoServerError) => e.code === 2 && e.codeName === 'BadValue')
    const set = await admin.command({setParameter: 1, scramIterationCount: 12000})
    assert.equal(set.was, 10000)
  })
})
