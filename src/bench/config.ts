/**
 * From `bench` flag values to a frozen BenchConfig, rejecting impossible
 * combinations with one-line usage errors.
 */
import {BENCH_DEFAULTS, DEFAULT_SERIES_INTERVAL_MS, MAX_WORKERS} from '../defaults.js'
import {usageError} from '../errors.js'
import {parseChoiceList, parseIntegerList} from '../parse/lists.js'
import {parseConcurrencies} from './concurrency.js'
import {KEY_DISTRIBUTIONS, type KeyDistribution} from './key-dist.js'
import {checkBenchDatabaseName} from './namespace.js'
import {checkRunId, parseSegment, parseStartAt, type Segment, START_ALL_READY} from './segment.js'
import type {WorkloadFile} from './workload-file.js'
import {picksKeys} from './workloads.js'
import {type BenchConfig, MIXABLE_OPS, type MixableOp, type OpTimeout, POOL_MODELS, TIMEOUT_SIDES, type TimeoutSide, type WorkloadKind, WORKLOADS, type WorkloadName} from './types.js'
import {type LoadStage, stagedLoadOf} from './stages.js'
import {AUTO_FALLBACK_MS, SETTLE_RULE} from './warmup.js'

export interface BenchFlagValues {
  /** Absent: BENCH_DEFAULTS.workload, or the workload file's operations. */
  workload?: string
  'workload-file'?: string
  'read-namespace'?: string
  mix?: string
  'doc-size': number
  'seed-docs': number
  'key-dist'?: string
  /** Milliseconds (a duration flag). */
  'op-timeout'?: number
  'timeout-side'?: string
  workers?: number
  segment?: string
  'run-id'?: string
  'start-at'?: string
  db: string
  keep: boolean
  model: string
  concurrency: string
  'max-pool-size'?: string
  'min-pool-size'?: number
  'max-connecting'?: number
  'max-idle-time-ms'?: number
  'wait-queue-timeout-ms'?: number
  rate?: number
  /** Durations in milliseconds (the CLI's duration flags parse `10s`, `250ms` …); absent: BENCH_DEFAULTS. */
  duration?: number
  ops?: number
  /** Milliseconds, or 'auto' (until throughput settles, warmup.ts). */
  warmup?: number | 'auto'
  slo?: number
  'sample-interval'?: number
  'series-interval'?: number
  /** `10s:8,30s:64` or `10s:500/s,…` (see stages.ts). */
  stages?: string
}

// Defined in src/defaults.ts, which the bench command's flags read without loading this module (and zod, yaml).
export {DEFAULT_SERIES_INTERVAL_MS}
/** Below this an interval holds too few operations to have percentiles, and a long run's series would be huge. */
export const MIN_SERIES_INTERVAL_MS = 10

function seriesIntervalOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_SERIES_INTERVAL_MS
  if (value < MIN_SERIES_INTERVAL_MS) throw usageError(`--series-interval ${value}ms is too short`, `give at least ${MIN_SERIES_INTERVAL_MS}ms, e.g. --series-interval 1s`)
  return value
}

export function parseMix(text: string): Partial<Record<MixableOp, number>> {
  const hint = `write OP=PERCENT pairs adding up to 100, e.g. find=80,insert=20 (ops: ${MIXABLE_OPS.join(', ')})`
  const mix: Partial<Record<MixableOp, number>> = {}
  for (const part of text.split(',')) {
    const match = /^\s*([a-z]+)\s*=\s*(\d+)\s*$/.exec(part)
    if (!match) throw usageError(`--mix '${part.trim()}' does not parse`, hint)
    const [, op, weight] = match as unknown as [string, string, string]
    if (!(MIXABLE_OPS as readonly string[]).includes(op)) throw usageError(`--mix: unknown operation '${op}'`, hint)
    if (mix[op as MixableOp] !== undefined) throw usageError(`--mix names '${op}' twice`, hint)
    mix[op as MixableOp] = Number(weight)
  }
  const total = Object.values(mix).reduce((a, b) => a + (b ?? 0), 0)
  if (total !== 100) throw usageError(`--mix adds up to ${total}, not 100`, hint)
  return mix
}

function keyDistOf(value: string | undefined, workload: WorkloadKind, mix: Partial<Record<MixableOp, number>>): KeyDistribution {
  if (value === undefined) return 'uniform'
  const [keyDist] = parseChoiceList(value, 'key-dist', KEY_DISTRIBUTIONS) as [KeyDistribution]
  if (value.includes(',')) throw usageError('--key-dist takes one distribution', `choose one of ${KEY_DISTRIBUTIONS.join(', ')}`)
  if (keyDist !== 'uniform' && !picksKeys(workload, mix)) {
    throw usageError(`--key-dist ${keyDist} needs a workload that picks documents`, 'use --workload find, update, or mixed with find or update in --mix')
  }
  return keyDist
}

function opTimeoutOf(ms: number | undefined, side: string | undefined): OpTimeout | undefined {
  if (side !== undefined && ms === undefined) throw usageError('--timeout-side needs --op-timeout', 'e.g. --op-timeout 50ms --timeout-side server')
  if (ms === undefined) return undefined
  if (ms < 1) throw usageError(`--op-timeout ${ms}ms is too short`, 'give at least 1ms, e.g. --op-timeout 50ms')
  if (!Number.isInteger(ms)) throw usageError(`--op-timeout ${ms}ms is not a whole number of milliseconds`, 'timeoutMS and maxTimeMS take whole milliseconds, e.g. --op-timeout 50ms')
  if (side !== undefined && !(TIMEOUT_SIDES as readonly string[]).includes(side)) {
    throw usageError(`--timeout-side '${side}' is not known`, `choose one of ${TIMEOUT_SIDES.join(', ')}`)
  }
  return {ms, side: (side ?? 'client') as TimeoutSide}
}

/** The config of the flags, with --workload-file read, validated and compiled first. */
export async function loadBenchConfig(flags: BenchFlagValues): Promise<BenchConfig> {
  const file = flags['workload-file']
  if (file !== undefined && flags.workload !== undefined) throw usageError('--workload-file and --workload cannot be combined', 'the file names the operations: drop --workload')
  if (flags['read-namespace'] !== undefined && file === undefined) throw usageError('--read-namespace needs --workload-file', 'the namespace is read by the file\'s operations marked namespace: read')
  if (file === undefined) return toBenchConfig(flags)
  // Imported only for --workload-file: zod and yaml load for the runs that read one, not for every bench.
  const {loadWorkloadFile} = await import('./workload-file.js')
  return toBenchConfig(flags, await loadWorkloadFile(file, flags['read-namespace']))
}

function builtInWorkload(flags: BenchFlagValues): WorkloadName {
  const text = flags.workload ?? BENCH_DEFAULTS.workload
  const [workload] = parseChoiceList(text, 'workload', WORKLOADS) as [WorkloadName]
  if (text.includes(',')) throw usageError('--workload takes one workload', `choose one of ${WORKLOADS.join(', ')}`)
  return workload
}

export {MAX_WORKERS}

/** --workers: each worker must get at least one of the concurrency; models that mean one connection cannot be split. */
function workersOf(flags: BenchFlagValues, concurrencies: readonly number[], staged: readonly LoadStage[] | undefined): number {
  const workers = flags.workers ?? 1
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS) throw usageError(`--workers ${workers} is out of range`, `give 1 to ${MAX_WORKERS}`)
  if (workers === 1) return 1
  if (flags.model.split(',').includes('single')) throw usageError('--model single cannot be split over workers', 'single is one connection for all operations: run it with --workers 1')
  const small = concurrencies.find((c) => c < workers)
  if (small !== undefined) throw usageError(`--concurrency ${small} cannot be split over ${workers} workers`, 'give each worker at least one: a concurrency of at least --workers')
  if (flags.ops !== undefined && flags.ops < workers) throw usageError(`--ops ${flags.ops} cannot be split over ${workers} workers`, 'give each worker at least one operation')
  const smallStage = staged?.find((stage) => stage.concurrency !== undefined && stage.concurrency < workers)
  if (smallStage) throw usageError(`--stages: a stage of concurrency ${smallStage.concurrency} cannot be split over ${workers} workers`, 'give every stage a concurrency of at least --workers')
  return workers
}

/** --segment, --run-id, --start-at; every segment's share must be at least one worker / operation. */
function distributionOf(flags: BenchFlagValues, concurrencies: readonly number[], stages: readonly LoadStage[] | undefined): Pick<BenchConfig, 'segment' | 'runId' | 'startAt'> {
  const segment = flags.segment === undefined ? undefined : parseSegment(flags.segment)
  if (segment && flags['run-id'] === undefined) throw usageError('--segment needs --run-id', 'give every segment of the run the same --run-id (8 hex digits), so they share one namespace')
  if (!segment && flags['run-id'] !== undefined) throw usageError('--run-id needs --segment', 'a run on its own gets its own id; --run-id names the run the segments share')
  if (flags['run-id'] !== undefined) checkRunId(flags['run-id'])
  if (segment) {
    const cells = [flags.model.split(','), concurrencies, flags['max-pool-size']?.split(',') ?? []].some((list) => list.length > 1)
    if (cells) throw usageError('--segment runs one cell, not a matrix', 'give one --model, --concurrency and --max-pool-size: segments line up only at --start-at')
    const small = concurrencies.find((c) => c < segment.count)
    if (small !== undefined) throw usageError(`--concurrency ${small} cannot be split over ${segment.count} segments`, 'give each segment at least one: a concurrency of at least the segment count')
    if (flags.ops !== undefined && flags.ops < segment.count) throw usageError(`--ops ${flags.ops} cannot be split over ${segment.count} segments`, 'give at least one operation per segment')
    const narrow = stages?.find((stage) => stage.concurrency !== undefined && stage.concurrency < segment.count)
    if (narrow) throw usageError(`--stages: a stage of concurrency ${narrow.concurrency} cannot be split over ${segment.count} segments`, 'give every stage a concurrency of at least the segment count')
  }
  return {
    ...(segment ? {segment, runId: flags['run-id']} : {}),
    ...(flags['start-at'] === undefined ? {} : {startAt: startAtOf(flags['start-at'], segment)}),
  }
}

/** --start-at: an instant, or all-ready (a barrier among the segments, so only with --segment). */
function startAtOf(text: string, segment: Segment | undefined): Date | typeof START_ALL_READY {
  if (text !== START_ALL_READY) return parseStartAt(text)
  if (!segment) throw usageError(`--start-at ${START_ALL_READY} needs --segment`, 'it waits for the other segments of the run; a run on its own starts when it is set up')
  return START_ALL_READY
}

/**
 * The most operations per second one open-loop engine (one process, or one --workers thread) is asked to
 * schedule. The engine alone, with operations that cost nothing (no driver, no server), starts at most
 * about 0.7–0.9 million slots per second on the 2-core development machine, every one of them a timer
 * check and a promise; a real operation through the driver costs far more. A rate beyond this cannot be
 * kept by construction: every slot past what was started is missed, and a run of 10^8/s spent a minute of
 * CPU accounting for them. Each worker thread and each segment runs its own engine at its share of the rate.
 */
export const MAX_RATE_PER_ENGINE = 500_000

/** --rate (or the highest --stages rate) within what the engines of this run can schedule: a usage error otherwise. */
function checkRateCeiling(rate: number | undefined, workers: number, segments: number, staged: boolean): void {
  if (rate === undefined) return
  const engines = workers * segments
  if (rate / engines <= MAX_RATE_PER_ENGINE) return
  const spread = engines === 1 ? 'one process' : `${engines} engines (${workers} worker thread${workers === 1 ? '' : 's'} × ${segments} segment${segments === 1 ? '' : 's'})`
  throw usageError(
    `${staged ? `a --stages rate of ${rate}/s` : `--rate ${rate}`} is more than ${spread} can schedule: at most ${MAX_RATE_PER_ENGINE} operations/s per engine`,
    `lower the rate, or spread it: --workers N (up to ${MAX_WORKERS} threads, ${MAX_RATE_PER_ENGINE}/s each) or --segment i/n over processes (each runs rate/n)`,
  )
}

/**
 * --warmup: a fixed length, or auto. auto is decided while the load runs, which a distributed run and
 * open-loop stages cannot wait for (warmup.ts): they take AUTO_FALLBACK_MS, fixed, and say why.
 */
function warmupOf(value: number | 'auto', segmented: boolean, openLoopStages: boolean): Pick<BenchConfig, 'warmupMs' | 'warmupRule' | 'warmupFallback'> {
  if (value !== 'auto') return {warmupMs: value}
  const fallback = segmented
    ? '--segment: every segment warms up alike, so their measured intervals line up for report merge'
    : openLoopStages
      ? 'open-loop --stages: the stage boundaries are planned before the load starts'
      : undefined
  if (fallback) return {warmupMs: AUTO_FALLBACK_MS, warmupFallback: `--warmup auto is a fixed ${AUTO_FALLBACK_MS / 1000}s here (${fallback})`}
  return {warmupMs: SETTLE_RULE.capMs, warmupRule: SETTLE_RULE}
}

export function toBenchConfig(flags: BenchFlagValues, workloadFile?: WorkloadFile): BenchConfig {
  checkBenchDatabaseName(flags.db)
  const workload: WorkloadKind = workloadFile ? 'file' : builtInWorkload(flags)
  if (flags.mix !== undefined && workload !== 'mixed') throw usageError('--mix needs --workload mixed', 'add --workload mixed, or drop --mix')
  const mix = workload === 'mixed' ? parseMix(flags.mix ?? BENCH_DEFAULTS.mix) : {}
  if (flags.rate !== undefined && flags.ops !== undefined) {
    throw usageError('--rate and --ops cannot be combined', 'an open-loop run (--rate) is bounded by --duration; use --ops only in closed loop')
  }
  if (flags.duration !== undefined && flags.ops !== undefined) {
    throw usageError('--duration and --ops cannot be combined', 'bound the run by time (--duration) or by count (--ops), not both')
  }
  // --stages sets the measured interval, the run's concurrency (or in-flight cap) and rate itself.
  const staged = stagedLoadOf(flags, String(BENCH_DEFAULTS.concurrency))
  const durationMs = staged?.durationMs ?? (flags.ops === undefined ? flags.duration ?? BENCH_DEFAULTS.durationMS : undefined)
  if (durationMs !== undefined && durationMs <= 0) throw usageError('--duration must be above 0', 'e.g. --duration 10s')
  const concurrencies = staged ? [staged.concurrency] : parseConcurrencies(flags.concurrency)
  const maxPoolSizes = flags['max-pool-size'] === undefined ? [undefined] : parseIntegerList(flags['max-pool-size'], 'max-pool-size', 1, 100_000)
  const minPool = flags['min-pool-size']
  if (minPool !== undefined && maxPoolSizes.some((max) => max !== undefined && minPool > max)) {
    throw usageError(`--min-pool-size ${minPool} is above --max-pool-size`, 'minPoolSize must not exceed maxPoolSize')
  }
  const distribution = distributionOf(flags, concurrencies, staged?.stages)
  const workers = workersOf(flags, concurrencies, staged?.stages)
  // The highest rate the engines must keep: a stage's, not the stages' mean.
  const peakRate = staged ? staged.stages.reduce<number | undefined>((peak, stage) => (stage.rate === undefined ? peak : Math.max(peak ?? 0, stage.rate)), undefined) : flags.rate
  checkRateCeiling(peakRate, workers, distribution.segment?.count ?? 1, staged !== undefined)
  return Object.freeze({
    workload,
    ...(workloadFile ? {workloadFile} : {}),
    mix: Object.freeze(mix),
    docSizeBytes: flags['doc-size'],
    seedDocs: flags['seed-docs'],
    keyDist: keyDistOf(flags['key-dist'], workload, mix),
    opTimeout: opTimeoutOf(flags['op-timeout'], flags['timeout-side']),
    db: flags.db,
    // Each run replaces this with its own bench_<runId> (run-bench.ts).
    collection: 'bench',
    keep: flags.keep,
    models: Object.freeze(parseChoiceList(flags.model, 'model', POOL_MODELS)),
    concurrencies: Object.freeze(concurrencies),
    ...distribution,
    workers,
    maxPoolSizes: Object.freeze(maxPoolSizes),
    rate: staged ? staged.rate : flags.rate,
    durationMs,
    ops: flags.ops,
    ...warmupOf(flags.warmup ?? BENCH_DEFAULTS.warmup, distribution.segment !== undefined, staged !== undefined && staged.rate !== undefined),
    pool: Object.freeze({
      minPoolSize: minPool,
      maxConnecting: flags['max-connecting'],
      maxIdleTimeMS: flags['max-idle-time-ms'],
      waitQueueTimeoutMS: flags['wait-queue-timeout-ms'],
    }),
    sloUs: flags.slo === undefined ? undefined : flags.slo * 1000,
    sampleIntervalMs: flags['sample-interval'] ?? BENCH_DEFAULTS.sampleIntervalMS,
    seriesIntervalMs: seriesIntervalOf(flags['series-interval']),
    ...(staged ? {stages: Object.freeze(staged.stages)} : {}),
  })
}
