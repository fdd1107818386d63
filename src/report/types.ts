/**
 * `pooltool report` results (the `--json` contracts).
 *
 * A merged file is a bench result (every field bench writes, so it can be
 * merged again or compared) with a `segments` count on the file and on each run
 * and each segment's own server readings kept in `serverBySegment`.
 */
import type {BenchResult, RunResult, ServerHostResult} from '../bench/types.js'

export interface MergedRunResult extends RunResult {
  /** How many segment runs were merged into this one (a merged input counts its own segments). */
  segments: number
  /** Each segment's own per-host server readings, in the order merged (flattened for merged inputs). */
  serverBySegment: ServerHostResult[][]
  /**
   * true when the inputs were shares of one run (--segment): concurrency and rate are the whole run's.
   * Absent: separate benches with the same flags, each driving its own concurrency and rate.
   */
  loadSplit?: boolean
}

export interface MergedBenchResult extends BenchResult {
  runs: MergedRunResult[]
  /** How many segment files went into this result, counted through merged inputs. */
  segments: number
}

export const COMPARED_METRICS = ['opsPerSec', 'p50', 'p99', 'p999', 'checkoutWaitP99', 'connectionsCreated'] as const
export type ComparedMetric = (typeof COMPARED_METRICS)[number]

/** How a metric's noise was told: `series` from the runs' intervals (bootstrap), `sampling` from the histograms and counts alone. */
export type NoiseModel = 'series' | 'sampling'

export interface MetricComparison {
  base: number
  new: number
  /** new ÷ base; 1 when both are 0; null when only the base is 0 (no ratio exists). */
  ratio: number | null
  /** The 95% interval of the ratio the noise allows, to 3 decimals; an upper end of null is unbounded. null: not judged. */
  interval: [number, number | null] | null
  /**
   * true: the interval holds 1 (the runs cannot tell this from no change); false: it does not;
   * null: the files hold nothing to tell noise by for this metric.
   */
  withinNoise: boolean | null
  /** Which model gave the interval (see `noiseRule`); null when not judged. */
  noise: NoiseModel | null
}

export interface SettingDifference {
  /** As the bench flag, e.g. `max-pool-size`, `sim-latency`. */
  setting: string
  base: string
  new: string
}

export interface RunComparison {
  /** The new run, e.g. "pool c=32 pool=100 rate=2000" (model, concurrency, pool size, rate). */
  run: string
  /** Its counterpart in the base: the same as `run` unless a run setting is paired. */
  baseRun: string
  /** The settings in which the two differ, each named in --pair (the file's and the run's own). */
  differOnPurpose: SettingDifference[]
  /** How many series intervals each run holds (0: none, the sampling model only). */
  intervals: {base: number; new: number}
  metrics: Record<ComparedMetric, MetricComparison>
}

export interface GateCheck {
  run: string
  actual: number | null
  interval: [number, number | null] | null
  crosses: boolean
  withinNoise: boolean | null
}

export interface GateLine {
  expression: string
  passed: boolean
  /** The runs that failed it: crossed beyond noise, or no ratio (actual null). */
  failures: Array<{run: string; actual: number | null; interval: [number, number | null] | null}>
  /** The runs that crossed it within noise (interval holds 1): not failed. */
  withinNoise: Array<{run: string; actual: number | null; interval: [number, number | null] | null}>
}

export interface CompareResult {
  base: string
  new: string
  /** --pair as given: the settings allowed to differ. */
  pair: string[]
  /** File settings that differ, each paired (run settings: per run). */
  differOnPurpose: SettingDifference[]
  runs: RunComparison[]
  /** Runs of the new file with no counterpart in the base, and the other way round. */
  unmatched: {new: string[]; base: string[]}
  /** How "within noise" was decided. */
  noiseRule: string
  failOn: {expressions: string[]; gates: GateLine[]; passed: boolean} | null
  notes: string[]
}
