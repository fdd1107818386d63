/**
 * npm run bench:rss — a benchmark, not a test.
 *
 * Memory with 10,000 operations in flight (goal: bench's RSS at most 1.10 × a bare
 * driver loop holding the same 10,000 operations). Each side runs in a fresh child process of
 * its own, so neither inherits the other's heap:
 *   (a) bare: one MongoClient, 10,000 async loops of findOne by _id;
 *   (b) engine: runBench at --concurrency 10000, pool model (CMAP telemetry, HDR histograms,
 *       the series, serverStatus sampling included).
 * Both use the driver's default pool (maxPoolSize 100), so 100 operations are on the wire and
 * 9,900 wait in the driver's queue; the embedded cluster (its own process) serves each find in
 * --latency-ms, so every loop always has one operation outstanding. A child samples its own RSS
 * every 100 ms after --settle-seconds; it reports the peak and the median of those samples.
 * Rounds alternate bare / engine; the figures are medians over rounds.
 *
 * Flags: --concurrency N (10000) --seconds S per trial (15) --settle-seconds S (5) --rounds R (3) --latency-ms M (20)
 */
import {fork} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../src/bench/config.js'
import {runBench} from '../../src/bench/run-bench.js'
import {createRandom} from '../../src/bench/workloads.js'
import {MongoClient} from '../../src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
import {resolveTarget} from '../../src/target.js'

const {values} = parseArgs({
  options: {
    role: {type: 'string'},
    uri: {type: 'string'},
    concurrency: {type: 'string', default: '10000'},
    seconds: {type: 'string', default: '15'},
    'settle-seconds': {type: 'string', default: '5'},
    rounds: {type: 'string', default: '3'},
    'latency-ms': {type: 'string', default: '20'},
  },
})
const concurrency = Number(values.concurrency)
const seconds = Number(values.seconds)
const settleSeconds = Number(values['settle-seconds'])
const rounds = Number(values.rounds)
const latencyMs = Number(values['latency-ms'])
const BARE_DB = 'pooltool_rss_bare'
const ENGINE_DB = 'pooltool_rss'
const SEED_DOCS = 1000

type Role = 'bare' | 'engine'

/** What a child reports on its last line of stdout. */
interface Trial {
  role: Role
  ops: number
  peakRssBytes: number
  medianRssBytes: number
  /** The V8 heap in use, median of the same samples: tells live objects from memory the process holds. */
  medianHeapUsedBytes: number
  samples: number
}

/** RSS every 100 ms once the loops have settled (all connections open, every loop waiting on one operation). */
function sampleRss(): {stop(): {peak: number; median: number; heapUsedMedian: number; samples: number}} {
  const rss: number[] = []
  const heapUsed: number[] = []
  let timer: NodeJS.Timeout | undefined
  const settle = setTimeout(() => {
    timer = setInterval(() => {
      const usage = process.memoryUsage()
      rss.push(usage.rss)
      heapUsed.push(usage.heapUsed)
    }, 100)
  }, settleSeconds * 1000)
  return {
    stop() {
      clearTimeout(settle)
      clearInterval(timer)
      const sorted = [...rss].sort((a, b) => a - b)
      return {peak: sorted.at(-1) ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0, heapUsedMedian: median(heapUsed), samples: sorted.length}
    },
  }
}

async function bare(uri: string): Promise<Trial> {
  const client = new MongoClient(uri)
  await client.connect()
  const collection = client.db(BARE_DB).collection<{_id: number}>('bench')
  const random = createRandom()
  let ops = 0
  const rss = sampleRss()
  const end = performance.now() + seconds * 1000
  const loop = async () => {
    while (performance.now() < end) {
      await collection.findOne({_id: Math.floor(random() * SEED_DOCS)})
      ops++
    }
  }
  await Promise.all(Array.from({length: concurrency}, loop))
  const measured = rss.stop()
  await client.close()
  return {role: 'bare', ops, peakRssBytes: measured.peak, medianRssBytes: measured.median, medianHeapUsedBytes: measured.heapUsedMedian, samples: measured.samples}
}

async function engine(uri: string): Promise<Trial> {
  const target = await resolveTarget({flagUri: uri, connection: {appName: 'pooltool-rss', timeoutMs: 30_000}})
  const config = toBenchConfig({
    workload: 'find', 'doc-size': 256, 'seed-docs': SEED_DOCS, db: ENGINE_DB, keep: false, model: 'pool',
    concurrency: String(concurrency), duration: seconds * 1000, warmup: 0, 'sample-interval': 250,
  })
  // Sampling starts when the measured run does (after seeding), as the bare loop's starts with its loops.
  let rss: ReturnType<typeof sampleRss> | undefined
  let measured: ReturnType<ReturnType<typeof sampleRss>['stop']> | undefined
  const result = await runBench(target, config, {
    signal: new AbortController().signal,
    onTick: () => {
      rss ??= sampleRss()
    },
    onPartialResult: () => {
      measured ??= rss?.stop()
    },
  })
  await target.close()
  return {role: 'engine', ops: result.runs[0]!.ops, peakRssBytes: measured?.peak ?? 0, medianRssBytes: measured?.median ?? 0, medianHeapUsedBytes: measured?.heapUsedMedian ?? 0, samples: measured?.samples ?? 0}
}

/** One trial in a fresh child process (this file with --role). */
function trialInChild(role: Role, uri: string): Promise<Trial> {
  const args = ['--role', role, '--uri', uri, '--concurrency', String(concurrency), '--seconds', String(seconds), '--settle-seconds', String(settleSeconds)]
  const child = fork(fileURLToPath(import.meta.url), args, {execArgv: process.execArgv, stdio: ['ignore', 'pipe', 'inherit', 'ipc']})
  let stdout = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? ''
      if (code === 0) resolve(JSON.parse(last) as Trial)
      else reject(new Error(`${role} child exited ${code}: ${stdout}`))
    })
  })
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

if (values.role) {
  const trial = values.role === 'bare' ? await bare(values.uri!) : await engine(values.uri!)
  console.log(JSON.stringify(trial))
  process.exit(0)
}

const sim = await startSimCluster({})
try {
  const seeder = new MongoClient(sim.info.uri)
  await seeder.db(BARE_DB).collection<{_id: number; payload: string}>('bench').insertMany(Array.from({length: SEED_DOCS}, (_, i) => ({_id: i, payload: 'x'.repeat(256)})))
  await seeder.close()
  await sim.control({kind: 'latency', ms: latencyMs})
  console.log(
    `bench:rss · ${concurrency} operations in flight (findOne by _id, maxPoolSize 100, ${latencyMs} ms per find) · ` +
      `${rounds} rounds of ${seconds}s each side, RSS sampled every 100 ms after ${settleSeconds}s · each trial a fresh process`,
  )
  const trials: Record<Role, Trial[]> = {bare: [], engine: []}
  for (let round = 1; round <= rounds; round++) {
    const b = await trialInChild('bare', sim.info.uri)
    const e = await trialInChild('engine', sim.info.uri)
    trials.bare.push(b)
    trials.engine.push(e)
    console.log(
      `round ${round}: bare ${b.ops} ops, RSS median ${mb(b.medianRssBytes)}, peak ${mb(b.peakRssBytes)}, heap used ${mb(b.medianHeapUsedBytes)} | ` +
        `engine ${e.ops} ops, RSS median ${mb(e.medianRssBytes)}, peak ${mb(e.peakRssBytes)}, heap used ${mb(e.medianHeapUsedBytes)} (${e.samples} samples)`,
    )
  }
  const figure = (role: Role, key: 'peakRssBytes' | 'medianRssBytes') => median(trials[role].map((t) => t[key]))
  console.log('')
  for (const key of ['medianRssBytes', 'peakRssBytes'] as const) {
    const label = key === 'peakRssBytes' ? 'peak' : 'median'
    console.log(
      `RSS ${label} (median of rounds): bare ${mb(figure('bare', key))}, engine ${mb(figure('engine', key))}, ` +
        `ratio ${(figure('engine', key) / figure('bare', key)).toFixed(3)} (goal ≤ 1.10)`,
    )
  }
} finally {
  const cleaner = new MongoClient(sim.info.uri)
  for (const db of [BARE_DB, ENGINE_DB]) await cleaner.db(db).dropDatabase().catch(() => undefined)
  await cleaner.close()
  await sim.stop()
}
