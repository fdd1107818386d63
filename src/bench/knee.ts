/**
 * The knee of a matrix: the highest throughput whose p99 stays within the
 * SLO (`--slo`, else twice the lowest p99 seen).
 */
import type {KneeResult, RunResult} from './types.js'

export function findKnee(runs: readonly RunResult[], sloUs?: number): KneeResult | null {
  const measured = runs.filter((run) => run.ops > 0)
  if (measured.length < 2) return null
  const lowestP99 = Math.min(...measured.map((run) => p99Of(run)))
  const slo = sloUs ?? 2 * lowestP99
  const within = measured.filter((run) => p99Of(run) <= slo)
  if (within.length === 0) return null
  const best = within.reduce((a, b) => (b.opsPerSec > a.opsPerSec ? b : a))
  return {
    model: best.model,
    concurrency: best.concurrency,
    maxPoolSize: best.maxPoolSize,
    opsPerSec: best.opsPerSec,
    p99Us: p99Of(best),
    sloUs: slo,
    sloSource: sloUs === undefined ? '2x lowest p99' : '--slo',
  }
}

/** Open-loop runs are judged on the corrected latency: that is what users wait. */
export function p99Of(run: RunResult): number {
  return (run.latencyCorrectedUs ?? run.latencyUs).p99
}
