/**
 * `--fault` values of `pooltool sim`: KIND[:VALUE]@AT, e.g. `stall:1s@5s`,
 * `drop-connections@10s`, `restart:2s@30s`, `latency:5ms@0s`,
 * `max-connections:50@0s`, `lock-hold:app.orders:W:5s@10s` (an index build on app.orders holds the
 * collection lock exclusively, W, or shared, R, for 5 s from 10 s after start). AT is the offset after
 * start-up. Durations need a unit, as on every duration flag (src/parse/durations.ts).
 */
import {usageError} from '../errors.js'
import type {ScheduledFault, SimFault} from '../sim/index.js'
import {parseDurationMs} from './durations.js'

const HINT = 'write KIND[:VALUE]@AT, e.g. stall:1s@5s, drop-connections@10s, restart:2s@30s, latency:5ms@0s, setup-cost:20ms@0s, max-connections:50@0s, lock-hold:app.orders:W:5s@10s'

export function parseFaultSpec(spec: string): ScheduledFault {
  const match = /^([a-z-]+)(?::([^@]+))?@(.+)$/.exec(spec.trim())
  if (!match) throw usageError(`--fault '${spec}' does not parse`, HINT)
  const [, kind, value, at] = match as unknown as [string, string, string | undefined, string]
  // Errors name the whole spec: with several --fault flags, the value alone does not say which one.
  const duration = (text: string): number => {
    try {
      return parseDurationMs(text, 'fault')
    } catch {
      throw usageError(`--fault '${spec}': '${text}' is not a duration with a unit (500ms, 10s, 2m, 1h; at most 596h)`, HINT)
    }
  }
  const atMs = duration(at)
  const needValue = (): string => {
    if (value === undefined) throw usageError(`--fault '${spec}': ${kind} needs a value`, HINT)
    return value
  }
  let fault: SimFault
  switch (kind) {
    case 'latency':
    case 'stall':
    case 'setup-cost':
      fault = {kind, ms: duration(needValue())}
      break
    case 'restart':
      fault = {kind, downMS: duration(needValue())}
      break
    case 'drop-connections':
      fault = {kind}
      break
    case 'max-connections': {
      const max = Number(needValue())
      if (!Number.isInteger(max) || max < 1) throw usageError(`--fault '${spec}': the limit must be a whole number ≥ 1`, HINT)
      fault = {kind, max}
      break
    }
    case 'lock-hold': {
      // NS:MODE:DURATION; the namespace may itself hold a colon, so read from the right.
      const parts = needValue().split(':')
      const ms = parts.length >= 3 ? parts.pop()! : undefined
      const mode = parts.length >= 2 ? parts.pop()! : undefined
      const ns = parts.join(':')
      if (ms === undefined || mode === undefined) throw usageError(`--fault '${spec}': lock-hold needs NAMESPACE:MODE:DURATION, e.g. lock-hold:app.orders:W:5s@10s`, HINT)
      const dot = ns.indexOf('.')
      if (dot < 1 || dot === ns.length - 1) throw usageError(`--fault '${spec}': '${ns}' is not a namespace (db.collection)`, HINT)
      if (mode !== 'W' && mode !== 'R') throw usageError(`--fault '${spec}': the mode must be W (exclusive) or R (shared), not '${mode}'`, HINT)
      fault = {kind, ns, mode, ms: duration(ms)}
      break
    }
    default:
      throw usageError(`--fault '${spec}': unknown fault '${kind}'`, HINT)
  }
  return {atMs, fault}
}
