/**
 * `pooltool report compare base.json new.json`: each run of the new file
 * matched to its counterpart in the base (model, concurrency, pool size, rate),
 * with new ÷ base ratios and a "within noise" verdict, and `--fail-on` gates on
 * the ratios (exit 8 when one fails).
 *
 * Noise. Bench keeps no per-interval series yet, so the rule uses what a
 * result holds:
 * - percentiles (p50, p99, p99.9): the distribution-free 95% confidence
 *   interval of a quantile from n samples, read off the run's own HDR
 *   histogram at the ranks n·q ± 1.96·√(n·q·(1−q)); within noise when the
 *   base's and the new interval overlap;
 * - ops/s: the operation count treated as a Poisson count (±1.96·√ops over the
 *   same interval); within noise when the two intervals overlap;
 * - checkout wait p99 and connections created: the files hold no spread for
 *   them, so noise cannot be told (null): the ratio stands alone.
 */
import {runLabel} from '../bench/fail-on.js'
import type {RunResult} from '../bench/types.js'
import {holds, parseComparisons, type ComparisonOperator} from '../parse/comparisons.js'
import {usageError} from '../errors.js'
import {decodeHistogram, type Histogram, percentileUs} from '../metrics/histograms.js'
import type {LoadedResult} from './load.js'
import {notBenchResult} from './load.js'
import {COMPARED_METRICS, type ComparedMetric, type CompareResult, type GateLine, type MetricComparison, type RunComparison} from './types.js'

export const NOISE_RULE =
  'percentiles: 95% confidence intervals of each quantile from its HDR histogram (ranks n·q ± 1.96·√(n·q·(1−q))) overlap; ' +
  'ops/s: Poisson intervals of the operation counts (ops ± 1.96·√ops) overlap; checkout wait p99 and connections created: no spread in the files, not judged (null). ' +
  'sampling noise only (two runs on a busy machine can differ by more); bench keeps no per-interval series yet: when it does, overlapping series will be the rule'

const Z95 = 1.96

const GATE_METRICS: Record<string, ComparedMetric> = Object.fromEntries(COMPARED_METRICS.map((metric) => [`${metric.toLowerCase()}ratio`, metric]))
const GATE_HINT = `write comma-separated METRICRatio OP VALUE, e.g. 'p99Ratio>1.10,opsPerSecRatio<0.95'; metrics: ${COMPARED_METRICS.map((m) => `${m}Ratio`).join(' ')}`

export interface RatioGate {
  expression: string
  metric: ComparedMetric
  operator: ComparisonOperator
  limit: number
}

export function parseRatioGates(text: string): RatioGate[] {
  return parseComparisons(text, 'fail-on', [], GATE_HINT).map(({expression, raw, name, operator, value}) => {
    const metric = GATE_METRICS[name.toLowerCase()]
    if (metric === undefined) throw usageError(`--fail-on '${raw}': unknown metric '${name}'`, GATE_HINT)
    return {expression, metric, operator, limit: value}
  })
}

/** The latency a user waited: corrected in open loop, as bench's own --fail-on judges. */
function latencyHistogram(file: string, run: RunResult): {histogram: Histogram; field: 'latencyCorrectedUs' | 'latencyUs'} {
  const field = run.histograms.latencyCorrectedUs ? 'latencyCorrectedUs' : 'latencyUs'
  try {
    return {histogram: decodeHistogram(run.histograms[field]!), field}
  } catch {
    throw notBenchResult(file, `runs[${runLabel(run)}].histograms.${field}`, 'does not decode as an HDR histogram')
  }
}

/** The 95% interval of quantile q (0..1) from the histogram's own samples. */
export function quantileInterval(histogram: Histogram, q: number): [number, number] {
  const n = histogram.totalCount
  if (n === 0) return [0, 0]
  const spread = Z95 * Math.sqrt(n * q * (1 - q))
  const low = Math.max(1, Math.floor(n * q - spread))
  const high = Math.min(n, Math.ceil(n * q + spread))
  return [percentileUs(histogram, (100 * low) / n), percentileUs(histogram, (100 * high) / n)]
}

const overlap = (a: [number, number], b: [number, number]) => a[0] <= b[1] && b[0] <= a[1]

function ratioOf(base: number, next: number): number | null {
  if (base === 0) return next === 0 ? 1 : null
  return Math.round((next / base) * 1000) / 1000
}

function metric(base: number, next: number, withinNoise: boolean | null): MetricComparison {
  return {base, new: next, ratio: ratioOf(base, next), withinNoise}
}

function poissonInterval(ops: number, durationMS: number): [number, number] {
  if (durationMS <= 0) return [0, 0]
  const spread = Z95 * Math.sqrt(ops)
  return [((ops - spread) * 1000) / durationMS, ((ops + spread) * 1000) / durationMS]
}

function compareRun(baseFile: string, base: RunResult, newFile: string, next: RunResult): RunComparison {
  const a = latencyHistogram(baseFile, base).histogram
  const b = latencyHistogram(newFile, next).histogram
  const percentile = (q: number) =>
    metric(percentileUs(a, 100 * q), percentileUs(b, 100 * q), a.totalCount === 0 || b.totalCount === 0 ? null : overlap(quantileInterval(a, q), quantileInterval(b, q)))
  return {
    run: runLabel(next),
    metrics: {
      opsPerSec: metric(base.opsPerSec, next.opsPerSec, overlap(poissonInterval(base.ops, base.durationMS), poissonInterval(next.ops, next.durationMS))),
      p50: percentile(0.5),
      p99: percentile(0.99),
      p999: percentile(0.999),
      checkoutWaitP99: metric(base.checkoutWaitUs.p99, next.checkoutWaitUs.p99, null),
      connectionsCreated: metric(base.pool.created, next.pool.created, null),
    },
  }
}

export function compareBenchResults(base: LoadedResult, next: LoadedResult, gates?: readonly RatioGate[]): CompareResult {
  const baseByKey = new Map(base.result.runs.map((run) => [runLabel(run), run]))
  const newKeys = new Set(next.result.runs.map(runLabel))
  const runs: RunComparison[] = []
  const unmatchedNew: string[] = []
  for (const run of next.result.runs) {
    const counterpart = baseByKey.get(runLabel(run))
    if (counterpart === undefined) unmatchedNew.push(runLabel(run))
    else runs.push(compareRun(base.file, counterpart, next.file, run))
  }
  const unmatchedBase = [...baseByKey.keys()].filter((key) => !newKeys.has(key))
  if (runs.length === 0) {
    throw usageError(`${next.file}: no run matches a run of ${base.file} (new: ${unmatchedNew.join('; ') || 'none'}; base: ${unmatchedBase.join('; ') || 'none'})`, 'compare two results of the same bench matrix (model, concurrency, pool size and rate)')
  }
  const notes: string[] = []
  if (base.result.config.workload !== next.result.config.workload) notes.push(`the workloads differ: ${base.result.config.workload} in ${base.file}, ${next.result.config.workload} in ${next.file}`)
  if (unmatchedNew.length > 0) notes.push(`runs of ${next.file} without a counterpart: ${unmatchedNew.join('; ')}`)
  if (unmatchedBase.length > 0) notes.push(`runs of ${base.file} without a counterpart: ${unmatchedBase.join('; ')}`)
  return {
    base: base.file,
    new: next.file,
    runs,
    unmatched: {new: unmatchedNew, base: unmatchedBase},
    noiseRule: NOISE_RULE,
    failOn: gates === undefined ? null : judgeGates(gates, runs),
    notes,
  }
}

/**
 * A gate fails when any matched run crosses it, or when a run has no ratio to
 * judge (its base is 0 and the new value is not): a gate never passes what it
 * could not measure.
 */
export function judgeGates(gates: readonly RatioGate[], runs: readonly RunComparison[]): NonNullable<CompareResult['failOn']> {
  const lines: GateLine[] = gates.map((gate) => {
    const failures = runs
      .map((run) => ({run: run.run, actual: run.metrics[gate.metric].ratio}))
      .filter(({actual}) => actual === null || holds(gate.operator, actual, gate.limit))
    return {expression: gate.expression, passed: failures.length === 0, failures}
  })
  return {expressions: gates.map((gate) => gate.expression), gates: lines, passed: lines.every((line) => line.passed)}
}
