/**
 * A secondary refuses opt-in reads unless the request allows secondary reads, as mongod's
 * dispatch does (service_entry_point_common.cpp): OP_MSG `$readPreference` other than primary,
 * OP_QUERY's SecondaryOk bit; always-allowed commands and the `local` database answer anyway.
 */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {connect} from 'node:net'
import type {Document} from 'bson'
import {MongoClient} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {MessageFramer, decodeOpReply, encodeOpQuery} from '../../src/wire/index.js'
import {RawClient, portOf} from '../helpers/sim.js'

/** One legacy OP_QUERY command with the given flags, answered over its own socket. */
function opQuery(port: number, db: string, query: Document, flags: number): Promise<Document> {
  return new Promise((resolve, reject) => {
    const framer = new MessageFramer()
    const s = connect({port, host: '127.0.0.1'}, () => s.write(encodeOpQuery({fullCollectionName: `${db}.$cmd`, query, numberToReturn: -1, flags})))
    s.on('data', (chunk: Buffer) =>
      framer.push(chunk, (m) => {
        s.destroy()
        resolve(decodeOpReply(Buffer.from(m)).documents[0]!)
      }),
    )
    s.once('error', reject)
  })
}

describe('secondaryOk on a replica-set secondary (6.0)', () => {
  let sim: SimCluster
  let secondaryPort: number
  let secondaryHost: string

  before(async () => {
    sim = await startSimCluster({topology: 'replset', versionProfile: '6.0', members: 3})
    const client = new MongoClient(sim.info.uri)
    try {
      await client.db('rs').collection('c').insertMany([{n: 1}, {n: 2}])
    } finally {
      await client.close()
    }
    secondaryHost = sim.info.processes[1]!.host
    secondaryPort = portOf(secondaryHost)
  })
  after(async () => {
    await sim?.stop()
  })

  it('refuses opt-in reads without a secondary read preference (13435)', async () => {
    const raw = await RawClient.open(secondaryPort)
    try {
      await raw.command('admin', {hello: 1})
      for (const cmd of [{find: 'c'}, {count: 'c'}, {distinct: 'c', key: 'n'}, {aggregate: 'c', pipeline: [], cursor: {}}, {listCollections: 1}, {listIndexes: 'c'}, {collStats: 'c'}, {dbStats: 1}]) {
        const r = await raw.command('rs', cmd)
        assert.equal(r.ok, 0, `${Object.keys(cmd)[0]} refused`)
        assert.equal(r.code, 13435)
        assert.equal(r.codeName, 'NotPrimaryNoSecondaryOk')
        assert.equal(r.errmsg, 'not primary and secondaryOk=false')
      }
      const explicitPrimary = await raw.command('rs', {find: 'c', $readPreference: {mode: 'primary'}})
      assert.equal(explicitPrimary.code, 13435)
    } finally {
      await raw.close()
    }
  })

  it('says "master" to a client that never said it supports hello', async () => {
    const raw = await RawClient.open(secondaryPort)
    try {
      await raw.command('admin', {isMaster: 1})
      const r = await raw.command('rs', {find: 'c'})
      assert.equal(r.code, 13435)
      assert.equal(r.errmsg, 'not master and slaveOk=false')
      const w = await raw.command('rs', {insert: 'c', documents: [{n: 3}]})
      assert.equal(w.code, 10107)
      assert.equal(w.errmsg, 'not master')
    } finally {
      await raw.close()
    }
  })

  it('answers opt-in reads with a read preference other than primary', async () => {
    const raw = await RawClient.open(secondaryPort)
    try {
      await raw.command('admin', {hello: 1})
      for (const mode of ['secondary', 'secondaryPreferred', 'primaryPreferred', 'nearest']) {
        const r = await raw.command('rs', {find: 'c', $readPreference: {mode}})
        assert.equal(r.ok, 1, mode)
        assert.equal(r.cursor.firstBatch.length, 2)
      }
    } finally {
      await raw.close()
    }
  })

  it('answers always-allowed commands and the local database without a read preference', async () => {
    const raw = await RawClient.open(secondaryPort)
    try {
      for (const cmd of [{hello: 1}, {serverStatus: 1}, {ping: 1}, {currentOp: 1}, {replSetGetStatus: 1}, {buildInfo: 1}, {connPoolStats: 1}]) {
        const r = await raw.command('admin', cmd)
        assert.equal(r.ok, 1, Object.keys(cmd)[0])
      }
      const oplog = await raw.command('local', {find: 'oplog.rs', sort: {$natural: -1}, limit: 1})
      assert.equal(oplog.ok, 1)
      assert.equal(oplog.cursor.firstBatch.length, 1)
      // $currentOp is an aggregate: opt-in like every pipeline (pipeline_command.cpp)
      const curOp = await raw.command('admin', {aggregate: 1, pipeline: [{$currentOp: {}}], cursor: {}})
      assert.equal(curOp.code, 13435)
    } finally {
      await raw.close()
    }
  })

  it('the driver reads a secondary directly (primaryPreferred) and with secondaryPreferred', async () => {
    const direct = new MongoClient(`mongodb://${secondaryHost}/?directConnection=true`)
    const viaSet = new MongoClient(sim.info.uri, {readPreference: 'secondaryPreferred'})
    try {
      assert.equal((await direct.db('rs').collection('c').find().toArray()).length, 2)
      const ops = await direct.db('admin').aggregate([{$currentOp: {allUsers: true, idleConnections: true}}]).toArray()
      assert.ok(ops.length >= 1)
      assert.equal(await viaSet.db('rs').collection('c').countDocuments(), 2)
      await assert.rejects(direct.db('rs').collection('c').insertOne({n: 3}), (e: {code?: number; message?: string}) => e.code === 10107 && e.message === 'not primary')
    } finally {
      await direct.close()
      await viaSet.close()
    }
  })

  it('an arbiter refuses opted-in reads with NotPrimaryOrSecondary, the rest with 13435', async () => {
    const withArbiter = await startSimCluster({topology: 'replset', versionProfile: '6.0', members: 3, memberOptions: [{member: 3, arbiter: true}]})
    try {
      const raw = await RawClient.open(portOf(withArbiter.info.processes[2]!.host))
      try {
        await raw.command('admin', {hello: 1})
        assert.equal((await raw.command('rs', {find: 'c'})).code, 13435)
        assert.equal((await raw.command('rs', {find: 'c', $readPreference: {mode: 'secondaryPreferred'}})).code, 13436)
      } finally {
        await raw.close()
      }
    } finally {
      await withArbiter.stop()
    }
  })
})

describe('secondaryOk over legacy OP_QUERY (4.4)', () => {
  let sim: SimCluster
  before(async () => {
    sim = await startSimCluster({topology: 'replset', versionProfile: '4.4', members: 2})
  })
  after(async () => {
    await sim?.stop()
  })

  it('the SecondaryOk bit (4) lets a secondary answer; without it 13435', async () => {
    const port = portOf(sim.info.processes[1]!.host)
    const refused = await opQuery(port, 'rs', {count: 'c'}, 0)
    assert.equal(refused.code, 13435)
    const allowed = await opQuery(port, 'rs', {count: 'c'}, 4)
    assert.equal(allowed.ok, 1)
    const wrapped = await opQuery(port, 'rs', {$query: {count: 'c'}, $readPreference: {mode: 'nearest'}}, 0)
    assert.equal(wrapped.ok, 1)
  })
})
