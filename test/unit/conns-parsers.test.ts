/** conns parsers over server documents shaped as the manual shows them, per version. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {
  assembleShardedTopology,
  configStringFromShardMap,
  parseHostString,
  routersFromConfigMongos,
  shardsFromDocuments,
} from '../../src/probes/discovery.js'
import {clientHost, holdersCurrentOp, holdersFromGroups} from '../../src/conns/holders.js'
import {parseConnPoolStats} from '../../src/conns/pool-stats.js'
import type {Document} from '../../src/mongo/driver.js'
import {parseShardingStatus} from '../../src/probes/server-status.js'
import {runPipeline} from '../../src/sim/storage/aggregate.js'
import {
  configMongos,
  configMongosNow,
  connPoolStats36,
  connPoolStats70,
  currentOpDocs,
  getShardMap,
  listShards,
  mongosServerStatusSharding,
} from '../fixtures/conns-documents.js'
import {serverStatus70} from '../fixtures/server-status.js'

describe('connPoolStats', () => {
  const topology = assembleShardedTopology({
    seedRouters: ['mongos1.example.net:27017'],
    shards: listShards.shards,
    configString: mongosServerStatusSharding.sharding.configsvrConnectionString,
    nowMs: configMongosNow,
  }).hosts

  test('7.0: totals from total*, per shard from the hosts map, attributed by the topology', () => {
    const p = parseConnPoolStats(connPoolStats70, topology)!
    assert.deepEqual(p.totals, {inUse: 6, available: 14, created: 93, refreshing: 1, leased: 0, refreshed: 40})
    const byShard = Object.fromEntries(p.shards.map((s) => [s.shard, s]))
    assert.deepEqual(Object.keys(byShard).sort(), ['config', 'shardA', 'shardB'])
    assert.equal(byShard.shardA!.inUse, 3)
    assert.equal(byShard.shardA!.available, 6)
    assert.equal(byShard.shardA!.created, 54)
    assert.equal(byShard.shardA!.refreshing, 1)
    assert.equal(byShard.shardA!.hosts, 2)
    assert.equal(byShard.config!.created, 14)
    assert.equal(p.replicaSetMatchingStrategy, 'matchPrimaryNode')
  })

  test('without a topology, hosts are attributed by the replicaSets section', () => {
    const p = parseConnPoolStats(connPoolStats70)!
    assert.deepEqual(p.shards.map((s) => s.shard), ['csRS', 'shardA', 'shardB'])
  })

  test('3.6: no top-level hosts map: per-pool host entries are summed; no leased', () => {
    const p = parseConnPoolStats(connPoolStats36, topology)!
    assert.deepEqual(p.totals, {inUse: 1, available: 3, created: 12, refreshing: 0})
    const shardA = p.shards.find((s) => s.shard === 'shardA')!
    assert.equal(shardA.created, 9)
    assert.equal(shardA.available, 2)
    assert.equal(shardA.leased, undefined)
    assert.equal(p.numClientConnections, 2)
  })

  test('a mongod with no sharding pools', () => {
    const p = parseConnPoolStats({numClientConnections: 0, totalInUse: 0, totalAvailable: 0, totalCreated: 0, totalRefreshing: 0, pools: {}, hosts: {}, ok: 1})!
    assert.equal(p.totals.created, 0)
    assert.deepEqual(p.shards, [])
  })
})

describe('sharded discovery from documents', () => {
  test('host strings', () => {
    assert.deepEqual(parseHostString('rs0/h1:1,h2:2'), {setName: 'rs0', hosts: ['h1:1', 'h2:2']})
    assert.deepEqual(parseHostString('h1:27018'), {hosts: ['h1:27018']})
    assert.deepEqual(shardsFromDocuments(listShards.shards).map((s) => [s.id, s.setName, s.hosts.length, s.draining ?? false]), [
      ['shardA', 'shardA', 2, false],
      ['shardB', 'shardB', 1, false],
      ['shardC', undefined, 1, true],
    ])
  })

  test('config.mongos: routers that pinged within 10 minutes are live, older ones stale', () => {
    const r = routersFromConfigMongos(configMongos, configMongosNow)
    assert.deepEqual(r.live, ['mongos1.example.net:27017', 'mongos2.example.net:27017'])
    assert.equal(r.stale.length, 1)
    assert.equal(r.stale[0]!.host, 'mongos-old.example.net:27017')
  })

  test('serverStatus.sharding gives the config server (absent on a plain replica set)', () => {
    assert.equal(parseShardingStatus(mongosServerStatusSharding)?.configsvrConnectionString, 'csRS/cfg1.example.net:27019,cfg2.example.net:27019,cfg3.example.net:27019')
    assert.equal(parseShardingStatus(serverStatus70), undefined)
  })

  test('getShardMap gives the config server when serverStatus.sharding does not', () => {
    assert.equal(configStringFromShardMap(getShardMap), 'csRS/cfg1.example.net:27019,cfg2.example.net:27019,cfg3.example.net:27019')
    assert.equal(configStringFromShardMap({ok: 1}), undefined)
  })

  test('every router, shard member and config member once, with roles', () => {
    const t = assembleShardedTopology({
      seedRouters: ['mongos1.example.net:27017'],
      configMongos,
      shards: listShards.shards,
      configString: configStringFromShardMap(getShardMap),
      sources: ['hello', 'config.mongos', 'listShards', 'getShardMap'],
      nowMs: configMongosNow,
    })
    assert.equal(t.kind, 'sharded')
    const roles = t.hosts.map((h) => `${h.role}:${h.host}${h.shard ? `@${h.shard}` : ''}`)
    assert.deepEqual(roles, [
      'mongos:mongos1.example.net:27017',
      'mongos:mongos2.example.net:27017',
      'shard:shardA1.example.net:27018@shardA',
      'shard:shardA2.example.net:27018@shardA',
      'shard:shardB1.example.net:27018@shardB',
      'shard:shardC1.example.net:27018@shardC',
      'config:cfg1.example.net:27019',
      'config:cfg2.example.net:27019',
      'config:cfg3.example.net:27019',
    ])
    assert.equal(t.hosts.find((h) => h.role === 'config')!.setName, 'csRS')
    assert.deepEqual(t.staleRouters.map((s) => s.host), ['mongos-old.example.net:27017'])
    assert.deepEqual(t.warnings, [])
  })

  test('missing pieces become warnings, not failures', () => {
    const t = assembleShardedTopology({seedRouters: ['m:1'], nowMs: configMongosNow})
    assert.deepEqual(t.hosts, [{host: 'm:1', role: 'mongos'}])
    assert.equal(t.warnings.length, 2)
  })
})

describe('holders from $currentOp', () => {
  /** What the server answers: the holders' stages run over the $currentOp documents (the embedded cluster's pipeline engine). */
  const groupsOf = (docs: Document[], isMongos = false) => runPipeline(docs, holdersCurrentOp(isMongos).pipeline ?? [])

  test('the read: idle connections, all users, no idle sessions; localOps only on mongos', () => {
    const {pipeline, ...stage} = holdersCurrentOp(false)
    assert.deepEqual(stage, {idleConnections: true, allUsers: true, idleSessions: false})
    assert.equal(holdersCurrentOp(true).localOps, true)
    assert.ok(pipeline?.some((s) => '$group' in s), 'the grouping runs on the server')
  })

  test('client host without the port, IPv6 too', () => {
    assert.equal(clientHost('10.0.0.5:53412'), '10.0.0.5')
    assert.equal(clientHost('[2001:db8::1]:50500'), '2001:db8::1')
    assert.equal(clientHost('db-host'), 'db-host')
  })

  test('grouped by appName, client host and driver; internal threads skipped; ours marked', () => {
    const holders = holdersFromGroups(groupsOf(currentOpDocs), 'pooltool-conns')
    assert.deepEqual(holders[0], {appName: 'orders-api', client: '10.0.0.5', driver: 'nodejs', count: 2, kind: 'application', monitors: 0, rttPingers: 0, pool: 2})
    assert.equal(holders.length, 5)
    assert.deepEqual(holders.find((h) => h.driver === 'mongo-go-driver'), {appName: '(none)', client: '10.0.0.7', driver: 'mongo-go-driver', count: 1, kind: 'application', monitors: 0, rttPingers: 0, pool: 1})
    assert.equal(holders.find((h) => h.appName === 'pooltool-conns')!.own, true)
    assert.equal(holders.find((h) => h.appName === 'pooltool-conns')!.kind, 'pooltool')
    assert.equal(holders.reduce((n, h) => n + h.count, 0), 6)
  })

  test('appName from the handshake metadata when the top-level one is empty; client_s on mongos', () => {
    const docs = [
      {type: 'op', client_s: '10.0.0.8:4000', appName: '', clientMetadata: {application: {name: 'billing'}, driver: {name: 'pymongo'}}},
      {type: 'op', client_s: '10.0.0.8:4001', clientMetadata: {application: {name: 'billing'}, driver: {name: 'pymongo'}}},
    ]
    assert.deepEqual(holdersFromGroups(groupsOf(docs, true)), [{appName: 'billing', client: '10.0.0.8', driver: 'pymongo', count: 2, kind: 'application', monitors: 0, rttPingers: 0, pool: 2}])
  })
})
