/**
 * Cumulative lock waits from `serverStatus.locks`, per resource and mode, and the difference of two
 * samples (pure).
 *
 * Shape (the manual's serverStatus "locks"): `locks.<ResourceType>.{acquireCount,
 * acquireWaitCount, timeAcquiringMicros, deadlockCount}.<mode letter>`, NumberLong values (bson Long
 * through the driver). The server appends a mode, even a whole counter, only when it is above zero
 * (lock_stats.cpp), so a missing acquireWaitCount is "never waited", not unknown; a missing `locks`
 * section is unknown on a mongod, and a router keeps none (a mongos takes no data locks). The mean
 * wait is timeAcquiringMicros / acquireWaitCount (the manual's own reading of the two fields).
 */
import {toNumber} from '../../probes/server-status.js'
import {modeName} from './modes.js'
import {parseLockCounters} from './operations.js'
import type {LockWaitRateRow, LockWaitRates, LockWaitRow, LockWaitsView} from './types.js'

type Doc = Record<string, unknown>
const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Seconds since start: `uptime` (seconds), else `uptimeMillis`, else globalLock.totalTime (microseconds since start). */
export function uptimeOf(serverStatus: Doc): {seconds: number | null; from: LockWaitsView['uptimeFrom']} {
  const uptime = toNumber(serverStatus.uptime)
  if (uptime !== undefined) return {seconds: uptime, from: 'uptime'}
  const millis = toNumber(serverStatus.uptimeMillis)
  if (millis !== undefined) return {seconds: millis / 1000, from: 'uptimeMillis'}
  const total = isDoc(serverStatus.globalLock) ? toNumber(serverStatus.globalLock.totalTime) : undefined
  if (total !== undefined) return {seconds: total / 1_000_000, from: 'globalLock.totalTime'}
  return {seconds: null, from: null}
}

/** "47 days", "5 hours", "12 minutes", "40 seconds". */
export function uptimeText(seconds: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
  if (seconds >= 2 * 86_400) return unit(Math.floor(seconds / 86_400), 'day')
  if (seconds >= 2 * 3600) return unit(Math.floor(seconds / 3600), 'hour')
  if (seconds >= 120) return unit(Math.floor(seconds / 60), 'minute')
  return unit(Math.floor(seconds), 'second')
}

const isRouter = (serverStatus: Doc): boolean => typeof serverStatus.process === 'string' && /^mongos/.test(serverStatus.process)

/** One row per resource × mode that was acquired or waited for. */
export function lockWaitRows(locks: Doc): LockWaitRow[] {
  const rows: LockWaitRow[] = []
  for (const [resource, value] of Object.entries(locks)) {
    const counters = parseLockCounters(value)
    const modes = new Set([...Object.keys(counters.acquireCount), ...Object.keys(counters.acquireWaitCount), ...Object.keys(counters.timeAcquiringMicros)])
    for (const mode of modes) {
      const acquireCount = counters.acquireCount[mode] ?? null
      const acquireWaitCount = counters.acquireWaitCount[mode] ?? 0
      const timeAcquiringMicros = counters.timeAcquiringMicros[mode] ?? 0
      rows.push({
        resource,
        mode,
        modeName: modeName(mode),
        acquireCount,
        acquireWaitCount,
        timeAcquiringMicros,
        deadlockCount: counters.deadlockCount?.[mode] ?? null,
        waitedShare: acquireCount ? acquireWaitCount / acquireCount : null,
        meanWaitMicros: acquireWaitCount > 0 ? timeAcquiringMicros / acquireWaitCount : null,
      })
    }
  }
  // Most time waited first (then most waits); rows that never waited after, by acquisitions.
  return rows.sort(
    (a, b) =>
      b.timeAcquiringMicros - a.timeAcquiringMicros ||
      b.acquireWaitCount - a.acquireWaitCount ||
      (b.acquireCount ?? 0) - (a.acquireCount ?? 0) ||
      a.resource.localeCompare(b.resource) ||
      a.mode.localeCompare(b.mode),
  )
}

/** The waits a DBA reads from one serverStatus document. */
export function lockWaitsFromServerStatus(serverStatus: Doc): LockWaitsView {
  const {seconds, from} = uptimeOf(serverStatus)
  const since = seconds === null ? 'since start (uptime not sent)' : `since start, ${uptimeText(seconds)}`
  if (isRouter(serverStatus)) {
    return {state: 'router', uptimeSeconds: seconds, uptimeFrom: from, rows: [], anyWaited: false, summary: 'lock waits are not kept on a router: read the shards'}
  }
  if (!isDoc(serverStatus.locks)) {
    return {state: 'unknown', uptimeSeconds: seconds, uptimeFrom: from, rows: [], anyWaited: false, summary: 'lock waits unknown: serverStatus sent no locks section'}
  }
  const rows = lockWaitRows(serverStatus.locks)
  const anyWaited = rows.some((row) => row.acquireWaitCount > 0 || row.timeAcquiringMicros > 0)
  return {
    state: 'counted',
    uptimeSeconds: seconds,
    uptimeFrom: from,
    rows,
    anyWaited,
    summary: anyWaited ? `lock waits ${since}` : `no lock has waited ${since}`,
  }
}

/**
 * Waits between two samples of serverStatus.locks (`before` older), per resource and mode, for a
 * watch. `intervalMS` is the time between them (the caller's clock, or the difference of uptimes).
 */
export function lockWaitRates(before: Doc, after: Doc, intervalMS: number): LockWaitRates {
  const rowsOf = (status: Doc) => (isDoc(status.locks) ? lockWaitRows(status.locks) : [])
  const earlier = new Map(rowsOf(before).map((row) => [`${row.resource}\u0000${row.mode}`, row]))
  const seconds = intervalMS / 1000
  let reset = false
  const rows: LockWaitRateRow[] = []
  for (const row of rowsOf(after)) {
    const old = earlier.get(`${row.resource}\u0000${row.mode}`)
    const acquireDelta = row.acquireCount === null ? null : row.acquireCount - (old?.acquireCount ?? 0)
    const acquireWaitDelta = row.acquireWaitCount - (old?.acquireWaitCount ?? 0)
    const timeAcquiringMicrosDelta = row.timeAcquiringMicros - (old?.timeAcquiringMicros ?? 0)
    if (acquireWaitDelta < 0 || timeAcquiringMicrosDelta < 0 || (acquireDelta !== null && acquireDelta < 0)) reset = true
    if (acquireWaitDelta <= 0 && timeAcquiringMicrosDelta <= 0) continue
    rows.push({
      resource: row.resource,
      mode: row.mode,
      acquireDelta,
      acquireWaitDelta,
      timeAcquiringMicrosDelta,
      waitsPerSecond: seconds > 0 ? acquireWaitDelta / seconds : 0,
      waitMicrosPerSecond: seconds > 0 ? timeAcquiringMicrosDelta / seconds : 0,
      meanWaitMicros: acquireWaitDelta > 0 ? timeAcquiringMicrosDelta / acquireWaitDelta : null,
    })
  }
  // A restart between the samples: counters started again from zero, so no difference means anything.
  if (reset) return {intervalMS, reset: true, rows: []}
  return {intervalMS, reset: false, rows: rows.sort((a, b) => b.timeAcquiringMicrosDelta - a.timeAcquiringMicrosDelta)}
}
