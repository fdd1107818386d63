/**
 * Pools and limits in full, judged on published documents: connPoolStats per pool name and per
 * remote host (the manual's mongos example; an 8.0 member's ReplNetwork pool with the wait
 * histogram and never-used counters), the effective incoming limit against net.maxIncomingConnections
 * (getCmdLineOpts) and 80% of the open-files limit (hostInfo), counters that cannot be true, and
 * replica-set members by role (arbiters, passives, a hidden entry).
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import stringWidth from 'string-width'

import {counterDefects} from '../../src/conns/counter-defects.js'
import {explainIncomingLimit, openFilesCap} from '../../src/conns/incoming-limit.js'
import {connsNotes} from '../../src/conns/notes.js'
import {parseConnPoolStats} from '../../src/conns/pool-stats.js'
import {connectionLimit} from '../../src/conns/summary.js'
import type {ConnsListResult} from '../../src/conns/types.js'
import {parseConnections} from '../../src/probes/server-status.js'
import {hiddenMembersOf} from '../../src/probes/discovery.js'
import {topologyFromHello} from '../../src/probes/topology.js'
import {describeTopology, HIDDEN_MEMBERS_TEXT, renderList} from '../../src/reporters/conns.js'
import {fitText} from '../../src/reporters/fit.js'
import {connPoolStats70} from '../fixtures/conns-documents.js'
import {connPoolStats80Member, connPoolStatsManualMongos, getCmdLineOptsManual, getCmdLineOptsMax500, hostInfoLinux, hostInfoWindows} from '../fixtures/pools-limits-documents.js'
import {serverStatus44} from '../fixtures/server-status.js'

describe('connPoolStats per pool name and per remote host', () => {
  test("the manual's mongos example: every pool by name (TaskExecutor 0-3, ShardRegistry, global) with its hosts", () => {
    const p = parseConnPoolStats(connPoolStatsManualMongos)!
    assert.deepEqual(
      p.byPool!.map((pool) => pool.pool),
      ['global', 'NetworkInterfaceASIO-ShardRegistry', 'NetworkInterfaceASIO-TaskExecutorPool-0', 'NetworkInterfaceASIO-TaskExecutorPool-1', 'NetworkInterfaceASIO-TaskExecutorPool-2', 'NetworkInterfaceASIO-TaskExecutorPool-3'],
    )
    const registry = p.byPool!.find((pool) => pool.pool === 'NetworkInterfaceASIO-ShardRegistry')!
    assert.deepEqual([registry.inUse, registry.available, registry.created, registry.refreshing], [1, 7, 20, 0])
    assert.equal(registry.hosts.length, 5)
    const global = p.byPool!.find((pool) => pool.pool === 'global')!
    assert.deepEqual(global.hosts.find((h) => h.host === 'shard1.example.net:27018'), {host: 'shard1.example.net:27018', inUse: 0, available: 2, created: 7, refreshing: 0})
    // Per remote host over every pool: the `hosts` map as sent, in the server's order.
    assert.deepEqual(
      p.byHost!.map((h) => [h.host, h.inUse, h.available, h.created]),
      [
        ['cfg3.example.net:27019', 0, 3, 6],
        ['cfg1.example.net:27019', 2, 5, 27],
        ['cfg2.example.net:27019', 0, 3, 6],
        ['shard2.example.net:27018', 0, 3, 11],
        ['shard1.example.net:27018', 0, 3, 11],
      ],
    )
    // The router summary is kept.
    assert.deepEqual(p.totals, {inUse: 2, available: 17, created: 61, refreshing: 0})
    assert.deepEqual(p.shards.map((s) => s.shard), ['csRS', 'shardA', 'shardB'])
  })

  test('an 8.0 replica-set member: its ReplNetwork pool, never-used connections and the wait histogram', () => {
    const p = parseConnPoolStats(connPoolStats80Member)!
    assert.equal(p.totals.wasNeverUsed, 2)
    assert.equal(p.totals.refreshed, 120)
    const [repl] = p.byPool!
    assert.equal(repl!.pool, 'NetworkInterfaceTL-ReplNetwork')
    assert.equal(repl!.wasNeverUsed, 2)
    assert.deepEqual(repl!.hosts.map((h) => [h.host, h.inUse, h.created, h.wasNeverUsed]), [
      ['rs1.example.net:27017', 1, 5, 2],
      ['rs3.example.net:27017', 0, 4, 0],
    ])
    assert.equal(p.acquisitionWaitTimes!.totalCount, 1495)
    // Waited 50 ms or more: [50ms, 100ms) and [1000ms, inf).
    assert.equal(p.acquisitionWaitTimes!.waitedAtLeast50MS, 15)
    assert.deepEqual(p.acquisitionWaitTimes!.buckets.map((b) => [b.range, b.fromMS, b.toMS, b.count]), [
      ['[0ms, 50ms)', 0, 50, 1480],
      ['[50ms, 100ms)', 50, 100, 12],
      ['[1000ms, inf)', 1000, undefined, 3],
    ])
    assert.equal(repl!.acquisitionWaitTimes!.totalCount, 1495)
  })

  test('7.0 mongos: histogram at the top, pools by name with their hosts', () => {
    const p = parseConnPoolStats(connPoolStats70)!
    assert.deepEqual(p.byPool!.map((pool) => [pool.pool, pool.hosts.length]), [
      ['NetworkInterfaceTL-ShardRegistry', 2],
      ['NetworkInterfaceTL-TaskExecutorPool-0', 3],
    ])
    assert.equal(p.acquisitionWaitTimes!.totalCount, 431)
    assert.equal(p.acquisitionWaitTimes!.waitedAtLeast50MS, 0)
  })
})

describe('the effective incoming limit, explained', () => {
  const limitOf = (status: {connections: unknown}) => connectionLimit(parseConnections(status as never)!).maxIncoming

  test('published 4.4 serverStatus: 25 + 838,835 = 838,860 = 80% of 1,048,576 open files, with no maxIncomingConnections set', () => {
    const effective = limitOf(serverStatus44)
    assert.equal(effective, 838_860)
    const limit = explainIncomingLimit({effective, cmdLineOpts: {reply: getCmdLineOptsManual}, hostInfo: {reply: hostInfoLinux(1_048_576)}})
    assert.equal(limit.binds, 'openFiles')
    assert.equal(limit.inferred, undefined)
    assert.equal(limit.openFilesCap, 838_860)
    assert.equal(limit.maxIncomingConnectionsSet, false)
    assert.equal(limit.maxIncomingConnections, undefined)
    assert.match(limit.explanation, /^limit 838,860 = 80% of open files 1,048,576 \(hostInfo\.extra\.maxOpenFiles\): raise ulimit -n/)
  })

  test('ulimit -n 1024: limit 819 = 80% of open files 1024, raise ulimit -n', () => {
    assert.equal(openFilesCap(1024), 819)
    const limit = explainIncomingLimit({effective: 819, cmdLineOpts: {reply: getCmdLineOptsManual}, hostInfo: {reply: hostInfoLinux(1024)}})
    assert.equal(limit.binds, 'openFiles')
    assert.match(limit.explanation, /limit 819 = 80% of open files 1,024 \(hostInfo\.extra\.maxOpenFiles\): raise ulimit -n/)
  })

  test('net.maxIncomingConnections 500 below the open-files cap binds', () => {
    const limit = explainIncomingLimit({effective: 500, cmdLineOpts: {reply: getCmdLineOptsMax500}, hostInfo: {reply: hostInfoLinux(64_000)}})
    assert.equal(limit.binds, 'maxIncomingConnections')
    assert.equal(limit.maxIncomingConnections, 500)
    assert.equal(limit.openFilesCap, 51_200)
    assert.match(limit.explanation, /^limit 500 = net\.maxIncomingConnections \(getCmdLineOpts\); 80% of open files 64,000 = 51,200/)
  })

  test('hostInfo refused: the open-files cap is unknown, never guessed; the binding cap found by elimination says so', () => {
    const limit = explainIncomingLimit({
      effective: 400,
      cmdLineOpts: {reply: getCmdLineOptsMax500},
      hostInfo: {unavailable: 'not authorized on admin to execute command { hostInfo: 1 } (Unauthorized)'},
    })
    assert.equal(limit.binds, 'openFiles')
    assert.equal(limit.inferred, true)
    assert.equal(limit.maxOpenFiles, undefined)
    assert.equal(limit.openFilesCap, undefined)
    assert.match(limit.maxOpenFilesUnknown!, /Unauthorized/)
    assert.match(limit.explanation, /open-files cap unknown \(hostInfo: not authorized/)
  })

  test('both refused: which cap binds is unknown', () => {
    const refused = {unavailable: 'Unauthorized'}
    const limit = explainIncomingLimit({effective: 819, cmdLineOpts: refused, hostInfo: refused})
    assert.equal(limit.binds, 'unknown')
    assert.equal(limit.maxIncomingConnections, undefined)
    assert.equal(limit.openFilesCap, undefined)
    assert.match(limit.explanation, /^limit 819: which cap binds is unknown/)
  })

  test('Windows has no open-files cap: the configured maximum holds the limit', () => {
    const limit = explainIncomingLimit({effective: 500, cmdLineOpts: {reply: getCmdLineOptsMax500}, hostInfo: {reply: hostInfoWindows}})
    assert.equal(limit.binds, 'maxIncomingConnections')
    assert.match(limit.explanation, /no open-files cap \(Windows\)/)
  })

  test('a limit matching neither cap (the open-files limit changed since start) is said, not forced', () => {
    const limit = explainIncomingLimit({effective: 819, cmdLineOpts: {reply: getCmdLineOptsMax500}, hostInfo: {reply: hostInfoLinux(64_000)}})
    assert.equal(limit.binds, 'neither')
  })
})

describe('counters that cannot be true', () => {
  test('awaitingTopologyChanges above current is the SERVER-62082 defect, not waiters', () => {
    // The published 4.4 figures with the counter grown past current, as the defect leaves it.
    const leaked = {...serverStatus44.connections, awaitingTopologyChanges: 1_204}
    const [defect, ...rest] = counterDefects(parseConnections({connections: leaked})!)
    assert.equal(rest.length, 0)
    assert.equal(defect!.field, 'awaitingTopologyChanges')
    assert.equal(defect!.ticket, 'SERVER-62082')
    assert.match(defect!.cause, /awaitingTopologyChanges 1204 > current 25: .*SERVER-62082.*not clients waiting/)
    assert.deepEqual(counterDefects(parseConnections(serverStatus44)!), [])
    const notes = connsNotes({warnings: []}, [{host: 'db1:27017', state: 'ok', counterDefects: [defect!]}])
    assert.ok(notes.some((n) => n.startsWith('db1:27017: awaitingTopologyChanges 1204 > current 25')), notes.join('\n'))
  })
})

describe('replica-set members by role', () => {
  // A hello of a 5-member set (manual: hello "Replica Sets": hosts, passives, arbiters).
  const hello = {
    setName: 'rs0',
    hosts: ['rs1:27017', 'rs2:27017'],
    passives: ['rs3:27017'],
    arbiters: ['rs4:27017'],
    primary: 'rs1:27017',
    me: 'rs2:27017',
    isWritablePrimary: false,
    secondary: true,
  }

  test('arbiters and passives are listed with their role, never dropped', () => {
    assert.deepEqual(topologyFromHello(hello, []).hosts, [
      {host: 'rs1:27017', role: 'primary'},
      {host: 'rs2:27017', role: 'secondary'},
      {host: 'rs3:27017', role: 'secondary', passive: true},
      {host: 'rs4:27017', role: 'arbiter'},
    ])
  })

  test('hidden members from replSetGetConfig (the manual members[] shape): secondary, hidden, passive; arbiters stay with hello', () => {
    // https://www.mongodb.com/docs/manual/reference/command/replSetGetConfig/ ("Example": config.members[] with host, arbiterOnly, hidden, priority).
    const reply = {
      config: {
        _id: 'rs0',
        version: 3,
        members: [
          {_id: 0, host: 'rs1:27017', arbiterOnly: false, buildIndexes: true, hidden: false, priority: 1, votes: 1},
          {_id: 1, host: 'rs2:27017', arbiterOnly: false, buildIndexes: true, hidden: false, priority: 1, votes: 1},
          {_id: 2, host: 'rs5:27017', arbiterOnly: false, buildIndexes: true, hidden: true, priority: 0, votes: 1},
          {_id: 3, host: 'rs4:27017', arbiterOnly: true, buildIndexes: true, hidden: false, priority: 0, votes: 1},
        ],
      },
      ok: 1,
    }
    assert.deepEqual(hiddenMembersOf(reply), [{host: 'rs5:27017', role: 'secondary', hidden: true, passive: true}])
    assert.equal(hiddenMembersOf({ok: 1}), undefined)
  })

  test('a replica set whose hidden members could not be listed says so with its hosts', () => {
    const replset = {kind: 'replset' as const, setName: 'rs0', sources: ['hello'], warnings: [], staleRouters: [], hosts: []}
    assert.equal(describeTopology({...replset, hiddenMembersVisible: false}, 4), `replica set rs0, 4 hosts (from hello; ${HIDDEN_MEMBERS_TEXT})`)
    assert.equal(describeTopology({...replset, sources: ['hello', 'replSetGetConfig'], hiddenMembersVisible: true}, 4), 'replica set rs0, 4 hosts (from hello, replSetGetConfig)')
    assert.equal(describeTopology({kind: 'sharded', sources: ['hello'], warnings: [], staleRouters: [], hosts: []}, 4), 'sharded cluster, 4 hosts (from hello)')
  })

  test('conns list text: roles, pools by name, each remote host, the limit explained, within the width', () => {
    const pools = parseConnPoolStats(connPoolStats80Member)!
    const incomingLimit = explainIncomingLimit({effective: 819, cmdLineOpts: {reply: getCmdLineOptsManual}, hostInfo: {reply: hostInfoLinux(1024)}})
    const sample = (host: string, role: 'primary' | 'secondary' | 'arbiter', extra = {}) => ({host, role, state: 'ok' as const, current: 5, available: 814, totalCreated: 9, maxIncoming: 819, usedPct: 0.61, pools, incomingLimit, ...extra})
    const result: ConnsListResult = {
      target: {uri: 'mongodb://rs1:27017/?replicaSet=rs0', source: 'uri', simulated: false},
      topology: {kind: 'replset', setName: 'rs0', sources: ['hello'], warnings: [], staleRouters: []},
      at: '2026-11-27T12:00:00.000Z',
      roundMS: 12,
      hosts: [sample('rs1:27017', 'primary'), sample('rs3:27017', 'secondary', {passive: true}), {...sample('rs4:27017', 'arbiter'), pools: undefined, poolsUnavailable: 'Unauthorized'}],
      notes: [],
      interrupted: false,
    }
    const layout = {width: 100}
    const text = fitText(renderList(result, layout), layout)
    for (const line of text.split('\n')) assert.ok(stringWidth(line) <= 100, line)
    const flat = text.replaceAll(/\n +/g, ' ')
    assert.match(text, /rs3:27017 +│ secondary passive/)
    assert.match(text, /rs4:27017 +│ arbiter/)
    assert.match(flat, /rs1:27017 total 1\/3\/9\/0 · ReplNetwork 1\/3\/9\/0 · never used 2 · waited ≥50 ms 15 of 1,495 acquisitions/)
    assert.match(flat, /to rs1\.example\.net:27017 1\/1\/5\/0, rs3\.example\.net:27017 0\/2\/4\/0/)
    assert.match(text, /rs4:27017 not available: Unauthorized/)
    assert.match(flat, /rs1:27017, rs3:27017, rs4:27017: limit 819 = 80% of open files 1,024 \(hostInfo\.extra\.maxOpenFiles\): raise ulimit -n/)
  })
})
