/**
 * 6.1+ DDL coordinators in `$currentOp`: a coordinator reports itself by name in `desc`, with an
 * empty `command`, no opid and no running time — the shape of
 * ShardingDDLCoordinator::basicReportBuilder (src/mongo/db/s/sharding_ddl_coordinator.h) and of
 * jstests/sharding/ddl_ops_reported_on_current_op_command.js, as in the v70 replay fixture.
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {ddlOpsFrom} from '../../src/locks/in-memory.js'

describe('DDL operations from $currentOp', () => {
  const coordinator = {shard: 'shard01', host: 'shard01-1.example.org:27018', type: 'op', ns: 'db.test_renamed', desc: 'DropCollectionCoordinator', op: 'command', active: true, command: {}, currentPhase: 'kDropCollection'}
  const participant = {
    shard: 'shard01',
    host: 'shard01-1.example.org:27018',
    desc: 'conn88213',
    opid: 'shard01:9912874',
    microsecs_running: 41_772_010,
    op: 'command',
    ns: 'db.$cmd',
    command: {_shardsvrDropCollection: 'test_renamed', $db: 'db'},
    waitingForLock: false,
  }

  test('a coordinator is named by its desc, on its ns, with no running time (unknown, not 0)', () => {
    const [first, second] = ddlOpsFrom([coordinator, participant])
    assert.deepEqual(first, {shard: 'shard01', host: 'shard01-1.example.org:27018', opid: 'shard01:9912874', command: '_shardsvrDropCollection', ns: 'db.test_renamed', runningMS: 41_772, waitingForLock: false})
    assert.deepEqual(second, {shard: 'shard01', host: 'shard01-1.example.org:27018', opid: '', command: 'DropCollectionCoordinator', ns: 'db.test_renamed', runningMS: null, waitingForLock: false})
  })

  test('an ordinary operation is no DDL operation', () => {
    assert.deepEqual(ddlOpsFrom([{desc: 'conn1', command: {find: 'c', $db: 'app'}, opid: 1}]), [])
  })
})
