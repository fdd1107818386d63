/**
 * The snapshot file: canonical Extended JSON (number types, dates and timestamps come
 * back as the server sent them), never credentials, reads grouped under the process
 * that answered them.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Double, Int32, Long, Timestamp} from 'bson'

import type {ReadEvent} from '../../src/probes/reader.js'
import type {ClusterTopology} from '../../src/probes/topology.js'
import {snapshotFileContent, uriWithoutCredentials} from '../../src/snapshot/capture.js'
import {secretsOfUri} from '../../src/redact.js'
import {parseSnapshot, serializeSnapshot, type SnapshotFile} from '../../src/snapshot/format.js'
import {groupReads} from '../../src/snapshot/group.js'

const capturedAt = new Date('2024-06-01T10:00:00.123Z')

function snapshotWith(reply: Record<string, unknown>): SnapshotFile {
  return {
    format: 'pooltool-snapshot',
    formatVersion: 1,
    capturedAt,
    entry: {uri: 'mongodb://h1:27017/', seedHosts: ['h1:27017']},
    redactedHosts: false,
    hosts: [{host: 'h1:27017', role: 'standalone', reads: [{name: 'serverStatus', db: 'admin', request: {serverStatus: 1}, reply}]}],
    unreachable: [],
  }
}

describe('snapshot file format', () => {
  it('round-trips Int64, Int32, Double, Timestamp and Date as their types', () => {
    const reply = {
      totalCreated: Long.fromString('9007199254740993'),
      current: new Int32(7),
      ratio: new Double(1),
      operationTime: new Timestamp({t: 1_717_236_000, i: 5}),
      localTime: new Date('2024-06-01T10:00:01.456Z'),
    }
    const text = serializeSnapshot(snapshotWith(reply))
    assert.match(text, /"\$numberLong": "9007199254740993"/)
    assert.match(text, /"\$timestamp": \{\s*"t": 1717236000,\s*"i": 5/)
    const back = parseSnapshot(text, 's.json').hosts[0]!.reads[0]!.reply as Record<string, any>
    assert.ok(Long.isLong(back.totalCreated))
    assert.equal(back.totalCreated.toString(), '9007199254740993', 'beyond 2^53: exact')
    assert.equal(back.current._bsontype, 'Int32')
    assert.equal(back.ratio._bsontype, 'Double')
    assert.equal(back.operationTime._bsontype, 'Timestamp')
    assert.equal(back.operationTime.t, 1_717_236_000)
    assert.deepEqual(back.localTime, reply.localTime)
    assert.deepEqual(parseSnapshot(text, 's.json').capturedAt, capturedAt)
  })

  it('refuses a file that is not a snapshot, naming it', () => {
    assert.throws(() => parseSnapshot('{"format": "other"}', 'x.json'), /x\.json is not a pooltool snapshot: "format" is "other"/)
    assert.throws(() => parseSnapshot('not json', 'y.json'), /y\.json is not a pooltool snapshot: not Extended JSON/)
  })

  it('reads a hand-assembled fixture: plain JSON numbers, reads without db or request, a host without role', () => {
    const fixture = JSON.stringify({
      format: 'pooltool-snapshot',
      formatVersion: 1,
      capturedAt: {$date: '2021-03-04T05:06:07Z'},
      entry: {uri: 'mongodb://cfg1.example.net:27019/?directConnection=true'},
      hosts: [{host: 'cfg1.example.net:27019', reads: [{name: 'config.locks', reply: [{_id: 'balancer', state: 2}]}]}],
    })
    const parsed = parseSnapshot(fixture, 'fixture.json')
    const read = parsed.hosts[0]!.reads[0]!
    assert.equal(read.db, 'config')
    assert.deepEqual(read.request, {})
    assert.equal(parsed.hosts[0]!.role, 'standalone')
    assert.deepEqual(parsed.entry.seedHosts, [])
    assert.deepEqual(parsed.unreachable, [])
    assert.equal(((read.reply as Array<Record<string, any>>)[0]!.state)._bsontype, 'Int32', 'a plain 2 reads as Int32, as the server sends it')
  })

  it('drops user, password and authentication options from the captured URI, keeping the others', () => {
    const uri = uriWithoutCredentials('mongodb://admin:s3cr%40t-pw@h1:27017,h2:27017/?replicaSet=rs0&authSource=admin&authMechanism=SCRAM-SHA-256&directConnection=false&tlsCertificateKeyFilePassword=kpw')
    assert.doesNotMatch(uri, /admin:|s3cr|kpw|authSource|authMechanism|@/)
    assert.match(uri, /^mongodb:\/\/h1:27017,h2:27017\/\?replicaSet=rs0&directConnection=false$/)
  })

  it('scrubs every secret of the URI from the whole file, keys included, even where a driver message quoted it', () => {
    const uri = 'mongodb://admin:Pa55-w0rd-x@h1:27017/?authSource=admin'
    const snapshot = snapshotWith({ok: 1})
    snapshot.entry.uri = uriWithoutCredentials(uri)
    snapshot.hosts[0]!.reads.push({name: 'hostInfo', db: 'admin', request: {hostInfo: 1}, error: {name: 'MongoServerError', message: 'connect failed for admin:Pa55-w0rd-x@h1'}})
    snapshot.views = {'odd key Pa55-w0rd-x': 1}
    const text = JSON.stringify(snapshotFileContent(snapshot, secretsOfUri(uri)))
    assert.ok(!text.includes('Pa55-w0rd-x'), text)
    assert.ok(!text.includes('admin:'), 'the userinfo neither')
    assert.match(text, /<credentials>/)
  })
})

describe('grouping a capture by process', () => {
  const at = new Date('2024-06-01T10:00:00Z')
  const event = (host: string, name: string, reply: unknown): ReadEvent => ({host, name, request: {[name]: 1}, reply: reply as never, receivedAt: at, durationMS: 1.23456})

  it('files a tunnelled entry under the name the cluster uses, with the address the capture connected to', () => {
    const topology: ClusterTopology = {
      kind: 'replset',
      setName: 'rs0',
      hosts: [{host: 'mongo-0.svc:27017', role: 'primary', address: 'localhost:27017', entry: true}, {host: 'mongo-1.svc:27017', role: 'secondary'}],
      sources: ['hello'],
      warnings: [],
      staleRouters: [],
    }
    const hosts = groupReads({
      events: [
        event('localhost:27017', 'hello', {me: 'mongo-0.svc:27017', setName: 'rs0', isWritablePrimary: true, localTime: at}),
        event('localhost:27017', 'serverStatus', {host: 'mongo-0'}),
        event('mongo-1.svc:27017', 'hello', {me: 'mongo-1.svc:27017'}),
      ],
      topology,
      seedHosts: ['localhost:27017'],
      unreachable: new Set(['mongo-1.svc:27017']),
    })
    assert.equal(hosts.length, 1, 'an unreachable member is not a host of the file')
    assert.equal(hosts[0]!.host, 'mongo-0.svc:27017')
    assert.equal(hosts[0]!.address, 'localhost:27017')
    assert.equal(hosts[0]!.role, 'primary')
    assert.deepEqual(hosts[0]!.clock, {serverTime: at, receivedAt: at})
    assert.deepEqual(hosts[0]!.reads.map((r) => r.name), ['hello', 'serverStatus'])
  })

  it('files a read over several seed routers under each of them (any could have answered)', () => {
    const topology: ClusterTopology = {kind: 'sharded', hosts: [{host: 'r1:27017', role: 'mongos'}, {host: 'r2:27017', role: 'mongos'}], sources: [], warnings: [], staleRouters: []}
    const hosts = groupReads({events: [event('r1:27017,r2:27017', 'config.locks', [{_id: 'balancer'}]), event('r2:27017', 'hello', {msg: 'isdbgrid'})], topology, seedHosts: ['r1:27017', 'r2:27017'], unreachable: new Set()})
    assert.deepEqual(hosts.map((h) => [h.host, h.reads.map((r) => r.name)]), [['r1:27017', ['config.locks']], ['r2:27017', ['config.locks', 'hello']]])
    assert.equal(hosts[0]!.reads[0]!.db, 'config')
  })
})
