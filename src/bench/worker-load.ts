/**
 * `bench --workers N`: the run's load split over N worker threads (worker-thread.ts), each with its
 * own event loop, driver clients and pool. Threads, not processes: one process keeps one PID for
 * signals, one stdout and one server sampler, starts in milliseconds, and what limits one process
 * is its one event loop (the driver spends ~160 µs of CPU per operation there), which a thread
 * multiplies. Shares: worker w gets its part of the concurrency (shareOf), rate/N with its slots
 * offset by w/rate so the workers' schedules interleave into the run's, and its part of --ops.
 *
 * The parent merges exactly: latency histograms (per operation and per series interval too) are
 * added, counts and pool figures summed (pool peaks: the sum of each worker's peak, an upper bound),
 * series gauges summed per interval with the server connections the parent's sampler read.
 */
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'

import {fromPortable, type Histogram, mergeBucketCounts, mergeHistograms, percentileUs, type PortableHistogram, summarize} from '../metrics/histograms.js'
import {sum, sumRecords} from '../metrics/counts.js'
import type {PoolTelemetrySnapshot} from '../mongo/pool-telemetry.js'
import type {EngineMeasurement, EnginePlan} from './engine.js'
import type {LoadGenerator, LoadInput, LoadOutcome, LoadRunHooks, WorkerSummary} from './load-generator.js'
import {rateShareOf, shareOf, stagesShareOf} from './segment.js'
import type {SeriesGauges} from './series-gauges.js'
import type {EngineStage} from './stages.js'
import {type WarmupOutcome, WorkersJudge} from './warmup.js'
import {epochNowMs, type FromWorker, fromWorkerError, type ToWorker, type WorkerJob, type WorkerOutcome, type WorkerStage} from './worker-protocol.js'

/** How far ahead of now the workers' common start is set: time for the message to reach every thread. */
const START_MARGIN_MS = 20
const CLOSE_TIMEOUT_MS = 5000

/** The worker's module: compiled JS beside this file, or the TypeScript source through tsx (tests, benchmarks). */
function spawnWorker(job: WorkerJob): Worker {
  const here = import.meta.url
  if (here.endsWith('.ts')) {
    // A worker does not inherit the parent's --import loaders: register tsx in it first, then load the entry.
    const tsx = import.meta.resolve('tsx/esm/api')
    const entry = new URL('./worker-thread.ts', here).href
    return new Worker(`import(${JSON.stringify(tsx)}).then((m) => m.register()).then(() => import(${JSON.stringify(entry)}))`, {eval: true, workerData: job})
  }
  const entry = fileURLToPath(new URL('./worker-thread.js', here))
  if (!existsSync(entry)) throw new Error(`${entry} is missing: pooltool is not fully built (npm run build)`)
  return new Worker(entry, {workerData: job})
}

interface Thread {
  worker: Worker
  job: WorkerJob
  /** This worker's plan, set when the run starts. */
  plan?: EnginePlan
  send(message: ToWorker): void
  /** Resolves with the next message of `type` (or rejects when the thread fails or exits first). */
  next<T extends FromWorker['type']>(type: T): Promise<Extract<FromWorker, {type: T}>>
  outcome?: WorkerOutcome
  lastTick?: Extract<FromWorker, {type: 'tick'}>
}

export class WorkerThreadsLoad implements LoadGenerator {
  private threads: Thread[] = []
  private result?: LoadOutcome
  private closed?: Promise<void>

  constructor(
    private readonly input: LoadInput,
    private readonly count: number,
  ) {}

  async open(): Promise<void> {
    const {config, settings, cell} = this.input
    const {workloadFile, ...portable} = config
    // A workload file's operations are compiled functions: each worker loads the file itself.
    const file = workloadFile && {path: workloadFile.summary.path, ...(workloadFile.readNamespace ? {readNamespace: `${workloadFile.readNamespace.db}.${workloadFile.readNamespace.collection}`} : {})}
    for (let index = 0; index < this.count; index++) {
      const share = {index, count: this.count}
      const job: WorkerJob = {index, count: this.count, settings, config: portable, cell: {...cell, concurrency: shareOf(cell.concurrency, share)}, ...(file ? {workloadFile: file} : {})}
      this.threads.push(this.watch(spawnWorker(job), job))
    }
    const ready = await Promise.allSettled(this.threads.map((thread) => thread.next('ready')))
    const failed = ready.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) {
      await this.close()
      throw failed.reason
    }
  }

  /** Wires one thread's messages: waiters by type, ticks kept, a failure or exit rejects every waiter. */
  private watch(worker: Worker, job: WorkerJob): Thread {
    const waiters = new Map<string, {resolve(message: FromWorker): void; reject(error: Error): void}>()
    const buffered = new Map<string, FromWorker>()
    let failure: Error | undefined
    const fail = (error: Error) => {
      failure ??= error
      for (const waiter of waiters.values()) waiter.reject(failure)
      waiters.clear()
    }
    const thread: Thread = {
      worker,
      job,
      send: (message) => worker.postMessage(message),
      next: (type) =>
        new Promise((resolve, reject) => {
          const seen = buffered.get(type)
          if (seen) {
            buffered.delete(type)
            return resolve(seen as never)
          }
          if (failure) return reject(failure)
          waiters.set(type, {resolve: resolve as (message: FromWorker) => void, reject})
        }),
    }
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'tick') thread.lastTick = message
      if (message.type === 'failed') return fail(fromWorkerError(message.error))
      const waiter = waiters.get(message.type)
      waiters.delete(message.type)
      if (waiter) waiter.resolve(message)
      else buffered.set(message.type, message)
    })
    worker.on('error', (error) => fail(error))
    worker.on('exit', (code) => fail(new Error(`bench worker ${job.index} exited (code ${code})`)))
    return thread
  }

  async run(plan: EnginePlan, hooks: LoadRunHooks): Promise<EngineMeasurement<SeriesGauges>> {
    const n = this.count
    const serverConnections: Array<Record<string, number>> = []
    let seriesTimer: NodeJS.Timeout | undefined
    let measuring = false
    const onMeasureStart = () => {
      if (measuring) return
      measuring = true
      hooks.onMeasureStart?.()
      // The parent reads the servers at each series interval's end, as one engine would.
      if (plan.seriesIntervalMs !== undefined) {
        const every = plan.seriesIntervalMs
        seriesTimer = setInterval(() => serverConnections.push(hooks.serverConnections()), every)
      }
    }
    for (const thread of this.threads) {
      const share = {index: thread.job.index, count: n}
      const own: EnginePlan = {
        ...plan,
        concurrency: shareOf(plan.concurrency, share),
        rate: rateShareOf(plan.rate, share),
        ops: plan.ops === undefined ? undefined : shareOf(plan.ops, share),
        stages: stagesShareOf(plan.stages, share),
        slotOffsetMs: plan.rate === undefined ? undefined : (thread.job.index * 1000) / plan.rate,
        seriesHistograms: true,
      }
      thread.plan = own
    }
    const stop = () => this.threads.forEach((thread) => thread.send({type: 'stop'}))
    hooks.signal.addEventListener('abort', stop, {once: true})
    // A stop request that came while the workers were connecting: they start stopped, as one engine would.
    if (hooks.signal.aborted) stop()
    // --warmup auto: the parent judges the workers' summed windows and ends every worker's warm-up at once,
    // so their measured intervals (and series) start together and merge interval by interval.
    const judge = plan.settle && plan.warmupMs > 0 ? new WorkersJudge(plan.settle, n, (outcome) => this.threads.forEach((thread) => thread.send({type: 'warmup-end', outcome}))) : undefined
    const onWindow = (message: FromWorker) => {
      if (message.type === 'warmup-window') judge?.window(message.window, message.index, message.startPool)
    }
    if (judge) for (const thread of this.threads) thread.worker.on('message', onWindow)
    const ticker = this.threads[0]!
    const onTick = (message: FromWorker) => {
      if (message.type !== 'tick' || !hooks.onTick) return
      const ticks = this.threads.map((thread) => thread.lastTick).filter((tick) => tick !== undefined)
      hooks.onTick({
        elapsedMs: message.elapsedMs,
        ops: ticks.reduce((sum, tick) => sum + tick.ops, 0),
        errors: ticks.reduce((sum, tick) => sum + tick.errors, 0),
        opsPerSecLastTick: ticks.reduce((sum, tick) => sum + tick.opsPerSecLastTick, 0),
        inUse: ticks.reduce((sum, tick) => sum + tick.inUse, 0),
        latencyUs: mergeBucketCounts(ticks.map((tick) => tick.latencyUs)),
      })
    }
    ticker.worker.on('message', onTick)
    try {
      const measureStarts = this.threads.map((thread) => thread.next('measure-start').then(onMeasureStart))
      const atEpochMs = epochNowMs() + START_MARGIN_MS
      for (const thread of this.threads) thread.send({type: 'start', atEpochMs, plan: thread.plan!})
      const done = await Promise.all(this.threads.map((thread) => thread.next('done')))
      await Promise.allSettled(measureStarts)
      done.forEach((message, i) => (this.threads[i]!.outcome = message.outcome))
      this.result = mergeOutcomes(this.threads.map((thread) => ({index: thread.job.index, plan: thread.plan!, outcome: thread.outcome!})), serverConnections, judge?.result)
      return this.result.measurement
    } finally {
      clearInterval(seriesTimer)
      ticker.worker.off('message', onTick)
      if (judge) for (const thread of this.threads) thread.worker.off('message', onWindow)
      hooks.signal.removeEventListener('abort', stop)
    }
  }

  outcome(): LoadOutcome {
    if (!this.result) throw new Error('WorkerThreadsLoad: outcome() before run()')
    return this.result
  }

  close(): Promise<void> {
    this.closed ??= Promise.all(
      this.threads.map(async (thread) => {
        const closed = thread.next('closed').catch(() => undefined)
        thread.send({type: 'close'})
        const timer = setTimeout(() => void thread.worker.terminate(), CLOSE_TIMEOUT_MS)
        await Promise.race([closed, new Promise((resolve) => thread.worker.once('exit', resolve))])
        clearTimeout(timer)
        await thread.worker.terminate()
      }),
    ).then(() => undefined)
    return this.closed
  }
}



const merged = (portable: ReadonlyArray<PortableHistogram | undefined | null>): Histogram => mergeHistograms(portable.filter((p) => p !== undefined && p !== null).map(fromPortable))

/**
 * The run's stages from the workers' parts: every worker started at one instant and ran the same
 * stage boundaries, so a stage's window is the first worker's (the others' differ by the start skew);
 * counts, in-flight time and concurrency or rate shares are summed, histograms added. The peak in
 * flight is the sum of each worker's peak: an upper bound, as for the pool's peaks.
 */
function mergeStages(outcomes: readonly WorkerOutcome[]): EngineStage[] {
  const reached = Math.max(0, ...outcomes.map((o) => o.stages.length))
  return Array.from({length: reached}, (_, index) => {
    const parts = outcomes.map((o) => o.stages[index]).filter((stage): stage is WorkerStage => stage !== undefined)
    const first = parts[0]!
    const openLoop = parts.every((stage) => stage.scheduled !== null)
    return {
      index,
      startMs: first.startMs,
      durationMs: first.durationMs,
      concurrency: sum(parts.map((stage) => stage.concurrency ?? 0)),
      rate: first.rate === null ? null : sum(parts.map((stage) => stage.rate ?? 0)),
      ops: sum(parts.map((stage) => stage.ops)),
      errors: sum(parts.map((stage) => stage.errors)),
      scheduled: openLoop ? sum(parts.map((stage) => stage.scheduled!)) : null,
      missed: sum(parts.map((stage) => stage.missed)),
      inFlightPeak: sum(parts.map((stage) => stage.inFlightPeak)),
      inFlightAreaMs: sum(parts.map((stage) => stage.inFlightAreaMs)),
      latencyUs: merged(parts.map((stage) => stage.latencyUs)),
      latencyCorrectedUs: openLoop && parts.every((stage) => stage.latencyCorrectedUs !== null) ? merged(parts.map((stage) => stage.latencyCorrectedUs)) : null,
    }
  })
}

function mergePools(pools: readonly PoolTelemetrySnapshot[]): PoolTelemetrySnapshot {
  return {
    created: sum(pools.map((p) => p.created)),
    closed: sumRecords(pools.map((p) => p.closed)),
    checkOutFailed: sumRecords(pools.map((p) => p.checkOutFailed)),
    cleared: sum(pools.map((p) => p.cleared)),
    total: sum(pools.map((p) => p.total)),
    inUse: sum(pools.map((p) => p.inUse)),
    peakTotal: sum(pools.map((p) => p.peakTotal)),
    peakInUse: sum(pools.map((p) => p.peakInUse)),
  }
}

/** The workers' outcomes as one run's: exact where histograms allow, sums elsewhere. Pure. */
export function mergeOutcomes(
  parts: ReadonlyArray<{index: number; plan: EnginePlan; outcome: WorkerOutcome}>,
  serverConnections: ReadonlyArray<Record<string, number>>,
  decidedWarmup?: WarmupOutcome,
): LoadOutcome {
  const outcomes = parts.map((part) => part.outcome)
  const openLoop = outcomes.every((o) => o.scheduled !== null)
  const names = [...new Set(outcomes.flatMap((o) => Object.keys(o.latencyByOpUs)))]
  const intervals = Math.max(0, ...outcomes.map((o) => o.series.length))
  const series: EngineMeasurement<SeriesGauges>['series'] = Array.from({length: intervals}, (_, i) => {
    const points = outcomes.map((o) => o.series[i]).filter((p) => p !== undefined)
    // The engine's encodings of its intervals; each interval's exact max is in its latencyMaxUs.
    const latency = mergeHistograms(outcomes.flatMap((o) => (o.seriesLatencyUs[i] === undefined ? [] : [fromPortable({encoded: o.seriesLatencyUs[i]!, maxValue: o.series[i]?.latencyMaxUs ?? 0})])))
    const checkout = merged(points.map((p) => p.checkoutWaitUs))
    const durationMS = Math.max(...points.map((p) => p.durationMS))
    const ops = sum(points.map((p) => p.ops))
    return {
      tMS: points[0]!.tMS,
      durationMS,
      ops,
      errors: sum(points.map((p) => p.errors)),
      opsPerSec: durationMS > 0 ? Math.round((ops * 1000 * 10) / durationMS) / 10 : 0,
      ...(latency.totalCount === 0 ? {} : {latencyP50Us: percentileUs(latency, 50), latencyP99Us: percentileUs(latency, 99), latencyMaxUs: latency.maxValue}),
      poolInUse: sum(points.map((p) => p.poolInUse)),
      poolTotal: sum(points.map((p) => p.poolTotal)),
      ...(checkout.totalCount === 0 ? {} : {checkoutWaitP99Us: percentileUs(checkout, 99)}),
      serverConnections: serverConnections[Math.min(i, serverConnections.length - 1)] ?? {},
    }
  })
  const measurement: EngineMeasurement<SeriesGauges> = {
    ops: sum(outcomes.map((o) => o.ops)),
    errors: sum(outcomes.map((o) => o.errors)),
    errorsByClass: sumRecords(outcomes.map((o) => o.errorsByClass)),
    scheduled: openLoop ? sum(outcomes.map((o) => o.scheduled!)) : null,
    missed: sum(outcomes.map((o) => o.missed)),
    missedByReason: sumRecords(outcomes.map((o) => o.missedByReason)),
    aborted: sum(outcomes.map((o) => o.aborted)),
    durationMs: Math.max(...outcomes.map((o) => o.durationMs)),
    measureStartEpochMs: Math.min(...outcomes.map((o) => o.measureStartEpochMs)),
    latencyUs: merged(outcomes.map((o) => o.latencyUs)),
    latencyCorrectedUs: openLoop ? merged(outcomes.map((o) => o.latencyCorrectedUs)) : null,
    scheduleLagUs: openLoop ? merged(outcomes.map((o) => o.scheduleLagUs)) : null,
    latencyByOpUs: Object.fromEntries(names.map((name) => [name, merged(outcomes.map((o) => o.latencyByOpUs[name]))])),
    series,
    stages: mergeStages(outcomes),
    // The parent's verdict (--warmup auto) or the workers' shared fixed warm-up; its length the longest worker's.
    warmup: {...(decidedWarmup ?? outcomes[0]?.warmup ?? {mode: 'off', ms: 0, endedBy: 'off'}), ms: Math.max(0, ...outcomes.map((o) => o.warmup?.ms ?? 0))},
    interrupted: outcomes.some((o) => o.interrupted),
  }
  const perWorker: WorkerSummary[] = parts.map(({index, plan, outcome}) => ({
    index,
    concurrency: plan.concurrency,
    rate: plan.rate ?? null,
    ops: outcome.ops,
    errors: outcome.errors,
    opsPerSec: outcome.durationMs > 0 ? Math.round((outcome.ops * 1000 * 10) / outcome.durationMs) / 10 : 0,
    latencyP99Us: summarize(fromPortable(outcome.latencyUs)).p99,
    poolCreated: outcome.pool.created,
    poolPeakInUse: outcome.pool.peakInUse,
  }))
  const starts = outcomes.map((o) => o.startedAtEpochMs)
  return {
    measurement,
    pool: mergePools(outcomes.map((o) => o.pool)),
    telemetry: {
      checkoutWaitUs: merged(outcomes.map((o) => o.telemetry.checkoutWaitUs)),
      checkoutWaitDriverMS: merged(outcomes.map((o) => o.telemetry.checkoutWaitDriverMS)),
      setupUs: merged(outcomes.map((o) => o.telemetry.setupUs)),
      setupDriverMS: merged(outcomes.map((o) => o.telemetry.setupDriverMS)),
    },
    clients: sum(outcomes.map((o) => o.clients)),
    workers: {perWorker, startSkewMS: Math.round((Math.max(...starts) - Math.min(...starts)) * 100) / 100},
  }
}
