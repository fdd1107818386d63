/**
 * `pooltool bench` as a user runs it: the default embedded target, the JSON
 * contract, bad input, unreachable targets, faults mid-run, thresholds,
 * Ctrl-C with partial results and cleanup.
 */
import assert from 'node:assert/strict'
import type {ChildProcess} from 'node:child_process'
import {mkdtemp, readFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {BENCH_DEFAULTS} from '../../src/defaults.js'
import {MongoClient} from '../../src/mongo/driver.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer, runWithFault, serverFigureGrew} from '../helpers/faults.js'
import {runInProcess} from '../helpers/in-process.js'
import {waitForState} from '../helpers/sim.js'

const NO_STACK = /^\s+at .+:\d+:\d+\)?$/m

/** Every key of a JSON document, at any depth ("runs.0.pool.setupUs" …). */
function keysOf(value: unknown, path = ''): string[] {
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, child]) => [`${path}${key}`, ...keysOf(child, `${path}${key}.`)])
}

describe('bench without a URI', () => {
  it('runs against the embedded cluster and follows the JSON contract', async () => {
    // Spawned: the real process of bench's exit-0 path (it starts, reports and stops its own embedded cluster).
    // A 50 ms service time: the default (adaptive) warm-up's load is bound by timers, not the CPU, so it settles
    // (about 80 ops/s) instead of running at full CPU up to its 30 s cap on a loaded machine (bench-warmup.test.ts).
    const run = await runCli(['bench', '--sim-latency', '50ms', '--duration', '1s', '--concurrency', '4', '--json'], {timeoutMs: 90_000})
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    // The envelope every command shares (src/result.ts), then bench's own fields.
    assert.deepEqual(Object.keys(result.target), ['uri', 'source', 'simulated'])
    assert.equal(result.target.source, 'embedded')
    assert.equal(result.target.simulated, true)
    assert.deepEqual(result.notes, [])
    assert.equal(result.interrupted, false)
    assert.equal(result.cluster.topology, 'standalone')
    assert.match(result.cluster.serverVersion, /^\d+\.\d+\.\d+$/)
    assert.equal(result.cluster.hosts.length, 1, JSON.stringify(result.cluster.hosts))
    assert.equal(result.cluster.hosts[0].role, 'standalone')
    assert.equal(result.config.durationMS, 1000)
    // The default warm-up (issue 26): adaptive, until ops/s settles (src/bench/warmup.ts; test/cli/bench-warmup.test.ts).
    assert.equal(result.config.warmup.mode, BENCH_DEFAULTS.warmup)
    assert.equal(result.config.sampleIntervalMS, 250)
    const wrongUnit = keysOf(result).filter((key) => /Ms$/.test(key))
    assert.deepEqual(wrongUnit, [], 'one unit convention: MS (as the driver writes it), never Ms')
    const [r] = result.runs
    for (const key of ['model', 'concurrency', 'rate', 'maxPoolSize', 'ops', 'errors', 'durationMS', 'opsPerSec', 'latencyUs', 'latencyCorrectedUs', 'checkoutWaitUs', 'checkoutWaitDriverMS', 'pool', 'server', 'errorsByClass']) {
      assert.ok(key in r, `runs[0].${key}`)
    }
    for (const key of ['p50', 'p90', 'p99', 'p999', 'max']) assert.equal(typeof r.latencyUs[key], 'number', `latencyUs.${key}`)
    for (const key of ['created', 'closed', 'peakTotal', 'peakInUse', 'checkOutFailed', 'cleared', 'setupUs', 'setupDriverMS']) assert.ok(key in r.pool, `pool.${key}`)
    for (const key of ['host', 'role', 'connectionsBefore', 'connectionsPeak', 'connectionsAfter', 'totalCreatedDelta']) assert.ok(key in r.server[0], `server[0].${key}`)
    assert.equal(r.server[0].host, result.cluster.hosts[0].host, 'the sampled host is the discovered one')
    assert.ok(r.ops > 0 && r.opsPerSec > 0, `ops ${r.ops}, ops/s ${r.opsPerSec}`)
    assert.ok(r.durationMS >= 950, `durationMS ${r.durationMS}`)
    assert.equal(r.latencyCorrectedUs, null, 'closed loop has no corrected latency')
    assert.ok(r.server[0].connectionsPeak >= r.server[0].connectionsBefore + 4, JSON.stringify(r.server[0]))
    // Own clock beside the driver's whole milliseconds: the same checkouts, within the driver's flooring. The medians:
    // a GC pause between the driver's clock read and our listener moves one reading (the max failed on a loaded run).
    assert.ok(Math.abs(r.checkoutWaitUs.p50 / 1000 - r.checkoutWaitDriverMS.p50) <= 1, `checkout median ${r.checkoutWaitUs.p50} µs vs ${r.checkoutWaitDriverMS.p50} ms`)
    // The warm-up opened the pool's connections: their set-up is not in the measured figures (test/cluster/bench-pool-telemetry.test.ts times it).
    assert.equal(result.cleanedUp, true)
    assert.match(run.stderr, /embedded simulated standalone/)
  })

  it('prints a table report', async () => {
    // No warm-up: the default adaptive one (at least 5 s of full load) is run above and its text is held in
    // bench-warmup.test.ts; here the line saying there was none.
    const run = await runInProcess(['bench', '--duration', '500ms', '--warmup', '0s', '--workload', 'mixed', '--mix', 'find=50,insert=25,update=25'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /Latency and throughput/)
    assert.match(run.stdout, /Client pool/)
    assert.match(run.stdout, /Server side, per host/)
    assert.match(run.stdout, /namespace pooltool_bench dropped/)
    // What was measured, said in the text as in the JSON: the target's source and the warm-up left out.
    assert.match(run.stdout, /^target mongodb:\/\/127\.0\.0\.1:\d+\/\S*: the embedded simulated standalone \(--sim, or no URI given; MongoDB \d/m)
    assert.match(run.stdout, /^no warm-up \(--warmup 0s\): the figures include filling the pool and a cold JIT/m)
  })
})

describe('bench bad input', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['concurrency 0', ['--concurrency', '0'], /concurrency 0 is out of range/],
    ['negative concurrency', ['--concurrency', '-3'], /out of range|not a whole number/],
    ['rate with ops', ['--rate', '100', '--ops', '10'], /--rate and --ops cannot be combined/],
    ['unknown model', ['--model', 'pooled'], /--model 'pooled' is not one of/],
    ['unknown workload', ['--workload', 'scan'], /--workload 'scan' is not one of/],
    ['mix that does not add up', ['--workload', 'mixed', '--mix', 'find=60,insert=20'], /adds up to 80/],
    ['fail-on that does not parse', ['--fail-on', 'p99 above 5'], /does not parse/],
  ]
  for (const [index, [name, args, message]] of cases.entries()) {
    it(`rejects ${name} with a usage exit code and one line`, async () => {
      // The first case spawns the real process (bench's exit-2 path); the others run in this process, the same path.
      const run = index === 0 ? await runCli(['bench', ...args], {timeoutMs: 20_000}) : await runInProcess(['bench', ...args])
      assert.equal(run.code, 2, run.stderr)
      assert.match(run.stderr, message)
      assert.match(run.stderr, /hint:/)
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
      assert.doesNotMatch(run.stderr, NO_STACK)
      assert.doesNotMatch(run.stderr, /embedded/, 'flags are checked before a cluster is started')
    })
  }

  it('rejects an unparsable URI with exit 3 and no secret', async () => {
    // Spawned: the real process of bench's exit-3 path, its secret guard included.
    const run = await runCli(['bench', '--uri', 'mongodb:/alice:s3cret@nowhere'])
    assert.equal(run.code, 3, run.stderr)
    assert.match(run.stderr, /invalid connection string/)
    assert.doesNotMatch(run.stderr + run.stdout, /s3cret/)
  })

  it('gives up on a port nothing listens on (exit 4)', async () => {
    // Spawned: the real process of bench's exit-4 path.
    const run = await runCli(['bench', '--uri', 'mongodb://u:pw-secret@127.0.0.1:1/', '--timeout-ms', '1000'])
    assert.equal(run.code, 4, run.stderr)
    assert.match(run.stderr, /cannot reach/)
    assert.doesNotMatch(run.stderr, /pw-secret/)
    assert.doesNotMatch(run.stderr, NO_STACK)
  })

  it('prints errors as JSON under --json', async () => {
    const run = await runInProcess(['bench', '--uri', 'mongodb://127.0.0.1:1/', '--timeout-ms', '500', '--json'])
    assert.equal(run.code, 4, run.stderr)
    const {error} = parseJson(run)
    assert.equal(error.code, 'UNREACHABLE')
    assert.equal(error.exitCode, 4)
    assert.equal(typeof error.hint, 'string')
  })
})

describe('bench against a cluster under faults', () => {
  // 5 ms per operation: every test below waits for states or counts, and the load (4 s of it in-process under
  // the faults) then costs a fifth of the CPU it did at 1 ms; more operations are in flight when a fault hits.
  const cluster = useCluster({latencyMs: 5})
  const authCluster = useCluster({auth: true})
  /** A long-lived client on the cluster for the triggers (server states), never for the load. */
  let watcher: MongoClient
  before(() => {
    watcher = observer(cluster.uri)
  })
  after(async () => {
    await watcher?.close()
  })
  /** Commands the server has run (bench's pings among them), or undefined while the watcher cannot read. */
  const commandsRun = async (): Promise<number | undefined> =>
    Number((await watcher.db('admin').command({serverStatus: 1})).opcounters.command)

  it('rejects a wrong password with exit 5 and never prints it', async () => {
    const uri = authCluster.uri.replace(':pooltool-sim@', ':not-the-password@')
    // Spawned: the real process of bench's exit-5 path, its secret guard included.
    const run = await runCli(['bench', '--warmup', '0s', '--uri', uri, '--duration', '1s'])
    assert.equal(run.code, 5, run.stderr)
    assert.match(run.stderr, /authentication failed/)
    assert.doesNotMatch(run.stderr + run.stdout, /not-the-password/)
  })

  it('authenticates with SCRAM and measures', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', authCluster.uri, '--duration', '500ms', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.ok(result.runs[0].ops > 0, `ops ${result.runs[0].ops}`)
    assert.doesNotMatch(run.stdout, /pooltool-sim/, 'the password is redacted from the JSON')
    assert.match(result.target.uri, /<credentials>/)
  })

  it('runs for a user who may only write to its database: server figures unavailable, collections dropped', async () => {
    const admin = new MongoClient(authCluster.uri)
    try {
      await admin.db('admin').command({createUser: 'writer', pwd: 'writer-pw', roles: [{role: 'readWrite', db: 'pooltool_bench'}]})
      const uri = authCluster.uri.replace('pooltool:pooltool-sim@', 'writer:writer-pw@')
      const run = await runInProcess(['bench', '--warmup', '0s', '--uri', uri, '--workload', 'insert', '--duration', '500ms', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson(run)
      assert.ok(result.runs[0].ops > 0, `ops ${result.runs[0].ops}`)
      assert.match(result.runs[0].server[0].unavailable, /not authorized on admin to execute command \{ serverStatus/)
      assert.equal(result.runs[0].server[0].totalCreatedDelta, undefined, 'a missing figure is absent, not 0')
      assert.equal(result.cleanedUp, true)
      const left = await admin.db('pooltool_bench').listCollections().toArray()
      assert.deepEqual(left.map((c) => c.name), [])
    } finally {
      await admin.close()
    }
  })

  it('counts dropped connections and a restart as errors and still reports', async () => {
    const args = ['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--concurrency', '4', '--duration', '4s', '--json']
    // Each fault once bench's pings are seen on the server: 200 after the start, 100 more after the drop.
    const measuring = serverFigureGrew(watcher, (status) => Number(status.opcounters.command), 200)
    const {run} = await runWithFault(cluster.sim, args, measuring, async () => {
      await cluster.sim.control({kind: 'drop-connections'})
      const afterDrop = await waitForState('the watcher reads again after the drop', () => commandsRun().catch(() => undefined), (n) => n !== undefined)
      await waitForState('pings resumed after the drop', () => commandsRun().catch(() => undefined), (n) => n !== undefined && n >= afterDrop! + 100)
      await cluster.sim.control({kind: 'restart', downMS: 500})
    }, {timeoutMs: 60_000, inProcess: true})
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.ok(r.errors >= 1, JSON.stringify(r.errorsByClass))
    assert.ok(Object.keys(r.errorsByClass).some((name) => /network|poolCleared|serverSelection|timeout/.test(name)), JSON.stringify(r.errorsByClass))
    assert.ok(r.ops > 100, 'operations resumed after the faults')
    assert.ok(r.pool.cleared >= 1, 'the driver cleared its pool after the network errors')
  })

  it('exits 8 when a --fail-on threshold is crossed, with the report', async () => {
    // Spawned: the real process of bench's exit-8 path.
    const run = await runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '500ms', '--fail-on', 'p50>1us,errors>100'])
    assert.equal(run.code, 8, run.stderr)
    // One ✓/✗ line per threshold, as k6 prints them.
    assert.match(run.stdout, /^✗ p50>1us \(pool c=\d+[^:]*: [\d,]+µs\)$/m)
    assert.match(run.stdout, /^✓ errors>100$/m)
  })

  it('on Ctrl-C prints and writes partial results and drops its namespace', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pooltool-'))
    const out = path.join(dir, 'result.json')
    let bench: ChildProcess | undefined
    const finds = async () => Number((await watcher.db('admin').command({serverStatus: 1})).opcounters.query)
    const findsBefore = await finds()
    const running = runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--duration', '60s', '--concurrency', '4', '--out', out], {timeoutMs: 60_000, onSpawn: (child) => (bench = child)})
    // Ctrl-C once bench's finds are seen on the server: the run is measuring.
    await waitForState('bench measuring (its finds reach the server)', finds, (n) => n >= findsBefore + 100)
    bench!.kill('SIGINT')
    const run = await running
    assert.equal(run.code, 130, run.stderr)
    assert.match(run.stdout, /interrupted/)
    const written = JSON.parse(await readFile(out, 'utf8'))
    assert.equal(written.interrupted, true)
    assert.ok(written.runs[0].ops > 0, 'what was measured before Ctrl-C is written')
    assert.equal(written.runs[0].interrupted, true, 'the run was cut short by the signal, not by its 60 s')
    assert.equal(written.cleanedUp, true)
    const client = new MongoClient(cluster.uri)
    try {
      const {databases} = await client.db('admin').command({listDatabases: 1, nameOnly: true})
      assert.ok(!databases.some((d: {name: string}) => d.name === 'pooltool_bench'), JSON.stringify(databases))
    } finally {
      await client.close()
    }
  })
})
