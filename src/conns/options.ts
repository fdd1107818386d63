/** Flag values of `conns watch` → validated WatchOptions (usage errors with a hint). Pure. */
import {parseDurationMs} from '../cli/parse.js'
import {usageError} from '../errors.js'
import {parseAlerts} from './alerts.js'
import {DEFAULT_IDLE_WINDOW_MS, MIN_INTERVAL_MS, type WatchOptions} from './watch.js'

export interface WatchFlags {
  interval: string
  duration?: string
  count?: number
  alert?: string
  'idle-window'?: string
  holders: boolean
}

export function toWatchOptions(flags: WatchFlags): WatchOptions {
  const intervalMS = parseDurationMs(flags.interval, 'interval')
  if (intervalMS < MIN_INTERVAL_MS) {
    throw usageError(`--interval ${flags.interval} is below ${MIN_INTERVAL_MS} ms`, `poll at most ten times a second: use --interval ${MIN_INTERVAL_MS}ms or more`)
  }
  const durationMS = flags.duration === undefined ? undefined : parseDurationMs(flags.duration, 'duration')
  if (durationMS !== undefined && durationMS <= 0) throw usageError(`--duration ${flags.duration} is not a positive duration`, 'e.g. --duration 30s')
  if (flags.count !== undefined && flags.count < 1) throw usageError(`--count ${flags.count} must be at least 1`, 'e.g. --count 10')
  const idleWindowMS = flags['idle-window'] === undefined ? DEFAULT_IDLE_WINDOW_MS : parseDurationMs(flags['idle-window'], 'idle-window')
  if (idleWindowMS < intervalMS) {
    throw usageError(`--idle-window ${flags['idle-window']} is shorter than --interval ${flags.interval}`, 'the idle window needs at least one poll round: make it longer than the interval')
  }
  return {
    intervalMS,
    durationMS,
    count: flags.count,
    idleWindowMS,
    alerts: flags.alert === undefined ? [] : parseAlerts(flags.alert),
    holders: flags.holders,
  }
}
