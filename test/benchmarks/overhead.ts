/**
 * npm run bench:overhead — a benchmark, not a test.
 *
 * Against the embedded cluster (its own process), the same operation (findOne
 * by _id over 1000 seeded documents) at the same concurrency through
 *   (a) a bare loop over the official driver, and
 *   (b) pooltool's bench engine (runBench: CMAP telemetry, HDR histograms,
 *       serverStatus sampling included),
 * alternating a/b to spread machine noise. Prints client CPU µs per operation
 * and p50 latency for each, and their ratios (goal: CPU ≤ 1.15, p50 ≤ 1.05 at
 * concurrency 64). Then a soak run prints RSS at its start and end.
 *
 * The load generator and the simulated server each get their own core
 * (taskset, when there are two or more): otherwise they fight over the same
 * cores and the CPU-per-operation figures swing by ±15 % from round to round.
 *
 * With --workers N (> 1) each round also runs the engine on N worker threads (the same total
 * concurrency) and prints its CPU per operation against one worker and against the bare loop
 * (goal: at most 1.05 × both; the process's CPU counts every thread).
 *
 * Flags: --concurrency N (64) --seconds S per trial (5) --rounds R (5) --soak-seconds S (60, 0 skips) --workers N (1)
 */
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../src/bench/config.js'
import {runBench} from '../../src/bench/run-bench.js'
import {createRandom} from '../../src/bench/workloads.js'
import {MongoClient} from '../../src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
import {pinClientAndServer} from './pin.js'
import {resolveTarget, type Target} from '../../src/target.js'

const {values} = parseArgs({
  options: {
    concurrency: {type: 'string', default: '64'},
    seconds: {type: 'string', default: '5'},
    rounds: {type: 'string', default: '5'},
    'soak-seconds': {type: 'string', default: '60'},
    workers: {type: 'string', default: '1'},
  },
})
const concurrency = Number(values.concurrency)
const seconds = Number(values.seconds)
const rounds = Number(values.rounds)
const soakSeconds = Number(values['soak-seconds'])
const workers = Number(values.workers)
/** bench writes only into a database it created and marked: the bare loop reads its own copy of the same documents. */
const DB = 'pooltool_overhead'
const BARE_DB = 'pooltool_overhead_bare'
const SEED_DOCS = 1000

interface Trial {
  ops: number
  cpuUsPerOp: number
  p50Us: number
}

const cpuMicros = (usage: NodeJS.CpuUsage) => usage.user + usage.system

async function bareLoop(uri: string): Promise<Trial> {
  const cpuStart = process.cpuUsage()
  const client = new MongoClient(uri)
  await client.connect()
  const collection = client.db(BARE_DB).collection<{_id: number}>('bench')
  const random = createRandom()
  const latenciesMs: number[] = []
  const end = performance.now() + seconds * 1000
  const worker = async () => {
    while (performance.now() < end) {
      const started = performance.now()
      await collection.findOne({_id: Math.floor(random() * SEED_DOCS)})
      latenciesMs.push(performance.now() - started)
    }
  }
  await Promise.all(Array.from({length: concurrency}, worker))
  await client.close()
  const cpu = cpuMicros(process.cpuUsage(cpuStart))
  latenciesMs.sort((a, b) => a - b)
  return {ops: latenciesMs.length, cpuUsPerOp: cpu / latenciesMs.length, p50Us: latenciesMs[Math.floor(latenciesMs.length / 2)]! * 1000}
}

async function engineRun(target: Target, trialSeconds: number, onTick?: (elapsedMs: number) => void, threads = 1): Promise<Trial> {
  const config = toBenchConfig({
    workload: 'find', 'doc-size': 256, 'seed-docs': SEED_DOCS, db: DB, keep: false, model: 'pool',
    concurrency: String(concurrency), duration: trialSeconds * 1000, warmup: 0, 'sample-interval': 250, workers: threads,
  })
  // CPU from the first progress tick (1 s in) to the end, over the operations completed meanwhile: the
  // steady state, without set-up (connecting; worker threads loading their modules) on either side.
  let first: {cpu: NodeJS.CpuUsage; ops: number} | undefined
  let cpu = 0
  const result = await runBench(target, config, {
    signal: new AbortController().signal,
    onTick: (_cell, tick) => {
      first ??= {cpu: process.cpuUsage(), ops: tick.ops}
      onTick?.(tick.elapsedMs)
    },
    onPartialResult: () => {
      if (first) cpu = cpuMicros(process.cpuUsage(first.cpu))
    },
  })
  const [run] = result.runs
  const steadyOps = run!.ops - (first?.ops ?? 0)
  return {ops: run!.ops, cpuUsPerOp: cpu / steadyOps, p50Us: run!.latencyUs.p50}
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`


const sim = await startSimCluster({})
const pinned = pinClientAndServer(sim.info.pid)
const target = await resolveTarget({flagUri: sim.info.uri, connection: {appName: 'pooltool-overhead', timeoutMs: 10_000}})
try {
  // Seed once; both sides read the same documents.
  const seeder = new MongoClient(sim.info.uri)
  await seeder.db(BARE_DB).dropDatabase()
  await seeder.db(BARE_DB).collection<{_id: number; payload: string}>('bench').insertMany(Array.from({length: SEED_DOCS}, (_, i) => ({_id: i, payload: 'x'.repeat(256)})))
  await seeder.close()

  console.log(
    `bench:overhead · findOne by _id · concurrency ${concurrency} · ${rounds} rounds of ${seconds}s each side · ` +
      `embedded cluster pid ${sim.info.pid} · ${pinned ? 'client on core 0, server on core 1' : 'not pinned (no taskset or one core)'}`,
  )
  await bareLoop(sim.info.uri) // warm-up: JIT, PBKDF2-free connection set-up, server caches
  const bare: Trial[] = []
  const engine: Trial[] = []
  const threaded: Trial[] = []
  for (let round = 1; round <= rounds; round++) {
    const b = await bareLoop(sim.info.uri)
    const e = await engineRun(target, seconds)
    const w = workers > 1 ? await engineRun(target, seconds, undefined, workers) : undefined
    bare.push(b)
    engine.push(e)
    if (w) threaded.push(w)
    console.log(
      `round ${round}: bare ${b.ops} ops, ${b.cpuUsPerOp.toFixed(1)} µs CPU/op, p50 ${b.p50Us.toFixed(0)} µs | ` +
        `engine ${e.ops} ops, ${e.cpuUsPerOp.toFixed(1)} µs CPU/op, p50 ${e.p50Us.toFixed(0)} µs` +
        (w ? ` | ${workers} workers ${w.ops} ops, ${w.cpuUsPerOp.toFixed(1)} µs CPU/op, p50 ${w.p50Us.toFixed(0)} µs` : ''),
    )
  }
  const bareCpu = median(bare.map((t) => t.cpuUsPerOp))
  const engineCpu = median(engine.map((t) => t.cpuUsPerOp))
  const bareP50 = median(bare.map((t) => t.p50Us))
  const engineP50 = median(engine.map((t) => t.p50Us))
  console.log('')
  console.log(`client CPU per operation (median of rounds): bare ${bareCpu.toFixed(1)} µs, engine ${engineCpu.toFixed(1)} µs, ratio ${(engineCpu / bareCpu).toFixed(3)} (goal ≤ 1.15)`)
  if (threaded.length > 0) {
    const threadedCpu = median(threaded.map((t) => t.cpuUsPerOp))
    console.log(
      `client CPU per operation with ${workers} workers: ${threadedCpu.toFixed(1)} µs, ratio to one worker ${(threadedCpu / engineCpu).toFixed(3)}, ` +
        `to the bare loop ${(threadedCpu / bareCpu).toFixed(3)} (goal ≤ 1.05 each)`,
    )
  }
  console.log(`p50 latency (median of rounds):              bare ${bareP50.toFixed(0)} µs, engine ${engineP50.toFixed(0)} µs, ratio ${(engineP50 / bareP50).toFixed(3)} (goal ≤ 1.05)`)

  if (soakSeconds > 0) {
    let rssAfterWarmup = 0
    let peakRss = 0
    const soak = await engineRun(target, soakSeconds, (elapsedMs) => {
      const rss = process.memoryUsage().rss
      if (rssAfterWarmup === 0 && elapsedMs >= 5000) rssAfterWarmup = rss
      peakRss = Math.max(peakRss, rss)
    })
    const rssEnd = process.memoryUsage().rss
    console.log('')
    console.log(`soak ${soakSeconds}s, ${soak.ops} ops: RSS at 5s ${mb(rssAfterWarmup)}, at end ${mb(rssEnd)}, peak ${mb(peakRss)}, end/start ${(rssEnd / rssAfterWarmup).toFixed(3)}`)
  }
} finally {
  const cleaner = new MongoClient(sim.info.uri)
  for (const db of [DB, BARE_DB]) await cleaner.db(db).dropDatabase().catch(() => undefined)
  await cleaner.close()
  await sim.stop()
}
