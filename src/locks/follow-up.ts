/**
 * Follow-up reads of the distributed locks between two regular polls of `locks watch` (pure).
 *
 * A hold's start is the lock's own `when` (or its DDL operation's start), on the server's clock; its end is
 * never written anywhere, so it is only known to lie between the last read that saw the lock held and the
 * first that saw it free. At --interval 500 ms that bracket is up to 500 ms wide, while a DDL commonly holds
 * its lock for tens of milliseconds: the upper bounds (and the percentiles taken of them) are then mostly the
 * poll interval. So when a poll sees a hold that began recently, or a transition (DDL comes in bursts: more may
 * follow), the locks are read again soon, until the next poll: 50 ms later, the delay doubling while nothing
 * changes (a hold seen held then ends at most about twice its length after its start, as far as the reads
 * show; a long hold costs a few reads), back to 50 ms after a read that saw a change. A poll that sees only
 * holds begun long ago (the balancer's permanent lock, a stale one) starts no follow-up: one interval is small
 * beside them.
 *
 * The load stays bounded whatever the workload: follow-ups draw on a budget of FOLLOW_UPS_PER_INTERVAL reads
 * per --interval (a token bucket of that size, refilled evenly), each a hello and one find of config.locks
 * (or `$currentOp` on 6.1+), never the node reads of a regular poll. A busy DDL workload, with new holders at
 * every read, gets one read about every interval / FOLLOW_UPS_PER_INTERVAL; a quiet cluster gets none.
 */
import type {DdlOpRow, LockEvent, LockRow} from './types.js'

/** The first follow-up comes this long after a read that saw a new hold. */
export const FOLLOW_UP_FIRST_MS = 50
/** At most this many follow-up reads per --interval, on average (bursts of as many). */
export const FOLLOW_UPS_PER_INTERVAL = 4

/** What one read of the distributed locks saw, as far as following up goes. */
export interface FollowUpRead {
  /** A hold that began within the window (FollowUpPlanner.youngWindowMS) is held: its end is worth pinning. */
  young: boolean
  /** The read saw a transition: a hold taken, freed or overtaken since the read before. */
  changed: boolean
}

/** A config.locks hold (or 6.1+ DDL operation) that began within `windowMS` of `nowMs` (server clock) is held. */
export function youngLockHeld(rows: readonly LockRow[], nowMs: number, windowMS: number): boolean {
  return rows.some((r) => {
    if (r.state === 'unlocked' || r.since === null) return false
    const since = Date.parse(r.since)
    return Number.isFinite(since) && nowMs - since < windowMS
  })
}

/** 6.1+: a DDL operation that started within `windowMS` runs (holding its locks, or waiting for them: when it gets them is pinned too). */
export function youngDdlOpRunning(ops: readonly DdlOpRow[], windowMS: number): boolean {
  return ops.some((o) => o.runningMS === null || o.runningMS < windowMS)
}

/** Whether a read saw a transition (a hold taken, freed or overtaken since the read before; not the holds at the start). */
export function sawTransition(events: readonly LockEvent[]): boolean {
  return events.some((e) => e.kind === 'acquired' || e.kind === 'released' || e.kind === 'overtaken')
}

/**
 * Decides when the next follow-up read comes (pure but for the clock times it is given). One per watch: the
 * budget carries over from one interval to the next, so the bound holds over any stretch of time.
 */
export class FollowUpPlanner {
  private tokens = FOLLOW_UPS_PER_INTERVAL
  private refilledAt: number

  constructor(
    private readonly intervalMS: number,
    now: number,
  ) {
    this.refilledAt = now
  }

  /** Follow-ups are worth it only when the interval leaves room for them. */
  get enabled(): boolean {
    return this.intervalMS > 2 * FOLLOW_UP_FIRST_MS
  }

  /** How recent a hold must be to call for follow-ups: two intervals (an older one's end is pinned well enough by regular polls). */
  get youngWindowMS(): number {
    return 2 * this.intervalMS
  }

  private refill(now: number): void {
    this.tokens = Math.min(FOLLOW_UPS_PER_INTERVAL, this.tokens + (Math.max(0, now - this.refilledAt) * FOLLOW_UPS_PER_INTERVAL) / this.intervalMS)
    this.refilledAt = Math.max(this.refilledAt, now)
  }

  /**
   * After a read (a regular poll: `previousDelayMS` null; a follow-up: the delay that preceded it) at `now`:
   * how long until the next follow-up read, or null for none (a poll that saw no recent hold and no transition, or
   * follow-ups are off). A burst of follow-ups runs until the next poll is due (the caller stops it).
   */
  next(read: FollowUpRead, previousDelayMS: number | null, now: number): number | null {
    if (!this.enabled) return null
    // A poll starts a burst when it sees a recent hold held, or a transition (DDL comes in bursts: more may follow).
    if (previousDelayMS === null && !read.young && !read.changed) return null
    // Within a burst: 50 ms after a read that saw a change, else twice the last delay (the poll ends the burst).
    const delay = read.changed || previousDelayMS === null ? FOLLOW_UP_FIRST_MS : Math.min(previousDelayMS * 2, this.intervalMS)
    this.refill(now)
    // The budget is empty: wait until a whole read's worth has come back.
    const budgetWait = this.tokens >= 1 ? 0 : ((1 - this.tokens) * this.intervalMS) / FOLLOW_UPS_PER_INTERVAL
    return Math.max(delay, Math.ceil(budgetWait))
  }

  /** A follow-up read starts at `now`: it takes one read from the budget. */
  spend(now: number): void {
    this.refill(now)
    this.tokens -= 1
  }
}
