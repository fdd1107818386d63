/**
 * --redact-hosts: every host name and IP address in the file becomes a stable alias,
 * ports kept, wherever documents name hosts; nothing original survives.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {serializeSnapshot, type SnapshotFile} from '../../src/snapshot/format.js'
import {collectHostNames, redactHosts} from '../../src/snapshot/redact-hosts.js'

const ORIGINALS = ['mongos-a.prod.example.com', 'shard0-0.prod.example.com', 'shard0-1.prod.example.com', 'cfg-0.prod.example.com', 'db-host-7', '10.1.2.3', '10.1.2.44', '192.168.7.9', 'localhost']

function realisticSnapshot(): SnapshotFile {
  return {
    format: 'pooltool-snapshot',
    formatVersion: 1,
    capturedAt: new Date('2024-06-01T10:00:00Z'),
    entry: {uri: 'mongodb://localhost:27017/?directConnection=true', seedHosts: ['localhost:27017']},
    redactedHosts: false,
    hosts: [
      {
        host: 'mongos-a.prod.example.com:27017',
        address: 'localhost:27017',
        role: 'mongos',
        reads: [
          {name: 'hello', db: 'admin', request: {hello: 1}, reply: {msg: 'isdbgrid', ok: 1}},
          {name: 'serverStatus', db: 'admin', request: {serverStatus: 1}, reply: {host: 'mongos-a.prod.example.com:27017', sharding: {configsvrConnectionString: 'cfgRS/cfg-0.prod.example.com:27019'}}},
          {name: 'hostInfo', db: 'admin', request: {hostInfo: 1}, reply: {system: {hostname: 'db-host-7', numCores: 8}}},
          {name: 'listShards', db: 'admin', request: {listShards: 1}, reply: {shards: [{_id: 'shard0', host: 'shard0/shard0-0.prod.example.com:27018,shard0-1.prod.example.com:27018', state: 1}]}},
          {name: 'config.mongos', db: 'config', request: {find: 'mongos', filter: {}}, reply: [{_id: 'mongos-a.prod.example.com:27017', mongoVersion: '4.4.29'}]},
          {name: 'config.lockpings', db: 'config', request: {find: 'lockpings', filter: {}}, reply: [{_id: 'shard0-0.prod.example.com:27018:1700000000:1804289383'}]},
          {name: 'config.locks', db: 'config', request: {find: 'locks', filter: {}}, reply: [{_id: 'orders.items', process: 'shard0-0.prod.example.com:27018:1700000000:1804289383', who: 'shard0-0.prod.example.com:27018:1700000000:1804289383:conn42:1681692777', why: 'migrating chunk'}]},
          {name: 'connPoolStats', db: 'admin', request: {connPoolStats: 1}, reply: {hosts: {'shard0-0.prod.example.com:27018': {inUse: 1}, 'cfg-0.prod.example.com:27019': {inUse: 0}}, replicaSets: {cfgRS: {hosts: [{addr: 'cfg-0.prod.example.com:27019'}]}}}},
          {name: '$currentOp', db: 'admin', request: {aggregate: 1, pipeline: []}, reply: [{client: '10.1.2.3:51234', host: 'mongos-a.prod.example.com:27017', desc: 'conn12 from 10.1.2.44'}, {_id: {client: '192.168.7.9', appName: 'app'}}]},
        ],
      },
    ],
    unreachable: [{host: 'shard0-1.prod.example.com:27018', error: 'getaddrinfo ENOTFOUND shard0-1.prod.example.com'}],
    views: {'conns list': {hosts: [{host: 'mongos-a.prod.example.com:27017', holders: [{client: '10.1.2.3', appName: 'app'}]}]}},
  }
}

describe('snapshot --redact-hosts', () => {
  it('finds the names where documents carry them, and every IPv4 address', () => {
    const found = collectHostNames(realisticSnapshot())
    for (const name of ORIGINALS) assert.ok(found.includes(name), `${name} found`)
    assert.ok(!found.includes('shard0'), 'a shard id is not a host')
    assert.ok(!found.includes('cfgRS'))
  })

  it('leaves no original name or IP anywhere in the file, keeps ports, and gives one name one alias', () => {
    const {tree, aliases} = redactHosts(realisticSnapshot())
    const text = serializeSnapshot(tree)
    for (const name of ORIGINALS) assert.ok(!text.includes(name), `${name} survived`)
    assert.doesNotMatch(text, /(?<![0-9.])(?:\d{1,3}\.){3}\d{1,3}(?![0-9])/, 'no IPv4 address left')
    const mongos = aliases.get('mongos-a.prod.example.com')!
    assert.match(mongos, /^host-\d+\.redacted$/)
    assert.equal(tree.hosts[0]!.host, `${mongos}:27017`)
    const status = tree.hosts[0]!.reads[1]!.reply as {host: string}
    assert.equal(status.host, `${mongos}:27017`, 'the same alias wherever the name appears')
    const shard = aliases.get('shard0-0.prod.example.com')!
    const locks = tree.hosts[0]!.reads[6]!.reply as Array<{process: string}>
    assert.equal(locks[0]!.process, `${shard}:27018:1700000000:1804289383`)
    const pools = (tree.hosts[0]!.reads[7]!.reply as {hosts: Record<string, unknown>}).hosts
    assert.ok(`${shard}:27018` in pools, 'connPoolStats keys are redacted too')
    assert.equal((tree.hosts[0]!.reads[3]!.reply as {shards: Array<{host: string}>}).shards[0]!.host.split('/')[0], 'shard0', 'the set name stays')
  })

  it('is stable: the same snapshot gives the same aliases', () => {
    assert.deepEqual([...redactHosts(realisticSnapshot()).aliases], [...redactHosts(realisticSnapshot()).aliases])
  })
})
