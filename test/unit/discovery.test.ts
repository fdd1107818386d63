/** Discovery's pure parts on documents shaped as real clusters write them. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {assembleShardedTopology, isHostPort, parseHostString} from '../../src/probes/discovery.js'

const now = Date.parse('2024-03-01T12:00:00Z')

describe('host strings that do not parse', () => {
  test('a part with a space or an empty host is set aside, the rest kept', () => {
    assert.deepEqual(parseHostString('rs1/db1.example.net:27018,db 2.example.net:27018'), {
      setName: 'rs1',
      hosts: ['db1.example.net:27018'],
      invalid: ['db 2.example.net:27018'],
    })
    assert.equal(isHostPort('db1:99999'), false)
    assert.equal(isHostPort('[::1]:27017'), true)
  })

  test('one unparseable shard host is a warning; every other host is still polled', () => {
    const t = assembleShardedTopology({
      seedRouters: ['mongos1:27017'],
      shards: [
        {_id: 'shardA', host: 'shardA/a1:27018,a 2:27018'},
        {_id: 'shardB', host: 'shardB/b1:27018'},
      ],
      configString: 'cfg/c1:27019',
      nowMs: now,
    })
    assert.deepEqual(
      t.hosts.map((h) => h.host),
      ['mongos1:27017', 'a1:27018', 'b1:27018', 'c1:27019'],
    )
    assert.deepEqual(t.warnings, ["shard shardA names 'a 2:27018', which is not host:port: not polled"])
  })
})

describe('what config.mongos and config.shards add to the hosts', () => {
  // config.mongos as the manual's "config.mongos" page shows it: _id, ping, up, waiting, mongoVersion
  // (https://www.mongodb.com/docs/manual/reference/config-database/#mongodb-data-config.mongos).
  const configMongos = [
    {_id: 'example.com:27017', advisoryHostFQDNs: ['example.com'], mongoVersion: '4.4.0', ping: new Date(now - 20_000), up: 50, waiting: true},
    {_id: 'old.example.com:27017', mongoVersion: '4.2.8', ping: new Date(now - 3 * 86_400_000), up: 10, waiting: true},
  ]

  test('router versions, the stale router keeps its version, the count of documents', () => {
    const t = assembleShardedTopology({seedRouters: [], configMongos, shards: [], configString: 'cfg/c1:27019', nowMs: now})
    assert.deepEqual(t.hosts[0], {host: 'example.com:27017', role: 'mongos', mongoVersion: '4.4.0'})
    assert.deepEqual(t.staleRouters, [{host: 'old.example.com:27017', lastPing: new Date(now - 3 * 86_400_000).toISOString(), mongoVersion: '4.2.8'}])
    assert.equal(t.configMongosCount, 2)
  })

  test('an empty config.mongos is counted as 0, an unread one stays absent', () => {
    assert.equal(assembleShardedTopology({seedRouters: ['m:1'], configMongos: [], shards: [], configString: 'c/c:1', nowMs: now}).configMongosCount, 0)
    assert.equal(assembleShardedTopology({seedRouters: ['m:1'], shards: [], configString: 'c/c:1', nowMs: now}).configMongosCount, undefined)
  })

  test('zone tags from config.shards (sh.addShardToZone) ride on each member of the shard', () => {
    const t = assembleShardedTopology({seedRouters: ['m:1'], shards: [{_id: 'shard0000', host: 'shard0000/s1:27018,s2:27018', state: 1, tags: ['NYC']}], configString: 'c/c:1', nowMs: now})
    assert.deepEqual(
      t.hosts.filter((h) => h.role === 'shard').map((h) => h.tags),
      [['NYC'], ['NYC']],
    )
  })

  test('the entry node comes first with its address and takes its role and shard from config.shards', () => {
    const t = assembleShardedTopology({
      seedRouters: [],
      entry: {host: 's1:27018', address: 'localhost:40001', entry: true, role: 'primary', setName: 'shard0000'},
      shards: [{_id: 'shard0000', host: 'shard0000/s1:27018,s2:27018'}],
      configString: 'c/c:1',
      nowMs: now,
    })
    assert.deepEqual(t.hosts[0], {host: 's1:27018', address: 'localhost:40001', entry: true, role: 'shard', setName: 'shard0000', shard: 'shard0000'})
    assert.deepEqual(t.entry, {host: 's1:27018', address: 'localhost:40001', role: 'shard'})
    assert.equal(t.hosts.length, 3)
  })
})
