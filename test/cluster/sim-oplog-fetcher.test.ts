/**
 * Each secondary's oplog fetcher tails the primary's oplog with awaitData getMores the primary holds
 * (oplog_fetcher.cpp): one active `getmore` per secondary in the primary's $currentOp at rest, woken by
 * the primary's next write. The time scale stretches the awaitData timeout (5 s × 20 = 100 s), so a
 * getMore that moves on within the test did so because of the write, not its timeout.
 */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {MongoClient, type Document, type Timestamp} from 'mongodb'
import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {waitFor} from '../helpers/sim.js'

describe('oplog fetchers on an idle replica set (7.0, auth)', () => {
  let sim: SimCluster
  let primary: MongoClient
  let app: MongoClient

  before(async () => {
    sim = await startSimCluster({topology: 'replset', versionProfile: '7.0', members: 3, auth: true, timeScale: 20})
    const creds = /^mongodb:\/\/([^@]+)@/.exec(sim.info.uri)![1]
    primary = new MongoClient(`mongodb://${creds}@${sim.info.processes[0]!.host}/?directConnection=true&authSource=admin`)
    app = new MongoClient(sim.info.uri)
  })
  after(async () => {
    await primary?.close()
    await app?.close()
    await sim?.stop()
  })

  const fetcherOps = async (): Promise<Document[]> =>
    (await primary.db('admin').aggregate([{$currentOp: {allUsers: true}}]).toArray()).filter((o) => o.appName === 'OplogFetcher')

  it('the primary shows one active oplog getMore per secondary, holding no lock', async () => {
    const ops = await waitFor(fetcherOps, (o) => o.length === 2, 20_000)
    assert.equal(new Set(ops.map((o) => o.connectionId)).size, 2, 'one per secondary connection')
    for (const op of ops) {
      assert.equal(op.active, true)
      assert.equal(op.op, 'getmore')
      assert.equal(op.ns, 'local.oplog.rs')
      assert.equal(op.command.collection, 'oplog.rs')
      assert.equal(Number(op.command.maxTimeMS), 100_000, 'awaitData timeout 5 s × timeScale 20')
      assert.equal(op.clientMetadata.driver.name, 'MongoDB Internal Client')
      assert.deepEqual(op.locks, {})
      assert.equal(op.waitingForLock, false)
    }
    const secondaries = await primary.db('admin').command({serverStatus: 1})
    assert.ok(Number(secondaries.connections.active) >= 2, 'held getMores are active connections')
  })

  it('a write on the primary wakes them: each fetches the new entry and waits again from it', async () => {
    const before = await waitFor(fetcherOps, (o) => o.length === 2, 20_000)
    const opids = new Set(before.map((o) => o.opid))
    await app.db('fetch').collection('c').insertOne({n: 1})
    const hello = await primary.db('admin').command({hello: 1})
    const written = hello.lastWrite.opTime.ts as Timestamp
    const fetchedTheWrite = (ops: Document[]) =>
      ops.length === 2 && ops.every((o) => !opids.has(o.opid) && (o.command.lastKnownCommittedOpTime?.ts as Timestamp | undefined)?.equals(written) === true)
    const after = await waitFor(fetcherOps, fetchedTheWrite, 20_000)
    assert.ok(fetchedTheWrite(after), `both fetchers moved past the write at ${written.toString()}: ${JSON.stringify(after.map((o) => o.command))}`)
    for (const op of after) assert.equal(op.op, 'getmore')
  })
})

describe('oplog fetchers in a sharded cluster (6.0)', () => {
  let sim: SimCluster
  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '6.0', mongos: 1, shards: 1, shardMembers: 3, configMembers: 3})
  })
  after(async () => {
    await sim?.stop()
  })

  it('shard and config primaries each hold one oplog getMore per secondary of their set', async () => {
    const primaries = sim.info.processes.filter((p) => p.memberState === 'primary')
    assert.equal(primaries.length, 2)
    for (const p of primaries) {
      const client = new MongoClient(`mongodb://${p.host}/?directConnection=true`)
      try {
        const ops = await waitFor(
          async () => (await client.db('admin').aggregate([{$currentOp: {allUsers: true}}]).toArray()).filter((o) => o.appName === 'OplogFetcher' && o.op === 'getmore'),
          (o) => o.length === 2,
          20_000,
        )
        assert.equal(ops.length, 2, `${p.role} primary ${p.host}`)
        assert.ok(ops.every((o) => o.ns === 'local.oplog.rs'))
      } finally {
        await client.close()
      }
    }
  })
})
