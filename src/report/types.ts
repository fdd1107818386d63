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

export interface MetricComparison {
  base: number
  new: number
  /** new ÷ base; 1 when both are 0; null when only the base is 0 (no ratio exists). */
  ratio: number | null
  /**
   * true: the difference is inside the 95% intervals the files allow (see `noiseRule`);
   * false: outside them; null: the files hold nothing to tell noise by for this metric.
   */
  withinNoise: boolean | null
}

export interface RunComparison {
  /** e.g. "pool c=32 pool=100 rate=2000": the match key (model, concurrency, pool size, rate). */
  run: string
  metrics: Record<ComparedMetric, MetricComparison>
}

export interface GateLine {
  expression: string
  passed: boolean
  /** The runs that failed it, each with the value seen (null: no ratio could be computed). */
  failures: Array<{run: string; actual: number | null}>
}

export interface CompareResult {
  base: string
  new: string
  runs: RunComparison[]
  /** Runs of the new file with no counterpart in the base, and the other way round. */
  unmatched: {new: string[]; base: string[]}
  /** How "within noise" was decided. */
  noiseRule: string
  failOn: {expressions: string[]; gates: GateLine[]; passed: boolean} | null
  notes: string[]
}
