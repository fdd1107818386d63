/**
 * Exact BSON types end to end: what a client stores comes back with the same type,
 * matching crosses numeric types as in mongod, update and aggregation results take mongod's types,
 * and server counters carry the type the real server sends. Read through the official driver with
 * `promoteValues: false` so an int32 5, a double 5.0 and an int64 5 stay distinguishable.
 */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {BSONRegExp, Decimal128, Double, Int32, Long, type Document} from 'bson'
import {MongoClient, type Collection} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {withParams} from '../helpers/sim.js'

const RAW = {promoteValues: false, promoteLongs: false, bsonRegExp: true} as const

/** `{field: bsonTypeName}` of a document read with promoteValues: false. */
function typesOf(doc: Document): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(doc)) out[k] = (v as {_bsontype?: string})?._bsontype ?? typeof v
  return out
}

function valueOf(v: unknown): string {
  return String((v as {toString(): string}).toString())
}

describe('exact BSON types on a standalone (7.0)', () => {
  let sim: SimCluster
  let client: MongoClient
  let coll: Collection

  before(async () => {
    sim = await startSimCluster({topology: 'standalone', versionProfile: '7.0'})
    client = new MongoClient(withParams(sim.info.uri, 'appName=types-suite'), RAW)
    await client.connect()
    coll = client.db('types').collection('t')
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('round-trips int32, int64, double and decimal128 with their types and values', async () => {
    await coll.insertOne({
      _id: new Int32(1),
      i32: new Int32(5),
      i64: Long.fromNumber(5),
      big: Long.fromString('1099511627776'),
      huge: Long.fromString('9007199254740993'),
      d: new Double(5),
      dBig: new Double(2 ** 40),
      dFrac: new Double(1.5),
      negZero: new Double(-0),
      dec: Decimal128.fromString('1.10'),
      re: new BSONRegExp('^a', 'i'),
    })
    const doc = await coll.findOne({_id: new Int32(1)})
    assert.ok(doc)
    assert.deepEqual(typesOf(doc), {
      _id: 'Int32',
      i32: 'Int32',
      i64: 'Long',
      big: 'Long',
      huge: 'Long',
      d: 'Double',
      dBig: 'Double',
      dFrac: 'Double',
      negZero: 'Double',
      dec: 'Decimal128',
      re: 'BSONRegExp',
    })
    assert.equal(valueOf(doc.big), '1099511627776')
    assert.equal(valueOf(doc.huge), '9007199254740993')
    assert.equal(valueOf(doc.dec), '1.10')
    assert.ok(Object.is((doc.negZero as Double).value, -0))
  })

  it('matches across numeric types as mongod does (Int32 5 = Long 5 = Double 5.0)', async () => {
    await coll.insertMany([
      {_id: 'int', v: new Int32(5)},
      {_id: 'long', v: Long.fromNumber(5)},
      {_id: 'double', v: new Double(5)},
      {_id: 'other', v: new Double(5.5)},
    ])
    const ids = async (filter: Document) => (await coll.find(filter).sort({_id: 1}).toArray()).map((d) => d._id)
    assert.deepEqual(await ids({v: new Int32(5)}), ['double', 'int', 'long'])
    assert.deepEqual(await ids({v: Long.fromNumber(5)}), ['double', 'int', 'long'])
    assert.deepEqual(await ids({v: new Double(5)}), ['double', 'int', 'long'])
    assert.deepEqual(await ids({v: {$type: 'double'}}), ['double', 'other'])
    assert.deepEqual(await ids({v: {$type: 'long'}}), ['long'])
    assert.deepEqual(await ids({v: {$type: 'int'}}), ['int'])
  })

  it('gives $inc and $mul results the type SafeNum does (widest operand, int overflow to long)', async () => {
    await coll.insertOne({_id: 'inc', a: new Int32(1), b: new Int32(2 ** 31 - 1), c: new Int32(1), d: Long.fromNumber(2), e: new Int32(3)})
    await coll.updateOne(
      {_id: 'inc'},
      {$inc: {a: new Int32(1), b: new Int32(1), c: new Double(1), d: new Int32(1), missing: Long.fromNumber(7)}, $mul: {e: new Double(2)}},
    )
    const doc = (await coll.findOne({_id: 'inc'}))!
    assert.deepEqual(typesOf(doc), {_id: 'string', a: 'Int32', b: 'Long', c: 'Double', d: 'Long', e: 'Double', missing: 'Long'})
    assert.equal(valueOf(doc.b), '2147483648')
    assert.equal((doc.c as Double).value, 2)
    assert.equal(valueOf(doc.d), '3')
    assert.equal((doc.e as Double).value, 6)
  })

  it('gives $sum and $avg the types of accumulator_sum / accumulator_avg', async () => {
    const agg = client.db('types').collection('agg')
    await agg.insertMany([
      {g: 'ints', v: new Int32(2)},
      {g: 'ints', v: new Int32(4)},
      {g: 'overflow', v: new Int32(2 ** 31 - 1)},
      {g: 'overflow', v: new Int32(2 ** 31 - 1)},
      {g: 'mixed', v: new Int32(1)},
      {g: 'mixed', v: new Double(2)},
      {g: 'longs', v: Long.fromNumber(1)},
      {g: 'longs', v: new Int32(1)},
    ])
    const rows = await agg.aggregate([{$group: {_id: '$g', sum: {$sum: '$v'}, avg: {$avg: '$v'}}}, {$sort: {_id: 1}}]).toArray()
    const shape = Object.fromEntries(rows.map((r) => [r._id, [typesOf(r).sum, typesOf(r).avg, valueOf(r.sum)]]))
    assert.deepEqual(shape, {
      ints: ['Int32', 'Double', '6'],
      longs: ['Long', 'Double', '2'],
      mixed: ['Double', 'Double', '3'],
      overflow: ['Long', 'Double', '4294967294'],
    })
  })

  it('sends server counters with the real server type', async () => {
    const status = await client.db('admin').command({serverStatus: 1}, RAW)
    const c = status.connections as Document
    // ServiceEntryPointImpl::appendStats: static_cast<int> for these; loadBalanced is a Counter64.
    for (const f of ['current', 'available', 'totalCreated', 'active', 'exhaustIsMaster', 'exhaustHello', 'awaitingTopologyChanges']) {
      assert.equal((c[f] as {_bsontype?: string})?._bsontype, 'Int32', `connections.${f} in ${JSON.stringify(Object.keys(c))}`)
    }
    assert.equal((c.loadBalanced as {_bsontype?: string})._bsontype, 'Long')
    assert.equal((status.uptime as {_bsontype?: string})._bsontype, 'Double')
    assert.equal((status.uptimeMillis as {_bsontype?: string})._bsontype, 'Long')
    assert.equal((status.ok as {_bsontype?: string})._bsontype, 'Double')
  })
})

describe('exact BSON types in replSetGetStatus (7.0)', () => {
  it('sends health as a double, uptime and state as ints, term as int64 (topology_coordinator.cpp)', async () => {
    const sim = await startSimCluster({topology: 'replset', versionProfile: '7.0', members: 2})
    const client = new MongoClient(sim.info.uri)
    try {
      const status = await client.db('admin').command({replSetGetStatus: 1}, RAW)
      const kindOf = (v: unknown) => (v as {_bsontype?: string})._bsontype
      assert.equal(kindOf(status.term), 'Long')
      for (const m of status.members as Document[]) {
        assert.equal(kindOf(m.health), 'Double')
        assert.equal(kindOf(m.state), 'Int32')
        assert.equal(kindOf(m.uptime), 'Int32')
      }
    } finally {
      await client.close()
      await sim.stop()
    }
  })
})

describe('exact BSON types through a mongos (6.0)', () => {
  let sim: SimCluster
  let client: MongoClient

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '6.0', shards: 1, mongos: 1})
    client = new MongoClient(withParams(sim.info.uri, 'appName=types-mongos'), RAW)
    await client.connect()
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('forwards a shard document without collapsing 5.0 or int64 and reads config.mongos.up as int64', async () => {
    const coll = client.db('routed').collection('t')
    await coll.insertOne({_id: new Int32(1), d: new Double(5), l: Long.fromNumber(5), dec: Decimal128.fromString('2.50')})
    const doc = (await coll.findOne({_id: new Int32(1)}))!
    assert.deepEqual(typesOf(doc), {_id: 'Int32', d: 'Double', l: 'Long', dec: 'Decimal128'})
    const mongos = await client.db('config').collection('mongos').findOne({})
    assert.ok(mongos, 'config.mongos has the router')
    assert.equal((mongos.up as {_bsontype?: string})._bsontype, 'Long')
  })
})
