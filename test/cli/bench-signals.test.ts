/**
 * Every way a run is stopped ends cleanly: partial results printed and
 * written, pools closed, the namespace dropped, and the exit code of the
 * signal (SIGTERM 143, SIGHUP 129, SIGINT 130). A signal to the whole process
 * group (as `timeout` sends it) leaves the embedded cluster up until bench has cleaned up.
 * On a stalled server the stop does not wait for it, and a second signal
 * skips cleanup but still reports, saying what was left behind.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {mkdtemp, readFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {REPO_ROOT, parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {waitForState} from '../helpers/sim.js'

const BIN = path.join(REPO_ROOT, 'bin', 'run.js')

describe('bench stopped by a signal', () => {
  const cluster = useCluster({})
  let client: MongoClient
  let dir: string
  const benchCollections = async (): Promise<string[]> =>
    (await client.db('pooltool_bench').listCollections({}, {nameOnly: true}).toArray()).map((c) => c.name).filter((name) => name.startsWith('bench_'))
  const allCollections = async (): Promise<string[]> =>
    (await client.db('pooltool_bench').listCollections({}, {nameOnly: true}).toArray()).map((c) => c.name)
  const queries = async (): Promise<number> => Number((await client.db('admin').command({serverStatus: 1})).opcounters.query)
  /** bench is measuring: its collection is seeded and findOne calls reach the server. */
  const untilMeasuring = async (): Promise<void> => {
    await waitForState('bench seeded its collection', benchCollections, (names) => names.length === 1)
    const before = await queries()
    await waitForState('bench measuring (its finds reach the server)', queries, (n) => n >= before + 50)
  }
  const hasBenchDatabase = async (): Promise<boolean> =>
    ((await client.db('admin').command({listDatabases: 1, nameOnly: true})).databases as Array<{name: string}>).some((d) => d.name === 'pooltool_bench')

  before(async () => {
    client = new MongoClient(cluster.uri)
    dir = await mkdtemp(path.join(tmpdir(), 'pooltool-signals-'))
  })
  after(async () => {
    await client?.close()
  })

  it('a signal to the whole process group (as `timeout` sends it) once bench measures on its embedded cluster: a complete partial result, cleaned up, exit 143', async () => {
    const out = path.join(dir, 'group.json')
    // Its own process group, as `timeout` gives the command it runs: the signal reaches the embedded cluster's child too.
    const child = spawn(process.execPath, [BIN, 'bench', '--warmup', '0s', '--duration', '60s', '--concurrency', '4', '--out', out], {
      cwd: REPO_ROOT,
      env: {...process.env, POOLTOOL_URI: undefined, MONGODB_URI: undefined, FORCE_COLOR: '0'},
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    // The embedded cluster bench started says its URI on stderr; the group is signalled once bench measures there
    // (a fixed `timeout 3` could fire before a loaded machine had even seeded).
    const uri = await waitForState('bench named its embedded cluster', async () => /using the embedded simulated standalone \((mongodb:\/\/[^)]+)\)/.exec(stderr)?.[1], (found) => found !== undefined)
    const own = new MongoClient(uri!)
    try {
      await waitForState('bench seeded its collection', async () => (await own.db('pooltool_bench').listCollections({}, {nameOnly: true}).toArray()).filter((c) => c.name.startsWith('bench_')).length, (n) => n === 1)
      const finds = async () => Number((await own.db('admin').command({serverStatus: 1})).opcounters.query)
      const before = await finds()
      await waitForState('bench measuring (its finds reach the server)', finds, (n) => n >= before + 50)
    } finally {
      await own.close()
    }
    process.kill(-child.pid!, 'SIGTERM')
    const code = await closed
    assert.equal(code, 143, stderr)
    assert.match(stderr, /SIGTERM received: stopping/)
    assert.match(stdout, /interrupted/)
    const written = JSON.parse(await readFile(out, 'utf8'))
    assert.equal(written.interrupted, true)
    assert.ok(written.runs[0].ops > 0, 'what was measured before the signal is there')
    assert.equal(written.cleanedUp, true, 'the cluster outlived the signal long enough for bench to drop its namespace')
    assert.deepEqual(written.namespace.leftBehind, [])
    assert.deepEqual(written.abandoned, [])
  })

  for (const [signal, exitCode] of [['SIGTERM', 143], ['SIGHUP', 129], ['SIGINT', 130]] as const) {
    it(`${signal}: exit ${exitCode}, partial result written, namespace dropped`, async () => {
      const out = path.join(dir, `${signal}.json`)
      let bench: import('node:child_process').ChildProcess | undefined
      const running = runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '60s', '--concurrency', '4', '--out', out, '--json'], {timeoutMs: 60_000, onSpawn: (c) => (bench = c)})
      await untilMeasuring()
      bench!.kill(signal)
      const run = await running
      assert.equal(run.code, exitCode, run.stderr)
      const result = parseJson(run)
      assert.equal(result.interrupted, true)
      assert.ok(result.runs[0].ops > 0, 'what was measured before the signal is there')
      assert.deepEqual(JSON.parse(await readFile(out, 'utf8')).runs[0].ops, result.runs[0].ops)
      assert.equal(result.cleanedUp, true)
      assert.equal(await hasBenchDatabase(), false)
    })
  }

  it('a stop during a server stall does not wait for the server: in-flight operations aborted, what stays behind said', async () => {
    let bench: import('node:child_process').ChildProcess | undefined
    const running = runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '60s', '--concurrency', '4', '--json'], {timeoutMs: 60_000, onSpawn: (c) => (bench = c)})
    await untilMeasuring()
    await cluster.sim.control({kind: 'stall', ms: 8000})
    bench!.kill('SIGINT')
    const run = await running
    assert.equal(run.code, 130, run.stderr)
    const result = parseJson(run)
    assert.equal(result.interrupted, true)
    const [r] = result.runs
    assert.ok(r.aborted > 0, `operations caught in the stall are counted as aborted: ${JSON.stringify(r.errorsByClass)}`)
    assert.equal(r.errors, Object.values(r.errorsByClass as Record<string, number>).reduce((a, b) => a + b, 0))
    assert.ok(result.abandoned.length > 0, 'the report names the steps the stall cut short')
    assert.equal(result.cleanedUp, false)
    assert.ok(result.namespace.leftBehind.length > 0, 'the namespace it could not drop is named')
    assert.match(run.stderr, /left behind pooltool_bench\.bench_\w+ \(the server did not answer within the stop budget\)/)
    // Once the server answers again, what is left is only bench's own (the next run can reclaim it): the
    // drop sent before the stop budget ran out may have run since, so fewer may be left than named.
    const left = await waitForState('the server answers again', () => allCollections().catch(() => undefined), (names) => names !== undefined)
    const own = new Set([...result.namespace.leftBehind, 'pooltool_bench.pooltool_runs'])
    assert.deepEqual(left!.filter((name) => !own.has(`pooltool_bench.${name}`)), [], `only bench's own collections are left: ${left!.join(', ')}`)
    await client.db('pooltool_bench').dropDatabase()
  })

  it('a second signal skips cleanup but still prints the result and says what it left behind', async () => {
    let bench: import('node:child_process').ChildProcess | undefined
    const running = runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '60s', '--concurrency', '2'], {
      timeoutMs: 60_000,
      onSpawn: (c) => (bench = c),
      // A second stop request once the first was acknowledged: a different signal, so it cannot be taken
      // for the first one delivered twice (the same signal within 500 ms is one request: see stop-signals.ts).
      signalWhen: [[/SIGINT received: stopping/, 'SIGTERM']],
    })
    await untilMeasuring()
    // Hold the server so cleanup cannot finish before the second signal.
    await cluster.sim.control({kind: 'stall', ms: 3000})
    bench!.kill('SIGINT')
    const run = await running
    assert.equal(run.code, 130, run.stderr)
    assert.match(run.stderr, /SIGTERM received while stopping: skipping cleanup/)
    assert.match(run.stdout, /interrupted/, 'the measured figures are printed')
    assert.match(run.stderr, /left behind pooltool_bench\.bench_\w+ \(a second signal skipped cleanup\)/)
    await waitForState('the server answers again, bench\'s collection still there', benchCollections, (names) => names.length === 1)
    await client.db('pooltool_bench').dropDatabase()
  })
})
