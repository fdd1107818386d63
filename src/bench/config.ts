/**
 * From `bench` flag values to a frozen BenchConfig, rejecting impossible
 * combinations with one-line usage errors.
 */
import {BENCH_DEFAULTS} from '../defaults.js'
import {usageError} from '../errors.js'
import {parseChoiceList, parseIntegerList} from '../parse/lists.js'
import {checkBenchDatabaseName} from './namespace.js'
import {stagedLoadOf} from './stages.js'
import {type BenchConfig, MIXABLE_OPS, type MixableOp, POOL_MODELS, WORKLOADS, type WorkloadName} from './types.js'

export interface BenchFlagValues {
  workload: string
  mix?: string
  'doc-size': number
  'seed-docs': number
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
  warmup?: number
  slo?: number
  'sample-interval'?: number
  'series-interval'?: number
  /** `10s:8,30s:64` or `10s:500/s,…` (see stages.ts). */
  stages?: string
}

/** One interval of each run's time series, unless --series-interval says otherwise. */
export const DEFAULT_SERIES_INTERVAL_MS = 1000
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

export function toBenchConfig(flags: BenchFlagValues): BenchConfig {
  checkBenchDatabaseName(flags.db)
  const [workload] = parseChoiceList(flags.workload, 'workload', WORKLOADS) as [WorkloadName]
  if (flags.workload.includes(',')) throw usageError('--workload takes one workload', `choose one of ${WORKLOADS.join(', ')}`)
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
  const maxPoolSizes = flags['max-pool-size'] === undefined ? [undefined] : parseIntegerList(flags['max-pool-size'], 'max-pool-size', 1, 100_000)
  const minPool = flags['min-pool-size']
  if (minPool !== undefined && maxPoolSizes.some((max) => max !== undefined && minPool > max)) {
    throw usageError(`--min-pool-size ${minPool} is above --max-pool-size`, 'minPoolSize must not exceed maxPoolSize')
  }
  return Object.freeze({
    workload,
    mix: Object.freeze(mix),
    docSizeBytes: flags['doc-size'],
    seedDocs: flags['seed-docs'],
    db: flags.db,
    // Each run replaces this with its own bench_<runId> (run-bench.ts).
    collection: 'bench',
    keep: flags.keep,
    models: Object.freeze(parseChoiceList(flags.model, 'model', POOL_MODELS)),
    concurrencies: Object.freeze(staged ? [staged.concurrency] : parseIntegerList(flags.concurrency, 'concurrency', 1, 100_000)),
    maxPoolSizes: Object.freeze(maxPoolSizes),
    rate: staged ? staged.rate : flags.rate,
    durationMs,
    ops: flags.ops,
    warmupMs: flags.warmup ?? BENCH_DEFAULTS.warmupMS,
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
