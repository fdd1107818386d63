/**
 * `pooltool report compare base.json new.json`: each run of the new file
 * matched to its counterpart in the base, with new ÷ base ratios, the 95%
 * interval of each ratio and a "within noise" verdict; `--fail-on` gates on
 * the ratios (exit 8 when one fails).
 *
 * Same configuration. Every setting that changes the figures (config-match.ts)
 * must be equal, or be named in `--pair` as differing on purpose; otherwise
 * the comparison is refused (usage, exit 2) with the differing settings named.
 * Runs are matched by model, concurrency, pool size and rate, less the paired
 * ones.
 *
 * Noise (noise.ts). From the runs' own series: a bootstrap over intervals
 * gives each figure's spread between intervals and the 95% interval of the
 * ratio; within noise when it holds 1. Where a series cannot tell (a file
 * without one, or fewer than 2 intervals; p99.9, which the series does not
 * keep), the sampling model: the distribution-free 95% interval of a quantile
 * from its HDR histogram, the Poisson interval of an operation count; their
 * ratio interval [new low ÷ base high, new high ÷ base low] holds 1 exactly
 * when the two intervals overlap. Connections created: no spread in the files
 * (null).
 *
 * Gates. A threshold fails when a run's ratio crosses it and is beyond noise
 * (its interval does not hold 1), or when the run has no ratio. A crossing
 * within noise passes and is shown so: the runs cannot tell it from no change.
 */
import {runLabel} from '../bench/fail-on.js'
import type {RunResult} from '../bench/types.js'
import {holds, parseComparisons, type ComparisonOperator} from '../parse/comparisons.js'
import {usageError} from '../errors.js'
import {decodeHistogram, type Histogram, percentileUs} from '../metrics/histograms.js'
import {compareFileSettings, matchKey, RUN_SETTINGS, runDifferences, SETTING_NAMES, type SettingDifference} from './config-match.js'
import type {LoadedResult} from './load.js'
import {notBenchResult} from './load.js'
import {ratioInterval, type SeriesFigure, seriesSpread} from './noise.js'
import {notSettledReason} from './settling.js'
import {
  COMPARED_METRICS,
  type ComparedMetric,
  type CompareResult,
  type GateCheck,
  type GateLine,
  type MetricComparison,
  type NoiseModel,
  type RunComparison,
} from './types.js'

export const NOISE_RULE =
  "from each run's own series (runs[].series): a bootstrap over its intervals (drawn with replacement, a staged run's within each stage, the figure recomputed from the drawn ones, " +
  'fixed seed) gives the spread of ops/s, p50, p99 and checkout wait p99 between intervals, and the 95% interval of new ÷ base; within noise when the interval holds 1. ' +
  'p99.9 (the series keeps no p99.9), and every figure of a file without a series or with fewer than 2 intervals: sampling noise only, ' +
  "from the histograms' quantile intervals (ranks n·q ± 1.96·√(n·q·(1−q))) and Poisson intervals of the operation counts (each metric's noise says which). " +
  'connections created: not judged (null). A change that lasts a whole run (another load on the machine for the whole run) is not seen as noise: rerun to tell'

const Z95 = 1.96

const GATE_METRICS: Record<string, ComparedMetric> = Object.fromEntries(COMPARED_METRICS.map((metric) => [`${metric.toLowerCase()}ratio`, metric]))
const GATE_HINT = `write comma-separated METRICRatio OP VALUE, e.g. 'p99Ratio>1.10,opsPerSecRatio<0.95'; metrics: ${COMPARED_METRICS.map((m) => `${m}Ratio`).join(' ')}`
const PAIR_HINT = `name settings that differ on purpose, comma-separated: ${SETTING_NAMES.join(' ')}`

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

/** `--pair pool-size,sim-latency` → the settings; unknown names refused. */
export function parsePair(text: string): string[] {
  const names = text.split(',').map((name) => name.trim()).filter((name) => name !== '')
  if (names.length === 0) throw usageError(`--pair '${text}' names no setting`, PAIR_HINT)
  for (const name of names) {
    if (!SETTING_NAMES.includes(name)) throw usageError(`--pair: unknown setting '${name}'`, PAIR_HINT)
  }
  return [...new Set(names)]
}

/** The latency a user waited: corrected in open loop, as bench's own --fail-on judges. */
function latencyHistogram(file: string, run: RunResult): Histogram {
  const field = run.histograms.latencyCorrectedUs ? 'latencyCorrectedUs' : 'latencyUs'
  try {
    return decodeHistogram(run.histograms[field]!)
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

const round3 = (value: number) => Math.round(value * 1000) / 1000

function ratioOf(base: number, next: number): number | null {
  if (base === 0) return next === 0 ? 1 : null
  return round3(next / base)
}

function poissonInterval(ops: number, durationMS: number): [number, number] {
  if (durationMS <= 0) return [0, 0]
  const spread = Z95 * Math.sqrt(ops)
  return [(Math.max(0, ops - spread) * 1000) / durationMS, ((ops + spread) * 1000) / durationMS]
}

/** The ratio interval two absolute intervals allow: it holds 1 exactly when they overlap. */
function ratioFromIntervals(a: [number, number], b: [number, number]): [number, number] {
  return [a[1] > 0 ? b[0] / a[1] : b[0] > 0 ? Number.POSITIVE_INFINITY : 1, a[0] > 0 ? b[1] / a[0] : b[1] > 0 ? Number.POSITIVE_INFINITY : 1]
}

function metric(base: number, next: number, interval: [number, number] | null, noise: NoiseModel | null): MetricComparison {
  const ratio = ratioOf(base, next)
  if (interval === null || noise === null) return {base, new: next, ratio, interval: null, withinNoise: null, noise: null}
  const withinNoise = interval[0] <= 1 && 1 <= interval[1]
  // The interval as shown: to 3 decimals like the ratio, never narrower than the ratio it surrounds; an unbounded end is null.
  const low = round3(interval[0])
  const high = Number.isFinite(interval[1]) ? round3(interval[1]) : null
  return {base, new: next, ratio, interval: [ratio === null ? low : Math.min(low, ratio), high === null || ratio === null ? high : Math.max(high, ratio)], withinNoise, noise}
}

const SEED_OF: Record<SeriesFigure, number> = {opsPerSec: 0x0b5, p50: 0x050, p99: 0x099, checkoutWaitP99: 0xc99}

/** The series' ratio interval of one figure, or null when either run's series cannot tell. */
function seriesInterval(base: RunResult, next: RunResult, figure: SeriesFigure, baseValue: number, nextValue: number): [number, number] | null {
  // Base and new draw from different streams; the same two files always draw the same.
  const a = seriesSpread(base, figure, SEED_OF[figure])
  const b = seriesSpread(next, figure, SEED_OF[figure] ^ 0x5eed)
  if (a === null || b === null) return null
  return ratioInterval(baseValue, a, nextValue, b)
}

function compareRun(baseFile: string, base: RunResult, newFile: string, next: RunResult, differOnPurpose: SettingDifference[]): RunComparison {
  const a = latencyHistogram(baseFile, base)
  const b = latencyHistogram(newFile, next)
  const empty = a.totalCount === 0 || b.totalCount === 0
  const seriesCount = (run: RunResult) => run.series?.length ?? 0
  const percentile = (q: number, figure: SeriesFigure | undefined) => {
    const [baseValue, nextValue] = [percentileUs(a, 100 * q), percentileUs(b, 100 * q)]
    if (empty) return metric(baseValue, nextValue, null, null)
    const fromSeries = figure === undefined ? null : seriesInterval(base, next, figure, baseValue, nextValue)
    if (fromSeries) return metric(baseValue, nextValue, fromSeries, 'series')
    return metric(baseValue, nextValue, ratioFromIntervals(quantileInterval(a, q), quantileInterval(b, q)), 'sampling')
  }
  const opsSeries = seriesInterval(base, next, 'opsPerSec', base.opsPerSec, next.opsPerSec)
  const checkoutSeries = seriesInterval(base, next, 'checkoutWaitP99', base.checkoutWaitUs.p99, next.checkoutWaitUs.p99)
  return {
    run: runLabel(next),
    baseRun: runLabel(base),
    differOnPurpose,
    intervals: {base: seriesCount(base), new: seriesCount(next)},
    metrics: {
      opsPerSec: opsSeries
        ? metric(base.opsPerSec, next.opsPerSec, opsSeries, 'series')
        : metric(base.opsPerSec, next.opsPerSec, ratioFromIntervals(poissonInterval(base.ops, base.durationMS), poissonInterval(next.ops, next.durationMS)), 'sampling'),
      p50: percentile(0.5, 'p50'),
      p99: percentile(0.99, 'p99'),
      p999: percentile(0.999, undefined),
      checkoutWaitP99: metric(base.checkoutWaitUs.p99, next.checkoutWaitUs.p99, checkoutSeries, checkoutSeries ? 'series' : null),
      connectionsCreated: metric(base.pool.created, next.pool.created, null, null),
    },
  }
}

const describeDifferences = (differences: readonly SettingDifference[]) => differences.map((d) => `${d.setting} ${d.base} → ${d.new}`).join(', ')

export interface CompareOptions {
  gates?: readonly RatioGate[]
  /** --pair: settings that differ on purpose. */
  pair?: readonly string[]
}

export function compareBenchResults(base: LoadedResult, next: LoadedResult, options: CompareOptions = {}): CompareResult {
  const paired = new Set(options.pair ?? [])
  const settings = compareFileSettings(base.file, base.result, next.file, next.result)
  const unpaired = settings.differ.filter((difference) => !paired.has(difference.setting))
  if (unpaired.length > 0) {
    const names = unpaired.map((d) => d.setting)
    throw usageError(
      `${next.file} and ${base.file} are different configurations: ${describeDifferences(unpaired)}`,
      `compare runs of the same configuration, or to compare them on purpose add --pair ${[...paired, ...names].join(',')}`,
    )
  }
  const pairedFile = settings.differ.filter((difference) => paired.has(difference.setting))

  // Runs: matched on every run setting not paired; a match must be one run, or the pairing is ambiguous.
  const runs: RunComparison[] = []
  const unmatchedNew: string[] = []
  const unsettledNotes: string[] = []
  const usedBase = new Set<RunResult>()
  for (const run of next.result.runs) {
    const key = matchKey(run, paired)
    const candidates = base.result.runs.filter((candidate) => matchKey(candidate, paired) === key)
    if (candidates.length === 0) {
      unmatchedNew.push(runLabel(run))
      continue
    }
    if (candidates.length > 1) {
      throw usageError(
        `${next.file}: run ${runLabel(run)} matches ${candidates.length} runs of ${base.file} (${candidates.map(runLabel).join('; ')}) once ${[...paired].filter((name) => RUN_SETTINGS.some((s) => s.name === name)).join(', ')} is left out of the match`,
        'compare files of one run each, or pair fewer settings',
      )
    }
    const counterpart = candidates[0]!
    usedBase.add(counterpart)
    for (const [file, side] of [[base.file, counterpart], [next.file, run]] as const) {
      // A warm-up that reached its cap unsettled counts like a drift the series shows: either way the run was not steady.
      const why = notSettledReason(side)
      if (why) unsettledNotes.push(`${file} ${runLabel(side)}: ${why}: it had not settled (the pool, the JIT, a machine waking from idle, other load), and its interval noise cannot show that; a longer --warmup, or a rerun, tells`)
    }
    runs.push(compareRun(base.file, counterpart, next.file, run, [...pairedFile, ...runDifferences(counterpart, run)]))
  }
  const unmatchedBase = base.result.runs.filter((run) => !usedBase.has(run)).map(runLabel)
  if (runs.length === 0) {
    // The closest runs (fewest run settings apart) say what keeps them apart: that is what --pair would name.
    const nearest = nearestDifference(base.result.runs, next.result.runs)
    const names = nearest.map((d) => d.setting).filter((name) => !paired.has(name))
    throw usageError(
      `${next.file}: no run matches a run of ${base.file}` +
        (nearest.length > 0 ? `: the closest differ in ${describeDifferences(nearest)}` : '') +
        ` (new: ${unmatchedNew.join('; ') || 'none'}; base: ${unmatchedBase.join('; ') || 'none'})`,
      names.length > 0
        ? `to compare them on purpose add --pair ${[...paired, ...names].join(',')}`
        : 'compare two results of the same bench matrix (model, concurrency, pool size and rate)',
    )
  }
  const notes: string[] = []
  for (const {setting, files} of settings.unknown) notes.push(`${setting}: not recorded in ${files.join(' and ')} (written by an older pooltool): not checked`)
  for (const name of paired) {
    if (!runs.some((run) => run.differOnPurpose.some((d) => d.setting === name))) notes.push(`--pair ${name}: ${name} is the same in both files`)
  }
  const fallback = runs.filter((run) => Object.values(run.metrics).some((m) => m.noise === 'sampling' && m !== run.metrics.p999))
  for (const run of fallback) {
    notes.push(
      `${run.run}: ${seriesShortfall(run)}: sampling noise only, which two runs on a busy machine can exceed`,
    )
  }
  if (next.result.runs.some((run) => run.latencyCorrectedUs) && runs.some((run) => run.metrics.p99.noise === 'series')) {
    notes.push('open loop: the series keeps uncorrected per-interval latency; its spread stands for the corrected figures compared')
  }
  notes.push(...unsettledNotes)
  if (unmatchedNew.length > 0) notes.push(`runs of ${next.file} without a counterpart: ${unmatchedNew.join('; ')}`)
  if (unmatchedBase.length > 0) notes.push(`runs of ${base.file} without a counterpart: ${unmatchedBase.join('; ')}`)
  return {
    base: base.file,
    new: next.file,
    pair: [...paired],
    differOnPurpose: pairedFile,
    runs,
    unmatched: {new: unmatchedNew, base: unmatchedBase},
    noiseRule: NOISE_RULE,
    failOn: options.gates === undefined ? null : judgeGates(options.gates, runs),
    notes,
  }
}

/** Why a run's series could not tell its noise. */
function seriesShortfall(run: RunComparison): string {
  const {base, new: next} = run.intervals
  if (base === 0 || next === 0) return `no series in ${base === 0 && next === 0 ? 'either file' : base === 0 ? 'the base' : 'the new file'} (a merged file, or one written before bench kept one)`
  if (base < 2 || next < 2) return `fewer than 2 series intervals (base ${base}, new ${next})`
  return 'the series lacks the figure in some intervals'
}

/** The run settings that separate the closest pair of runs of the two files. */
function nearestDifference(base: readonly RunResult[], next: readonly RunResult[]): SettingDifference[] {
  let best: SettingDifference[] | undefined
  for (const a of base) {
    for (const b of next) {
      const differences = runDifferences(a, b)
      if (best === undefined || differences.length < best.length) best = differences
    }
  }
  return best ?? []
}

/**
 * A gate fails when a matched run's ratio crosses it beyond noise (its 95% interval does not hold 1, or no
 * interval could be had), or when a run has no ratio to judge (its base is 0 and the new value is not): a gate
 * never passes what it could not measure. A crossing within noise passes, listed in `withinNoise`.
 */
export function judgeGates(gates: readonly RatioGate[], runs: readonly RunComparison[]): NonNullable<CompareResult['failOn']> {
  const lines: GateLine[] = gates.map((gate) => {
    const checks: GateCheck[] = runs.map((run) => {
      const {ratio, interval, withinNoise} = run.metrics[gate.metric]
      return {run: run.run, actual: ratio, interval, crosses: ratio === null || holds(gate.operator, ratio, gate.limit), withinNoise}
    })
    const failures = checks.filter((check) => check.crosses && (check.actual === null || check.withinNoise !== true))
    const forgiven = checks.filter((check) => check.crosses && check.actual !== null && check.withinNoise === true)
    const strip = ({run, actual, interval}: GateCheck) => ({run, actual, interval})
    return {expression: gate.expression, passed: failures.length === 0, failures: failures.map(strip), withinNoise: forgiven.map(strip)}
  })
  return {expressions: gates.map((gate) => gate.expression), gates: lines, passed: lines.every((line) => line.passed)}
}
