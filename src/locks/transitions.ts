/**
 * Pure: successive snapshots of the locks (config.locks rows, or 6.1+ DDL operations of
 * `$currentOp`) turned into transitions, with hold times summarised per lock with HDR
 * percentiles. Used by `locks watch` and bench's lock observer.
 *
 * Hold times come from the lock documents, on the server's clock: a hold starts at the
 * lock's `when` (the acquirer's clock at the grab); its end is never written (unlocking only
 * sets `state: 0`), so it lies between the last poll that saw it held and the first that saw
 * it free — or the next holder's `when`, when `ts`/`when` changed between two polls (a
 * release and re-take no poll saw). A hold no poll saw at all (taken and freed between two
 * polls) is only bounded by that gap, and is kept apart from the others so the poll interval
 * is never reported as a hold time.
 */
import {createHistogram, type Histogram, mergeHistograms, recordMs, summarize} from '../metrics/histograms.js'
import type {DdlOpRow, LockEvent, LockHoldSummary, LockRow} from './types.js'

/** How long a holder had a lock: at most `maxMS`; at least `minMS` when a poll saw it held, else only bounded (`betweenPolls`). */
interface Hold {
  maxMS: number
  minMS?: number
}

/** Per-lock counts and hold times (shared by both trackers). */
class HoldStats {
  /**
   * Per lock: `seen`, the upper bounds of the holds a poll saw held (holdMS, as before); `all`, every hold's upper
   * bound (holdMaxMS; bench's merged figure); `lower`, every hold's lower bound (holdMinMS: 0 for one no poll saw).
   */
  private readonly stats = new Map<string, {acquired: number; released: number; overtaken: number; seen: Histogram; all: Histogram; lower: Histogram; lowerCount: number; betweenPolls: number; betweenPollsMaxMS: number}>()

  private stat(name: string) {
    let s = this.stats.get(name)
    if (!s) {
      s = {acquired: 0, released: 0, overtaken: 0, seen: createHistogram(), all: createHistogram(), lower: createHistogram(), lowerCount: 0, betweenPolls: 0, betweenPollsMaxMS: 0}
      this.stats.set(name, s)
    }
    return s
  }

  count(name: string, kind: 'acquired' | 'released' | 'overtaken'): void {
    this.stat(name)[kind]++
  }

  hold(name: string, hold: Hold): void {
    const s = this.stat(name)
    const ms = Math.max(0.001, hold.maxMS)
    recordMs(s.all, ms)
    // A histogram records nothing at 0: a lower bound of 0 (no poll saw the hold) is kept as 1 µs and counted.
    recordMs(s.lower, Math.min(ms, Math.max(0.001, hold.minMS ?? 0)))
    s.lowerCount++
    if (hold.minMS === undefined) {
      s.betweenPolls++
      s.betweenPollsMaxMS = Math.max(s.betweenPollsMaxMS, hold.maxMS)
    } else {
      recordMs(s.seen, ms)
    }
  }

  /** Every hold's upper bound in one histogram (merged, never averaged): bench's observer, polling every 25 ms. */
  mergedHold(): Histogram {
    return mergeHistograms([...this.stats.values()].map((s) => s.all))
  }

  /** Every hold's lower bound in one histogram (0 for a hold no poll saw, kept as 1 µs). */
  mergedHoldLower(): Histogram {
    return mergeHistograms([...this.stats.values()].map((s) => s.lower))
  }

  summary(): LockHoldSummary[] {
    const ms = (us: number) => Math.round(us / 100) / 10
    return [...this.stats]
      .map(([name, s]) => {
        const h = summarize(s.seen)
        const upper = summarize(s.all)
        const lower = summarize(s.lower)
        return {
          name,
          acquired: s.acquired,
          released: s.released,
          overtaken: s.overtaken,
          holdMS: {count: h.count, p50: ms(h.p50), p90: ms(h.p90), p99: ms(h.p99), max: ms(h.max)},
          holdMinMS: {bound: 'lower' as const, count: lower.count, p50: ms(lower.p50), p90: ms(lower.p90), p99: ms(lower.p99), max: ms(lower.max)},
          holdMaxMS: {bound: 'upper' as const, count: upper.count, p50: ms(upper.p50), p90: ms(upper.p90), p99: ms(upper.p99), max: ms(upper.max)},
          betweenPolls: {count: s.betweenPolls, maxMS: Math.round(s.betweenPollsMaxMS)},
        }
      })
      .sort((a, b) => a.name.localeCompare(b.name))
  }
}

/** The hold fields of an event. */
function holdFields(hold: Hold | undefined): Partial<LockEvent> {
  if (!hold) return {}
  const maxMS = Math.max(0, Math.round(hold.maxMS))
  // No poll saw it held: at least 0 (taken and freed between two polls), at most the bound.
  if (hold.minMS === undefined) return {holdMS: maxMS, holdMaxMS: maxMS, holdMinMS: 0, holdBetweenPolls: true}
  return {holdMS: maxMS, holdMaxMS: maxMS, holdMinMS: Math.min(maxMS, Math.max(0, Math.round(hold.minMS)))}
}

/** Events of one poll in time order (stable: a release stamped at the next holder's `when` stays before that acquisition). */
export const byTime = (events: LockEvent[]): LockEvent[] => events.map((e, i) => ({e, i, t: Date.parse(e.at)})).sort((a, b) => a.t - b.t || a.i - b.i).map(({e}) => e)

interface Seen {
  locked: boolean
  identity: string
  since: number | null
  process: string | null
  verdict: LockRow['verdict']
  /** The last poll (server clock) that saw this holder holding it. */
  lastSeenHeldAt: number | null
}

/** `ts` alone is not enough: 5.0 – 6.0 use one fixed `ts` per process type, so a re-take shows only in `when`. */
const identityOf = (r: LockRow) => `${r.ts ?? ''}|${r.process ?? ''}|${r.since ?? ''}`

/** Pure: feed snapshots of lock rows (times on the server's clock), get transitions; keeps hold-time histograms per lock. */
export class LockTransitionTracker {
  private readonly seen = new Map<string, Seen>()
  private readonly stats = new HoldStats()
  private started = false
  /** Each lock's latest event time: a lock's events never go back in time (see `event`). */
  private readonly lastEventAt = new Map<string, number>()

  /**
   * A release is stamped at the poll that saw the lock free, and that is only an upper bound: the hello
   * that dates a poll runs beside its read, so the next holder's `when` can fall before the stamp (the
   * lock was read free, then taken, then the hello answered). Stamped no earlier than the lock's
   * previous event, a lock's events keep their order (a release before the next acquisition) in any
   * sort by time: locks watch's lines and JSON, and the HTML timeline, which pairs each release with
   * the acquisition before it.
   */
  private event(kind: LockEvent['kind'], r: LockRow, atMs: number, extra: Partial<LockEvent> = {}): LockEvent {
    const at = Math.max(atMs, this.lastEventAt.get(r.name) ?? atMs)
    this.lastEventAt.set(r.name, at)
    return {at: new Date(at).toISOString(), kind, name: r.name, process: r.process, who: r.who, why: r.why, ...extra}
  }

  /** The previous holder's hold, ended at `endMs` (a poll that saw it free, or the next holder's `when`). */
  private holdOf(prev: Seen, endMs: number): Hold | undefined {
    if (prev.since === null) return undefined
    return {maxMS: endMs - prev.since, ...(prev.lastSeenHeldAt === null ? {} : {minMS: prev.lastSeenHeldAt - prev.since})}
  }

  private recordHold(name: string, hold: Hold | undefined): void {
    if (hold) this.stats.hold(name, hold)
  }

  /** The first snapshot is the start: locks held (or stale) then are `held-at-start` events with their verdicts, not acquisitions. */
  observe(rows: LockRow[], atMs: number): LockEvent[] {
    const events: LockEvent[] = []
    const first = !this.started
    this.started = true
    for (const r of rows) {
      const locked = r.state !== 'unlocked'
      const since = r.since ? Date.parse(r.since) : null
      const now: Seen = {locked, identity: identityOf(r), since, process: r.process, verdict: r.verdict, lastSeenHeldAt: locked ? atMs : null}
      const prev = this.seen.get(r.name)
      this.seen.set(r.name, now)
      if (first) {
        if (locked) events.push(this.event('held-at-start', r, atMs, {verdict: r.verdict, since: r.since, whenMeans: r.whenMeans}))
        continue
      }
      // A lock document that appeared since the last poll (a first DDL on a new namespace) was free before.
      const before: Seen = prev ?? {locked: false, identity: '', since: null, process: null, verdict: 'free', lastSeenHeldAt: null}
      if (before.identity === now.identity) {
        if (before.locked && !locked) {
          const hold = this.holdOf(before, atMs)
          this.stats.count(r.name, 'released')
          this.recordHold(r.name, hold)
          events.push(this.event('released', r, atMs, holdFields(hold)))
        } else if (before.locked && locked) {
          if (r.verdict === 'stale' && before.verdict !== 'stale') events.push(this.event('stale', r, atMs, {verdict: r.verdict}))
        } else if (!before.locked && locked) {
          this.stats.count(r.name, 'acquired')
          events.push(this.event('acquired', r, since ?? atMs))
        }
        continue
      }
      // Someone took the lock since the last poll: the previous hold ended by the new holder's `when`.
      const takenAt = since ?? atMs
      if (before.locked) {
        const hold = this.holdOf(before, takenAt)
        this.recordHold(r.name, hold)
        if (before.verdict === 'stale' || before.verdict === 'no-ping') {
          this.stats.count(r.name, 'overtaken')
          this.stats.count(r.name, 'acquired')
          events.push(this.event('overtaken', r, takenAt, {previousProcess: before.process, ...holdFields(hold)}))
        } else {
          this.stats.count(r.name, 'released')
          this.stats.count(r.name, 'acquired')
          events.push(this.event('released', {...r, process: before.process, who: null, why: null}, takenAt, holdFields(hold)))
          events.push(this.event('acquired', r, takenAt))
        }
      } else {
        this.stats.count(r.name, 'acquired')
        events.push(this.event('acquired', r, takenAt))
      }
      if (!locked) {
        // Taken and freed between two polls: no poll saw it held, only the gap bounds the hold.
        const hold: Hold | undefined = since === null ? undefined : {maxMS: atMs - since}
        this.stats.count(r.name, 'released')
        this.recordHold(r.name, hold)
        events.push(this.event('released', r, atMs, holdFields(hold)))
      }
    }
    return byTime(events)
  }

  /** Every lock's hold upper bounds in one histogram (merged, never averaged). */
  mergedHold(): Histogram {
    return this.stats.mergedHold()
  }

  mergedHoldLower(): Histogram {
    return this.stats.mergedHoldLower()
  }

  summary(): LockHoldSummary[] {
    return this.stats.summary()
  }
}

/** 6.1+: DDL operations from $currentOp as pseudo-locks on their namespace (times on the server's clock). */
export class DdlOpTracker {
  /** `acquiredFrom`–`acquiredBy`: when the op got its lock (one instant for an op first seen running: now − its running time). */
  private readonly seen = new Map<string, {op: DdlOpRow; acquiredFrom: number | null; acquiredBy: number | null; lastSeenAt: number}>()
  private readonly stats = new HoldStats()
  private started = false
  private lastPollAt: number | null = null

  observe(ops: DdlOpRow[], atMs: number): LockEvent[] {
    const events: LockEvent[] = []
    const current = new Set<string>()
    const first = !this.started
    this.started = true
    const base = (op: DdlOpRow, kind: LockEvent['kind'], at: number, extra: Partial<LockEvent> = {}): LockEvent => ({
      at: new Date(at).toISOString(),
      kind,
      name: op.ns ?? op.command,
      process: op.shard ?? op.host,
      who: `${op.host ?? '?'}:${op.opid}`,
      why: op.command,
      ...extra,
    })
    for (const op of ops) {
      // A coordinator's entry has no opid: its name and namespace tell it apart.
      const key = `${op.host}|${op.opid || `${op.command}:${op.ns}`}`
      current.add(key)
      const prev = this.seen.get(key)
      if (!prev) {
        // An entry that does not say how long it has run started no later than this poll.
        const start = atMs - (op.runningMS ?? 0)
        this.seen.set(key, {op, acquiredFrom: op.waitingForLock ? null : start, acquiredBy: op.waitingForLock ? null : start, lastSeenAt: atMs})
        if (op.waitingForLock) events.push(base(op, 'waiting', atMs))
        else if (first) events.push(base(op, 'held-at-start', atMs, {since: new Date(start).toISOString()}))
        else {
          this.stats.count(op.ns ?? op.command, 'acquired')
          events.push(base(op, 'acquired', start))
        }
        continue
      }
      if (prev.acquiredBy === null && !op.waitingForLock) {
        // It stopped waiting between the last poll and this one.
        prev.acquiredFrom = this.lastPollAt ?? atMs
        prev.acquiredBy = atMs
        this.stats.count(op.ns ?? op.command, 'acquired')
        events.push(base(op, 'acquired', atMs))
      }
      prev.op = op
      prev.lastSeenAt = atMs
    }
    for (const [key, entry] of [...this.seen]) {
      if (current.has(key)) continue
      this.seen.delete(key)
      if (entry.acquiredFrom === null || entry.acquiredBy === null) continue
      const hold: Hold = {maxMS: atMs - entry.acquiredFrom, minMS: entry.lastSeenAt - entry.acquiredBy}
      const name = entry.op.ns ?? entry.op.command
      this.stats.count(name, 'released')
      this.stats.hold(name, hold)
      events.push(base(entry.op, 'released', atMs, holdFields(hold)))
    }
    this.lastPollAt = atMs
    return byTime(events)
  }

  mergedHold(): Histogram {
    return this.stats.mergedHold()
  }

  mergedHoldLower(): Histogram {
    return this.stats.mergedHoldLower()
  }

  summary(): LockHoldSummary[] {
    return this.stats.summary()
  }
}
