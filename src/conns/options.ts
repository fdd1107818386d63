/** Flag values of `conns watch` → validated WatchOptions (usage errors with a hint). Pure. */
import {usageError} from '../errors.js'
import {formatDuration} from '../parse/durations.js'
import {parseAlerts} from './alerts.js'
import {DEFAULT_IDLE_WINDOW_MS, DEFAULT_INTERVAL_MS, MIN_INTERVAL_MS, type WatchOptions} from './watch.js'

export interface WatchFlags {
  /** Durations in milliseconds (the CLI's duration flags parse `500ms`, `2m` …); absent: CONNS_DEFAULTS. */
  interval?: number
  duration?: number
  count?: number
  alert?: string
  'idle-window'?: number
  holders: boolean
  discover?: boolean
}

export function toWatchOptions(flags: WatchFlags): WatchOptions {
  const intervalMS = flags.interval ?? DEFAULT_INTERVAL_MS
  if (intervalMS < MIN_INTERVAL_MS) {
    throw usageError(`--interval ${formatDuration(intervalMS)} is below ${formatDuration(MIN_INTERVAL_MS)}`, `poll at most ten times a second: use --interval ${MIN_INTERVAL_MS}ms or more`)
  }
  const durationMS = flags.duration
  if (durationMS !== undefined && durationMS <= 0) throw usageError('--duration must be above zero', 'e.g. --duration 30s')
  if (flags.count !== undefined && flags.count < 1) throw usageError(`--count ${flags.count} must be at least 1`, 'e.g. --count 10')
  const idleWindowMS = flags['idle-window'] ?? DEFAULT_IDLE_WINDOW_MS
  if (idleWindowMS < intervalMS) {
    throw usageError(`--idle-window ${formatDuration(idleWindowMS)} is shorter than --interval ${formatDuration(intervalMS)}`, 'the idle window needs at least one poll round: make it longer than the interval')
  }
  return {
    intervalMS,
    durationMS,
    count: flags.count,
    idleWindowMS,
    alerts: flags.alert === undefined ? [] : parseAlerts(flags.alert),
    holders: flags.holders,
    ...(flags.discover === false ? {discover: false} : {}),
  }
}
