/**
 * The replay's dispatcher without sockets: hello as captured but polled (no
 * topologyVersion), marked as a replay, its clock moving with the replay; cursors
 * whole; captured errors as errors; uncaptured reads CommandNotFound; writes and
 * authentication refused.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Long, ObjectId} from 'bson'

import {dispatchReplay, REPLAY_AUTH_MESSAGE, type ReplayContext, type ReplayHostState} from '../../src/replay/dispatch.js'
import type {SnapshotRead} from '../../src/snapshot/format.js'

const capturedAt = new Date('2024-06-01T10:00:00Z')
const localTime = new Date('2024-06-01T10:00:01Z')
const context = (elapsed = 0): ReplayContext => ({file: 'cluster.json', capturedAt, elapsedMS: () => elapsed})

const hello: SnapshotRead = {
  name: 'hello',
  db: 'admin',
  request: {hello: 1},
  reply: {isWritablePrimary: true, msg: 'isdbgrid', topologyVersion: {processId: new ObjectId(), counter: Long.fromNumber(0)}, compression: ['snappy'], localTime, maxWireVersion: 21, ok: 1},
}
const host = (reads: SnapshotRead[]): ReplayHostState => ({listener: '127.0.0.1:5001', reads})

describe('replay dispatch', () => {
  it('answers hello as captured: no topologyVersion or compression, marked as a replay, clock moved by the time since start', () => {
    const reply = dispatchReplay(host([hello]), {hello: 1, helloOk: true, client: {driver: {name: 'nodejs'}}, $db: 'admin'}, 'admin', false, context(2500))
    assert.equal(reply.topologyVersion, undefined, 'the driver polls instead of streaming')
    assert.equal(reply.compression, undefined)
    assert.deepEqual(reply.pooltoolReplay, {capturedAt})
    assert.equal((reply.localTime as Date).getTime(), localTime.getTime() + 2500)
    assert.equal(reply.helloOk, true)
    assert.equal(reply.msg, 'isdbgrid')
  })

  it('moves every served clock by the same amount: serverStatus localTime, lock pings, lock `when`s; other BSON values kept', () => {
    const ts = new ObjectId()
    const ping = new Date('2024-06-01T09:59:30Z')
    const pings: SnapshotRead = {name: 'config.lockpings', db: 'config', request: {find: 'lockpings', filter: {}}, reply: [{_id: 'r1:27017:1', ping}]}
    const locks: SnapshotRead = {name: 'config.locks', db: 'config', request: {find: 'locks', filter: {}}, reply: [{_id: 'db', state: 2, ts, when: ping}]}
    const status: SnapshotRead = {name: 'serverStatus', db: 'admin', request: {serverStatus: 1}, reply: {localTime, uptime: 100, connections: {current: 5, totalCreated: Long.fromNumber(9)}, ok: 1}}
    const state = host([pings, locks, status])
    const fiveMinutes = 5 * 60_000
    const served = dispatchReplay(state, {find: 'lockpings', filter: {}, $db: 'config'}, 'config', false, context(fiveMinutes)).cursor.firstBatch[0]
    assert.equal(served.ping.getTime(), ping.getTime() + fiveMinutes)
    const lock = dispatchReplay(state, {find: 'locks', filter: {}, $db: 'config'}, 'config', false, context(fiveMinutes)).cursor.firstBatch[0]
    assert.equal(lock.when.getTime(), ping.getTime() + fiveMinutes)
    assert.equal(lock.ts, ts, 'an ObjectId is kept as it is')
    const serverStatus = dispatchReplay(state, {serverStatus: 1, $db: 'admin'}, 'admin', false, context(fiveMinutes))
    assert.equal(serverStatus.localTime.getTime(), localTime.getTime() + fiveMinutes)
    // The age a command computes (the clock minus the ping) is the capture's.
    assert.equal(serverStatus.localTime.getTime() - served.ping.getTime(), localTime.getTime() - ping.getTime())
    assert.ok(Long.isLong(serverStatus.connections.totalCreated), 'an Int64 is kept as it is')
    assert.equal((pings.reply as any)[0].ping, ping, 'the captured document itself is not changed')
  })

  it('answers the legacy isMaster handshake with `ismaster`', () => {
    const reply = dispatchReplay(host([hello]), {isMaster: 1, helloOk: true}, 'admin', true, context())
    assert.equal(reply.ismaster, true)
  })

  it('handshakes with an answered hello even when the read layer saw CommandNotFound to hello first (4.2)', () => {
    const failedHello: SnapshotRead = {name: 'hello', db: 'admin', request: {hello: 1}, error: {name: 'MongoServerError', message: "no such command: 'hello'", code: 59, codeName: 'CommandNotFound'}}
    const isMaster: SnapshotRead = {name: 'isMaster', db: 'admin', request: {isMaster: 1}, reply: {ismaster: true, maxWireVersion: 8, ok: 1}}
    const state = host([failedHello, isMaster])
    assert.equal(dispatchReplay(state, {isMaster: 1, helloOk: true, client: {}}, 'admin', true, context()).ismaster, true)
    assert.equal(dispatchReplay(state, {isMaster: 1, helloOk: true}, 'admin', true, context()).helloOk, undefined, 'no helloOk: the server had no hello')
    assert.equal(dispatchReplay(state, {hello: 1}, 'admin', false, context()).code, 59, "the read layer's own hello gets what it got")
    assert.equal(dispatchReplay(state, {isMaster: 1}, 'admin', false, context()).ismaster, true)
  })

  it('returns captured documents as a whole cursor (id 0)', () => {
    const locks: SnapshotRead = {name: 'config.locks', db: 'config', request: {find: 'locks', filter: {}}, reply: [{_id: 'balancer', state: 2}]}
    const reply = dispatchReplay(host([locks]), {find: 'locks', filter: {}, $db: 'config'}, 'config', false, context())
    assert.deepEqual(reply.cursor.firstBatch, [{_id: 'balancer', state: 2}])
    assert.equal(reply.cursor.ns, 'config.locks')
    assert.ok(Long.isLong(reply.cursor.id) && reply.cursor.id.isZero())
    assert.equal(reply.ok, 1)
    const getMore = dispatchReplay(host([locks]), {getMore: Long.fromNumber(7), collection: 'locks'}, 'config', false, context())
    assert.equal(getMore.codeName, 'CursorNotFound')
  })

  it('answers a captured error as that error', () => {
    const denied: SnapshotRead = {name: 'serverStatus', db: 'admin', request: {serverStatus: 1}, error: {name: 'MongoServerError', message: 'not authorized on admin to execute command { serverStatus: 1 }', code: 13, codeName: 'Unauthorized'}}
    const reply = dispatchReplay(host([denied]), {serverStatus: 1}, 'admin', false, context())
    assert.deepEqual(reply, {ok: 0, errmsg: denied.error!.message, code: 13, codeName: 'Unauthorized'})
  })

  it('answers an uncaptured read with CommandNotFound naming the read and the file', () => {
    const reply = dispatchReplay(host([hello]), {find: 'mongos', filter: {}}, 'config', false, context())
    assert.equal(reply.ok, 0)
    assert.equal(reply.code, 59)
    assert.equal(reply.codeName, 'CommandNotFound')
    assert.match(reply.errmsg, /^config\.mongos was not captured in cluster\.json: /)
  })

  it('refuses writes and authentication, serves ping, endSessions and killCursors', () => {
    const state = host([hello])
    const write = dispatchReplay(state, {insert: 'orders', documents: [{}]}, 'shop', false, context())
    assert.equal(write.ok, 0)
    assert.match(write.errmsg, /read only/)
    const auth = dispatchReplay(state, {saslStart: 1, mechanism: 'SCRAM-SHA-256'}, 'admin', false, context())
    assert.equal(auth.code, 18)
    assert.equal(auth.errmsg, REPLAY_AUTH_MESSAGE)
    assert.deepEqual(dispatchReplay(state, {ping: 1}, 'admin', false, context()), {ok: 1})
    assert.equal(dispatchReplay(state, {endSessions: [{id: 1}]}, 'admin', false, context()).ok, 1)
    assert.equal(dispatchReplay(state, {killCursors: 'locks', cursors: [Long.fromNumber(3)]}, 'config', false, context()).ok, 1)
  })
})
