/**
 * Host names rewritten inside documents (the replay's listeners, --redact-hosts' aliases):
 * whole names only, in strings and object keys, in one pass, BSON values untouched.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Long, ObjectId, Timestamp} from 'bson'

import {rewriteNames, stringRewriter} from '../../src/snapshot/rewrite.js'

const names = new Map([
  ['h1:27017', '127.0.0.1:5001'],
  ['h2:27017', '127.0.0.1:5002'],
])
const rewrite = stringRewriter(names)

describe('snapshot rewrite', () => {
  it('rewrites a name wherever it stands whole: host strings, set strings, lockpings ids, URIs', () => {
    assert.equal(rewrite('h1:27017'), '127.0.0.1:5001')
    assert.equal(rewrite('rs0/h1:27017,h2:27017'), 'rs0/127.0.0.1:5001,127.0.0.1:5002')
    assert.equal(rewrite('h1:27017:1700000000:42'), '127.0.0.1:5001:1700000000:42')
    assert.equal(rewrite('mongodb://h1:27017,h2:27017/?replicaSet=rs0'), 'mongodb://127.0.0.1:5001,127.0.0.1:5002/?replicaSet=rs0')
  })

  it('leaves longer names that start or end with a captured one alone', () => {
    assert.equal(rewrite('h1:270170'), 'h1:270170')
    assert.equal(rewrite('xh1:27017'), 'xh1:27017')
    assert.equal(rewrite('db.h1:27017'), 'db.h1:27017')
    assert.equal(stringRewriter(new Map([['db1', 'host-1.redacted']]))('db1.example.com db1 db12 db1:27017'), 'db1.example.com host-1.redacted db12 host-1.redacted:27017')
  })

  it('rewrites object keys (connPoolStats hosts) and nested arrays, and keeps BSON values as they are', () => {
    const ts = new Timestamp({t: 1_700_000_000, i: 1})
    const id = new ObjectId()
    const when = new Date('2024-01-01T00:00:00Z')
    const doc = {hosts: {'h1:27017': {inUse: Long.fromNumber(3)}, 'h2:27017': {inUse: 1}}, members: [{name: 'h2:27017', optime: ts}], _id: id, when}
    const out = rewriteNames(doc, names)
    assert.deepEqual(Object.keys(out.hosts), ['127.0.0.1:5001', '127.0.0.1:5002'])
    assert.ok(Long.isLong(out.hosts['127.0.0.1:5001' as 'h1:27017'].inUse))
    assert.equal(out.members[0]!.name, '127.0.0.1:5002')
    assert.equal(out.members[0]!.optime, ts)
    assert.equal(out._id, id)
    assert.equal(out.when, when)
    assert.deepEqual(Object.keys(doc.hosts), ['h1:27017', 'h2:27017'], 'the input is not changed')
  })

  it('replaces in one pass: a replacement that is itself a name is not rewritten again', () => {
    const chain = stringRewriter(new Map([
      ['127.0.0.1:1', '127.0.0.1:2'],
      ['127.0.0.1:2', '127.0.0.1:3'],
    ]))
    assert.equal(chain('127.0.0.1:1,127.0.0.1:2'), '127.0.0.1:2,127.0.0.1:3')
  })
})
