/**
 * `pooltool locks` reads through the read layer, without a cluster: a fake CommandChannel
 * answers as a router would, and a recorder shows which reads went out. Ages are judged
 * on the router's clock from the hello of the same round.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {PoolToolError} from '../../src/errors.js'
import {ddlLocksNote, readConfigSnapshot, readDdlOps, readRouterFacts, sessionNotes, timingNotes} from '../../src/locks/read.js'
import type {ShardDdlLocks} from '../../src/locks/types.js'
import type {Document} from '../../src/mongo/driver.js'
import {type CommandChannel, type ReadEvent, type ReadOptions, ServerReader} from '../../src/probes/reader.js'
import {renderInMemory} from '../../src/reporters/locks.js'
import {helloConfigPrimary60, helloConfigSecondary60, helloShardPrimary60, locks44, mongos44, NOW, pings44, serverStatusShard60, shards} from '../fixtures/locks-documents.js'

interface FakeRouter {
  hello?: Document
  version?: string
  /** hostInfo's reply, or an Error it fails with. */
  hostInfo?: Document | Error
  configCollections?: string[]
  config?: Record<string, Document[]>
  currentOp?: Document[]
  /** serverStatus's reply, or an Error it fails with (default: CommandNotFound-free, no sharding section). */
  serverStatus?: Document | Error
}

/** A channel that answers like a mongos and remembers the signal of every read. */
function fakeRouter(router: FakeRouter = {}): {channel: CommandChannel; signals: Array<AbortSignal | undefined>} {
  const signals: Array<AbortSignal | undefined> = []
  const channel: CommandChannel = {
    host: 'router:27017',
    async command(_db: string, command: Document, options?: ReadOptions) {
      signals.push(options?.signal)
      if (command.hello) return router.hello ?? {msg: 'isdbgrid', localTime: NOW, ok: 1}
      if (command.buildInfo) return {version: router.version ?? '4.4.29', ok: 1}
      if (command.serverStatus) {
        if (router.serverStatus instanceof Error) throw router.serverStatus
        return router.serverStatus ?? {host: 'rs:27017', localTime: NOW, ok: 1}
      }
      if (command.hostInfo) {
        if (router.hostInfo instanceof Error) throw router.hostInfo
        return router.hostInfo ?? {system: {}, ok: 1}
      }
      if (command.listCollections) {
        const wanted = (command.filter?.name?.$in as string[] | undefined) ?? []
        const names = (router.configCollections ?? ['locks', 'lockpings']).filter((name) => wanted.length === 0 || wanted.includes(name))
        return {cursor: {firstBatch: names.map((name) => ({name, type: 'collection'}))}, ok: 1}
      }
      throw new Error(`unexpected command ${JSON.stringify(command)}`)
    },
    async find(_db: string, collection: string, _filter: Document, options?: ReadOptions) {
      signals.push(options?.signal)
      return router.config?.[collection] ?? []
    },
    async aggregate(_db: string, _pipeline: Document[], options?: ReadOptions) {
      signals.push(options?.signal)
      return router.currentOp ?? []
    },
  }
  return {channel, signals}
}

function recordedReader(router: FakeRouter = {}) {
  const events: ReadEvent[] = []
  const {channel, signals} = fakeRouter(router)
  return {reader: new ServerReader(channel, (event) => events.push(event)), events, signals}
}

describe('locks: what the router says about itself', () => {
  it('a mongos on 4.4: the config.locks model, time scale 1 when hostInfo has none', async () => {
    const {reader, events} = recordedReader()
    const facts = await readRouterFacts(reader, 'mongodb://router:27017/', undefined)
    assert.equal(facts.serverVersion, '4.4.29')
    assert.equal(facts.model, 'config.locks')
    assert.equal(facts.timeScale, 1)
    assert.equal(facts.timing.expiryMS, 15 * 60_000)
    assert.match(facts.message, /ConfigServer/)
    assert.deepEqual(events.map((e) => e.name).sort(), ['buildInfo', 'config.listCollections', 'hello', 'hostInfo'])
    assert.deepEqual(timingNotes(facts, false), [], 'a real server gets no time-scale note')
  })

  it('the embedded cluster: its time scale shrinks the expiry and is said in the notes; --lock-expiry wins', async () => {
    const {reader} = recordedReader({hostInfo: {extra: {timeScale: 0.01}, ok: 1}})
    const facts = await readRouterFacts(reader, 'mongodb://router:27017/', undefined)
    assert.equal(facts.timing.expiryMS, 9000)
    assert.equal(facts.timing.pingIntervalMS, 300)
    assert.deepEqual(timingNotes(facts, false), ['the embedded cluster runs at time scale 0.01: ping interval 300 ms, expiry 9000 ms'])
    const explicit = await readRouterFacts(reader, 'mongodb://router:27017/', 60_000)
    assert.equal(explicit.timing.expiryMS, 60_000)
    assert.deepEqual(timingNotes(explicit, true), ['the embedded cluster runs at time scale 0.01: ping interval 300 ms'])
  })

  it('hostInfo refused (no clusterMonitor) leaves the real-server timing', async () => {
    const {reader} = recordedReader({hostInfo: Object.assign(new Error('not authorized on admin to execute command { hostInfo: 1 }'), {code: 13})})
    const facts = await readRouterFacts(reader, 'mongodb://router:27017/', undefined)
    assert.equal(facts.timeScale, 1)
    assert.equal(facts.timing.expiryMS, 15 * 60_000)
  })

  it('7.0: the in-memory model, and whether leftover config.locks documents exist', async () => {
    const gone = await readRouterFacts(recordedReader({version: '7.0.14', configCollections: []}).reader, 't', undefined)
    assert.equal(gone.model, 'in-memory')
    assert.doesNotMatch(gone.message, /leftover/)
    const leftover = await readRouterFacts(recordedReader({version: '7.0.14'}).reader, 't', undefined)
    assert.match(leftover.message, /leftover documents here are from before the FCV upgrade/)
  })

  it('a plain replica set member is WRONG_TOPOLOGY for the distributed locks (exit 7, pings): hello, then serverStatus finds no sharding section', async () => {
    const {reader, events} = recordedReader({hello: {setName: 'rs0', isWritablePrimary: true, ok: 1}})
    await assert.rejects(readRouterFacts(reader, 'mongodb://rs:27017/', undefined), (error: unknown) => {
      assert.ok(error instanceof PoolToolError, 'a PoolToolError')
      assert.equal(error.code, 'WRONG_TOPOLOGY')
      assert.equal(error.exitCode, 7)
      assert.match(error.message, /^config\.lockpings cannot exist here: mongodb:\/\/rs:27017\/ is a replica set member \(set 'rs0'\), and config\.lockpings is a collection of a sharded cluster's config server/)
      return true
    })
    assert.deepEqual(events.map((e) => e.name), ['hello', 'serverStatus'])
  })

  it('a standalone whose serverStatus is refused keeps the plain message', async () => {
    const {reader} = recordedReader({hello: {isWritablePrimary: true, ok: 1}, serverStatus: Object.assign(new Error('not authorized'), {code: 13})})
    await assert.rejects(readRouterFacts(reader, 'mongodb://solo:27017/', undefined), /is a standalone mongod/)
  })
})

describe('locks: config-server and shard entry points', () => {
  it('a config-server primary (hello configsvr: 2) is an entry: read directly there, said once in the notes', async () => {
    const {reader, events} = recordedReader({hello: helloConfigPrimary60, version: '6.0.20'})
    const facts = await readRouterFacts(reader, 'mongodb://cfg1.example.net:27019/?directConnection=true', undefined)
    assert.equal(facts.entry, 'config-server')
    assert.equal(facts.model, 'config.locks')
    assert.match(facts.message, /shard primaries/)
    assert.deepEqual(facts.entryNotes.filter((n) => !/clock/.test(n)), [
      "read directly on config server member cfg1.example.net:27019 (set 'configRS'): config.locks, config.lockpings, config.mongos and config.shards live there",
    ])
    assert.deepEqual(events.map((e) => e.name).sort(), ['buildInfo', 'config.listCollections', 'hello', 'hostInfo'])
  })

  it('a 7.0 config-server member: the note does not claim config.locks lives there', async () => {
    const facts = await readRouterFacts(recordedReader({hello: helloConfigPrimary60, version: '7.0.14', configCollections: []}).reader, 't', undefined)
    assert.equal(facts.model, 'in-memory')
    assert.equal(facts.entryNotes[0], "read directly on config server member cfg1.example.net:27019 (set 'configRS'): config.mongos and config.shards live there (config.locks / config.lockpings are gone from 6.1)")
  })

  it('a config-server secondary is an entry too, with the replication lag said', async () => {
    const facts = await readRouterFacts(recordedReader({hello: helloConfigSecondary60, version: '6.0.20'}).reader, 't', undefined)
    assert.equal(facts.entry, 'config-server')
    assert.ok(facts.entryNotes.some((n) => n === 'cfg2.example.net:27019 is a secondary: what it shows can lag its primary by the replication delay'), JSON.stringify(facts.entryNotes))
  })

  it('a mongos entry says nothing about where it read', async () => {
    const facts = await readRouterFacts(recordedReader({hello: {msg: 'isdbgrid', localTime: new Date(), ok: 1}}).reader, 't', undefined)
    assert.equal(facts.entry, 'mongos')
    assert.deepEqual(facts.entryNotes, [])
  })

  it('a shard member is WRONG_TOPOLOGY, naming its config server from serverStatus.sharding', async () => {
    const {reader, events} = recordedReader({hello: helloShardPrimary60, serverStatus: serverStatusShard60})
    await assert.rejects(readRouterFacts(reader, 'mongodb://shard1.example.net:27018/', undefined), (error: unknown) => {
      assert.ok(error instanceof PoolToolError)
      assert.equal(error.exitCode, 7)
      assert.equal(
        error.message,
        "locks need a mongos or a config server: mongodb://shard1.example.net:27018/ is a replica set member (set 'shard01') of a sharded cluster whose config server is " +
          'configRS/cfg1.example.net:27019,cfg2.example.net:27019,cfg3.example.net:27019',
      )
      assert.match(error.hint ?? '', /mongos, or at the config server: mongodb:\/\/cfg1\.example\.net:27019\/\?directConnection=true/)
      return true
    })
    assert.deepEqual(events.map((e) => e.name), ['hello', 'serverStatus'])
  })
})

describe('locks: the server clock against this machine', () => {
  it('a skew above 5 s is kept as clockSkewMS and said once in the notes; a small one only kept', async () => {
    // The fixtures' hello carries 2018's clock: the server is years behind this machine.
    const facts = await readRouterFacts(recordedReader().reader, 't', undefined)
    assert.ok(facts.clockSkewMS !== undefined && facts.clockSkewMS < -5000, String(facts.clockSkewMS))
    const notes = sessionNotes(facts, false)
    assert.equal(notes.filter((n) => /clock is .* behind this machine's: ages are judged on the server's clock/.test(n)).length, 1, JSON.stringify(notes))
    const close = await readRouterFacts(recordedReader({hello: {msg: 'isdbgrid', localTime: new Date(), ok: 1}}).reader, 't', undefined)
    assert.ok(close.clockSkewMS !== undefined && Math.abs(close.clockSkewMS) < 5000)
    assert.ok(!sessionNotes(close, false).some((n) => /clock/.test(n)))
  })
})

describe('locks: the 6.1+ view never turns unknown into none', () => {
  const read = (shard: string, resources: ShardDdlLocks['resources']): ShardDdlLocks => ({shard, host: `${shard}.example.net:27018`, resources})
  const failed = (shard: string): ShardDdlLocks => ({shard, host: `${shard}.example.net:27018`, unavailable: 'connect ECONNREFUSED'})

  it('no shard answered: unknown, not "no DDLDatabase/DDLCollection entries"', () => {
    const note = ddlLocksNote('7.0.14', [failed('shard01'), failed('shard02')])
    assert.equal(note, 'serverStatus.locks DDL entries unknown: none of the 2 shard(s) answered serverStatus')
    assert.doesNotMatch(note, /no DDLDatabase/)
  })

  it('some shards answered: the absence is claimed for those only, with the count', () => {
    assert.equal(ddlLocksNote('7.0.14', [read('shard01', {}), failed('shard02')]), 'serverStatus.locks has no DDLDatabase/DDLCollection entries on the shards read (1 of 2 shard(s) read, 1 unknown; they appear from 7.1)')
    assert.equal(ddlLocksNote('8.0.4', [read('shard01', {}), read('shard02', {})]), 'serverStatus.locks has no DDLDatabase/DDLCollection entries on the shards read (all 2 shard(s) read)')
    assert.equal(ddlLocksNote('8.0.4', [read('shard01', {DDLDatabase: {acquireCount: 3, acquireWaitCount: 0, timeAcquiringMicros: 0}}), failed('shard02')]), 'serverStatus.locks has DDL lock entries (1 of 2 shard(s) read, 1 unknown)')
    assert.equal(ddlLocksNote('7.0.14', []), 'serverStatus.locks: no shard found to read (see the notes)')
  })

  it('each unread shard is shown as unknown with its error', () => {
    const text = renderInMemory({note: 'n', ddlOpsFrom: 'router', ddlOps: [], shardsFound: 2, shardsRead: 1, serverStatusLocks: [read('shard01', {}), failed('shard02')]})
    assert.match(text, /^shard02 \(shard02\.example\.net:27018\): DDL lock entries unknown \(connect ECONNREFUSED\)$/m)
    assert.doesNotMatch(text, /shard01 .*unknown/)
  })
})

describe('locks: one snapshot of the config collections', () => {
  it('reads hello and the four collections in one round; now is hello.localTime, not this machine\'s clock', async () => {
    const {reader, events, signals} = recordedReader({config: {locks: locks44, lockpings: pings44, mongos: mongos44, shards}})
    const bound = new AbortController()
    const snapshot = await readConfigSnapshot(reader, {signal: bound.signal})
    assert.equal(snapshot.now.toISOString(), NOW.toISOString())
    assert.equal(snapshot.locks.length, locks44.length)
    assert.equal(snapshot.pings.length, pings44.length)
    assert.equal(snapshot.mongos.length, mongos44.length)
    assert.equal(snapshot.shards.length, shards.length)
    assert.deepEqual(events.map((e) => e.name).sort(), ['config.lockpings', 'config.locks', 'config.mongos', 'config.shards', 'hello'])
    assert.equal(signals.length, 5)
    assert.ok(signals.every((signal) => signal === bound.signal), 'every read carries the poll\'s bound')
  })

  it('falls back to the machine\'s clock only when hello carries none', async () => {
    const {reader} = recordedReader({hello: {msg: 'isdbgrid', ok: 1}})
    const before = Date.now()
    const snapshot = await readConfigSnapshot(reader)
    assert.ok(snapshot.now.getTime() >= before, `the reply's arrival time (${snapshot.now.toISOString()})`)
  })

  it('6.1+: DDL operations come from $currentOp through the reader', async () => {
    const {reader, events} = recordedReader({
      currentOp: [
        {opid: 'shard01:12', shard: 'shard01', host: 'h1:27018', command: {_shardsvrCreateCollection: 'c1', $db: 'ddl7'}, microsecs_running: 2_500_000, waitingForLock: true},
        {opid: 'shard01:13', shard: 'shard01', command: {find: 'x', $db: 'ddl7'}, microsecs_running: 10},
      ],
    })
    const ops = await readDdlOps(reader)
    assert.deepEqual(ops, [{shard: 'shard01', host: 'h1:27018', opid: 'shard01:12', command: '_shardsvrCreateCollection', ns: 'ddl7.c1', runningMS: 2500, waitingForLock: true}])
    assert.deepEqual(events.map((e) => e.name), ['$currentOp'])
  })
})
