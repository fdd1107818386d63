/**
 * `--alert 'rate>50/s,current>80%'`: growth alerts evaluated on every host at
 * every poll round. Edge-triggered: a rule fires on a host when its condition
 * becomes true, and fires again only after it was false in between.
 *
 * Metrics (per host):
 * - `rate`: totalCreated growth, connections per second (`/s`, or `/m` per minute);
 * - `current`, `available`, `active`: counts, or `%` of the connection limit (current + available);
 * - `rejected`: connections the server rejected since the previous poll (6.3+ servers).
 */
import {type ComparisonOperator, holds, parseComparisons} from '../parse/comparisons.js'
import {usageError} from '../errors.js'
import type {AlertMetric, ConnsAlert} from './types.js'

export interface AlertRule {
  /** As written (whitespace removed), e.g. "rate>50/s". */
  expression: string
  metric: AlertMetric
  operator: ComparisonOperator
  /** In the rule's unit: per second for rate, percent for %, a count otherwise. */
  limit: number
  unit: '/s' | '%' | ''
}

const METRICS: Record<string, {metric: AlertMetric; units: ReadonlyArray<string | undefined>}> = {
  rate: {metric: 'rate', units: [undefined, '/s', '/m']},
  current: {metric: 'current', units: [undefined, '%']},
  available: {metric: 'available', units: [undefined, '%']},
  active: {metric: 'active', units: [undefined, '%']},
  rejected: {metric: 'rejected', units: [undefined]},
}

export const ALERT_HINT =
  "write comma-separated METRIC OP VALUE, e.g. 'rate>50/s,current>80%'; metrics: rate (connections created per second, /s or /m), " +
  'current, available, active (a count, or % of current+available), rejected (since the previous poll); operators > >= < <='

export function parseAlerts(text: string): AlertRule[] {
  return parseComparisons(text, 'alert', ['/s', '/m', '%'], ALERT_HINT).map(({expression, raw, name, operator, value, unit}) => {
    const spec = METRICS[name.toLowerCase()]
    if (!spec) throw usageError(`--alert '${raw}': unknown metric '${name}'`, ALERT_HINT)
    if (!spec.units.includes(unit)) {
      throw usageError(`--alert '${raw}': ${name} does not take '${unit ?? ''}'`, ALERT_HINT)
    }
    let limit = value
    if (unit === '/m') limit /= 60
    if (unit === '%' && limit > 100) throw usageError(`--alert '${raw}': a percentage above 100 never fires`, ALERT_HINT)
    const normalisedUnit: AlertRule['unit'] = spec.metric === 'rate' ? '/s' : unit === '%' ? '%' : ''
    return {expression, metric: spec.metric, operator, limit, unit: normalisedUnit}
  })
}

/** What the rules can look at for one host at one round; undefined when not known (first poll, field absent on this version). */
export interface AlertInputs {
  ratePerSec?: number
  current?: number
  available?: number
  active?: number
  /** Rejections since the previous poll. */
  rejectedDelta?: number
}

export function alertValue(rule: AlertRule, inputs: AlertInputs): number | undefined {
  switch (rule.metric) {
    case 'rate':
      return inputs.ratePerSec
    case 'rejected':
      return inputs.rejectedDelta
    default: {
      const count = inputs[rule.metric]
      if (count === undefined || rule.unit !== '%') return count
      if (inputs.current === undefined || inputs.available === undefined) return undefined
      const limit = inputs.current + inputs.available
      return limit === 0 ? undefined : (100 * count) / limit
    }
  }
}

/** Keeps, per host and rule, whether the condition held at the previous evaluation. */
export class AlertEvaluator {
  private readonly firing = new Map<string, boolean>()

  constructor(readonly rules: readonly AlertRule[]) {}

  evaluate(host: string, inputs: AlertInputs, at: string, round: number): ConnsAlert[] {
    const fired: ConnsAlert[] = []
    this.rules.forEach((rule, index) => {
      const value = alertValue(rule, inputs)
      if (value === undefined) return
      const key = `${index}\u0000${host}`
      const conditionHolds = holds(rule.operator, value, rule.limit)
      if (conditionHolds && !this.firing.get(key)) {
        fired.push({at, round, host, rule: rule.expression, metric: rule.metric, value: Math.round(value * 100) / 100, limit: Math.round(rule.limit * 100) / 100, unit: rule.unit})
      }
      this.firing.set(key, conditionHolds)
    })
    return fired
  }
}
