/**
 * bench's adaptive warm-up (`--warmup auto`, the default): the load runs unmeasured until its
 * throughput has settled, so the measured interval starts in the steady state, whatever the
 * machine and the target need to get there. A fixed `--warmup 10s` is exactly 10 s; `0s` is none.
 *
 * The rule (SETTLE_RULE), judged at the end of every 1 s window from the start of the load:
 * - level: over the last 4 s, ops/s of the first 2 s and of the last 2 s within 5 % of each other,
 *   and no single second more than 15 % from the four's mean. Halves, because one second's ops/s
 *   wanders: the steady runs right after an idle pause on the idle 2-core machine (issue 26) went
 *   6,086 → 6,709 → 6,161 → 6,900 → 6,441 ops/s, each second within 7 % of their mean and their
 *   2 s halves within 4 %; the run before them, still ramping after a fixed 5 s warm-up, went
 *   3,501 → 4,138 → 4,052 → 5,643 → 6,965: its halves 27 % and more apart. The per-second bound
 *   keeps noise from passing as a level: on a machine loaded by other work (load average 12–23)
 *   seconds wandered 20–30 % and more, and two halves of such noise can match by chance (one
 *   such run "settled" at halves 106 → 104 ops/s on seconds 72–172 before the bound existed, and
 *   then ran 96 → 275). Not 10 %: at load 15, a run at 2,000 ops/s with halves 2,077 → 2,068
 *   had seconds 12 % off their mean and was held to the cap;
 * - the pool stopped growing: its connections never above what it held 4 s earlier (a pool that
 *   still adds connections is still paying set-ups, even if ops/s happens to look level);
 * - twice running: the rule must hold at two successive window ends. It is judged every second,
 *   up to 26 times before the cap, and noise passes it now and then: a cold run on the loaded
 *   machine had one level span (377 → 448 → 401 → 455 ops/s) and went on to 701; the next span
 *   (448 → 401 → 455 → 652) was not level;
 * - floor 5 s (the old fixed default): the earliest the rule can hold twice;
 * - cap 30 s: a run that has not settled by then does not settle by waiting (on that loaded
 *   machine ops/s still climbed 4–5× over 15 s from cold); measuring starts and the result says
 *   so, and `report compare` treats the run as not settled. 30 s bounds what a default run costs.
 *
 * Who decides: one judge per engine in one process; with `--workers N` the parent decides from
 * the workers' summed windows and ends every worker's warm-up at once (their series intervals
 * must line up to be merged). Distributed runs (`--segment`) and open-loop `--stages` take a fixed
 * warm-up instead (AUTO_FALLBACK_MS): segments are separate processes whose measured intervals
 * must line up for `report merge`, and open-loop stage boundaries are planned before the load
 * starts, so neither can wait for a verdict that arrives at a different time in each.
 */

/** The adaptive rule, serialisable: it crosses to worker threads inside the engine plan. */
export interface SettleRule {
  windowMs: number
  /** How many windows the verdict looks at (their first half against their second). */
  windows: number
  /** Largest relative difference between the halves' ops/s that counts as level. */
  tolerance: number
  /** Largest relative distance of one window's ops/s from the span's mean. */
  spread: number
  /** At how many successive window ends the rule must hold. */
  confirmations: number
  floorMs: number
  capMs: number
}

export const SETTLE_RULE: SettleRule = Object.freeze({windowMs: 1000, windows: 4, tolerance: 0.05, spread: 0.15, confirmations: 2, floorMs: 5000, capMs: 30_000})

/** `--warmup auto` where the warm-up cannot be decided while the load runs (see above). */
export const AUTO_FALLBACK_MS = 5000

/** One window of warm-up load: what completed in it (operations, failed ones included), and the pool at its end. */
export interface WarmupWindow {
  ops: number
  durationMs: number
  /** Connections open in the client pool(s) at the window's end; undefined: not known (the pool is not watched). */
  poolTotal?: number
}

export type WarmupEnd = 'settled' | 'cap' | 'fixed' | 'off' | 'interrupted'

/** What the warm-up of one run was and why it ended (runs[].warmup, with the names of the JSON). */
export interface WarmupOutcome {
  mode: 'auto' | 'fixed' | 'off'
  /** How long it lasted, ms. */
  ms: number
  endedBy: WarmupEnd
  /** auto: ops/s of every window, in order. */
  windowsOpsPerSec?: number[]
  /** auto: ops/s of the last span's first and second half when it ended, whether they were level, and whether the pool grew in it. */
  halves?: [number, number]
  /** The span's largest relative distance of one window from its mean (null: no operation in it). */
  spread?: number | null
  level?: boolean
  poolGrew?: boolean
  /** auto: connections in the pool(s) at the end. */
  poolTotal?: number
}

export interface Verdict {
  level: boolean
  /** ops/s of the span's first and second half. */
  halves: [number, number]
  /** The largest relative distance of one window's ops/s from the span's mean. */
  spread: number
  /** Whether the pool held more connections in the span than ever before it; undefined: not known. */
  poolGrew: boolean | undefined
}

/**
 * The rule on the windows so far (pure): undefined before there are `rule.windows` of them.
 * `startPool`: the pool's connections when the load started, before the first window.
 */
export function verdictOf(windows: readonly WarmupWindow[], rule: SettleRule = SETTLE_RULE, startPool?: number): Verdict | undefined {
  if (windows.length < rule.windows) return undefined
  const span = windows.slice(-rule.windows)
  const half = Math.floor(rule.windows / 2)
  const rate = (part: readonly WarmupWindow[]) => {
    const ms = part.reduce((sum, w) => sum + w.durationMs, 0)
    return ms > 0 ? (part.reduce((sum, w) => sum + w.ops, 0) * 1000) / ms : 0
  }
  const first = rate(span.slice(0, half))
  const second = rate(span.slice(-half))
  const mean = rate(span)
  const spread = mean > 0 ? Math.max(...span.map((w) => Math.abs(rate([w]) - mean))) / mean : Number.POSITIVE_INFINITY
  // No operation at all is not a level: a stalled server has not warmed anything.
  const level = first > 0 && second > 0 && Math.abs(second - first) <= rule.tolerance * Math.max(first, second) && spread <= rule.spread
  const before = [...(startPool === undefined ? [] : [startPool]), ...windows.slice(0, -rule.windows).map((w) => w.poolTotal)]
  const pools = span.map((w) => w.poolTotal)
  const known = before.length > 0 && [...before, ...pools].every((n) => n !== undefined)
  const poolGrew = known ? Math.max(...(pools as number[])) > Math.max(...(before as number[])) : undefined
  return {level, halves: [first, second], spread, poolGrew}
}

/** Feeds windows to the rule and says when warm-up ends: 'settled' once the floor has passed and the rule holds, 'cap' at the cap. */
export class SettleJudge {
  private readonly windows: WarmupWindow[] = []
  private elapsedMs = 0
  private ended?: WarmupOutcome
  /** Successive window ends at which the rule held. */
  private streak = 0

  constructor(
    private readonly rule: SettleRule,
    private readonly startPool?: number,
  ) {}

  /** The next window; an outcome when warm-up ends with it (once). */
  push(window: WarmupWindow): WarmupOutcome | undefined {
    if (this.ended) return undefined
    this.windows.push(window)
    this.elapsedMs += window.durationMs
    const verdict = verdictOf(this.windows, this.rule, this.startPool)
    // A timer may close a window a little early: the floor and the cap are counted in windows' worth of time.
    const atFloor = this.elapsedMs >= this.rule.floorMs - this.rule.windowMs / 2
    this.streak = verdict && verdict.level && verdict.poolGrew !== true ? this.streak + 1 : 0
    if (atFloor && this.streak >= this.rule.confirmations) return (this.ended = this.outcome('settled', verdict))
    if (this.elapsedMs >= this.rule.capMs - this.rule.windowMs / 2) return (this.ended = this.outcome('cap', verdict))
    return undefined
  }

  /** A stop request during warm-up: what there was. */
  interrupted(): WarmupOutcome {
    return (this.ended ??= this.outcome('interrupted', verdictOf(this.windows, this.rule, this.startPool)))
  }

  private outcome(endedBy: WarmupEnd, verdict: Verdict | undefined): WarmupOutcome {
    const pool = this.windows.at(-1)?.poolTotal ?? this.startPool
    return {
      mode: 'auto',
      ms: Math.round(this.elapsedMs),
      endedBy,
      windowsOpsPerSec: this.windows.map((w) => (w.durationMs > 0 ? Math.round((w.ops * 1000) / w.durationMs) : 0)),
      ...(verdict
        ? {halves: [Math.round(verdict.halves[0]), Math.round(verdict.halves[1])] as [number, number], spread: Number.isFinite(verdict.spread) ? Math.round(verdict.spread * 1000) / 1000 : null, level: verdict.level}
        : {}),
      ...(verdict?.poolGrew === undefined ? {} : {poolGrew: verdict.poolGrew}),
      ...(pool === undefined ? {} : {poolTotal: pool}),
    }
  }
}

/**
 * The engine's side of an adaptive warm-up: told of every warm-up operation that ends, it calls
 * `end` once when measuring should begin. The engine never times the warm-up itself when it has one.
 */
export interface WarmupGate {
  start(loopStart: number, end: () => void): void
  opDone(): void
  /** The run stopped (its end or a stop request): no more windows. */
  stop(): void
  /** After the run: what the warm-up was (for a stop during warm-up: interrupted). */
  outcome(): WarmupOutcome
}

/** Warm-up windows on a timer, each closed with its operation count and the pool read then. */
export class WindowClock {
  private ops = 0
  private timer?: NodeJS.Timeout
  private last = 0

  constructor(
    private readonly windowMs: number,
    private readonly poolTotal: (() => number) | undefined,
    private readonly onWindow: (window: WarmupWindow, index: number) => void,
  ) {}

  start(at: number): void {
    this.last = at
    let index = 0
    const tick = (): void => {
      const now = performance.now()
      const window = {ops: this.ops, durationMs: now - this.last, ...(this.poolTotal ? {poolTotal: this.poolTotal()} : {})}
      this.ops = 0
      this.last = now
      const next = at + (index + 2) * this.windowMs
      this.timer = setTimeout(tick, Math.max(1, next - performance.now()))
      this.onWindow(window, index++)
    }
    this.timer = setTimeout(tick, Math.max(1, at + this.windowMs - performance.now()))
  }

  opDone(): void {
    this.ops += 1
  }

  stop(): void {
    clearTimeout(this.timer)
  }
}

/** One process decides by itself (a run without workers). */
export class LocalSettleGate implements WarmupGate {
  private readonly judge: SettleJudge
  private readonly clock: WindowClock
  private result?: WarmupOutcome

  constructor(rule: SettleRule, poolTotal?: () => number) {
    this.judge = new SettleJudge(rule, poolTotal?.())
    this.clock = new WindowClock(rule.windowMs, poolTotal, (window) => {
      const outcome = this.judge.push(window)
      if (!outcome) return
      this.result = outcome
      this.clock.stop()
      this.end?.()
    })
  }

  private end?: () => void

  start(loopStart: number, end: () => void): void {
    this.end = end
    this.clock.start(loopStart)
  }

  opDone(): void {
    this.clock.opDone()
  }

  stop(): void {
    this.clock.stop()
  }

  outcome(): WarmupOutcome {
    return this.result ?? this.judge.interrupted()
  }
}

/**
 * A worker thread's side (bench --workers): it reports each window (`report`) and waits for the
 * parent's decision (`decided`), which ends every worker's warm-up at once.
 */
export class RelayedGate implements WarmupGate {
  private readonly clock: WindowClock
  private readonly startPool?: number
  private end?: () => void
  private result?: WarmupOutcome

  constructor(windowMs: number, poolTotal: () => number, report: (window: WarmupWindow, index: number, startPool: number | undefined) => void) {
    this.startPool = poolTotal()
    this.clock = new WindowClock(windowMs, poolTotal, (window, index) => report(window, index, index === 0 ? this.startPool : undefined))
  }

  start(loopStart: number, end: () => void): void {
    this.end = end
    this.clock.start(loopStart)
  }

  /** The parent's verdict: measuring begins now. */
  decided(outcome: WarmupOutcome): void {
    if (this.result) return
    this.result = outcome
    this.clock.stop()
    this.end?.()
  }

  opDone(): void {
    this.clock.opDone()
  }

  stop(): void {
    this.clock.stop()
  }

  outcome(): WarmupOutcome {
    return this.result ?? {mode: 'auto', ms: 0, endedBy: 'interrupted'}
  }
}

/**
 * The parent's side (bench --workers): the workers' windows, summed by index once every worker has
 * sent it, go to one judge; `onEnd` gets the outcome once, to pass to every worker.
 */
export class WorkersJudge {
  private readonly pending = new Map<number, WarmupWindow[]>()
  private startPool = 0
  private judge?: SettleJudge
  private next = 0
  result?: WarmupOutcome

  constructor(
    private readonly rule: SettleRule,
    private readonly workers: number,
    private readonly onEnd: (outcome: WarmupOutcome) => void,
  ) {}

  window(window: WarmupWindow, index: number, startPool: number | undefined): void {
    if (this.result) return
    if (startPool !== undefined) this.startPool += startPool
    const parts = this.pending.get(index) ?? []
    parts.push(window)
    this.pending.set(index, parts)
    // In order: a window is judged once every worker has sent it (threads' timers differ by a millisecond or so).
    while (!this.result && (this.pending.get(this.next)?.length ?? 0) === this.workers) {
      const all = this.pending.get(this.next)!
      this.pending.delete(this.next++)
      this.judge ??= new SettleJudge(this.rule, this.startPool)
      const known = all.every((w) => w.poolTotal !== undefined)
      const outcome = this.judge.push({
        ops: all.reduce((sum, w) => sum + w.ops, 0),
        durationMs: Math.max(...all.map((w) => w.durationMs)),
        ...(known ? {poolTotal: all.reduce((sum, w) => sum + w.poolTotal!, 0)} : {}),
      })
      if (outcome) {
        this.result = outcome
        this.onEnd(outcome)
      }
    }
  }
}

/** A fixed warm-up's outcome (or none), for the engine to report like an adaptive one. */
export function fixedOutcome(plannedMs: number, actualMs: number, interrupted: boolean): WarmupOutcome {
  if (plannedMs <= 0) return {mode: 'off', ms: 0, endedBy: 'off'}
  return {mode: 'fixed', ms: Math.round(actualMs), endedBy: interrupted && actualMs < plannedMs - 1 ? 'interrupted' : 'fixed'}
}

/** The JSON's runs[].warmup (names as in the JSON). */
export interface RunWarmup {
  mode: 'auto' | 'fixed' | 'off'
  durationMS: number
  endedBy: WarmupEnd
  /** auto: the rule it was judged by. */
  rule?: {windowMS: number; windows: number; tolerance: number; spread: number; confirmations: number; floorMS: number; capMS: number}
  windowsOpsPerSec?: number[]
  halvesOpsPerSec?: [number, number]
  spread?: number | null
  level?: boolean
  poolGrew?: boolean
  poolTotal?: number
}

export function toRunWarmup(outcome: WarmupOutcome, rule: SettleRule | undefined): RunWarmup {
  const {ms, halves, ...rest} = outcome
  return {
    ...rest,
    durationMS: ms,
    ...(outcome.mode === 'auto' && rule ? {rule: {windowMS: rule.windowMs, windows: rule.windows, tolerance: rule.tolerance, spread: rule.spread, confirmations: rule.confirmations, floorMS: rule.floorMs, capMS: rule.capMs}} : {}),
    ...(halves ? {halvesOpsPerSec: halves} : {}),
  }
}

const count = (n: number) => Math.round(n).toLocaleString('en-US')

const pct = (fraction: number) => `${Math.round(fraction * 100)} %`

/** "settled after 8 s: the last 4 s level (halves 6,525 → 6,435 ops/s, within 5 %; each second within 15 %), and a second before, pool 10 connections" and the like. */
export function describeWarmup(warmup: Pick<RunWarmup, 'durationMS' | 'endedBy' | 'rule' | 'halvesOpsPerSec' | 'spread' | 'level' | 'poolGrew' | 'poolTotal'>): string {
  const seconds = `${Math.round(warmup.durationMS / 100) / 10} s`
  const rule = warmup.rule
  const span = rule ? `${(rule.windowMS * rule.windows) / 1000} s` : 'seconds'
  const halves = warmup.halvesOpsPerSec ? `halves ${warmup.halvesOpsPerSec.map(count).join(' → ')} ops/s` : ''
  const bounds = rule ? `within ${pct(rule.tolerance)}; each second within ${pct(rule.spread)}` : ''
  const detail = [halves, bounds].filter((part) => part !== '').join(', ')
  const pool = warmup.poolTotal === undefined ? '' : `, pool ${count(warmup.poolTotal)} connections`
  switch (warmup.endedBy) {
    case 'settled':
      return `settled after ${seconds}: the last ${span} level${detail ? ` (${detail})` : ''}, and a second before${pool}`
    case 'cap': {
      const seen = [halves, typeof warmup.spread === 'number' ? `seconds up to ${pct(warmup.spread)} from their mean` : ''].filter((part) => part !== '').join(', ')
      const why = warmup.level === true && warmup.poolGrew === true
        ? `the pool still growing${pool}`
        : `the last ${span} not level${seen ? ` (${seen}${rule ? `; the rule: halves ${bounds}` : ''})` : ''}`
      const cap = rule ? `${rule.capMS / 1000} s` : seconds
      return `did not settle within the ${cap} cap: ${why}; the figures may still include the ramp`
    }
    case 'fixed':
      return `fixed ${seconds}`
    case 'off':
      return 'none (--warmup 0s)'
    default:
      return `interrupted after ${seconds}, before it ended`
  }
}
