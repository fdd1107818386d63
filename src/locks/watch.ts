/**
 * `pooltool locks watch`: poll the locks and turn successive snapshots into transitions —
 * acquired, released, overtaken (the previous holder was stale or had no ping) — with the
 * hold time of each holder, summarised per lock with HDR percentiles. On 6.1+ (in-memory
 * model) the DDL operations of `$currentOp` stand in for locks, keyed by namespace.
 */
import {createHistogram, type Histogram, mergeHistograms, recordMs, summarize} from '../metrics/histograms.js'
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import {filterLocks, toLockRows, type LockFilter} from './parse.js'
import {classifyPollFailure} from './poll-failure.js'
import {openLocksSession, readConfigSnapshot, readDdlOps, timingNotes, type LocksSession, type ReadBounds} from './read.js'
import {LOCK_POLL_FAILURE_REASONS, type DdlOpRow, type LockEvent, type LockHoldSummary, type LockPollFailure, type LockPollFailureReason, type LockRow, type LocksWatchResult} from './types.js'

interface Seen {
  locked: boolean
  identity: string
  since: number | null
  process: string | null
  verdict: LockRow['verdict']
}

const identityOf = (r: LockRow) => `${r.ts ?? ''}|${r.process ?? ''}|${r.since ?? ''}`

/** Pure: feed snapshots of lock rows, get transitions; keeps hold-time histograms per lock. */
export class LockTransitionTracker {
  private readonly seen = new Map<string, Seen>()
  private readonly stats = new Map<string, {acquired: number; released: number; overtaken: number; hold: Histogram}>()

  private stat(name: string) {
    let s = this.stats.get(name)
    if (!s) {
      s = {acquired: 0, released: 0, overtaken: 0, hold: createHistogram()}
      this.stats.set(name, s)
    }
    return s
  }

  private event(kind: LockEvent['kind'], r: LockRow, atMs: number, extra: Partial<LockEvent> = {}): LockEvent {
    const s = this.stat(r.name)
    if (kind === 'acquired') s.acquired++
    if (kind === 'released') s.released++
    if (kind === 'overtaken') s.overtaken++
    if (extra.holdMS !== undefined) recordMs(s.hold, Math.max(0.001, extra.holdMS))
    return {at: new Date(atMs).toISOString(), kind, name: r.name, process: r.process, who: r.who, why: r.why, ...extra}
  }

  /** The first snapshot is the baseline: locks already held are not "acquired". */
  observe(rows: LockRow[], atMs: number): LockEvent[] {
    const events: LockEvent[] = []
    for (const r of rows) {
      const locked = r.state !== 'unlocked'
      const since = r.since ? Date.parse(r.since) : null
      const now: Seen = {locked, identity: identityOf(r), since, process: r.process, verdict: r.verdict}
      const prev = this.seen.get(r.name)
      this.seen.set(r.name, now)
      if (!prev) continue
      const sameHolder = prev.identity === now.identity
      const holdOf = (s: Seen, end: number) => (s.since === null ? undefined : Math.max(0, end - s.since))
      if (prev.locked && sameHolder && !locked) {
        events.push(this.event('released', r, atMs, {holdMS: holdOf(prev, atMs)}))
      } else if (!sameHolder) {
        // Someone took the lock since the last poll.
        if (prev.locked && (prev.verdict === 'stale' || prev.verdict === 'no-ping')) {
          events.push(this.event('overtaken', r, atMs, {previousProcess: prev.process, holdMS: holdOf(prev, since ?? atMs)}))
          this.stat(r.name).acquired++
        } else {
          if (prev.locked) {
            const old = {...r, process: prev.process, who: null, why: null}
            events.push(this.event('released', old, atMs, {holdMS: holdOf(prev, since ?? atMs)}))
          }
          events.push(this.event('acquired', r, since ?? atMs))
        }
        if (!locked) events.push(this.event('released', r, atMs, {holdMS: holdOf(now, atMs)}))
      } else if (!prev.locked && locked) {
        events.push(this.event('acquired', r, since ?? atMs))
      }
    }
    return events
  }

  /** Every lock's hold times in one histogram (merged, never averaged). */
  mergedHold(): Histogram {
    return mergeHistograms([...this.stats.values()].map((s) => s.hold))
  }

  summary(): LockHoldSummary[] {
    return [...this.stats]
      .map(([name, s]) => {
        const h = summarize(s.hold)
        const ms = (us: number) => Math.round(us / 100) / 10
        return {name, acquired: s.acquired, released: s.released, overtaken: s.overtaken, holdMS: {count: h.count, p50: ms(h.p50), p90: ms(h.p90), p99: ms(h.p99), max: ms(h.max)}}
      })
      .sort((a, b) => a.name.localeCompare(b.name))
  }
}

/** 6.1+: DDL operations from $currentOp as pseudo-locks on their namespace. */
export class DdlOpTracker {
  private readonly seen = new Map<string, {op: DdlOpRow; firstSeen: number; acquiredAt: number | null}>()
  private readonly extra = new Map<string, {acquired: number; released: number; hold: Histogram}>()

  observe(ops: DdlOpRow[], atMs: number): LockEvent[] {
    const events: LockEvent[] = []
    const current = new Set<string>()
    const base = (op: DdlOpRow, kind: LockEvent['kind'], holdMS?: number): LockEvent => ({
      at: new Date(atMs).toISOString(),
      kind,
      name: op.ns ?? op.command,
      process: op.shard ?? op.host,
      who: `${op.host ?? '?'}:${op.opid}`,
      why: op.command,
      ...(holdMS === undefined ? {} : {holdMS}),
    })
    for (const op of ops) {
      const key = `${op.host}|${op.opid}`
      current.add(key)
      const prev = this.seen.get(key)
      if (!prev) {
        const entry = {op, firstSeen: atMs - op.runningMS, acquiredAt: op.waitingForLock ? null : atMs - op.runningMS}
        this.seen.set(key, entry)
        events.push(base(op, op.waitingForLock ? 'waiting' : 'acquired'))
        if (!op.waitingForLock) this.count(op, 'acquired')
      } else {
        if (prev.acquiredAt === null && !op.waitingForLock) {
          prev.acquiredAt = atMs
          events.push(base(op, 'acquired'))
          this.count(op, 'acquired')
        }
        prev.op = op
      }
    }
    for (const [key, entry] of [...this.seen]) {
      if (current.has(key)) continue
      this.seen.delete(key)
      if (entry.acquiredAt === null) continue
      const hold = Math.max(0, atMs - entry.acquiredAt)
      events.push(base(entry.op, 'released', hold))
      this.count(entry.op, 'released', hold)
    }
    return events
  }

  private count(op: DdlOpRow, kind: 'acquired' | 'released', holdMS?: number): void {
    const name = op.ns ?? op.command
    let s = this.extra.get(name)
    if (!s) {
      s = {acquired: 0, released: 0, hold: createHistogram()}
      this.extra.set(name, s)
    }
    s[kind]++
    if (holdMS !== undefined) recordMs(s.hold, Math.max(0.001, holdMS))
  }

  mergedHold(): Histogram {
    return mergeHistograms([...this.extra.values()].map((s) => s.hold))
  }

  summary(): LockHoldSummary[] {
    return [...this.extra].map(([name, s]) => {
      const h = summarize(s.hold)
      const ms = (us: number) => Math.round(us / 100) / 10
      return {name, acquired: s.acquired, released: s.released, overtaken: 0, holdMS: {count: h.count, p50: ms(h.p50), p90: ms(h.p90), p99: ms(h.p99), max: ms(h.max)}}
    })
  }
}

export interface LocksWatchConfig {
  /** Stop after this long (default: until the signal). */
  durationMS?: number
  intervalMS: number
  filter: LockFilter
  /** --lock-expiry: overrides the 15 min behind `stale`. */
  expiryMS?: number
}

export interface WatchHooks {
  signal: AbortSignal
  onEvent?(event: LockEvent): void
  onStart?(info: {model: LocksWatchResult['model']; message: string; expiryMS: number}): void
  /** A poll got no snapshot; the watch goes on. */
  onPollFailed?(failure: LockPollFailure): void
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, {once: true})
  })
}

const noFailures = (): Record<LockPollFailureReason, number> =>
  Object.fromEntries(LOCK_POLL_FAILURE_REASONS.map((reason) => [reason, 0])) as Record<LockPollFailureReason, number>

/** Said in the result's notes when a poll failed. */
export const FAILED_POLLS_NOTE = 'transitions during failed polls show at the next poll that answered: their hold times are accurate to that gap'

/**
 * Polls until the deadline, Ctrl-C or forever. A poll that fails (router or config
 * server gone, a stall, a lost privilege) is a marked round and the watch goes on, so
 * the summary is always produced. Each poll is bounded by the target's --timeout-ms
 * through the driver's per-operation AbortSignal (see ReadBounds), so the last poll ends
 * at most one interval plus --timeout-ms after the deadline.
 */
export async function runLocksWatch(target: Target, config: LocksWatchConfig, hooks: WatchHooks): Promise<LocksWatchResult> {
  const pollTimeoutMS = target.connection.timeoutMs
  const session = await openLocksSession(target, {expiryMS: config.expiryMS})
  const started = Date.now()
  const events: LockEvent[] = []
  const pollFailures: LockPollFailure[] = []
  const failedPollsByReason = noFailures()
  let polls = 0
  const locks = new LockTransitionTracker()
  const ddl = new DdlOpTracker()
  try {
    hooks.onStart?.({model: session.model, message: session.message, expiryMS: session.timing.expiryMS})
    const until = config.durationMS === undefined ? Number.POSITIVE_INFINITY : started + config.durationMS
    while (!hooks.signal.aborted) {
      const at = Date.now()
      polls++
      const timeout = AbortSignal.timeout(pollTimeoutMS)
      try {
        const fresh = await pollOnce(session, config.filter, {signal: AbortSignal.any([hooks.signal, timeout])}, {locks, ddl, atMs: at})
        for (const e of fresh) {
          events.push(e)
          hooks.onEvent?.(e)
        }
      } catch (error) {
        // Ctrl-C cancelled the read: not a failure of the cluster, and not a poll that counts.
        if (hooks.signal.aborted) {
          polls--
          break
        }
        const {reason, error: text} = classifyPollFailure(error, {
          target: target.redactedUri,
          secrets: target.secrets,
          timeoutMs: pollTimeoutMS,
          timedOut: timeout.aborted,
        })
        const failure: LockPollFailure = {at: new Date(at).toISOString(), poll: polls, reason, error: text}
        pollFailures.push(failure)
        failedPollsByReason[reason] += 1
        hooks.onPollFailed?.(failure)
      }
      const next = at + config.intervalMS
      if (next >= until) break
      await sleep(next - Date.now(), hooks.signal)
    }
    return {
      target: targetSummary(target),
      serverVersion: session.serverVersion,
      model: session.model,
      message: session.message,
      durationMS: Date.now() - started,
      intervalMS: config.intervalMS,
      polls,
      failedPolls: pollFailures.length,
      failedPollsByReason,
      pollFailures,
      pollTimeoutMS,
      events,
      locks: session.model === 'in-memory' ? ddl.summary() : locks.summary(),
      notes: [...timingNotes(session, config.expiryMS !== undefined), ...(pollFailures.length > 0 ? [FAILED_POLLS_NOTE] : [])],
      interrupted: hooks.signal.aborted,
    }
  } finally {
    await session.close().catch(() => undefined)
  }
}

/** One snapshot turned into transitions (the trackers keep the last successful snapshot across failed polls). */
async function pollOnce(
  session: LocksSession,
  filter: LockFilter,
  bounds: ReadBounds,
  trackers: {locks: LockTransitionTracker; ddl: DdlOpTracker; atMs: number},
): Promise<LockEvent[]> {
  if (session.model === 'in-memory') {
    const ops = await readDdlOps(session.reader, bounds)
    return trackers.ddl.observe(ops.filter((o) => matches(o.ns, filter)), trackers.atMs)
  }
  const snap = await readConfigSnapshot(session.reader, bounds)
  const rows = filterLocks(toLockRows({...snap, nowMs: snap.now.getTime(), timing: session.timing}), {db: filter.db, ns: filter.ns})
  return trackers.locks.observe(rows, snap.now.getTime())
}

function matches(ns: string | null, filter: LockFilter): boolean {
  if (!ns) return filter.db === undefined && filter.ns === undefined
  if (filter.ns !== undefined && ns !== filter.ns) return false
  if (filter.db !== undefined && ns !== filter.db && !ns.startsWith(`${filter.db}.`)) return false
  return true
}
