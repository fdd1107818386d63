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
 *
 * Pairing (the method of paired.ts, adapted): a trial must be a fresh process, and a process needs
 * seconds to reach its steady heap, so the short alternating slices of the CPU benchmarks do not
 * fit. RSS is a level, not a rate: what drifts between trials is the machine's memory pressure and
 * when V8 happens to collect, not its speed. So the two children of a pair run at the same time
 * (started in alternating order: bare first in even pairs, engine first in odd ones), against the
 * same cluster, sampled over the same seconds of their lives: each pair's ratio compares two
 * processes under one machine state. The figure is the median of the per-pair ratios of median RSS
 * with a bootstrap 95% interval (issue 13 goal ≤ 1.10); peak RSS and heap used beside it.
 *
 * Flags: --concurrency N (10000) --seconds S per trial (8) --settle-seconds S (4) --latency-ms M (20)
 *        --pairs N (20; --quick 4) --warmup-pairs N (1)
 */
import {fork} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../dist/src/bench/config.js'
import {runBench} from '../../dist/src/bench/run-bench.js'
import {createRandom} from '../../dist/src/bench/workloads.js'
import {MongoClient} from '../../dist/src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
import {resolveTarget} from '../../dist/src/target.js'
import {benchRecord, PAIRED_OPTIONS, pairedFigure, pairsOf, runPaired, type SliceValues} from './paired.js'

const {values} = parseArgs({
  options: {
    ...PAIRED_OPTIONS,
    role: {type: 'string'},
    uri: {type: 'string'},
    concurrency: {type: 'string', default: '10000'},
    seconds: {type: 'string', default: '8'},
    'settle-seconds': {type: 'string', default: '4'},
    'latency-ms': {type: 'string', default: '20'},
  },
})
const concurrency = Number(values.concurrency)
const seconds = Number(values.seconds)
const settleSeconds = Number(values['settle-seconds'])
const {pairs, warmupPairs} = pairsOf(values, {full: 20, quick: 4, warmup: 1})
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
  const record = benchRecord('rss', {pairs, warmupPairs, order: 'both children of a pair at once, started bare first in even pairs, engine first in odd ones', slice: `a fresh process per side, ${seconds} s each, RSS sampled every 100 ms after ${settleSeconds} s`})
  console.log(
    `bench:rss · ${concurrency} operations in flight (findOne by _id, maxPoolSize 100, ${latencyMs} ms per find) · ` +
      `each pair: bare and engine in two fresh processes at once, ${seconds}s each, RSS sampled every 100 ms after ${settleSeconds}s\n${record.header}`,
  )
  const toValues = (t: Trial): SliceValues => ({ops: t.ops, medianRssMB: t.medianRssBytes / 2 ** 20, peakRssMB: t.peakRssBytes / 2 ** 20, heapUsedMB: t.medianHeapUsedBytes / 2 ** 20, samples: t.samples})
  // runPaired runs the sides one after the other; here a pair's two children run together, so the pair is one
  // call whose results are handed out per side (the order only decides which child is spawned first).
  let current: Promise<Record<Role, Trial>> | undefined
  const run = await runPaired<Role>({
    sides: ['bare', 'engine'],
    pairs,
    warmupPairs,
    slice: async (side, index) => {
      if (side === (index % 2 === 0 ? 'bare' : 'engine')) {
        const [first, second]: Role[] = index % 2 === 0 ? ['bare', 'engine'] : ['engine', 'bare']
        const a = trialInChild(first, sim.info.uri)
        const b = trialInChild(second, sim.info.uri)
        current = Promise.all([a, b]).then(([x, y]) => ({[first]: x, [second]: y}) as Record<Role, Trial>)
      }
      return toValues((await current!)[side])
    },
    onPair: (index, v, measured) =>
      console.log(
        `${measured ? `pair ${index - warmupPairs + 1}` : `warm-up ${index + 1}`}: ` +
          (['bare', 'engine'] as const).map((s) => `${s} ${v[s].ops} ops, RSS median ${v[s].medianRssMB!.toFixed(1)} MB, peak ${v[s].peakRssMB!.toFixed(1)} MB, heap used ${v[s].heapUsedMB!.toFixed(1)} MB`).join(' | ') +
          ` · ratio ${(v.engine.medianRssMB! / v.bare.medianRssMB!).toFixed(3)}`,
      ),
  })
  console.log('')
  await record.finish([
    pairedFigure(run, {label: `RSS with ${concurrency} operations in flight (median of samples), engine / bare`, metric: 'medianRssMB', a: 'bare', b: 'engine', goal: 1.1}),
    pairedFigure(run, {label: `peak RSS with ${concurrency} operations in flight, engine / bare`, metric: 'peakRssMB', a: 'bare', b: 'engine', goal: null}),
    pairedFigure(run, {label: `V8 heap used with ${concurrency} operations in flight, engine / bare`, metric: 'heapUsedMB', a: 'bare', b: 'engine', goal: null}),
  ])
} finally {
  const cleaner = new MongoClient(sim.info.uri)
  for (const db of [BARE_DB, ENGINE_DB]) await cleaner.db(db).dropDatabase().catch(() => undefined)
  await cleaner.close()
  await sim.stop()
}
