/**
 * During a `bench --workload ddl` run on a sharded cluster: poll the locks of the bench's
 * own database (config.locks on 3.4 – 6.0; DDL operations in $currentOp on 6.1+) and
 * summarise how long each acquisition held its lock, beside the LockBusy /
 * ConflictingOperationInProgress errors the workload met.
 */
import {filterLocks, toLockRows} from '../locks/parse.js'
import {openLocksSession, readConfigSnapshot, readDdlOps, type LocksSession} from '../locks/read.js'
import type {LockEvent, LockHoldSummary, LockModel} from '../locks/types.js'
import {DdlOpTracker, LockTransitionTracker} from '../locks/watch.js'
import {summarize} from '../metrics/histograms.js'
import type {Target} from '../target.js'

export interface LockObservation {
  model: LockModel
  /** Polls of config.locks (or $currentOp) during the run. */
  polls: number
  intervalMS: number
  /** Acquisitions seen (a short hold between two polls can go unseen). */
  acquisitions: number
  /** Hold times over every lock of the bench database (the per-lock histograms merged): every hold's upper bound (as holdMaxMS). */
  holdMS: {count: number; p50: number; p99: number; max: number}
  /** The same holds' bounds, each percentile saying which bound it is of (see LockHoldSummary). */
  holdMinMS?: {bound: 'lower'; count: number; p50: number; p99: number; max: number}
  holdMaxMS?: {bound: 'upper'; count: number; p50: number; p99: number; max: number}
  byLock: LockHoldSummary[]
  /** The transitions seen, in order (the HTML report draws each lock's holds from them); at most MAX_OBSERVED_EVENTS. */
  events?: LockEvent[]
  /** Transitions past MAX_OBSERVED_EVENTS, counted but not kept. */
  eventsNotKept?: number
  /** Errors the workload met, from errorsByClass. */
  lockBusy: number
  conflictingOperationInProgress: number
}

export const LOCK_POLL_INTERVAL_MS = 25
/** A long ddl run makes many transitions: the result keeps this many, and counts the rest. */
export const MAX_OBSERVED_EVENTS = 10_000

export class LockObserver {
  private polls = 0
  private stopped = false
  private readonly locks = new LockTransitionTracker()
  private readonly ddl = new DdlOpTracker()
  private loop: Promise<void> = Promise.resolve()
  private readonly events: LockEvent[] = []
  private eventsNotKept = 0

  private constructor(
    private readonly session: LocksSession,
    private readonly db: string,
    private readonly intervalMs: number,
  ) {}

  /**
   * Null when the target has no lock model to watch (unsupported version) or cannot be read.
   * Connections are the target's (appName `<--app-name>-locks`, its --timeout-ms per poll).
   * The `(target, settings, db)` form is the older call; `settings` is no longer read.
   */
  static async start(target: Target, db: string, intervalMs = LOCK_POLL_INTERVAL_MS): Promise<LockObserver | null> {
    let session: LocksSession
    try {
      session = await openLocksSession(target, {purpose: 'locks'})
    } catch {
      return null
    }
    if (session.model === 'unsupported') {
      await session.close()
      return null
    }
    const observer = new LockObserver(session, db, intervalMs)
    observer.loop = observer.run()
    return observer
  }

  private async pollOnce(): Promise<void> {
    const at = Date.now()
    // Each poll is bounded: a stalled router must not hold the observer (and so bench's end).
    const signal = AbortSignal.timeout(this.session.target.connection.timeoutMs)
    if (this.session.model === 'in-memory') {
      const ops = await readDdlOps(this.session.reader, {signal})
      this.keep(this.ddl.observe(ops.filter((o) => o.ns === this.db || (o.ns ?? '').startsWith(`${this.db}.`)), at))
    } else {
      const snap = await readConfigSnapshot(this.session.reader, {signal})
      const rows = filterLocks(toLockRows({...snap, nowMs: snap.now.getTime(), timing: this.session.timing}), {db: this.db})
      this.keep(this.locks.observe(rows, snap.now.getTime()))
    }
    this.polls++
  }

  private keep(events: readonly LockEvent[]): void {
    const room = Math.max(0, MAX_OBSERVED_EVENTS - this.events.length)
    this.events.push(...events.slice(0, room))
    this.eventsNotKept += Math.max(0, events.length - room)
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now()
      try {
        await this.pollOnce()
      } catch {
        // A failed poll is a gap in the observation, not a failure of the run.
      }
      const wait = this.intervalMs - (Date.now() - started)
      if (wait > 0 && !this.stopped) await new Promise((r) => setTimeout(r, wait))
    }
  }

  /** Stops polling (after one last poll) and summarises; `errorsByClass` is the run's. */
  async stop(errorsByClass: Record<string, number>): Promise<LockObservation> {
    this.stopped = true
    await this.loop
    try {
      await this.pollOnce()
    } catch {
      // keep what was seen
    }
    await this.session.close()
    const byLock = this.session.model === 'in-memory' ? this.ddl.summary() : this.locks.summary()
    const all = summarize(this.session.model === 'in-memory' ? this.ddl.mergedHold() : this.locks.mergedHold())
    const lower = summarize(this.session.model === 'in-memory' ? this.ddl.mergedHoldLower() : this.locks.mergedHoldLower())
    const ms = (us: number) => Math.round(us / 100) / 10
    return {
      model: this.session.model,
      polls: this.polls,
      intervalMS: this.intervalMs,
      acquisitions: byLock.reduce((n, l) => n + l.acquired + l.overtaken, 0),
      holdMS: {count: all.count, p50: ms(all.p50), p99: ms(all.p99), max: ms(all.max)},
      holdMinMS: {bound: 'lower', count: lower.count, p50: ms(lower.p50), p99: ms(lower.p99), max: ms(lower.max)},
      holdMaxMS: {bound: 'upper', count: all.count, p50: ms(all.p50), p99: ms(all.p99), max: ms(all.max)},
      byLock,
      events: this.events,
      ...(this.eventsNotKept > 0 ? {eventsNotKept: this.eventsNotKept} : {}),
      lockBusy: errorsByClass.LockBusy ?? 0,
      conflictingOperationInProgress: errorsByClass.ConflictingOperationInProgress ?? 0,
    }
  }

  async close(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    await this.loop
    await this.session.close()
  }
}
