/**
 * bench never destroys data: it refuses a database it did not create, works
 * only in its own per-run collections, drops only what it marked, and reclaims
 * what dead runs left behind. Run as a user would, against an embedded cluster
 * that holds a user's data. The runs are in this process (test/helpers/in-process.ts,
 * the path bin/run.js takes; a process start per case cost ~1 CPU-s), except those
 * that signal the process (SIGINT, SIGSTOP/SIGCONT) or find it by its pid: spawned.
 */
import assert from 'node:assert/strict'
import type {ChildProcess} from 'node:child_process'
import {after, before, describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {waitForState} from '../helpers/sim.js'

const NO_STACK = /^\s+at .+:\d+:\d+\)?$/m
const MARKERS = 'pooltool_runs'

describe('bench owns its namespace', () => {
  // 10 ms per operation: the tests wait for states (collections, markers, counts) and check what was dropped or
  // kept, never how much load ran, so every bench here (two until a signal, one until the reclaim) is bound by
  // timers instead of running at full CPU beside the others.
  const cluster = useCluster({latencyMs: 10})
  let client: MongoClient
  const databases = async (): Promise<string[]> =>
    ((await client.db('admin').command({listDatabases: 1, nameOnly: true})).databases as Array<{name: string}>).map((d) => d.name)
  const collections = async (db: string): Promise<string[]> => (await client.db(db).listCollections({}, {nameOnly: true}).toArray()).map((c) => c.name).sort()

  before(async () => {
    client = new MongoClient(cluster.uri)
    await client.db('prod').collection('orders').insertMany([{_id: 1, total: 10}, {_id: 2, total: 20}, {_id: 3, total: 30}])
  })
  after(async () => {
    await client?.close()
  })

  it('refuses --db prod, which holds data it did not create, before any write; the data is intact', async () => {
    for (const json of [false, true]) {
      const run = await runInProcess(['bench', '--uri', cluster.uri, '--db', 'prod', '--duration', '1s', ...(json ? ['--json'] : [])])
      assert.equal(run.code, 2, run.stderr)
      if (json) {
        const {error} = parseJson(run)
        assert.equal(error.code, 'USAGE')
        assert.equal(error.exitCode, 2)
        assert.match(error.message, /database prod exists and is not pooltool's/)
      } else {
        assert.match(run.stderr, /^Error \[USAGE\]: database prod exists and is not pooltool's .*\(hint: .*--db/m)
        assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
        assert.doesNotMatch(run.stderr, NO_STACK)
      }
    }
    assert.deepEqual(await collections('prod'), ['orders'])
    assert.deepEqual(await client.db('prod').collection('orders').find().sort({_id: 1}).toArray(), [{_id: 1, total: 10}, {_id: 2, total: 20}, {_id: 3, total: 30}])
  })

  it('refuses the system databases, an empty name and invalid names without connecting', async () => {
    for (const db of ['admin', 'local', 'config', 'CONFIG', '', '   ', 'a.b', 'a/b', 'x'.repeat(64)]) {
      const run = await runInProcess(['bench', '--db', db, '--duration', '1s'])
      assert.equal(run.code, 2, `--db '${db}': ${run.stderr}`)
      assert.match(run.stderr, /^Error \[USAGE\]: --db/m, `--db '${db}'`)
      assert.doesNotMatch(run.stderr, /embedded simulated/, 'refused before anything started')
    }
  })

  it('two benches started apart on one cluster both finish with their own full data and results', async () => {
    // The first spawned: it is stopped with a real SIGINT (exit 130); the second, in this process, runs beside it.
    // The first run lasts until the second is done (then Ctrl-C), however long the second takes to start.
    let firstProcess: ChildProcess | undefined
    const first = runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '120s', '--concurrency', '2', '--json'], {timeoutMs: 180_000, onSpawn: (child) => (firstProcess = child)})
    // The first run is seeded: its marker and its 1000 documents are on the server.
    await waitForState(
      'the first bench created its collection',
      async () => (await databases()).includes('pooltool_bench') ? (await collections('pooltool_bench')).find((c) => c.startsWith('bench_')) : undefined,
      (name) => name !== undefined,
    )
    const second = runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '2s', '--concurrency', '2', '--json'])
    // While both run, each has its own collection, fully seeded.
    const both = await waitForState("both runs' collections at once", async () => (await collections('pooltool_bench')).filter((c) => c.startsWith('bench_')), (names) => names.length === 2)
    for (const name of both) {
      await waitForState(`${name} holds its 1000 seeded documents`, () => client.db('pooltool_bench').collection(name).countDocuments(), (n) => n === 1000)
    }
    const b = await second
    firstProcess!.kill('SIGINT')
    const a = await first
    for (const [run, exitCode] of [[a, 130], [b, 0]] as const) {
      assert.equal(run.code, exitCode, run.stderr)
      const result = parseJson(run)
      assert.ok(result.runs[0].ops > 0, `ops ${result.runs[0].ops}`)
      assert.equal(result.runs[0].errors, 0, JSON.stringify(result.runs[0].errorsByClass))
      assert.equal(result.cleanedUp, true)
      assert.deepEqual(result.namespace.leftBehind, [])
    }
    assert.notEqual(parseJson(a).namespace.runId, parseJson(b).namespace.runId)
    assert.ok(!(await databases()).includes('pooltool_bench'), 'the last run out dropped the database')
    assert.deepEqual(await collections('prod'), ['orders'])
  })

  it('reclaims the collections of a run whose heartbeat stopped, and nothing that is not named after it', async () => {
    const db = client.db('pooltool_bench')
    const longAgo = new Date(Date.now() - 3_600_000)
    await db.collection(MARKERS).insertOne({
      _id: 'deadbeef' as never,
      tool: 'pooltool',
      command: 'bench',
      runId: 'deadbeef',
      host: 'crashed-host',
      pid: 4242,
      startedAt: longAgo,
      heartbeatAt: longAgo,
      // A marker is data: a name not owned by the run must survive even if listed.
      collections: ['bench_deadbeef', 'bench_deadbeef_ddl0', 'not_a_bench_collection'],
      keep: false,
    })
    await db.collection('bench_deadbeef').insertOne({left: 'behind'})
    await db.collection('not_a_bench_collection').insertOne({keep: 'me'})
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '500ms', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const {namespace} = parseJson(run)
    assert.equal(namespace.reclaimed.length, 1)
    assert.equal(namespace.reclaimed[0].runId, 'deadbeef')
    assert.ok(namespace.reclaimed[0].heartbeatAgeMS >= 3_000_000, `age on the server's clock: ${namespace.reclaimed[0].heartbeatAgeMS}`)
    assert.match(run.stderr, /reclaimed pooltool_bench\.bench_deadbeef.* of bench run deadbeef \(crashed-host, pid 4242\)/)
    // The database stays, marker collection included: something pooltool does not own lives there now.
    assert.deepEqual(await collections('pooltool_bench'), ['not_a_bench_collection', MARKERS])
    assert.equal(namespace.databaseDropped, false)
    await db.dropDatabase()
  })

  it('--keep leaves the run\'s collection and a kept marker that later runs never reclaim', async () => {
    const kept = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '500ms', '--keep', '--json'])
    assert.equal(kept.code, 0, kept.stderr)
    const {namespace} = parseJson(kept)
    const collection = `bench_${namespace.runId}`
    assert.equal(parseJson(kept).cleanedUp, false)
    assert.deepEqual(namespace.leftBehind, [`pooltool_bench.${collection}`])
    assert.match(kept.stderr, new RegExp(`kept pooltool_bench\\.${collection} \\(--keep\\)`))
    assert.equal(await client.db('pooltool_bench').collection(collection).countDocuments(), 1000)
    // Even long after, a kept run is not a dead one.
    await client.db('pooltool_bench').collection(MARKERS).updateOne({_id: namespace.runId as never}, {$set: {heartbeatAt: new Date(Date.now() - 3_600_000)}})
    const later = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '500ms', '--json'])
    assert.equal(later.code, 0, later.stderr)
    assert.deepEqual(parseJson(later).namespace.reclaimed, [])
    assert.ok((await collections('pooltool_bench')).includes(collection), `${collection} is still there`)
    await client.db('pooltool_bench').dropDatabase()
  })

  it('a bench paused while its namespace is reclaimed stops with a note and exit 9 instead of measuring an empty collection', async () => {
    const dbName = 'pooltool_paused'
    const db = client.db(dbName)
    let child: ChildProcess | undefined
    // Spawned: the pause is a real SIGSTOP/SIGCONT of the process, and this is bench's exit-9 path.
    // Bounded far beyond the test: only the reclaim can end it.
    const running = runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--db', dbName, '--duration', '10m', '--json'], {timeoutMs: 120_000, onSpawn: (spawned) => (child = spawned)})
    running.catch(() => undefined)
    // Registered and seeded: its marker (this process's pid) and documents in its collection.
    const marker = await waitForState('the bench registered its marker and seeded its collection', async () => {
      const own = await db.collection(MARKERS).findOne({pid: child?.pid})
      return own && (await db.collection(`bench_${own.runId}`).estimatedDocumentCount()) > 0 ? own : undefined
    }, (own) => own !== undefined)
    // The pause (a laptop asleep), and meanwhile what a later run does to a run whose heartbeat is 60 s old
    // (namespace.ts, reclaimDeadRuns): its collections dropped, its marker deleted.
    child!.kill('SIGSTOP')
    try {
      await db.collection(`bench_${marker!.runId}`).drop()
      await db.collection(MARKERS).deleteOne({_id: marker!._id})
    } finally {
      child!.kill('SIGCONT')
    }
    const run = await running
    assert.equal(run.code, 9, run.stderr)
    assert.match(run.stderr, /^Error \[SERVER_ERROR\]: bench stopped: the marker of run [0-9a-f]{8} is gone .*reclaimed.*\(hint: .*awake/m)
    const result = parseJson(run)
    assert.match(result.namespaceLost, /is gone/)
    assert.equal(result.interrupted, false, 'not a stop request')
    assert.ok(result.notes.some((note: string) => note.startsWith('stopped: the marker')), JSON.stringify(result.notes))
    // Nothing of the paused run is left behind: its collection (re-created by its writes after the pause) is dropped by name.
    assert.deepEqual((await databases()).includes(dbName) ? await collections(dbName) : [], [])
  })
})
