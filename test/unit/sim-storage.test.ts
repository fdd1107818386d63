/** Unit tests of the in-memory storage pieces: matcher, update operators, projection, sort, values. */
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {Long, ObjectId, type Document} from 'bson'
import {runPipeline} from '../../src/sim/storage/aggregate.js'
import {Collection} from '../../src/sim/storage/collection.js'
import {compileFilter, idLookupKeys} from '../../src/sim/storage/matcher.js'
import {compileProjection, sortDocuments} from '../../src/sim/storage/projection.js'
import {applyUpdateOperators, buildUpsertDocument} from '../../src/sim/storage/update.js'
import {canonicalKey, compareValues} from '../../src/sim/storage/values.js'

const docs: Document[] = [
  {_id: 1, a: 5, tags: ['x', 'y'], sub: {b: 1}, items: [{k: 1, v: 'p'}, {k: 2, v: 'q'}]},
  {_id: 2, a: 10, tags: ['y'], sub: {b: 2}, items: [{k: 3}]},
  {_id: 3, a: 'str', tags: [], sub: null},
  {_id: 4},
]

function ids(filter: Document): number[] {
  const pred = compileFilter(filter)
  return docs.filter(pred).map((d) => d._id)
}

describe('query matcher', () => {
  it('matches equality, dotted paths and array contents', () => {
    assert.deepEqual(ids({a: 5}), [1])
    assert.deepEqual(ids({tags: 'y'}), [1, 2])
    assert.deepEqual(ids({tags: ['y']}), [2])
    assert.deepEqual(ids({'sub.b': 2}), [2])
    assert.deepEqual(ids({'items.k': 3}), [2])
    assert.deepEqual(ids({'items.0.v': 'p'}), [1])
    assert.deepEqual(ids({a: null}), [4])
  })

  it('supports comparison, set and logical operators with type bracketing', () => {
    assert.deepEqual(ids({a: {$gt: 4}}), [1, 2])
    assert.deepEqual(ids({a: {$gte: 5, $lt: 10}}), [1])
    assert.deepEqual(ids({a: {$ne: 5}}), [2, 3, 4])
    assert.deepEqual(ids({a: {$in: [10, 'str']}}), [2, 3])
    assert.deepEqual(ids({a: {$nin: [10, 'str']}}), [1, 4])
    assert.deepEqual(ids({a: {$exists: false}}), [4])
    assert.deepEqual(ids({$or: [{a: 5}, {tags: {$size: 0}}]}), [1, 3])
    assert.deepEqual(ids({$and: [{tags: 'y'}, {a: {$not: {$gt: 7}}}]}), [1])
    assert.deepEqual(ids({$nor: [{a: 5}, {a: 10}]}), [3, 4])
    assert.deepEqual(ids({a: {$regex: '^st'}}), [3])
    assert.deepEqual(ids({a: /^ST/i}), [3])
    assert.deepEqual(ids({items: {$elemMatch: {k: 2, v: 'q'}}}), [1])
    assert.deepEqual(ids({tags: {$all: ['x', 'y']}}), [1])
    assert.deepEqual(ids({a: {$type: 'string'}}), [3])
  })

  it('finds _id lookups without a scan', () => {
    assert.deepEqual(idLookupKeys({_id: 5}), [5])
    assert.deepEqual(idLookupKeys({_id: {$in: [1, 2]}}), [1, 2])
    assert.equal(idLookupKeys({_id: {$gt: 1}}), null)
    const c = new Collection('db', 'c')
    const oid = new ObjectId()
    c.insert({_id: oid, v: 1})
    c.insert({v: 2})
    assert.equal(c.find({_id: new ObjectId(oid.toHexString())}).length, 1)
    assert.equal(c.get(1), undefined)
    assert.throws(() => c.insert({_id: oid}), /E11000 duplicate key/)
    assert.equal(canonicalKey(1), canonicalKey(Long.fromNumber(1)))
  })
})

describe('update operators', () => {
  it('applies $set/$unset/$inc/$push/$addToSet/$pull/$min/$max/$rename', () => {
    const d: Document = {_id: 1, a: 1, arr: [1, 2], n: {x: 1}}
    applyUpdateOperators(d, {$set: {'n.y': 2, b: 'b'}, $inc: {a: 2, c: 1}, $push: {arr: {$each: [3, 4], $slice: -3}}, $unset: {'n.x': ''}}, false)
    assert.deepEqual(d, {_id: 1, a: 3, arr: [2, 3, 4], n: {y: 2}, b: 'b', c: 1})
    applyUpdateOperators(d, {$addToSet: {arr: 3}, $pull: {arr: {$gte: 4}}, $min: {a: 0}, $max: {c: 9}, $rename: {b: 'bb'}}, false)
    assert.deepEqual(d, {_id: 1, a: 0, arr: [2, 3], n: {y: 2}, c: 9, bb: 'b'})
    assert.throws(() => applyUpdateOperators(d, {$inc: {bb: 1}}, false), /non-numeric/)
    assert.throws(() => applyUpdateOperators(d, {$set: {_id: 2}}, false), /immutable field '_id'/)
  })

  it('builds upsert documents from the query and $setOnInsert', () => {
    const doc = buildUpsertDocument({k: 1, 'a.b': 2, n: {$gt: 1}}, {$set: {v: 1}, $setOnInsert: {created: true}})
    assert.ok(doc._id instanceof ObjectId)
    assert.deepEqual({...doc, _id: 0}, {_id: 0, k: 1, a: {b: 2}, v: 1, created: true})
    assert.deepEqual(buildUpsertDocument({_id: 7}, {x: 1}), {_id: 7, x: 1})
  })
})

describe('projection, sort and pipeline', () => {
  it('projects inclusion and exclusion, _id rules', () => {
    const inc = compileProjection({'sub.b': 1, a: 1})!
    assert.deepEqual(inc(docs[0]), {_id: 1, sub: {b: 1}, a: 5})
    const noId = compileProjection({a: 1, _id: 0})!
    assert.deepEqual(noId(docs[1]), {a: 10})
    const exc = compileProjection({items: 0, tags: 0})!
    assert.deepEqual(exc(docs[0]), {_id: 1, a: 5, sub: {b: 1}})
    assert.throws(() => compileProjection({a: 1, b: 0}), /Cannot do exclusion/)
  })

  it('sorts by BSON order across types', () => {
    const sorted = sortDocuments(docs, {a: 1}).map((d) => d._id)
    assert.deepEqual(sorted, [4, 1, 2, 3], 'missing < numbers < strings')
    assert.deepEqual(sortDocuments(docs, {a: -1}).map((d) => d._id), [3, 2, 1, 4])
    assert.ok(compareValues(new ObjectId(), true) < 0)
    assert.ok(compareValues(new Date(0), new Date(1)) < 0)
  })

  it('runs $group/$sort/$project/$unwind/$count', () => {
    const out = runPipeline(docs, [
      {$unwind: '$tags'},
      {$group: {_id: '$tags', n: {$sum: 1}, ids: {$push: '$_id'}, top: {$max: '$a'}}},
      {$sort: {_id: 1}},
    ])
    assert.deepEqual(out, [
      {_id: 'x', n: 1, ids: [1], top: 5},
      {_id: 'y', n: 2, ids: [1, 2], top: 10},
    ])
    assert.deepEqual(runPipeline(docs, [{$match: {a: {$exists: true}}}, {$count: 'n'}]), [{n: 3}])
    assert.deepEqual(runPipeline(docs, [{$match: {_id: 1}}, {$project: {_id: 0, twice: {$multiply: ['$a', 2]}}}]), [{twice: 10}])
  })
})
