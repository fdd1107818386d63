/**
 * Node locks in a snapshot, without sockets: the capture keeps `$currentOp` operations and lockInfo
 * requests without the commands' values (what the commands compute from them is unchanged), and a
 * snapshot that holds no node-lock reads (format 1 of a replica set) answers them "not captured",
 * which `locks list` reports as unknown, while the reads it does hold are served as before.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {EJSON, Long} from 'bson'

import {ddlOpsFrom} from '../../src/locks/in-memory.js'
import {nodeLocksView, parseLockInfo, parseOperations} from '../../src/locks/node/index.js'
import {dispatchReplay, type ReplayContext} from '../../src/replay/dispatch.js'
import {rootBlockerText} from '../../src/reporters/locks.js'
import {renderSnapshotSummary} from '../../src/reporters/snapshot.js'
import {parseSnapshot, type SnapshotRead} from '../../src/snapshot/format.js'
import {readWithoutUserData} from '../../src/snapshot/user-data.js'
import {inactiveTransactionDocs11564} from '../fixtures/node-locks-documents.js'

const SECRET = 'card-4111-1111'

/** A `$currentOp` of a blocked collection: an index build holds X, an insert (with a user's document) and a find (with a filter) wait. */
const operations = [
  {
    type: 'op', host: 'db1:27017', desc: 'conn11', connectionId: 11, client: '10.0.0.5:50001', appName: 'ops', clientMetadata: {driver: {name: 'nodejs', version: '6.9.0'}, application: {name: 'ops'}, os: {type: 'Linux'}},
    active: true, opid: 101, secs_running: Long.fromNumber(12), microsecs_running: Long.fromNumber(12_000_000), op: 'command', ns: 'app.orders',
    command: {createIndexes: 'orders', indexes: [{key: {email: 1}, name: 'email_1', partialFilterExpression: {email: SECRET}}], $db: 'app'},
    msg: 'Index Build: scanning collection', progress: {done: 5, total: 10}, locks: {FeatureCompatibilityVersion: 'w', Global: 'w', Database: 'w', Collection: 'W'}, waitingForLock: false,
    lockStats: {Collection: {acquireCount: {W: Long.fromNumber(1)}}}, lsid: {id: 'x', uid: 'digest-of-alice'}, planSummary: 'COLLSCAN', effectiveUsers: [{user: 'alice', db: 'admin'}],
  },
  {
    type: 'op', host: 'db1:27017', desc: 'conn12', connectionId: 12, client: '10.0.0.6:50002', active: true, opid: 102, microsecs_running: Long.fromNumber(3_000_000), op: 'insert', ns: 'app.orders',
    command: {insert: 'orders', documents: [{card: SECRET}], ordered: true, $db: 'app'}, locks: {FeatureCompatibilityVersion: 'w', Global: 'w', Database: 'w'}, waitingForLock: true,
  },
  {
    type: 'op', host: 'db1:27017', desc: 'conn13', connectionId: 13, client: '10.0.0.7:50003', active: true, opid: 103, microsecs_running: Long.fromNumber(2_000_000), op: 'query', ns: 'app.orders',
    command: {find: 'orders', filter: {card: SECRET}, $db: 'app'}, originatingCommand: {find: 'orders', filter: {card: SECRET}}, locks: {FeatureCompatibilityVersion: 'r', Global: 'r', Database: 'r'}, waitingForLock: true,
  },
  {type: 'op', host: 'db1:27017', desc: 'DropCollectionCoordinator', active: true, op: 'command', command: {_shardsvrDropCollectionParticipant: 'app.old', $db: 'app'}},
]

const lockInfo = {
  lockInfo: [
    {
      resourceId: '{12576221391967629173: Collection, 1047006345899159413, app.orders}',
      granted: [{mode: 'X', convertMode: 'NONE', enqueueAtFront: false, compatibleFirst: false, debugInfo: `createIndexes {partialFilterExpression: {email: "${SECRET}"}}`, clientInfo: {desc: 'conn11', connectionId: 11, client: '10.0.0.5:50001', opid: 101}}],
      pending: [{mode: 'IX', convertMode: 'NONE', enqueueAtFront: false, compatibleFirst: false, debugInfo: `insert {card: "${SECRET}"}`, clientInfo: {desc: 'conn12', connectionId: 12, client: '10.0.0.6:50002', opid: 102}}],
    },
  ],
  ok: 1,
}

const RAW = {aggregate: 1, pipeline: [{$currentOp: {allUsers: true, idleConnections: false}}]}
const STAGED = {aggregate: 1, pipeline: [{$currentOp: {allUsers: true, idleConnections: true}}, {$group: {_id: '$appName', count: {$sum: 1}}}]}
const serverStatus = {version: '7.0.12', uptime: 100, localTime: new Date('2024-06-01T10:00:00Z'), locks: {Collection: {acquireCount: {W: Long.fromNumber(1)}}}, globalLock: {currentQueue: {total: 2, readers: 1, writers: 1}}, ok: 1}

describe('snapshot: node-lock reads without user data', () => {
  const raw = readWithoutUserData({name: '$currentOp', db: 'admin', request: RAW, reply: operations})
  const info = readWithoutUserData({name: 'lockInfo', db: 'admin', request: {lockInfo: 1}, reply: lockInfo})

  it('keeps no command value, filter, document, originatingCommand or debugInfo', () => {
    const text = EJSON.stringify({raw, info})
    assert.ok(!text.includes(SECRET), text)
    assert.doesNotMatch(text, /originatingCommand|debugInfo|planSummary|uid|digest-of-alice|effectiveUsers|"os"/)
    const [build, insert] = raw.reply as Array<Record<string, any>>
    assert.deepEqual(build!.lsid, {id: 'x'}, "the session's id only: what names an idle transaction and what killSessions takes")
    assert.deepEqual(build!.command, {createIndexes: 'orders', $db: 'app'}, 'the name, the collection it names, the database')
    assert.deepEqual(insert!.command, {insert: 'orders', $db: 'app'})
    assert.deepEqual(build!.clientMetadata, {driver: {name: 'nodejs', version: '6.9.0'}, application: {name: 'ops'}})
  })

  it('the chain, waits, tickets and DDL operations computed from the kept documents are those of the originals', () => {
    const before = nodeLocksView({node: 'db1:27017', currentOp: operations, lockInfo, serverStatus})
    const after = nodeLocksView({node: 'db1:27017', currentOp: raw.reply as Array<Record<string, unknown>>, lockInfo: info.reply, serverStatus})
    assert.deepEqual(after, before)
    assert.equal(before.blocking.chains.length, 1, JSON.stringify(before.blocking))
    assert.equal(before.blocking.chains[0]!.root.operation.opid, 101)
    assert.deepEqual(parseLockInfo(info.reply), parseLockInfo(lockInfo))
    assert.deepEqual(ddlOpsFrom(raw.reply as Array<Record<string, unknown>>), ddlOpsFrom(operations))
  })

  it("an idle transaction (DOCS-11564's document) keeps its name through the file: its session's id, never its uid", () => {
    const kept = readWithoutUserData({name: '$currentOp', db: 'admin', request: RAW, reply: [inactiveTransactionDocs11564]})
    const throughFile = EJSON.parse(EJSON.stringify(kept.reply, {relaxed: false}), {relaxed: false}) as Array<Record<string, unknown>>
    assert.deepEqual(Object.keys(throughFile[0]!.lsid as object), ['id'])
    const [before] = parseOperations([inactiveTransactionDocs11564])
    const [after] = parseOperations(throughFile)
    assert.equal(before!.opid, 'lsid:eb347736-8c7e-4ca7-8c7b-a43b8e61cd16')
    assert.deepEqual(after, before)
  })

  it('leaves what a pipeline computed (the holders\' $group) and every other read as read', () => {
    const staged: SnapshotRead = {name: '$currentOp', db: 'admin', request: STAGED, reply: [{_id: 'ops', count: 3}]}
    assert.equal(readWithoutUserData(staged), staged)
    const status: SnapshotRead = {name: 'serverStatus', db: 'admin', request: {serverStatus: 1}, reply: serverStatus}
    assert.equal(readWithoutUserData(status), status)
  })
})

/** A format-1 snapshot of a replica set's member: hello, serverStatus, the holders' $currentOp; no node-lock reads. */
const formatOne = EJSON.stringify(
  {
    format: 'pooltool-snapshot',
    formatVersion: 1,
    capturedAt: new Date('2024-06-01T10:00:00Z'),
    entry: {uri: 'mongodb://db1:27017/?replicaSet=rs0', seedHosts: ['db1:27017']},
    redactedHosts: false,
    hosts: [
      {
        host: 'db1:27017',
        role: 'primary',
        reads: [
          {name: 'hello', db: 'admin', request: {hello: 1}, reply: {isWritablePrimary: true, setName: 'rs0', hosts: ['db1:27017'], me: 'db1:27017', maxWireVersion: 21, ok: 1}},
          {name: 'serverStatus', db: 'admin', request: {serverStatus: 1}, reply: serverStatus},
          {name: '$currentOp', db: 'admin', request: STAGED, reply: [{_id: 'ops', count: 3}]},
        ],
      },
    ],
    unreachable: [],
    views: {'conns list': {}},
  },
  {relaxed: false},
)

describe('replay of a snapshot without node locks', () => {
  const snapshot = parseSnapshot(formatOne, 'old.json')
  const context: ReplayContext = {file: 'old.json', capturedAt: snapshot.capturedAt, formatVersion: snapshot.formatVersion, elapsedMS: () => 0}
  const host = {listener: '127.0.0.1:5001', reads: snapshot.hosts[0]!.reads}

  it('a format-1 file still parses and replays; a later format than this pooltool knows is refused, naming both', () => {
    assert.equal(snapshot.formatVersion, 1)
    assert.equal(snapshot.hosts[0]!.nodeLocks, undefined)
    assert.throws(() => parseSnapshot(formatOne.replace('"formatVersion":{"$numberInt":"1"}', '"formatVersion":3'), 'new.json'), /new\.json is not a pooltool snapshot: formatVersion 3 \(this pooltool reads 1 to 2\)/)
  })

  it('answers the node-lock $currentOp "not captured": unknown, not none (the holders\' grouped documents are no stand-in)', () => {
    const reply = dispatchReplay(host, {...RAW, cursor: {}, $db: 'admin'}, 'admin', false, context)
    assert.equal(reply.ok, 0)
    assert.equal(reply.code, 59)
    assert.match(String(reply.errmsg), /^\$currentOp operations were not captured in old\.json: this node's locks and operations are unknown, not none \(a format-1 snapshot holds them on a sharded cluster's shard and config primaries only\)/)
    assert.equal(dispatchReplay(host, {lockInfo: 1, $db: 'admin'}, 'admin', false, context).code, 59, 'lockInfo: not captured either')
  })

  it('still serves the reads it holds: the holders\' $currentOp, serverStatus', () => {
    const holders = dispatchReplay(host, {...STAGED, cursor: {}, $db: 'admin'}, 'admin', false, context)
    assert.deepEqual(EJSON.serialize({batch: (holders.cursor as {firstBatch: unknown[]}).firstBatch}), {batch: [{_id: 'ops', count: 3}]})
    const status = dispatchReplay(host, {serverStatus: 1, locks: 1, $db: 'admin'}, 'admin', false, context)
    assert.equal(Number(status.ok), 1)
    assert.equal(status.version, '7.0.12')
  })

  it('locks list\'s text says the node locks are unknown when no node could be read, never that nothing waits', () => {
    const unread = {host: 'db1:27017', role: 'primary' as const, readAt: null, view: null, error: {code: 'SERVER_ERROR', message: 'not captured'}, lockInfo: 'not read' as const}
    assert.equal(rootBlockerText({rootBlockers: [], nodes: [unread, {...unread, host: 'db2:27017'}]}), 'node locks unknown: none of the 2 node(s) could be read (each listed with why)')
  })

  it('a raw $currentOp read serves the node-lock request, and lockInfo its lockInfo; a grouped request is not answered with raw operations', () => {
    const reads: SnapshotRead[] = [
      {name: '$currentOp', db: 'admin', request: RAW, reply: operations},
      {name: 'lockInfo', db: 'admin', request: {lockInfo: 1}, reply: lockInfo},
    ]
    assert.equal((dispatchReplay({listener: 'x', reads}, {lockInfo: 1, $db: 'admin'}, 'admin', false, context).lockInfo as unknown[]).length, 1)
    const served = dispatchReplay({listener: 'x', reads}, {...RAW, cursor: {}}, 'admin', false, context)
    assert.equal((served.cursor as {firstBatch: unknown[]}).firstBatch.length, operations.length)
    assert.equal(dispatchReplay({listener: 'x', reads}, {...STAGED, cursor: {}}, 'admin', false, context).code, 59)
  })
})

describe('snapshot summary: how the node-lock reads went, per host', () => {
  it('says captured, lockInfo not permitted, unknown where $currentOp was refused, "-" where none were made; fits 80 columns', () => {
    const refused = 'not permitted: not authorized on admin to execute command { lockInfo: 1, $db: "admin" }' as const
    const text = renderSnapshotSummary(
      {
        target: {uri: 'mongodb://db1:27017/', embedded: false} as never,
        capturedAt: '2024-06-01T10:00:00.000Z',
        redactedHosts: false,
        hosts: [
          {host: 'db1:27017', role: 'primary', reads: 12, errors: 0, nodeLocks: {currentOp: 'captured', serverStatus: 'captured', lockInfo: 'captured'}},
          {host: 'db2:27017', role: 'secondary', reads: 12, errors: 1, nodeLocks: {currentOp: 'captured', serverStatus: 'captured', lockInfo: refused}},
          {host: 'db3:27017', role: 'secondary', reads: 12, errors: 2, nodeLocks: {currentOp: refused, serverStatus: 'captured', lockInfo: refused}},
          {host: 'router:27017', role: 'mongos', reads: 5, errors: 0},
        ],
        unreachable: [],
        views: ['conns list', 'locks list'],
        notes: [`db2:27017: lockInfo ${refused}: the blocking chain there is inferred from $currentOp`],
        interrupted: false,
      },
      {width: 80},
    )
    const row = (host: string) => text.split('\n').find((line) => line.includes(host)) ?? ''
    assert.match(row('db1:27017'), /│ captured\s+│$/)
    assert.match(row('db2:27017'), /│ captured, lockInfo not permitted\s*│$/)
    assert.match(row('db3:27017'), /│ unknown \(not permitted\)\s*│$/)
    assert.match(row('router:27017'), /│ -\s+│$/)
    assert.match(text, /node locks "-": not read there/)
    for (const line of text.split('\n')) assert.ok(line.length <= 80, `fits 80 columns: ${line}`)
  })
})
