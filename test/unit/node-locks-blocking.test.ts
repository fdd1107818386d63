/**
 * Who blocks whom (src/locks/node/blocking.ts) from published $currentOp printouts and the manual's
 * lockInfo example, and from a constructed index-build case (marked as such: no published printout
 * of it with lockInfo was found) for the FIFO "queued ahead" edges and lockInfo's confirmation.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {UUID} from 'bson'

import {analyseBlocking, inferEdges, killOpHint, LOCK_ACQUISITION_ORDER, resourceOf, stopAdvice, waitedLockType} from '../../src/locks/node/blocking.js'
import {parseLockInfo, parseResourceId} from '../../src/locks/node/lock-info.js'
import {compatible, conflicts, MODE_NAME_OF} from '../../src/locks/node/modes.js'
import {parseOperation, parseOperations} from '../../src/locks/node/operations.js'
import {blockingTreeText} from '../../src/reporters/node-locks.js'
import {fsyncLockCsdn, inactiveTransactionDocs11564, indexBuild42Primary, indexBuild42Secondary, lockInfoManualExample, pastebinFGjTrnC5, server17039Insert, update303WhereSleep} from '../fixtures/node-locks-documents.js'
import {constructedIndexBuild, constructedIndexBuildLockInfo, NODE} from './fixtures/node-locks-constructed.js'

describe('modes', () => {
  it("follow the manual's compatibility table", () => {
    const table: Record<string, string[]> = {IS: ['IS', 'IX', 'S'], IX: ['IS', 'IX'], S: ['IS', 'S'], X: []}
    for (const [a, ok] of Object.entries(table)) {
      for (const b of ['IS', 'IX', 'S', 'X']) assert.equal(compatible(a as 'IS', b as 'IS'), ok.includes(b), `${a} vs ${b}`)
    }
    assert.deepEqual(MODE_NAME_OF, {r: 'IS', w: 'IX', R: 'S', W: 'X'})
    assert.equal(conflicts('W', 'r'), true)
    assert.equal(conflicts('R', 'r'), false)
    assert.equal(conflicts('?', 'W'), false, 'an unreadable mode never makes an edge')
  })
})

describe('operations from $currentOp', () => {
  it('reads the 3.0 printout of pastebin FGjTrnC5: names, running time, locks, the command name only', () => {
    const [query, dbstats] = parseOperations(pastebinFGjTrnC5, NODE)
    assert.equal(query!.opid, 946990251)
    assert.equal(query!.waitingForLock, true, 'active: false but waiting: not an idle connection')
    assert.equal(query!.commandName, null, "a find's filter key is not a command name")
    assert.equal(dbstats!.commandName, 'dbstats')
    assert.equal(dbstats!.runningMicros, 5239773)
    assert.deepEqual(dbstats!.locks, {Global: 'r', MMAPV1Journal: 'r', Database: 'R'})
    assert.equal(query!.lockStats.MMAPV1Journal!.acquireWaitCount.r, 1)
    assert.equal(JSON.stringify([query, dbstats]).includes('bar'), false, 'the filter value is not kept')
  })

  it('keeps resource types it does not know, and never the inserted document', () => {
    const insert = parseOperation(server17039Insert)
    assert.deepEqual(Object.keys(insert.locks), ['Global', 'MMAPV1Journal', 'Database', 'Collection'])
    assert.equal(JSON.stringify(insert).includes('64121'), false)
    const future = parseOperation({opid: 7, waitingForLock: true, locks: {FeatureCompatibilityVersion: 'w', Global: 'w', TenantBarrier: 'w'}})
    assert.deepEqual(Object.keys(future.locks), ['FeatureCompatibilityVersion', 'Global', 'TenantBarrier'])
    assert.equal(waitedLockType(future), 'Global', 'the deepest type we can place')
  })

  it('leaves idle connections out, and reads a router shard:opid, client_s and the driver', () => {
    const ops = parseOperations([
      {opid: 1, active: false, desc: 'conn1', locks: {}, waitingForLock: false},
      {opid: 'shard01:4567', shard: 'shard01', client_s: '10.0.0.9:50000', clientMetadata: {driver: {name: 'nodejs', version: '6.9.0'}, application: {name: 'orders-api'}}, active: true, op: 'command', command: {aggregate: 'orders', pipeline: [{$match: {k: 'v'}}]}},
    ])
    assert.equal(ops.length, 1)
    assert.equal(ops[0]!.opid, 'shard01:4567')
    assert.equal(ops[0]!.client, '10.0.0.9:50000')
    assert.equal(ops[0]!.driver, 'nodejs 6.9.0')
    assert.equal(ops[0]!.appName, 'orders-api')
    assert.equal(ops[0]!.commandName, 'aggregate')
    assert.equal(killOpHint(ops[0]!.opid), 'db.killOp("shard01:4567")')
  })
})

describe('who blocks whom, inferred from $currentOp', () => {
  it('pastebin FGjTrnC5: the query waits on MMAPV1Journal, which dbstats holds in a compatible mode: no visible blocker, dbstats named', () => {
    const analysis = analyseBlocking({operations: parseOperations(pastebinFGjTrnC5, NODE)})
    assert.equal(analysis.chainSource, 'currentOp')
    assert.equal(analysis.chainSourceText, 'inferred from $currentOp')
    assert.equal(analysis.chains.length, 0)
    assert.equal(analysis.unexplainedWaiters.length, 1)
    const waiter = analysis.unexplainedWaiters[0]!
    assert.equal(waiter.operation.opid, 946990251)
    assert.equal(waiter.resource?.type, 'MMAPV1Journal', 'the deepest type of its locks: the one its lockStats says it waited on')
    assert.equal(waiter.mode, 'IS')
    assert.deepEqual(waiter.compatibleHolders, [946985942])
  })

  it('a holder nobody waits for is no chain (the fsyncLockWorker of the CSDN printout, 3.0.3 update holding Collection W)', () => {
    for (const docs of [fsyncLockCsdn, [update303WhereSleep]]) {
      const analysis = analyseBlocking({operations: parseOperations(docs, NODE)})
      assert.equal(analysis.chains.length, 0)
      assert.equal(analysis.edges.length, 0)
    }
    const worker = parseOperations(fsyncLockCsdn, NODE).find((op) => op.desc === 'fsyncLockWorker')!
    assert.deepEqual(worker.locks, {Global: 'R'})
    // A write arriving now would wait on Global in IX, which S conflicts with: the edge the inference draws.
    const write = parseOperation({opid: 9001, desc: 'conn77', op: 'insert', ns: 'shop.orders', waitingForLock: true, microsecs_running: 2_000_000, locks: {Global: 'w'}}, NODE)
    const edges = inferEdges([worker, write])
    assert.deepEqual(edges.map((e) => [e.waiter, e.blocker, e.resource.type, e.waiterMode, e.blockerMode, e.kind]), [[9001, 6719, 'Global', 'IX', 'S', 'holds']])
  })

  it('the index build: the long read holds IS, the build waits for X, new reads queue behind the build ("queued ahead")', () => {
    const analysis = analyseBlocking({operations: parseOperations(constructedIndexBuild, NODE)})
    assert.equal(analysis.chains.length, 1)
    const chain = analysis.chains[0]!
    assert.equal(chain.root.operation.opid, 101, 'the long read is the root blocker')
    assert.equal(chain.killOpHint, 'db.killOp(101)')
    assert.equal(chain.waiterCount, 3)
    const build = chain.root.children[0]!
    assert.equal(build.operation.opid, 202)
    assert.deepEqual([build.edge!.kind, build.edge!.resource.type, build.edge!.resource.name, build.edge!.waiterMode, build.edge!.blockerMode], ['holds', 'Collection', 'test.orders', 'X', 'IS'])
    assert.equal(build.waitingAtMostMicros, 30_000_000)
    assert.deepEqual(build.children.map((c) => c.operation.opid), [303, 304], 'longest waiting first')
    for (const read of build.children) assert.deepEqual([read.edge!.kind, read.edge!.waiterMode, read.edge!.blockerMode], ['queued-ahead', 'IS', 'X'])
    assert.equal(analysis.unexplainedWaiters.length, 0)
    assert.ok(!analysis.operations.find((op) => op.opid === 405)!.waitingForLock, 'the op on another collection is in no chain')
  })

  it('a read waiting longer than the build is not queued behind it (FIFO: only requests ahead block)', () => {
    const edges = inferEdges(parseOperations(constructedIndexBuild, NODE))
    assert.ok(!edges.some((e) => e.blocker === 303 || e.blocker === 304), 'compatible IS requests never block each other')
    assert.ok(!edges.some((e) => e.waiter === 202 && e.kind === 'queued-ahead'), 'the reads queued after the build are not ahead of it')
  })

  it('resources: Database from the ns database, Collection from the ns, singletons per node; ops on other nodes never meet', () => {
    const op = parseOperation({opid: 1, ns: 'shop.orders', locks: {Global: 'r'}}, NODE)
    assert.deepEqual(resourceOf(op, 'Database'), {node: NODE, type: 'Database', name: 'shop'})
    assert.deepEqual(resourceOf(op, 'Collection'), {node: NODE, type: 'Collection', name: 'shop.orders'})
    assert.deepEqual(resourceOf(op, 'Global'), {node: NODE, type: 'Global', name: null})
    const holder = parseOperation({opid: 2, ns: 'a.b', locks: {Global: 'W'}}, 'other:27017')
    const waiter = parseOperation({opid: 3, ns: 'a.b', waitingForLock: true, locks: {Global: 'r'}}, NODE)
    assert.equal(inferEdges([holder, waiter]).length, 0)
    assert.deepEqual(LOCK_ACQUISITION_ORDER.slice(LOCK_ACQUISITION_ORDER.indexOf('Global')), ['Global', 'MMAPV1Journal', 'Database', 'Collection', 'Metadata', 'Mutex', 'oplog'])
  })
})

describe('lockInfo', () => {
  it("parses the manual's example: resource ids, granted modes and opids; nothing pending, so nothing waits", () => {
    const snapshot = parseLockInfo(lockInfoManualExample, NODE)
    assert.deepEqual(
      snapshot.resources.map((r) => [r.type, r.name]),
      [['ParallelBatchWriterMode', null], ['Global', null], ['ReplicationStateTransition', null], ['Database', 'test'], ['Collection', 'test.hugeindex']],
    )
    const collection = snapshot.resources[4]!
    assert.deepEqual(collection.granted.map((g) => [g.mode, g.opid, g.desc]), [['IX', 28770, 'conn3'], ['IX', 27437, 'IndexBuildsCoordinatorMongod-0']])
    assert.equal(JSON.stringify(snapshot).includes('585'), false, 'debugInfo (the command with its values) is not kept')
    const analysis = analyseBlocking({operations: [], lockInfo: [snapshot]})
    assert.equal(analysis.chainSourceText, 'confirmed by lockInfo')
    assert.equal(analysis.edges.length, 0)
    assert.deepEqual(parseResourceId('{42: Collection, test.foo}'), {type: 'Collection', name: 'test.foo'})
  })

  it('confirms the inferred chain edge by edge', () => {
    const analysis = analyseBlocking({operations: parseOperations(constructedIndexBuild, NODE), lockInfo: [parseLockInfo(constructedIndexBuildLockInfo(), NODE)]})
    assert.equal(analysis.chainSource, 'lockInfo')
    assert.equal(analysis.chains[0]!.root.operation.opid, 101)
    assert.deepEqual(analysis.edges.map((e) => [e.waiter, e.blocker, e.kind, e.evidence]), [
      [202, 101, 'holds', 'confirmed-by-lockInfo'],
      [303, 202, 'queued-ahead', 'confirmed-by-lockInfo'],
      [304, 202, 'queued-ahead', 'confirmed-by-lockInfo'],
    ])
    assert.equal(analysis.inferredEdgesNotInLockInfo, 0)
  })

  it("a release build's resourceId names no collection ({…: Collection, <hash>}): the confirmed edge keeps the one $currentOp names", () => {
    const reply = constructedIndexBuildLockInfo()
    reply.lockInfo[1]!.resourceId = '{12576221391967629173: Collection, 1047006345899159413}'
    const analysis = analyseBlocking({operations: parseOperations(constructedIndexBuild, NODE), lockInfo: [parseLockInfo(reply, NODE)]})
    assert.deepEqual(analysis.edges.map((e) => [e.waiter, e.resource.type, e.resource.name, e.evidence]), [
      [202, 'Collection', 'test.orders', 'confirmed-by-lockInfo'],
      [303, 'Collection', 'test.orders', 'confirmed-by-lockInfo'],
      [304, 'Collection', 'test.orders', 'confirmed-by-lockInfo'],
    ])
  })

  it('an edge only lockInfo shows, on a hashed resource, is named by the waiter $currentOp lists (it began waiting between the reads)', () => {
    const reply = constructedIndexBuildLockInfo()
    reply.lockInfo[1]!.resourceId = '{12576221391967629173: Collection, 1047006345899159413}'
    // $currentOp was read a moment before 303 queued: there it runs, not yet waiting, so no edge is inferred for it.
    const operations = parseOperations(constructedIndexBuild.map((op) => (op.opid === 303 ? {...op, waitingForLock: false} : op)), NODE)
    const analysis = analyseBlocking({operations, lockInfo: [parseLockInfo(reply, NODE)]})
    assert.deepEqual(analysis.edges.map((e) => [e.waiter, e.resource.type, e.resource.name, e.evidence]), [
      [202, 'Collection', 'test.orders', 'confirmed-by-lockInfo'],
      [303, 'Collection', 'test.orders', 'lockInfo'],
      [304, 'Collection', 'test.orders', 'confirmed-by-lockInfo'],
    ])
  })

  it('corrects it: a holder $currentOp did not list is added, an edge lockInfo does not show is left out', () => {
    const reply = constructedIndexBuildLockInfo({extraGranted: {mode: 'S', opid: 999, desc: 'conn999'}, withoutPending: 304})
    const analysis = analyseBlocking({operations: parseOperations(constructedIndexBuild, NODE), lockInfo: [parseLockInfo(reply, NODE)]})
    const fromLockInfoOnly = analysis.edges.filter((e) => e.evidence === 'lockInfo')
    assert.deepEqual(fromLockInfoOnly.map((e) => [e.waiter, e.blocker, e.blockerMode]), [[202, 999, 'S']])
    assert.ok(analysis.operations.some((op) => op.opid === 999 && op.desc === 'conn999'))
    assert.equal(analysis.inferredEdgesNotInLockInfo, 1, '304 behind 202: not in lockInfo')
    assert.deepEqual(analysis.unexplainedWaiters.map((w) => w.operation.opid), [304])
  })
})

/**
 * How a DBA ends a root blocker depends on what it is. The manual's killOp (4.4 – 8.x pages): "Only use killOp to
 * terminate operations initiated by clients and do not terminate internal database operations", and "Do not use
 * killOp to terminate an in-progress index builds in replica sets or sharded clusters. Use dropIndexes on the
 * primary to drop the index." On 4.2 a primary's build ran on the client's connection, where killOp stopped it.
 */
describe('how to end the root blocker, as the manual says', () => {
  const ABORT_42_BUILD = 'db.getSiblingDB("niuniuh5_modb_02").runCommand({dropIndexes: "table_clubgamelog", index: [<names in its command.indexes>]})'

  it("an index build's own thread (a 4.2 secondary's, published; every member's from 4.4): dropIndexes on the primary, never killOp", () => {
    const [rsSync, builder] = parseOperations(indexBuild42Secondary, NODE)
    assert.equal(builder!.desc, 'IndexBuildsCoordinatorMongod-0')
    // Its ns is "": the namespace comes from the index spec's ns, the collection from the command's name.
    assert.deepEqual(builder!.indexBuild, {db: 'niuniuh5_modb_02', collection: 'table_clubgamelog'})
    const advice = stopAdvice(builder!)
    assert.equal(advice.killOpHint, null)
    assert.equal(advice.stopHint, `an index build: abort it on the primary (4.4+) with ${ABORT_42_BUILD}, not killOp (manual: killOp)`)
    assert.doesNotMatch(JSON.stringify({builder, advice}), /szToken/, 'no index name or key: they spell the user\'s fields')
    // rsSync-0: a thread of the server's own, no client: not to be killed.
    assert.equal(stopAdvice(rsSync!).killOpHint, null)
    assert.match(stopAdvice(rsSync!).stopHint, /^an internal operation of the server \(rsSync-0\): the manual's killOp is for operations clients started only$/)
  })

  it("the 4.2 secondary's build, ns \"\": its Collection lock is named from its command, so what queues behind it has its root", () => {
    const [, builder] = parseOperations(indexBuild42Secondary, NODE)
    // A replicated drop of that collection reaching the secondary needs it exclusively (constructed beside the published op).
    const applier = parseOperation({opid: 1812600, desc: 'ReplWriterWorker-3', op: 'command', ns: 'niuniuh5_modb_02.table_clubgamelog', command: {drop: 1}, waitingForLock: true, microsecs_running: 2_000_000, locks: {Global: 'w', Database: 'w', Collection: 'W'}}, NODE)
    const [chain] = analyseBlocking({operations: [builder!, applier]}).chains
    assert.equal(chain?.root.operation.opid, 1812446)
    assert.deepEqual(chain!.root.children.map((c) => [c.operation.opid, c.edge?.resource.name, c.edge?.blockerMode]), [[1812600, 'niuniuh5_modb_02.table_clubgamelog', 'IX']])
    assert.equal(chain!.killOpHint, null)
  })

  it("a 4.2 primary's build on the shell's connection (published) blocking a rename: killOp stops it there; from 4.4 dropIndexes", () => {
    const build = parseOperation(indexBuild42Primary, NODE)
    // What would queue behind its Collection IS: a renameCollection needs the collection exclusively.
    const rename = parseOperation({opid: 1857999, desc: 'conn1290', connectionId: 1290, client: '127.0.0.1:37990', op: 'command', ns: 'niuniuh5_modb_02.table_clubgamelog', command: {renameCollection: 1}, waitingForLock: true, microsecs_running: 3_000_000, locks: {Global: 'w', Database: 'w', Collection: 'W'}}, NODE)
    const [chain] = analyseBlocking({operations: [build, rename]}).chains
    assert.equal(chain?.root.operation.opid, 1857695)
    assert.equal(chain!.killOpHint, 'db.killOp(1857695)')
    assert.equal(chain!.stopHint, `an index build: db.killOp(1857695) stops it up to 4.2; from 4.4 abort it on the primary with ${ABORT_42_BUILD}`)
  })

  it('an fsyncLock (the CSDN printout): db.fsyncUnlock(), not killOp; a client operation (3.0.3, published): killOp', () => {
    const worker = parseOperations(fsyncLockCsdn, NODE).find((op) => op.desc === 'fsyncLockWorker')!
    const write = parseOperation({opid: 9001, desc: 'conn77', connectionId: 77, op: 'insert', ns: 'shop.orders', waitingForLock: true, microsecs_running: 2_000_000, locks: {Global: 'w'}}, NODE)
    const [chain] = analyseBlocking({operations: [worker, write]}).chains
    assert.equal(chain?.root.operation.desc, 'fsyncLockWorker')
    assert.deepEqual({killOpHint: chain!.killOpHint, stopHint: chain!.stopHint}, {killOpHint: null, stopHint: 'db.fsyncUnlock() on this node ends the fsync lock (db.fsyncLock() took it)'})
    const update = parseOperation(update303WhereSleep, NODE)
    assert.deepEqual(stopAdvice(update), {killOpHint: 'db.killOp(60054)', stopHint: 'db.killOp(60054)'})
  })

  it('an idle transaction holding its locks (DOCS-11564\'s document, no opid): killSessions on its lsid, not killOp, not "internal"', () => {
    const idle = parseOperation(inactiveTransactionDocs11564, NODE)
    assert.equal(idle.opid, 'lsid:eb347736-8c7e-4ca7-8c7b-a43b8e61cd16', "named by its session's id, as killSessions takes it")
    const advice = stopAdvice(idle)
    assert.equal(advice.killOpHint, null, 'it has no opid: db.killOp("") would do nothing')
    assert.equal(
      advice.stopHint,
      'an idle transaction: the server aborts it after transactionLifetimeLimitSeconds (60 s by default); killSessions on its session ends it now: db.adminCommand({killSessions: [{id: UUID("eb347736-8c7e-4ca7-8c7b-a43b8e61cd16")}]})',
    )
    const {lsid: _lsid, ...withoutSession} = inactiveTransactionDocs11564
    assert.match(stopAdvice(parseOperation(withoutSession, NODE)).stopHint, /killSessions: \[\{id: <lsid\.id in its \$currentOp>\}\]/, 'a document without its lsid: where to read it')
  })

  it('two idle transactions are two sessions, not one op with no opid (DOCS-11564\'s document, and a second session as $currentOp prints one per session)', () => {
    // The manual's $currentOp "returns a document for each operation or session"; the second is the published
    // document with another session's id. An fsyncLock's worker (constructed) waits for Global S behind their IX.
    const second = {...inactiveTransactionDocs11564, lsid: {...inactiveTransactionDocs11564.lsid, id: new UUID('0d4f1c52-3a9e-4b7d-9c21-5e8f6a7b3c10')}}
    const worker = parseOperation({opid: 9100, desc: 'fsyncLockWorker', op: 'none', active: true, waitingForLock: true, microsecs_running: 3_000_000, locks: {Global: 'R'}}, NODE)
    const analysis = analyseBlocking({operations: [parseOperation(inactiveTransactionDocs11564, NODE), parseOperation(second, NODE), worker]})
    assert.deepEqual(
      analysis.edges.map((e) => [e.waiter, e.blocker, e.resource.type, e.waiterMode, e.blockerMode]),
      [
        [9100, 'lsid:eb347736-8c7e-4ca7-8c7b-a43b8e61cd16', 'Global', 'S', 'IX'],
        [9100, 'lsid:0d4f1c52-3a9e-4b7d-9c21-5e8f6a7b3c10', 'Global', 'S', 'IX'],
      ],
    )
    const [chain] = analysis.chains
    assert.equal(chain?.root.operation.opid, 'lsid:eb347736-8c7e-4ca7-8c7b-a43b8e61cd16')
    assert.deepEqual(chain.root.children.map((c) => [c.operation.opid, c.alsoBlockedBy]), [[9100, ['lsid:0d4f1c52-3a9e-4b7d-9c21-5e8f6a7b3c10']]])
    const text = blockingTreeText(analysis)
    assert.match(text, /^root blocker opid \(none: session eb347736-8c7e-4ca7-8c7b-a43b8e61cd16\): blocks 1 operation$/m)
    assert.match(text, /waits ≤3\.0s for S on Global \(session eb347736-8c7e-4ca7-8c7b-a43b8e61cd16 holds IX\)$/m)
    assert.match(text, /also blocked by session 0d4f1c52-3a9e-4b7d-9c21-5e8f6a7b3c10$/m)
  })

  it('lockInfo lists an idle transaction\'s locks with no opid: an unnamed granted IX beside the waiter\'s pending S keeps the session as its blocker', () => {
    // The server's lockInfo names a request's holder through the client whose operation holds the locker; an idle
    // transaction's locker is held by no client, so its granted requests come without clientInfo (constructed in the
    // manual's lockInfo output shape). The worker's pending S is named (opid 9100).
    const second = {...inactiveTransactionDocs11564, lsid: {...inactiveTransactionDocs11564.lsid, id: new UUID('0d4f1c52-3a9e-4b7d-9c21-5e8f6a7b3c10')}}
    const worker = parseOperation({opid: 9100, desc: 'fsyncLockWorker', op: 'none', active: true, waitingForLock: true, microsecs_running: 3_000_000, locks: {Global: 'R'}}, NODE)
    const operations = [parseOperation(inactiveTransactionDocs11564, NODE), parseOperation(second, NODE), worker]
    const request = (mode: string, clientInfo?: object) => ({mode, convertMode: 'NONE', enqueueAtFront: false, compatibleFirst: false, debugInfo: '', ...(clientInfo ? {clientInfo} : {})})
    const globalLock = (granted: object[]) => ({lockInfo: [{resourceId: '{6917529027641081857: Global, 1}', granted, pending: [request('S', {desc: 'fsyncLockWorker', opid: 9100})]}], ok: 1})

    const agreeing = analyseBlocking({operations, lockInfo: [parseLockInfo(globalLock([request('IX'), request('IX')]), NODE)]})
    assert.deepEqual(agreeing.chains.map((c) => [c.root.operation.opid, c.waiterCount]), [['lsid:eb347736-8c7e-4ca7-8c7b-a43b8e61cd16', 1]])
    assert.deepEqual(agreeing.unexplainedWaiters, [])
    assert.equal(agreeing.inferredEdgesNotInLockInfo, 0)

    // lockInfo shows nothing granted in a conflicting mode (the sessions ended between the two reads): not a blocker,
    // and their IX is not called compatible with the waiter's S.
    const contradicting = analyseBlocking({operations, lockInfo: [parseLockInfo(globalLock([request('IS')]), NODE)]})
    assert.deepEqual(contradicting.chains, [])
    assert.deepEqual(contradicting.unexplainedWaiters.map((w) => [w.operation.opid, w.mode, w.compatibleHolders]), [[9100, 'S', []]])
    assert.equal(contradicting.inferredEdgesNotInLockInfo, 2)
  })

  it('a hostile namespace stays one quoted string in the command a DBA would paste', () => {
    const builder = parseOperation({opid: 7, desc: 'IndexBuildsCoordinatorMongod-1', op: 'command', ns: 'shop.x"}); db.dropDatabase(); ({"', command: {createIndexes: 'x"}); db.dropDatabase(); ({"'}, locks: {Collection: 'W'}}, NODE)
    const {stopHint} = stopAdvice(builder)
    assert.ok(stopHint.includes('runCommand({dropIndexes: "x\\"}); db.dropDatabase(); ({\\"", index:'), stopHint)
  })
})

/**
 * What stops others before anyone waits: a DBA reading the CSDN printout sees the fsyncLockWorker holding Global R
 * and knows every write will queue (the author's next step was db.fsyncUnlock()); the 3.0.3 update holding
 * Collection W stops every operation on that collection for its 75 s. By the manual's compatibility table, S admits
 * only IS and S, X nothing.
 */
describe('holds that stop others, with nothing seen waiting for them', () => {
  it('an fsyncLock (published): Global S, every write on the node will wait; the hint is fsyncUnlock', () => {
    const analysis = analyseBlocking({operations: parseOperations(fsyncLockCsdn, NODE)})
    assert.equal(analysis.chains.length, 0)
    assert.deepEqual(
      analysis.holdsThatBlock.map((h) => [h.operation.opid, h.resource.type, h.mode, h.blocks, h.killOpHint, h.stopHint]),
      [[6719, 'Global', 'S', 'writes', null, 'db.fsyncUnlock() on this node ends the fsync lock (db.fsyncLock() took it)']],
    )
    const text = blockingTreeText(analysis)
    assert.match(text, /^no operation waits for a lock \(inferred from \$currentOp\)\nopid 6719 holds S on Global: every write on this node will wait \(nothing seen waiting for it\)\n {2}fsyncLockWorker/)
    assert.match(text, /\n {2}hint: db\.fsyncUnlock\(\) on this node ends the fsync lock \(db\.fsyncLock\(\) took it\) \(pooltool never kills\)$/)
  })

  it('an update holding Collection W (3.0.3, published): every operation on the collection will wait; killOp ends it', () => {
    const [hold] = analyseBlocking({operations: [parseOperation(update303WhereSleep, NODE)]}).holdsThatBlock
    assert.deepEqual([hold?.resource.name, hold?.mode, hold?.blocks, hold?.stopHint], ['performance.sensor_readings', 'X', 'every operation', 'db.killOp(60054)'])
  })

  it('intent modes block nobody (the 4.2 primary\'s hybrid build, IX and IS); a root with waiters is a chain, not a hold', () => {
    assert.deepEqual(analyseBlocking({operations: [parseOperation(indexBuild42Primary, NODE)]}).holdsThatBlock, [])
    // The 3.0.3 update once a second writer queues behind it (constructed beside the published op).
    const writer = parseOperation({opid: 60060, desc: 'conn4', connectionId: 4, client: '127.0.0.1:63090', op: 'insert', ns: 'performance.sensor_readings', waitingForLock: true, microsecs_running: 1_000_000, locks: {Global: 'w', Database: 'w', Collection: 'w'}}, NODE)
    const analysis = analyseBlocking({operations: [parseOperation(update303WhereSleep, NODE), writer]})
    assert.deepEqual(analysis.chains.map((c) => c.root.operation.opid), [60054])
    assert.deepEqual(analysis.holdsThatBlock, [])
  })

  it('the 3.0 dbstats holding Database R beside a query waiting with no visible blocker (pastebin FGjTrnC5): the hold is told, not called unwaited', () => {
    const analysis = analyseBlocking({operations: parseOperations(pastebinFGjTrnC5, NODE)})
    assert.deepEqual(analysis.holdsThatBlock.map((h) => [h.operation.opid, h.resource.type, h.mode, h.blocks]), [[946985942, 'Database', 'S', 'writes']])
    assert.match(blockingTreeText(analysis), /opid 946985942 holds S on Database \S+: every write on \S+ will wait \(nothing seen waiting for it\)/)
  })
})
