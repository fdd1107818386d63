/**
 * `--fault` values of `pooltool sim`: KIND[:VALUE]@AT, e.g. `stall:1s@5s`,
 * `drop-connections@10s`, `restart:2s@30s`, `latency:5ms@0s`,
 * `max-connections:50@0s`. AT is the offset after start-up. Durations need a
 * unit, as on every duration flag (src/parse/durations.ts).
 */
import {usageError} from '../errors.js'
import type {ScheduledFault, SimFault} from '../sim/types.js'
import {parseDurationMs} from './durations.js'

const HINT = 'write KIND[:VALUE]@AT, e.g. stall:1s@5s, drop-connections@10s, restart:2s@30s, latency:5ms@0s, setup-cost:20ms@0s, max-connections:50@0s'

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
    default:
      throw usageError(`--fault '${spec}': unknown fault '${kind}'`, HINT)
  }
  return {atMs, fault}
}
