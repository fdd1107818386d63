/**
 * What the parent and a bench worker thread (`--workers`) tell each other. Everything crosses the
 * thread boundary by structured clone, so histograms travel encoded (HDR's compressed form, with
 * their exact max) and are added up exactly on the parent's side.
 *
 *   parent                         worker
 *     ── workerData: WorkerJob ──▶  opens its clients
 *     ◀── ready | failed
 *     ── start {plan, atEpochMs} ▶  waits for the instant, runs its plan
 *     ◀── warmup-window …           (--warmup auto: each warm-up window; the parent judges them all)
 *     ── warmup-end {outcome} ──▶  (once the parent's judge has decided: measuring begins)
 *     ◀── measure-start, tick …
 *     ── stop (a stop request) ─▶
 *     ◀── done {outcome}
 *     ── close ─────────────────▶  closes its clients (after the parent read the servers at the end)
 *     ◀── closed
 */
import type {BucketCounts, PortableHistogram} from '../metrics/histograms.js'
import type {ClientSettings} from '../mongo/client.js'
import type {PoolTelemetrySnapshot} from '../mongo/pool-telemetry.js'
import type {EnginePlan} from './engine.js'
import type {LoadCell} from './load-generator.js'
import type {SeriesInterval} from './series.js'
import type {EngineStage} from './stages.js'
import type {BenchConfig} from './types.js'
import type {WarmupOutcome, WarmupWindow} from './warmup.js'

export interface WorkerJob {
  index: number
  count: number
  settings: ClientSettings
  /** The run's config; a workload file (compiled functions) does not cross threads: the worker loads it again from `workloadFile`. */
  config: Omit<BenchConfig, 'workloadFile'>
  /** --workload-file: the file and --read-namespace, for the worker to load (the parent checked them before any load). */
  workloadFile?: {path: string; readNamespace?: string}
  /** This worker's share: its concurrency, the model and the per-worker pool size. */
  cell: LoadCell
}

/** A series interval as a worker closes it: the pool's gauges and the interval's checkouts, encoded. */
export type WorkerSeriesPoint = SeriesInterval & {poolInUse: number; poolTotal: number; checkoutWaitUs?: PortableHistogram}

export interface WorkerOutcome {
  ops: number
  errors: number
  errorsByClass: Record<string, number>
  scheduled: number | null
  missed: number
  missedByReason: Record<string, number>
  aborted: number
  durationMs: number
  /** Its engine's measured interval's start on the shared wall clock, ms. */
  measureStartEpochMs: number
  interrupted: boolean
  latencyUs: PortableHistogram
  latencyCorrectedUs: PortableHistogram | null
  scheduleLagUs: PortableHistogram | null
  latencyByOpUs: Record<string, PortableHistogram>
  series: WorkerSeriesPoint[]
  /** Each series interval's latency: encoded by the engine (its exact max is the interval's latencyMaxUs). */
  seriesLatencyUs: string[]
  /** --stages: this worker's part of each stage reached, histograms encoded. */
  stages: WorkerStage[]
  pool: PoolTelemetrySnapshot
  telemetry: {checkoutWaitUs: PortableHistogram; checkoutWaitDriverMS: PortableHistogram; setupUs: PortableHistogram; setupDriverMS: PortableHistogram}
  clients: number
  /** Its warm-up (with --warmup auto: as the parent decided it, its length this worker's own). */
  warmup: WarmupOutcome
  /** When its engine started, on the shared wall clock (performance.timeOrigin + now), ms. */
  startedAtEpochMs: number
}

/** A stage as a worker measured it (EngineStage with its histograms encoded). */
export type WorkerStage = Omit<EngineStage, 'latencyUs' | 'latencyCorrectedUs'> & {latencyUs: PortableHistogram; latencyCorrectedUs: PortableHistogram | null}

/** An error as it crosses the thread boundary: what errorClass and the command's error handling read. */
export interface WorkerError {
  name: string
  message: string
  code?: number | string
  codeName?: string
}

/** `start`: the worker's own plan (its shares of the run's) and the instant every worker starts at. */
export type ToWorker = {type: 'start'; atEpochMs: number; plan: EnginePlan} | {type: 'warmup-end'; outcome: WarmupOutcome} | {type: 'stop'} | {type: 'close'}

export type FromWorker =
  | {type: 'ready'}
  | {type: 'failed'; error: WorkerError}
  | {type: 'warmup-window'; index: number; window: WarmupWindow; startPool?: number}
  | {type: 'measure-start'}
  /** latencyUs: the run's histogram so far, as bucket counts (every second: far cheaper than the encoding; see BucketCounts). */
  | {type: 'tick'; elapsedMs: number; ops: number; errors: number; opsPerSecLastTick: number; inUse: number; latencyUs: BucketCounts}
  | {type: 'done'; outcome: WorkerOutcome}
  | {type: 'closed'}

export function toWorkerError(error: unknown): WorkerError {
  const e = (error ?? {}) as {name?: unknown; message?: unknown; code?: unknown; codeName?: unknown}
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : String(error),
    ...(typeof e.code === 'number' || typeof e.code === 'string' ? {code: e.code} : {}),
    ...(typeof e.codeName === 'string' ? {codeName: e.codeName} : {}),
  }
}

/** The error again on the parent's side, with the name and codes the classifiers look at. */
export function fromWorkerError(error: WorkerError): Error {
  return Object.assign(new Error(error.message), error)
}

/** Now on the wall clock every thread shares, with performance.now()'s resolution. */
export function epochNowMs(): number {
  return performance.timeOrigin + performance.now()
}
