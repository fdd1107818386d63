/**
 * conns on a cluster the embedded one cannot be: routers of mixed versions (a 4.4 mongos
 * left behind during an upgrade to 7.0), a shard with a zone, a mongod under lock pressure.
 * The cluster is a hand-assembled snapshot served by `pooltool sim --replay`; its documents
 * are shaped as the manual shows them (config database "mongos", listShards with `tags`,
 * serverStatus "connections" and "globalLock"), values filled in.
 *
 * The conns runs go through the in-process runner (test/helpers/in-process.ts), the path bin/run.js
 * takes, without a process start (about 1 CPU-s each); the replays are `sim --replay` processes.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {Long} from 'bson'

import {serializeSnapshot, type SnapshotFile, type SnapshotRead} from '../../src/snapshot/format.js'
import {parseJson} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'
import {type ReplayHandle, startReplay} from '../helpers/replay.js'

const capturedAt = new Date('2025-03-04T09:30:00Z')
const at = (s: number) => new Date(capturedAt.getTime() + s * 1000)
const CONFIG = 'csRS/cfg1.example.net:27019'

const read = (name: string, reply: SnapshotRead['reply']): SnapshotRead => ({name, db: name.startsWith('config.') ? 'config' : 'admin', request: {}, reply})

const routerHello = {isWritablePrimary: true, msg: 'isdbgrid', maxBsonObjectSize: 16777216, maxMessageSizeBytes: 48000000, maxWriteBatchSize: 100000, localTime: at(1), maxWireVersion: 21, minWireVersion: 0, ok: 1}

function routerStatus(host: string, version: string, pid: number, current: number) {
  return {
    host, version, process: 'mongos', pid: Long.fromNumber(pid), uptime: 86400, localTime: at(1),
    connections: {current, available: 838860 - current, totalCreated: Long.fromNumber(current * 10), active: 2},
    sharding: {configsvrConnectionString: CONFIG, lastSeenConfigServerOpTime: {}, maxChunkSizeInBytes: Long.fromNumber(134217728)},
    ok: 1,
  }
}

const configMongos = [
  {_id: 'mongos1.example.net:27017', advisoryHostFQDNs: [], mongoVersion: '7.0.14', ping: at(-10), up: Long.fromNumber(86400), waiting: true},
  {_id: 'mongos2.example.net:27017', advisoryHostFQDNs: [], mongoVersion: '4.4.29', ping: at(-20), up: Long.fromNumber(400000), waiting: true},
]

const snapshot: SnapshotFile = {
  format: 'pooltool-snapshot',
  formatVersion: 1,
  capturedAt,
  entry: {uri: 'mongodb://mongos1.example.net:27017/', seedHosts: ['mongos1.example.net:27017']},
  redactedHosts: false,
  unreachable: [],
  hosts: [
    {
      host: 'mongos1.example.net:27017',
      role: 'mongos',
      reads: [
        read('hello', routerHello),
        read('serverStatus', routerStatus('mongos1.example.net:27017', '7.0.14', 4101, 120)),
        read('config.mongos', configMongos),
        read('listShards', {shards: [{_id: 'shardA', host: 'shardA/shardA1.example.net:27018', state: 1, tags: ['NYC']}], ok: 1}),
        read('connPoolStats', {numClientConnections: 0, totalInUse: 1, totalAvailable: 3, totalCreated: 9, totalRefreshing: 0, pools: {}, hosts: {}, ok: 1}),
      ],
    },
    {
      host: 'mongos2.example.net:27017',
      role: 'mongos',
      reads: [
        read('hello', {...routerHello, maxWireVersion: 9}),
        read('serverStatus', routerStatus('mongos2.example.net:27017', '4.4.29', 2202, 40)),
        read('connPoolStats', {numClientConnections: 0, totalInUse: 0, totalAvailable: 2, totalCreated: 4, totalRefreshing: 0, pools: {}, hosts: {}, ok: 1}),
      ],
    },
    {
      host: 'shardA1.example.net:27018',
      role: 'shard',
      reads: [
        read('hello', {isWritablePrimary: true, setName: 'shardA', hosts: ['shardA1.example.net:27018'], primary: 'shardA1.example.net:27018', me: 'shardA1.example.net:27018', localTime: at(1), maxWireVersion: 21, minWireVersion: 0, ok: 1}),
        read('serverStatus', {
          host: 'shardA1.example.net:27018', version: '7.0.14', process: 'mongod', pid: Long.fromNumber(3303), localTime: at(1),
          connections: {current: 790, available: 210, totalCreated: Long.fromNumber(52000), active: 60, threaded: 790, rejected: 3},
          globalLock: {totalTime: Long.fromNumber(86_400_000_000), currentQueue: {total: 12, readers: 2, writers: 10}, activeClients: {total: 70, readers: 20, writers: 50}},
          locks: {Global: {acquireCount: {w: Long.fromNumber(9000)}, acquireWaitCount: {w: Long.fromNumber(400)}, timeAcquiringMicros: {w: Long.fromNumber(9_000_000)}}},
          repl: {setName: 'shardA', isWritablePrimary: true, secondary: false, primary: 'shardA1.example.net:27018', me: 'shardA1.example.net:27018'},
          ok: 1,
        }),
      ],
    },
    {
      host: 'cfg1.example.net:27019',
      role: 'config',
      reads: [
        read('hello', {isWritablePrimary: true, setName: 'csRS', configsvr: 2, hosts: ['cfg1.example.net:27019'], primary: 'cfg1.example.net:27019', me: 'cfg1.example.net:27019', localTime: at(1), maxWireVersion: 21, minWireVersion: 0, ok: 1}),
        read('serverStatus', {host: 'cfg1.example.net:27019', version: '7.0.14', process: 'mongod', pid: Long.fromNumber(5505), localTime: at(1), connections: {current: 30, available: 838830, totalCreated: Long.fromNumber(900)}, ok: 1}),
      ],
    },
  ],
}

describe('conns on a replayed cluster with routers of mixed versions', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-conns-replay-'))
  let replay: ReplayHandle

  before(async () => {
    const file = path.join(dir, 'mixed-routers.json')
    writeFileSync(file, serializeSnapshot(snapshot))
    replay = await startReplay(file)
  })
  after(async () => {
    await replay?.stop()
    rmSync(dir, {recursive: true, force: true})
  })

  it('names the version mix, shows each router its version, the zone on the shard, the limit and the lock queue', async () => {
    const run = await runInProcess(['conns', 'list', '--uri', replay.uri, '--no-holders', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const listener = (name: string) => replay.hosts[name]!
    const byHost = Object.fromEntries(result.hosts.map((h: {host: string}) => [h.host, h]))
    assert.equal(byHost[listener('mongos1.example.net:27017')].mongoVersion, '7.0.14')
    assert.equal(byHost[listener('mongos2.example.net:27017')].mongoVersion, '4.4.29')
    assert.deepEqual(result.topology.routerVersions, {'4.4.29': [listener('mongos2.example.net:27017')], '7.0.14': [listener('mongos1.example.net:27017')]})
    assert.equal(result.topology.configMongosCount, 2)
    assert.ok(
      result.notes.includes(`routers run mixed versions: 4.4.29 (${listener('mongos2.example.net:27017')}); 7.0.14 (${listener('mongos1.example.net:27017')})`),
      result.notes.join('\n'),
    )
    const shard = byHost[listener('shardA1.example.net:27018')]
    assert.deepEqual(shard.tags, ['NYC'])
    assert.equal(shard.maxIncoming, 1000)
    assert.equal(shard.usedPct, 79)
    assert.deepEqual(shard.lockQueue, {total: 12, readers: 2, writers: 10})
    assert.deepEqual(shard.activeClients, {total: 70, readers: 20, writers: 50})
    assert.equal('lockQueue' in byHost[listener('mongos1.example.net:27017')], false, 'a router without globalLock: absent, not 0')
    assert.ok(result.notes.some((n: string) => n.startsWith('a replay of a snapshot captured at 2025-03-04T09:30:00')), result.notes.join('\n'))
    assert.equal(result.notes.some((n: string) => n.includes('clock')), true, 'the replay note names the clocks')
    assert.equal(result.notes.some((n: string) => /clock is .* (ahead of|behind) this machine/.test(n)), false, 'no skew for clocks as captured')

    const text = await runInProcess(['conns', 'list', '--uri', replay.uri, '--no-holders'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /mongos 4\.4\.29/)
    assert.match(text.stdout, /shard shardA P zones NYC/)
    assert.match(text.stdout, /79% of 1,000/)
    assert.match(text.stdout, /12 \(2r\/10w\) \/ 70 \(20r\/50w\)/)
    assert.match(text.stdout, /note: routers run mixed versions/)
  })

  it('an empty config.mongos is a finding', async () => {
    const [router, ...rest] = snapshot.hosts
    const empty: SnapshotFile = {...snapshot, hosts: [{...router!, reads: router!.reads.map((r) => (r.name === 'config.mongos' ? {...r, reply: []} : r))}, ...rest]}
    const file = path.join(dir, 'no-routers.json')
    writeFileSync(file, serializeSnapshot(empty))
    const other = await startReplay(file)
    try {
      const run = await runInProcess(['conns', 'list', '--uri', other.uri, '--no-holders', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson(run)
      assert.equal(result.topology.configMongosCount, 0)
      assert.ok(result.notes.some((n: string) => n.startsWith('config.mongos is empty: no router has registered')), result.notes.join('\n'))
    } finally {
      await other.stop()
    }
  })
})
