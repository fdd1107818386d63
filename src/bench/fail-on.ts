/**
 * `--fail-on 'p99>50ms,errors>0,checkoutWaitP99>10ms'`: thresholds checked on
 * every run; a breach sets the exit code (the run itself is still reported).
 */
import {type ComparisonOperator, holds, parseComparisons} from '../parse/comparisons.js'
import {usageError} from '../errors.js'
import {p99Of} from './knee.js'
import type {RunResult, ThresholdBreach} from './types.js'

/**
 * A gate (--fail-on) passes or fails a build: one that ran against the simulator because a URI was missing
 * would pass it on numbers of no cluster. bench refuses --fail-on on the embedded cluster unless --sim asks for it.
 */
export const GATE_NEEDS_EXPLICIT_TARGET = {
  message: '--fail-on would gate a run on the embedded simulated cluster: no --uri, POOLTOOL_URI or MONGODB_URI is set',
  hint: 'pass --uri mongodb://… (or set POOLTOOL_URI / MONGODB_URI) to gate the cluster you mean, or --sim to gate the embedded one on purpose',
} as const

type Metric = (run: RunResult) => number
const TIME_METRICS: Record<string, Metric> = {
  p50: (r) => (r.latencyCorrectedUs ?? r.latencyUs).p50,
  p90: (r) => (r.latencyCorrectedUs ?? r.latencyUs).p90,
  p99: p99Of,
  p999: (r) => (r.latencyCorrectedUs ?? r.latencyUs).p999,
  max: (r) => (r.latencyCorrectedUs ?? r.latencyUs).max,
  checkoutwaitp50: (r) => r.checkoutWaitUs.p50,
  checkoutwaitp99: (r) => r.checkoutWaitUs.p99,
  checkoutwaitmax: (r) => r.checkoutWaitUs.max,
}
const COUNT_METRICS: Record<string, Metric> = {
  errors: (r) => r.errors,
  errorrate: (r) => (r.ops + r.errors === 0 ? 0 : (100 * r.errors) / (r.ops + r.errors)),
  opspersec: (r) => r.opsPerSec,
  connectionscreated: (r) => r.pool.created,
  checkoutfailed: (r) => Object.values(r.pool.checkOutFailed).reduce((a, b) => a + b, 0),
  missed: (r) => r.missed,
}
const TIME_UNITS_US: Record<string, number> = {us: 1, µs: 1, ms: 1000, s: 1_000_000}

export interface Threshold {
  expression: string
  metric: Metric
  unit: 'us' | ''
  operator: ComparisonOperator
  /** In µs for time metrics. */
  limit: number
}

const HINT = "write comma-separated METRIC OP VALUE, e.g. 'p99>50ms,errors>0,checkoutWaitP99>10ms'; metrics: p50 p90 p99 p999 max checkoutWaitP50 checkoutWaitP99 checkoutWaitMax (with us/ms/s), errors errorRate(%) missed opsPerSec connectionsCreated checkOutFailed"

export function parseFailOn(text: string): Threshold[] {
  return parseComparisons(text, 'fail-on', ['us', 'µs', 'ms', 's', '%'], HINT).map(({expression, raw, name, operator, value, unit}) => {
    const key = name.toLowerCase()
    if (TIME_METRICS[key]) {
      if (unit === '%') throw usageError(`--fail-on '${raw}': ${name} is a time`, HINT)
      return {expression, metric: TIME_METRICS[key], unit: 'us' as const, operator, limit: value * TIME_UNITS_US[unit ?? 'ms']!}
    }
    if (COUNT_METRICS[key]) {
      if (unit !== undefined && !(unit === '%' && key === 'errorrate')) throw usageError(`--fail-on '${raw}': ${name} takes no unit`, HINT)
      return {expression, metric: COUNT_METRICS[key], unit: '' as const, operator, limit: value}
    }
    throw usageError(`--fail-on '${raw}': unknown metric '${name}'`, HINT)
  })
}

export function runLabel(run: RunResult): string {
  return `${run.model} c=${run.concurrency}${run.maxPoolSize === null ? '' : ` pool=${run.maxPoolSize}`}${run.rate === null ? '' : ` rate=${run.rate}`}`
}

/**
 * The breach of a gate that measured nothing: every threshold "holds" over an
 * empty histogram (p99 0, errors 0), so a run whose operations all failed or
 * never ran would pass `p99>50ms`. A gate needs operations to judge.
 */
export const NO_OPERATIONS_MEASURED = 'no operations measured'

export function checkThresholds(thresholds: readonly Threshold[], runs: readonly RunResult[]): ThresholdBreach[] {
  const breaches: ThresholdBreach[] = []
  if (thresholds.length === 0) return breaches
  if (runs.length === 0) breaches.push({expression: NO_OPERATIONS_MEASURED, run: 'no run finished', actual: 0, unit: ''})
  for (const run of runs) {
    if (run.ops === 0) breaches.push({expression: NO_OPERATIONS_MEASURED, run: runLabel(run), actual: 0, unit: ''})
    for (const threshold of thresholds) {
      const actual = threshold.metric(run)
      if (holds(threshold.operator, actual, threshold.limit)) breaches.push({expression: threshold.expression, run: runLabel(run), actual, unit: threshold.unit})
    }
  }
  return breaches
}
