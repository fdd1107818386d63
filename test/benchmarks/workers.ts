/**
 * npm run bench:workers — a benchmark, not a test. What `bench --workers` costs (issue 28):
 *
 * (a) The worker machinery's own CPU (messages, histogram encoding and merging, the series'
 *     histograms), as a share of an operation's CPU, goal ≤ 1 %.
 * (b) Two workers' summed CPU per operation against one's (`--workers 2` / `--workers 1`), goal ≤ 1.10.
 *
 * Both drive findOne by _id over 1000 seeded documents through runBench (the compiled dist/ code),
 * open loop at one fixed `--rate` (1,000/s: the rate bench:overhead uses) with at most
 * `--concurrency` (64) in flight, so both sides of (b) complete the same operations per second and
 * throughput does not confound CPU per operation (it falls as throughput rises: more replies per turn
 * of the event loop).
 *
 * How (a) is measured, and why so. The machinery costs about a millisecond or two per second (one
 * tick message per worker carrying its run's latency histogram, one encoded histogram per series
 * interval, the parent merging the ticks), against ~150 ms of the operations'
 * CPU per second: ~1 %. An A/B of whole runs (with the machinery against the same load without it)
 * cannot resolve that: on this shared machine a slice's CPU per operation moves by 5–10 % from one
 * second to the next, and such an A/B would also charge the second thread and pool to the
 * machinery. A replay of the machinery's calls in a tight loop would be precise but flatter it (warm
 * caches, no message delivery). So (a) is read in situ from CPU profiles: a child process runs
 * `--profile-slices` ordinary `--workers 2` runs under `node --cpu-prof` (every thread profiled,
 * sampled every 100 µs), and for each run the share of busy samples, over all its threads, whose
 * stack holds machinery code, between the run's progress ticks at 1 s and 3 s (steady state, the
 * pool open; two seconds where (b) takes one, for more samples). Machinery code: anything in worker-load.js (the parent's side: message
 * handlers, tick and outcome merging); in worker-thread.js everything but the engine it drives (its
 * `main`, `execute`, and the series' gauge sampling, which a run without workers does too); in a
 * worker thread any `toPortable`/`encodeHistogram`/`toBucketCounts` (the encoding only workers do,
 * series intervals included); Node's message port and worker internals. Both sides of the share are per operation
 * of the same window, so ops cancel: it is the machinery's CPU per operation over the run's. What it
 * leaves out: garbage collection the machinery's allocations cause (V8 shows GC as a thread's own
 * frame, not under its cause) and the native deserialization of a message outside a JS frame; and
 * the per-run costs outside the window (spawning the threads, the outcomes encoded and merged at
 * the end), printed apart as milliseconds per run. Sampling is wall time on a CPU, so on a loaded
 * machine a thread descheduled mid-frame weighs on both sides of the share alike.
 *
 * (b) is paired by the method of paired.ts: slices of `--workers 1` and `--workers 2` alternating
 * A B B A …, warm-up pairs discarded, figure = median of the per-pair ratios of CPU per operation
 * (process.cpuUsage: user + system of every thread, i.e. the two workers' summed CPU, the main
 * thread's and V8's background threads') with a bootstrap 95% interval. A slice is a fresh runBench
 * with a fixed warm-up (12 s, --warmup-ms) and a 4 s measured interval. The warm-up is that long
 * because the comparison is of warm code on both sides: `--workers 1` runs on this process's main
 * thread, warm from the slices before, while each `--workers 2` slice starts two fresh isolates that
 * V8 compiles from cold, each at half the rate (so half the calls per second towards its
 * optimizing tiers), the compilation on V8's background threads, which process.cpuUsage counts and
 * `--cpu-prof` does not see. Read per thread (/proc/self/task), those background threads took
 * ~400 µs per operation in the two workers' seconds 3–11 of a run against ~55 for one worker, and
 * the two workers' CPU per operation kept falling until ~15 s into a run (2026-11-28, load 11–13);
 * with a 3 s warm-up the figure was 1.81 on an idle machine. Warmed 12 s it is still 1.835 (idle,
 * 2026-11-28 12:26): background back to 60 against 25 µs per operation, the worker threads' own
 * JavaScript 380 against the main thread's 225, so compilation was part of the gap, not all of it.
 * The thread split of each slice is printed (main · worker threads · V8 background), so a window
 * still in the workers' warm-up shows as background CPU far above the one worker's. The per-run
 * cost of warming a second isolate is not in the figure; it is a one-off of a run, not per operation.
 * CPU is read at its progress ticks 2 s and 3 s in (after the pool opened;
 * with workers, the tick that reaches the parent from worker 0), and the operations of that second
 * are its series interval [2 s, 3 s) (merged exactly over the workers). A slice that did not keep
 * the rate (±10 % of the second's schedule) is left out with its pair. `--workers 1` runs the engine
 * on the main thread (no worker thread, no messages): the ratio is everything going to two workers
 * costs, the machinery and a second event loop and pool included.
 *
 * Cores: "when they do not share a pinned core". With three or more cores the client process (main
 * thread and both workers) gets cores 0–1 and the embedded cluster core 2. On two cores the cluster
 * is pinned to core 1 as in the other benchmarks and the client may use both, so the two workers can
 * each run on a core of their own, one of them sharing core 1 with the cluster (at 1,000/s neither
 * side is near a full core). One worker (A) gets the same two cores. Without taskset nothing is pinned.
 * `--client-cores 0` (two cores) keeps the client on core 0 instead: both workers share it, none shares the
 * cluster's core 1 (2026-12-08, 8 pairs each, one after the other: 1.325 [1.082, 1.490] against 1.342 [1.130,
 * 1.509] on cores 0-1: the cluster's core is not where the gap comes from).
 *
 * Flags: --client-cores 0|0,1 (0,1) --rate N (1000) --one-rate N (the --workers 1 side's rate; default --rate) --concurrency N (64) --pairs N (8; --quick 3) --warmup-pairs N (1)
 *        --profile-slices N (6; --quick 3; 0 skips figure (a)) --warmup-ms MS (figure (b)'s warm-up, 12000)
 */
import {spawn} from 'node:child_process'
import {readdirSync, readFileSync, rmSync} from 'node:fs'
import {mkdir} from 'node:fs/promises'
import {availableParallelism} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../dist/src/bench/config.js'
import {runBench} from '../../dist/src/bench/run-bench.js'
import {startSimCluster} from '../../src/sim/index.js'
import {resolveTarget, type Target} from '../../dist/src/target.js'
import {BENCH_OUTPUT_DIR, benchRecord, cpuMicros, type Figure, median, PAIRED_OPTIONS, pairedFigure, pairsOf, ROOT, runPaired, type SliceValues, valueFigure} from './paired.js'
import {pin} from './pin.js'
import {splitOf, threadCpu} from './proc.js'

const {values} = parseArgs({
  options: {
    ...PAIRED_OPTIONS,
    concurrency: {type: 'string', default: '64'},
    rate: {type: 'string', default: '1000'},
    /** Figure (b)'s `--workers 1` side at this rate instead of --rate: at half of it, one worker runs at the rate each of two does. */
    'one-rate': {type: 'string'},
    'profile-slices': {type: 'string'},
    /** Figure (b)'s fixed warm-up before the measured interval, ms. */
    'warmup-ms': {type: 'string', default: '12000'},
    /** machinery: figure (a) only; ratio: figure (b) only. */
    only: {type: 'string'},
    /** Two cores: the client's cores ('0,1' by default; '0' keeps it off the cluster's core 1, both workers then share core 0). */
    'client-cores': {type: 'string', default: '0,1'},
    /** Internal: this process is the profiled child of figure (a); it prints one WINDOW line per run. */
    'profile-child': {type: 'boolean', default: false},
  },
})
if (!['0', '0,1'].includes(values['client-cores'])) throw new Error(`--client-cores takes 0 or 0,1: ${values['client-cores']}`)
const concurrency = Number(values.concurrency)
const ratioWarmupMs = Number(values['warmup-ms'])
const rate = Number(values.rate)
const oneRate = values['one-rate'] === undefined ? rate : Number(values['one-rate'])
const profileSlices = values.only === 'ratio' ? 0 : values['profile-slices'] === undefined ? (values.quick ? 3 : 6) : Number(values['profile-slices'])
const runRatio = values.only !== 'machinery'
const KEPT_RATE = 0.1
const DB = 'pooltool_workers'
const SEED_DOCS = 1000
/** The progress ticks fall 1, 2 and 3 s into the measured interval, on the series' boundaries (1 s intervals). */
const RUN_MS = 4000
const PROFILE_INTERVAL_US = 100
const PROFILE_DIR = path.join(BENCH_OUTPUT_DIR, 'workers-prof')
const THIS_URL = import.meta.url
const THIS_FILE = fileURLToPath(THIS_URL)

/** Now on the clock V8's profiles stamp their samples with (CLOCK_MONOTONIC), µs. */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)

/** Pins as the header says; returns what shares what, for the output. */
function pinCores(serverPid: number): string {
  const cores = availableParallelism()
  if (cores >= 3) return pin(process.pid, '0,1') && pin(serverPid, 2) ? 'client (main thread, workers) on cores 0-1, cluster on core 2' : 'not pinned (no taskset)'
  if (cores === 2 && values['client-cores'] === '0') return pin(process.pid, 0) && pin(serverPid, 1) ? 'client (main thread, workers) on core 0, cluster on core 1: the two workers share core 0, neither shares the cluster\'s' : 'not pinned (no taskset)'
  if (cores === 2) return pin(process.pid, '0,1') && pin(serverPid, 1) ? 'client (main thread, workers) on cores 0-1, cluster on core 1: it shares core 1 with whichever client thread runs there' : 'not pinned (no taskset)'
  return 'not pinned (one core: everything shares it)'
}

interface Mark {
  cpu: number
  atUs: number
  elapsedMs: number
  /** CPU by thread (threadCpu), undefined off Linux. */
  threads?: Map<number, number>
}

/** One runBench of `threads` workers; its first three progress ticks (1, 2, 3 s into the measured interval) and its series. */
async function benchSlice(target: Target, threads: number, warmupMs = 0, sliceRate = rate) {
  const config = toBenchConfig({
    workload: 'find', 'doc-size': 256, 'seed-docs': SEED_DOCS, db: DB, keep: false, model: 'pool',
    concurrency: String(concurrency), duration: RUN_MS, warmup: warmupMs, workers: threads, rate: sliceRate,
  })
  const marks: Mark[] = []
  // Threads there before the run: the main thread and V8's and libuv's; a run's worker threads are new.
  const before = new Set(threadCpu()?.keys() ?? [])
  const result = await runBench(target, config, {
    signal: new AbortController().signal,
    onTick: (_cell, tick) => {
      if (marks.length < 3) marks.push({cpu: cpuMicros(), atUs: monotonicUs(), elapsedMs: tick.elapsedMs, threads: threadCpu()})
    },
  })
  const endUs = monotonicUs()
  const run = result.runs[0]!
  const opsFrom = (fromMs: number) => run.series?.find((point) => point.tMS === fromMs)
  // A loaded machine can hold a tick past the run's end (the event loop late by half a second): no window, the slice measured nothing.
  return {marks: marks.length >= 3 ? marks : undefined, endUs, opsFrom, before}
}

/** Figure (b)'s slice: CPU per operation over the second between the ticks at 2 s and 3 s. */
async function cpuSlice(target: Target, threads: number, sliceRate: number): Promise<SliceValues> {
  // Warmed up first (--warmup-ms, see the header): each --workers 2 slice starts two fresh worker threads, whose code
  // V8 compiles from cold, while --workers 1 runs on this process's main thread, warm from the slices before. Without
  // a warm-up the ratio was the cold JIT's: 2.60 [2.31, 2.89] on an idle machine (one 281 µs/op, two 720); with 3 s,
  // 1.81 [1.75, 1.92], the two isolates' compilation still running on V8's background threads; with 12 s, 1.835 (see the header).
  const {marks, opsFrom, before} = await benchSlice(target, threads, ratioWarmupMs, sliceRate)
  const point = opsFrom(2000)
  if (!marks || !point) return {ops: point?.ops ?? 0, cpuUsPerOp: Number.NaN, windowMs: Number.NaN, mainUsPerOp: Number.NaN, workersUsPerOp: Number.NaN, backgroundUsPerOp: Number.NaN}
  const cpuUsPerOp = (marks[2]!.cpu - marks[1]!.cpu) / point.ops
  const keptRate = Math.abs(point.ops / ((sliceRate * point.durationMS) / 1000) - 1) <= KEPT_RATE
  const from = marks[1]!.threads
  const to = marks[2]!.threads
  const split = from && to ? splitOf(from, to, before) : {main: Number.NaN, workers: Number.NaN, background: Number.NaN}
  return {
    ops: point.ops,
    cpuUsPerOp: keptRate ? cpuUsPerOp : Number.NaN,
    windowMs: marks[2]!.elapsedMs - marks[1]!.elapsedMs,
    mainUsPerOp: split.main / point.ops,
    workersUsPerOp: split.workers / point.ops,
    backgroundUsPerOp: split.background / point.ops,
  }
}

/** A slice's CPU per operation by thread, for the pair lines: main · worker threads · V8 background. */
function splitText(v: SliceValues): string {
  if (Number.isNaN(v.mainUsPerOp!)) return ''
  return ` (main ${v.mainUsPerOp!.toFixed(0)} · workers ${v.workersUsPerOp!.toFixed(0)} · V8 background ${v.backgroundUsPerOp!.toFixed(0)})`
}

// ---- figure (a): the profiled child, and the reading of its profiles ----

interface ProfileWindow {
  slice: number
  fromUs: number
  toUs: number
  endUs: number
  ops: number
}

/** The child: `--profile-slices` runs of two workers, each's window on the profiles' clock. */
async function profileChild(target: Target): Promise<void> {
  for (let slice = 0; slice < profileSlices; slice++) {
    const {marks, endUs, opsFrom} = await benchSlice(target, 2)
    if (!marks) continue
    const ops = (opsFrom(1000)?.ops ?? Number.NaN) + (opsFrom(2000)?.ops ?? Number.NaN)
    const window: ProfileWindow = {slice, fromUs: marks[0]!.atUs, toUs: marks[2]!.atUs, endUs, ops}
    console.log(`WINDOW ${JSON.stringify(window)}`)
  }
}

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface Profile {
  nodes: {id: number; callFrame: CallFrame; children?: number[]}[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
}

/** Functions of worker-thread.js that are the load itself, not the machinery: the engine's driver and the series' gauges. */
const WORKER_THREAD_LOAD = new Set(['main', 'execute', 'sampleSeries'])

/** Is this frame the machinery's own code (see the header)? `mainThread`: encoding there is the result's, not the machinery's. */
function isMachinery(frame: CallFrame, mainThread: boolean): boolean {
  const {url, functionName: name} = frame
  if (url.endsWith('/bench/worker-load.js')) return true
  // The module's own body (line 0) runs once, at the thread's start.
  if (url.endsWith('/bench/worker-thread.js')) return !WORKER_THREAD_LOAD.has(name) && frame.lineNumber > 0
  if (url.startsWith('node:internal/worker') || url === 'node:internal/per_context/messageport') return true
  return !mainThread && url.endsWith('/metrics/histograms.js') && (name === 'toPortable' || name === 'encodeHistogram' || name === 'toBucketCounts')
}

interface WindowTotals {
  busyUs: number
  machineryUs: number
  /** From the last tick to the run's return (the end's encoding and merging, the threads closed). */
  endMachineryUs: number
}

/**
 * Busy and machinery sample time of every profile (thread) in each window; `byFunction`: the machinery's
 * self time in the windows by thread, function and file, summed over them (what stands in the way of the goal).
 */
function readProfiles(files: readonly string[], windows: readonly ProfileWindow[]): {totals: WindowTotals[]; byFunction: Map<string, number>} {
  const totals = windows.map(() => ({busyUs: 0, machineryUs: 0, endMachineryUs: 0}))
  const byFunction = new Map<string, number>()
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread.
    const mainThread = path.basename(file).split('.')[4] === '0'
    const byId = new Map(profile.nodes.map((node) => [node.id, node]))
    const machinery = new Map<number, boolean>()
    const idle = new Set<number>()
    const mark = (id: number, inherited: boolean): void => {
      const node = byId.get(id)!
      // This benchmark's own hooks (its progress marks, called from the machinery's tick) are not the machinery's.
      const own = node.callFrame.url === THIS_URL ? false : inherited || isMachinery(node.callFrame, mainThread)
      machinery.set(id, own)
      if (node.callFrame.functionName === '(idle)') idle.add(id)
      for (const child of node.children ?? []) mark(child, own)
    }
    mark(profile.nodes[0]!.id, false)
    let at = profile.startTime
    profile.samples.forEach((id, i) => {
      const weight = profile.timeDeltas[i] ?? 0
      at += weight
      if (idle.has(id)) return
      windows.forEach((w, index) => {
        if (at >= w.fromUs && at < w.toUs) {
          totals[index]!.busyUs += weight
          if (!machinery.get(id)) return
          totals[index]!.machineryUs += weight
          const {functionName, url, lineNumber} = byId.get(id)!.callFrame
          const key = `${mainThread ? 'main' : 'worker'} · ${functionName || '(anonymous)'} · ${url ? `${url.replace(/^.*\/(node_modules|dist)\//, '')}:${lineNumber + 1}` : '(native)'}`
          byFunction.set(key, (byFunction.get(key) ?? 0) + weight)
        } else if (at >= w.toUs && at < w.endUs && machinery.get(id)) totals[index]!.endMachineryUs += weight
      })
    })
  }
  return {totals, byFunction}
}

/** Runs the profiled child and reads its profiles: figure (a), and lines for the output. */
async function machineryFigure(): Promise<{figure: Figure; extra: Record<string, unknown>}> {
  rmSync(PROFILE_DIR, {recursive: true, force: true})
  await mkdir(PROFILE_DIR, {recursive: true})
  const args = ['--cpu-prof', '--cpu-prof-interval', String(PROFILE_INTERVAL_US), '--cpu-prof-dir', PROFILE_DIR, '--import', 'tsx', THIS_FILE, '--profile-child', '--profile-slices', String(profileSlices), '--rate', String(rate), '--concurrency', String(concurrency)]
  const child = spawn(process.execPath, args, {cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit']})
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  if (code !== 0) throw new Error(`the profiled child exited with ${code}:\n${out}`)
  const windows = out.split('\n').filter((line) => line.startsWith('WINDOW ')).map((line) => JSON.parse(line.slice('WINDOW '.length)) as ProfileWindow)
  const files = readdirSync(PROFILE_DIR).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(PROFILE_DIR, f))
  const {totals, byFunction} = readProfiles(files, windows)
  const shares = totals.map((t) => (t.busyUs > 0 ? (t.machineryUs / t.busyUs) * 100 : Number.NaN))
  totals.forEach((t, i) => {
    const w = windows[i]!
    console.log(
      `round ${i + 1} (profiled): ${w.ops} ops in ${((w.toUs - w.fromUs) / 1000).toFixed(0)} ms · busy ${(t.busyUs / w.ops).toFixed(1)} µs/op, ` +
        `machinery ${(t.machineryUs / w.ops).toFixed(2)} µs/op = ${shares[i]!.toFixed(2)} % · after the last tick (end, merge, close) machinery ${(t.endMachineryUs / 1000).toFixed(1)} ms`,
    )
  })
  const machineryUs = [...byFunction.values()].reduce((a, b) => a + b, 0)
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 15)
  console.log(`the machinery's self time in the windows, by thread and function (share of its ${(machineryUs / 1000).toFixed(1)} ms):`)
  for (const [key, us] of top) console.log(`  ${((us / machineryUs) * 100).toFixed(1).padStart(5)} %  ${key}`)
  const figure = valueFigure({
    label: `worker machinery CPU per operation, share of an operation's (2 workers, findOne ${rate}/s, c=${concurrency}, profiled)`,
    unit: '%',
    samples: shares,
    goal: 1,
    note: `${files.length} thread profiles sampled every ${PROFILE_INTERVAL_US} µs; steady state (ticks 1 s → 3 s); per run besides: machinery after the last tick median ${(median(totals.map((t) => t.endMachineryUs)) / 1000).toFixed(1)} ms`,
  })
  const extra = {
    machineryTopFunctions: top.map(([key, us]) => ({function: key, ms: us / 1000})),
    machinery: totals.map((t, i) => ({
      ops: windows[i]!.ops,
      busyUsPerOp: t.busyUs / windows[i]!.ops,
      machineryUsPerOp: t.machineryUs / windows[i]!.ops,
      sharePercent: shares[i],
      endMachineryMs: t.endMachineryUs / 1000,
    })),
  }
  return {figure, extra}
}

// ---- main ----

/** An embedded cluster (its own process, pinned as the header says) and a target on it, for `body`. */
async function withCluster<T>(body: (target: Target, cores: string, pid: number) => Promise<T>): Promise<T> {
  const sim = await startSimCluster({})
  const cores = pinCores(sim.info.pid)
  const target = await resolveTarget({flagUri: sim.info.uri, connection: {appName: 'pooltool-workers', timeoutMs: 10_000}})
  try {
    return await body(target, cores, sim.info.pid)
  } finally {
    await target.close()
    await sim.stop()
  }
}

if (values['profile-child']) await withCluster((target) => profileChild(target))
else {
  const {pairs, warmupPairs} = runRatio ? pairsOf(values, {full: 8, quick: 3, warmup: 1}) : {pairs: 0, warmupPairs: 0}
  const record = benchRecord('workers', {
    pairs,
    warmupPairs,
    slice: `(b) runBench --workers 1 or 2, ${ratioWarmupMs} ms warm-up, ${RUN_MS} ms measured; CPU between its ticks at 2 s and 3 s over the operations of its series interval [2 s, 3 s). (a) ${profileSlices} runs of --workers 2 profiled, busy samples between the ticks at 1 s and 3 s`,
  })
  console.log(`bench:workers · findOne by _id · ${rate}/s (open loop) · concurrency ${concurrency}\n${record.header}`)
  const figures: Figure[] = []
  let extra: Record<string, unknown> = {}
  if (runRatio) {
    const run = await withCluster(async (target, cores, pid) => {
      console.log(`figure (b): --workers 1${oneRate === rate ? '' : ` at ${oneRate}/s`} against --workers 2 · embedded cluster pid ${pid} · ${cores}`)
      type Side = 'one' | 'two'
      const paired = await runPaired<Side>({
        sides: ['one', 'two'],
        pairs,
        warmupPairs,
        slice: (side) => (side === 'one' ? cpuSlice(target, 1, oneRate) : cpuSlice(target, 2, rate)),
        onPair: (index, v, measured) =>
          console.log(
            `${measured ? `pair ${index - warmupPairs + 1}` : `warm-up ${index + 1}`} (${index % 2 === 0 ? 'A→B' : 'B→A'}): ` +
              (['one', 'two'] as const).map((s) => `${s} ${v[s].ops} ops ${v[s].cpuUsPerOp!.toFixed(1)} µs CPU/op${Number.isNaN(v[s].cpuUsPerOp!) ? ' (did not keep the rate)' : splitText(v[s])}`).join(' | ') +
              ` · ratio ${(v.two.cpuUsPerOp! / v.one.cpuUsPerOp!).toFixed(3)}`,
          ),
      })
      return {paired, cores}
    })
    figures.push(
      pairedFigure(run.paired, {
        label: `client CPU per operation (findOne, ${rate}/s${oneRate === rate ? '' : `, one worker at ${oneRate}/s`}, c=${concurrency}), 2 workers / 1`,
        metric: 'cpuUsPerOp',
        a: 'one',
        b: 'two',
        goal: 1.1,
        note: `${run.cores}; a pair is left out when a side did not keep ${rate}/s in its window (±${KEPT_RATE * 100} %)`,
      }),
    )
    // Where each side's CPU per operation went, medians over the kept pairs: a window still in the worker threads'
    // warm-up shows as V8 background CPU (compilation) far above the one worker's.
    const kept = run.paired.pairs.filter((pair) => Number.isFinite(pair.one.cpuUsPerOp!) && Number.isFinite(pair.two.cpuUsPerOp!))
    const threads = Object.fromEntries(
      (['one', 'two'] as const).map((side) => [side, Object.fromEntries((['mainUsPerOp', 'workersUsPerOp', 'backgroundUsPerOp'] as const).map((key) => [key, median(kept.map((pair) => pair[side][key]!))]))]),
    )
    const known = kept.length > 0 && Number.isFinite(threads.one!.mainUsPerOp!)
    console.log(
      `CPU per operation by thread (medians of the kept pairs, /proc/self/task): ` +
        (known
          ? (['one', 'two'] as const).map((side) => `${side}: main ${threads[side]!.mainUsPerOp!.toFixed(0)} · worker threads ${threads[side]!.workersUsPerOp!.toFixed(0)} · V8 background ${threads[side]!.backgroundUsPerOp!.toFixed(0)} µs`).join(' | ')
          : kept.length === 0
            ? 'unknown (no pair kept)'
            : 'unknown (no /proc/self/task here)'),
    )
    extra.cpuByThread = threads
  }
  if (profileSlices > 0) {
    console.log(`\nfigure (a): ${profileSlices} runs of --workers 2 in a child under node --cpu-prof`)
    const machinery = await machineryFigure()
    figures.unshift(machinery.figure)
    extra = {...extra, ...machinery.extra}
  }
  console.log('')
  await record.finish(figures, extra)
}
