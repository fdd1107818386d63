/**
 * Which captured read answers a command: the read layer's name of the command, then the
 * request as asked (fields the driver adds left out), serverStatus by the sections it
 * covers, else the latest read of that name.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Double, Int32, Long} from 'bson'

import {serverStatusCommand} from '../../src/probes/server-status.js'
import {matchRead, readNameOf, serverStatusCovers} from '../../src/replay/match.js'
import type {SnapshotRead} from '../../src/snapshot/format.js'

const read = (name: string, request: Record<string, unknown>, reply: unknown, db = 'admin'): SnapshotRead =>
  ({name, db, request, ...(reply instanceof Error ? {error: {name: 'MongoServerError', message: reply.message, code: 13, codeName: 'Unauthorized'}} : {reply})}) as SnapshotRead

describe('replay request matching', () => {
  it('names commands as the read layer does', () => {
    assert.equal(readNameOf({isMaster: 1, helloOk: true}, 'admin'), 'hello')
    assert.equal(readNameOf({ismaster: 1}, 'admin'), 'hello')
    assert.equal(readNameOf({find: 'locks', filter: {}}, 'config'), 'config.locks')
    assert.equal(readNameOf({aggregate: 1, pipeline: [{$currentOp: {allUsers: true}}, {$match: {}}]}, 'admin'), '$currentOp')
    assert.equal(readNameOf({aggregate: 'orders', pipeline: [{$match: {}}]}, 'shop'), undefined)
    assert.equal(readNameOf({listCollections: 1, filter: {}}, 'config'), 'config.listCollections')
    assert.equal(readNameOf({buildinfo: 1}, 'admin'), 'buildInfo')
  })

  it('picks the read whose request equals the incoming one, whatever the driver added', () => {
    const reads = [
      read('$currentOp', {aggregate: 1, pipeline: [{$currentOp: {allUsers: true, idleConnections: true}}, {$group: {_id: '$appName'}}]}, [{_id: 'holders'}]),
      read('$currentOp', {aggregate: 1, pipeline: [{$currentOp: {allUsers: true, idleConnections: false}}]}, [{_id: 'ddl'}]),
    ]
    const incoming = {
      aggregate: new Int32(1),
      pipeline: [{$currentOp: {allUsers: true, idleConnections: true}}, {$group: {_id: '$appName'}}],
      cursor: {},
      $db: 'admin',
      lsid: {id: 'x'},
      $clusterTime: {clusterTime: 1},
      $readPreference: {mode: 'primaryPreferred'},
      maxTimeMS: 5000,
      apiVersion: '1',
    }
    assert.deepEqual(matchRead(reads, incoming, 'admin')?.reply, [{_id: 'holders'}])
    assert.deepEqual(matchRead(reads, {aggregate: 1, pipeline: [{$currentOp: {allUsers: true, idleConnections: false}}]}, 'admin')?.reply, [{_id: 'ddl'}])
  })

  it('compares numbers by value: Int32 1, Double 1.0 and Long 1 are the same request', () => {
    const reads = [read('getParameter', {getParameter: 1, a: 1}, {a: 'first'}), read('getParameter', {getParameter: 1, b: 1}, {b: 'second'})]
    assert.deepEqual(matchRead(reads, {getParameter: new Double(1), a: Long.fromNumber(1)}, 'admin')?.reply, {a: 'first'})
  })

  it('serverStatus: a captured one whose sections cover the request, else the latest', () => {
    const connsOnly = read('serverStatus', serverStatusCommand(['connections']), {which: 'connections'})
    const everything = read('serverStatus', serverStatusCommand(['connections', 'locks', 'repl', 'sharding']), {which: 'all'})
    const later = read('serverStatus', serverStatusCommand(['security']), {which: 'security'})
    assert.ok(serverStatusCovers(everything.request, serverStatusCommand(['locks'])))
    assert.ok(!serverStatusCovers(connsOnly.request, serverStatusCommand(['locks'])))
    assert.equal((matchRead([connsOnly, everything, later], serverStatusCommand(['locks', 'repl']), 'admin')?.reply as {which: string}).which, 'all')
    assert.equal((matchRead([connsOnly, later], serverStatusCommand(['wiredTiger']), 'admin')?.reply as {which: string}).which, 'security', 'nothing covers it: the latest')
  })

  it('an exact request that failed is answered as its error; an answer beats an error for the same request', () => {
    const failed = read('hostInfo', {hostInfo: 1}, new Error('not authorized on admin to execute command { hostInfo: 1 }'))
    assert.equal(matchRead([failed], {hostInfo: 1}, 'admin')?.error?.code, 13)
    const answered = read('hostInfo', {hostInfo: 1}, {system: {}})
    assert.deepEqual(matchRead([answered, failed], {hostInfo: 1}, 'admin')?.reply, {system: {}})
  })

  it('finds nothing for a name that was not captured', () => {
    assert.equal(matchRead([read('hello', {hello: 1}, {ok: 1})], {find: 'locks', filter: {}}, 'config'), undefined)
  })
})
