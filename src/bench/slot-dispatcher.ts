/**
 * The open-loop scheduler: starts each slot of a SlotSchedule when its time comes, at most `cap` at once,
 * first come first served.
 *
 * One dispatcher for the whole run, not a timer per slot: it starts every slot that is due (within 1 ms, the
 * timers' granularity) whenever it runs, and it runs on one re-armed timer and after every operation that
 * returns. The second matters most: replies arrive in the event loop's poll phase, where a batch of them can
 * take milliseconds, and a per-slot timer can only fire in the next timers phase, after the whole batch; a
 * completion that looks at the schedule starts a slot that fell due during the batch right away, as the bare
 * driver loop of bench:open-loop does. It also arms one timer per wake-up instead of one per slot (a Timeout,
 * a timer list of its own for each fractional delay, a promise and a closure per slot).
 *
 * It keeps no slot aside: every slot before `nextSlot` started, every later one did not. What the engine counts
 * as missed at the end is the range from `nextSlot` to the end of the measured interval (see `unstarted`).
 */
import type {SlotSchedule} from './stages.js'

/** Why a scheduled open-loop operation never started (see MissedReason in engine.ts). */
export type UnstartedReason = 'inFlightCapFull' | 'runEnded' | 'interrupted'

export interface UnstartedRange {
  /** Slots [first, end). */
  first: number
  end: number
  reason: UnstartedReason
}

export class SlotDispatcher {
  /** The first slot not started yet. */
  private next = 0
  /** Operations the dispatcher started that have not returned (the in-flight cap's occupancy). */
  private running = 0
  private stopped = false
  private timer: NodeJS.Timeout | undefined
  private resolveIdle!: () => void
  /** Resolves once the dispatcher is stopped and every operation it started has returned. */
  readonly idle = new Promise<void>((resolve) => {
    this.resolveIdle = resolve
  })

  constructor(
    private readonly schedule: SlotSchedule,
    private readonly cap: number,
    /** No slot scheduled at or after this time starts (the measured interval's end; +∞ until it is known). */
    private readonly endAt: () => number,
    /** Runs slot `slot`, scheduled at `scheduledAt`; settles when the operation has returned (never rejects). */
    private readonly start: (slot: number, scheduledAt: number) => Promise<void>,
  ) {}

  /** The latest slot started; -1: none yet. Slots start in order, so it is the one before `nextSlot`. */
  get latestStartedSlot(): number {
    return this.next - 1
  }

  get nextSlot(): number {
    return this.next
  }

  get inFlight(): number {
    return this.running
  }

  /**
   * Start every slot due within 1 ms (a timer may fire up to 1 ms early; a slot due that soon starts now rather
   * than a tick late) and scheduled before endAt(), while fewer than `cap` are in flight; then arm the timer for
   * the next slot, unless the cap is full (a returning operation calls this again).
   */
  release = (): void => {
    if (this.stopped) return
    const now = performance.now()
    const endAt = this.endAt()
    // Re-checked after each start: an operation can stop the run before its first await (a stop request).
    while (!this.stopped && this.running < this.cap) {
      const scheduledAt = this.schedule.slotTime(this.next)
      if (scheduledAt - now >= 1 || scheduledAt >= endAt) break
      const slot = this.next
      this.next += 1
      this.running += 1
      void this.start(slot, scheduledAt).then(this.settled, this.settled)
    }
    if (!this.stopped && this.timer === undefined && this.running < this.cap) {
      const scheduledAt = this.schedule.slotTime(this.next)
      // Past the interval's end nothing more starts: the engine's own end timer stops the run. Whole milliseconds (Node
      // keeps one timer list per distinct delay), rounded down: the wake-up comes within the 1 ms before the slot's
      // time, which starts it, rather than up to 1 ms after it.
      if (scheduledAt < endAt) this.timer = setTimeout(this.onTimer, Math.max(1, Math.floor(scheduledAt - now)))
    }
  }

  /**
   * No slot starts from now on. `flush`: first start the slots already due before endAt() that the cap leaves
   * room for (the natural end: a wake-up that ran late must not turn a slot of the interval into a miss).
   */
  stop(flush: boolean): void {
    if (this.stopped) return
    if (flush) this.release()
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.running === 0) this.resolveIdle()
  }

  /**
   * After stop(): the slots of [firstMeasured, endSlot) that never started, by reason. A stop request
   * (`interrupted`) leaves due slots the cap had room for (`interrupted`: a free slot would have started them);
   * beyond that room, or at the natural end, they waited on a full cap (`inFlightCapFull`) or, with room left,
   * on a dispatcher that had not reached them (`runEnded`: the event loop ran behind the schedule).
   */
  unstarted(firstMeasured: number, endSlot: number, interrupted: boolean): UnstartedRange[] {
    const first = Math.max(this.next, firstMeasured)
    if (endSlot <= first) return []
    const room = interrupted ? Math.min(endSlot - first, Math.max(0, this.cap - this.running)) : 0
    const ranges: UnstartedRange[] = []
    if (room > 0) ranges.push({first, end: first + room, reason: 'interrupted'})
    if (first + room < endSlot) ranges.push({first: first + room, end: endSlot, reason: this.running >= this.cap ? 'inFlightCapFull' : 'runEnded'})
    return ranges
  }

  private readonly onTimer = (): void => {
    this.timer = undefined
    this.release()
  }

  private readonly settled = (): void => {
    this.running -= 1
    if (this.stopped) {
      if (this.running === 0) this.resolveIdle()
    } else this.release()
  }
}
