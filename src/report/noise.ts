/**
 * How much a run's figures move from one interval to the next, read off the
 * run's own time series (`runs[].series`), and the 95% interval of the ratio
 * new ÷ base that this movement allows: `report compare`'s "within noise".
 *
 * Why between intervals: two runs of the same configuration differ by more
 * than the sampling noise of their histograms (a busy machine, a collection
 * warming up, a garbage collection): each run's series shows how much its
 * figures wander while nothing in its configuration changes.
 *
 * How: a bootstrap over intervals. Each replicate draws the run's intervals
 * with replacement and recomputes the run's figure from the drawn ones:
 * - ops/s: their operations over their time;
 * - p50, p99, checkout wait p99: the series holds each interval's percentile,
 *   not its histogram, so the figure is the operation-weighted mean of the
 *   drawn intervals' percentiles.
 * A replicate's figure over the figure from all intervals is that replicate's
 * factor; the run's own figure (from its whole histogram) times the factor is
 * the replicate's value. Ratio replicates (new × its factor ÷ base × its own)
 * give the interval: their 2.5th and 97.5th percentiles. With few intervals a
 * bootstrap draws too little spread (a mean's by √((k−1)/k)); each factor's
 * distance from 1 is widened by √(k/(k−1)) to make up for it. A staged run
 * (--stages) changes its load on purpose: its intervals are drawn within their
 * own stage (k/(k−stages) then).
 *
 * Reproducible: the draws come from a fixed-seed generator, so the same two
 * files always give the same intervals.
 */
import type {RunResult, SeriesPoint} from '../bench/types.js'
import {seededRandom} from '../metrics/seeded-random.js'

/** Replicates per figure: enough for the 2.5th/97.5th percentiles to settle to about 1% (the ratios are shown to 0.01). */
export const BOOTSTRAP_REPLICATES = 4000
/** Fewer intervals than this tell nothing about the spread between them. */
export const MIN_INTERVALS = 2


/** What a series figure is made of, per interval: a weight and a value (ops/s: operations and time), and its stage. */
interface Part {
  weight: number
  value: number
  /** The stage (--stages) the interval starts in; 0 for a run of one level. */
  stratum: number
}

/** The figures the series can tell the spread of. */
export type SeriesFigure = 'opsPerSec' | 'p50' | 'p99' | 'checkoutWaitP99'

function parts(run: RunResult, figure: SeriesFigure): Part[] {
  const stages = run.stages ?? []
  // A staged run changes its load on purpose: intervals are drawn within their own stage, never across.
  const stratum = (point: SeriesPoint) => Math.max(0, stages.findLastIndex((stage) => stage.startMS <= point.tMS))
  return figureParts(run.series ?? [], figure).map(({point, weight, value}) => ({weight, value, stratum: stratum(point)}))
}

function figureParts(series: readonly SeriesPoint[], figure: SeriesFigure): Array<{point: SeriesPoint; weight: number; value: number}> {
  switch (figure) {
    case 'opsPerSec':
      // Σops / Σtime: weight = the interval's time, value = its operations.
      return series.filter((point) => point.durationMS > 0).map((point) => ({point, weight: point.durationMS, value: point.ops}))
    case 'p50':
      return series.filter((point) => point.ops > 0 && typeof point.latencyP50Us === 'number').map((point) => ({point, weight: point.ops, value: point.latencyP50Us!}))
    case 'p99':
      return series.filter((point) => point.ops > 0 && typeof point.latencyP99Us === 'number').map((point) => ({point, weight: point.ops, value: point.latencyP99Us!}))
    case 'checkoutWaitP99':
      // The checkouts of an interval are about its operations: weighted by them.
      return series.filter((point) => point.ops > 0 && typeof point.checkoutWaitP99Us === 'number').map((point) => ({point, weight: point.ops, value: point.checkoutWaitP99Us!}))
  }
}

function statistic(figure: SeriesFigure, drawn: readonly Part[]): number {
  let weights = 0
  let values = 0
  for (const part of drawn) {
    weights += part.weight
    values += figure === 'opsPerSec' ? part.value : part.weight * part.value
  }
  return weights === 0 ? 0 : values / weights
}

export interface SeriesSpread {
  /** Intervals the figure was read from. */
  intervals: number
  /** One factor per replicate: the replicate's figure ÷ the figure of all intervals (widened for few intervals). */
  factors: Float64Array
}

/**
 * The bootstrap factors of one figure of one run, or null when its series cannot tell (absent, fewer than
 * MIN_INTERVALS intervals with the figure, or a figure of 0).
 */
export function seriesSpread(run: RunResult, figure: SeriesFigure, seed: number, replicates = BOOTSTRAP_REPLICATES): SeriesSpread | null {
  const all = parts(run, figure)
  const k = all.length
  const byStratum = new Map<number, Part[]>()
  for (const part of all) byStratum.set(part.stratum, [...(byStratum.get(part.stratum) ?? []), part])
  const strata = [...byStratum.values()]
  // Each stage's intervals are drawn among themselves: k − (number of stages) of them are free to vary.
  if (k < MIN_INTERVALS || k - strata.length < 1) return null
  const whole = statistic(figure, all)
  if (!(whole > 0)) return null
  const random = seededRandom(seed)
  const widen = Math.sqrt(k / (k - strata.length))
  const factors = new Float64Array(replicates)
  const drawn: Part[] = new Array(k)
  for (let r = 0; r < replicates; r++) {
    let i = 0
    for (const stratum of strata) for (let j = 0; j < stratum.length; j++) drawn[i++] = stratum[Math.floor(random() * stratum.length)]!
    factors[r] = Math.max(0, 1 + (statistic(figure, drawn) / whole - 1) * widen)
  }
  return {intervals: k, factors}
}

/** The pth quantile (0..1) of sorted values, interpolated between ranks. */
function quantileOf(sorted: Float64Array, p: number): number {
  const at = p * (sorted.length - 1)
  const low = Math.floor(at)
  const high = Math.ceil(at)
  // Infinity − Infinity is NaN: an unbounded neighbour is taken as it is.
  if (low === high || !Number.isFinite(sorted[high]!)) return at === low ? sorted[low]! : sorted[high]!
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low)
}

/**
 * The 95% interval of new ÷ base from both runs' factors (replicate r of one with replicate r of the other:
 * the draws are independent). null when the base figure is 0 (no ratio).
 */
export function ratioInterval(base: number, baseSpread: SeriesSpread, next: number, nextSpread: SeriesSpread): [number, number] | null {
  if (!(base > 0)) return null
  const n = Math.min(baseSpread.factors.length, nextSpread.factors.length)
  const ratios = new Float64Array(n)
  for (let r = 0; r < n; r++) {
    const denominator = base * baseSpread.factors[r]!
    // A replicate whose base figure came out 0 (every drawn interval idle): the ratio is unbounded.
    ratios[r] = denominator > 0 ? (next * nextSpread.factors[r]!) / denominator : Number.POSITIVE_INFINITY
  }
  ratios.sort()
  return [quantileOf(ratios, 0.025), quantileOf(ratios, 0.975)]
}
