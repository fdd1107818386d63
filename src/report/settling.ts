/**
 * Whether a run had reached its steady state: a closed-loop run whose ops/s
 * still climbs (or falls) from its first to its last intervals was measured
 * while it settled — the pool filling, the JIT, or the machine waking from idle
 * (seen on the 2-core development machine: after a few idle seconds the next
 * run went 3,500 → 7,000 ops/s over its 5 s while the runs right after it held
 * 6,100–6,900). The interval bootstrap sees that drift as noise within the run,
 * not as the run being unlike another, so report compare says it beside the
 * figures: a longer --warmup, or a rerun, tells.
 */
import type {RunResult} from '../bench/types.js'
import {describeWarmup} from '../bench/warmup.js'

/** Change between the first and the last half of the intervals that counts as not settled. */
export const UNSETTLED_CHANGE = 0.2
/** Fewer intervals than this say nothing about a trend. */
const MIN_INTERVALS = 4

export interface Drift {
  firstOpsPerSec: number
  lastOpsPerSec: number
  /** last ÷ first. */
  ratio: number
}

/**
 * Why a run had not settled, in words, or undefined: its adaptive warm-up reached its cap without settling
 * (bench said so), or its ops/s drifted from its first to its last half of intervals (unsettled below).
 */
export function notSettledReason(run: Pick<RunResult, 'series' | 'stages' | 'warmup'>): string | undefined {
  if (run.warmup?.endedBy === 'cap') return `its warm-up ${describeWarmup(run.warmup)}`
  const drift = unsettled(run)
  if (drift) return `ops/s went ${Math.round(drift.firstOpsPerSec)} → ${Math.round(drift.lastOpsPerSec)} from its first to its last half of intervals`
  return undefined
}

/** The drift of a run's ops/s from its first half of intervals to its last (the middle one of an odd count left out), when beyond UNSETTLED_CHANGE. */
export function unsettled(run: Pick<RunResult, 'series' | 'stages'>): Drift | undefined {
  // A staged run changes its load on purpose.
  if ((run.stages?.length ?? 0) > 1) return undefined
  // Whole intervals only: the last one is shorter when the run ends inside it.
  const series = (run.series ?? []).filter((interval) => interval.durationMS > 0)
  if (series.length < MIN_INTERVALS) return undefined
  const half = Math.floor(series.length / 2)
  const rate = (part: typeof series) => part.reduce((sum, i) => sum + i.ops, 0) / (part.reduce((sum, i) => sum + i.durationMS, 0) / 1000)
  const firstOpsPerSec = rate(series.slice(0, half))
  const lastOpsPerSec = rate(series.slice(-half))
  if (!(firstOpsPerSec > 0)) return undefined
  const ratio = lastOpsPerSec / firstOpsPerSec
  return Math.abs(ratio - 1) > UNSETTLED_CHANGE ? {firstOpsPerSec, lastOpsPerSec, ratio} : undefined
}
