/**
 * The measuring loop of one bench run. Knows nothing of oclif, tables or the
 * driver: it calls `execute` and records what happens.
 *
 * Rules, so numbers mean one thing:
 * - An operation is measured when it starts (closed loop) or is scheduled to
 *   start (open loop) inside the measured interval [start, end). Every
 *   measured operation is counted exactly once: completed (`ops`) or failed
 *   (`errors`, by class); in open loop a scheduled one that never started is
 *   `missed`, so `scheduled === ops + errors + missed`.
 * - Closed loop: `concurrency` workers, each starts its next operation when
 *   the previous one returns. Latency = reply − send.
 * - Open loop: slot i is scheduled at loopStart + i/rate and at most
 *   `concurrency` operations are in flight. A slot whose time has come while
 *   the cap is full waits in line (first come, first served) as a user's
 *   request would, and starts when an operation returns. Corrected latency =
 *   reply − scheduled start (what a user arriving on schedule waits: no
 *   coordinated omission); uncorrected = reply − actual send, reported beside
 *   it. Timers have 1 ms granularity, so an operation may start up to 1 ms
 *   early; its corrected latency then counts from its actual send. A slot
 *   still unstarted when the run ends is missed (see MissedReason); its wait
 *   until the engine gave up is in the corrected latency too.
 * - At the end, measured operations still in flight are awaited: a stalled one
 *   must be counted, not dropped. After the natural end of the run the wait is
 *   `drainTimeoutMs` (then class `unfinished`); after a stop request (Ctrl-C,
 *   SIGTERM) it is at most `stopDrainMs` (then class `aborted`, also counted in
 *   `aborted`), so a stalled server cannot hold a stop. Once the engine
 *   returns, its counts are final: an operation that settles later changes
 *   nothing (it was already counted as unfinished or aborted).
 * - Warm-up runs the same loop first and is not recorded: for `warmupMs`, or with `settle` until
 *   throughput has settled (warmup.ts decides; `warmupMs` is then its cap).
 * - Stages (`plan.stages`, see stages.ts): the measured interval is the
 *   stages' sum. Closed loop: at each boundary the workers beyond the stage's
 *   concurrency finish their current operation and stop (each checks before
 *   it starts one), and new ones start when it grows (a timer, never early).
 *   Open loop: slot times follow each stage's rate, from its boundary, and the
 *   boundaries are planned (loop start + warm-up + the stages before), so a
 *   stage holds exactly its rate × duration slots. Warm-up runs at the first
 *   stage's level. An operation belongs to the stage in which it started
 *   (closed) or was scheduled (open): every identity above holds per stage.
 */
import {createHistogram, type Histogram, recordMs} from '../metrics/histograms.js'
import {drainInFlight} from './drain.js'
import {MissedSlots} from './missed-slots.js'
import {SlotDispatcher, type UnstartedRange} from './slot-dispatcher.js'
import {type SeriesInterval, SeriesRecorder} from './series.js'
import {type EngineStage, type LoadStage, SlotSchedule, StageLedger} from './stages.js'
import {fixedOutcome, LocalSettleGate, type SettleRule, type WarmupGate, type WarmupOutcome} from './warmup.js'

/** How long a stop request (signal) waits for operations in flight before counting them as aborted. */
export const STOP_DRAIN_MS = 1000

export interface EnginePlan {
  concurrency: number
  /** Open loop when set: operations per second. An open-loop run is bounded by `durationMs` (or the signal), not `ops`. */
  rate?: number
  durationMs?: number
  ops?: number
  warmupMs: number
  /**
   * Adaptive warm-up (warmup.ts): it lasts until this rule says throughput has settled, at most `warmupMs`
   * (the rule's cap). Not with open-loop stages, whose boundaries are planned from the start.
   */
  settle?: SettleRule
  /** How long to wait for operations still in flight when the interval ends naturally. */
  drainTimeoutMs: number
  /** The same after a stop request (default STOP_DRAIN_MS; never longer than drainTimeoutMs). */
  stopDrainMs?: number
  tickIntervalMs: number
  /** When set: a time series of this interval (see series.ts). */
  seriesIntervalMs?: number
  /**
   * When set: the load changes at each stage's end; the measured interval is their sum (`durationMs` and `ops` are
   * not used). Closed loop: each stage's `concurrency` (workers); open loop (`rate` set, the stages' mean): each
   * stage's `rate`, `concurrency` staying the in-flight cap.
   */
  stages?: readonly LoadStage[]
  /**
   * Open loop, one of several engines sharing a rate (bench --workers): this engine's slots start this
   * much after the loop's start, so N engines at rate/N each interleave instead of firing together.
   */
  slotOffsetMs?: number
  /** Keep each series interval's latency histogram (`seriesLatencyUs`), for a caller that merges series exactly. */
  seriesHistograms?: boolean
}

/** `Sample`: what `sampleSeries` reads as each series interval closes. */
export interface EngineHooks<Sample extends object = object> {
  /** `operation`: what `nextOperation` chose (undefined without it). */
  execute(operation?: string): Promise<unknown>
  /** Mixed workloads: the next operation's name, so latency is also kept per operation name. */
  nextOperation?(): string
  /** The caller's gauges as each series interval closes (pool in use, server connections …). */
  sampleSeries?(): Sample
  classifyError(error: unknown): string
  signal: AbortSignal
  /** Adaptive warm-up: connections in the load's pool now (warm-up waits for it to stop growing). */
  poolTotal?(): number
  /** Adaptive warm-up decided elsewhere (bench --workers: by the parent, for every worker at once) instead of here. */
  warmupGate?: WarmupGate
  /** Called when warm-up ends and measuring begins; `measureStart` on performance.now()'s clock. */
  onMeasureStart?(measureStart: number): void
  onTick?(tick: EngineTick): void
}

export interface EngineTick {
  elapsedMs: number
  ops: number
  errors: number
  opsPerSecLastTick: number
  latencyUs: Histogram
  /** With stages: the stage running now (from 1) and how many there are. */
  stage?: {number: number; of: number}
}

/**
 * Why a scheduled open-loop operation never started (documented on RunResult.missedByReason):
 * - `inFlightCapFull`: its time had come, but every in-flight slot was busy until the run ended;
 * - `runEnded`: no operation was holding it up, but the load generator had not reached it when the
 *   run ended (its timers ran behind the schedule);
 * - `interrupted`: a free slot was about to start it when a stop request came.
 */
export type MissedReason = 'inFlightCapFull' | 'runEnded' | 'interrupted'
export const MISSED_REASONS: readonly MissedReason[] = ['inFlightCapFull', 'runEnded', 'interrupted']

/** The error class of measured operations a stop request gave up on. */
export const ABORTED_CLASS = 'aborted'
/** The error class of measured operations still running when the natural end's drain timed out. */
export const UNFINISHED_CLASS = 'unfinished'

export interface EngineMeasurement<Sample extends object = object> {
  ops: number
  /** Always the sum of errorsByClass. */
  errors: number
  errorsByClass: Record<string, number>
  /** Open loop: slots scheduled inside the measured interval; closed loop: null. */
  scheduled: number | null
  /** Open loop: scheduled slots that never started (scheduled = ops + errors + missed); closed loop: 0. */
  missed: number
  /** Open loop: missed by reason, every reason present; closed loop: {}. */
  missedByReason: Partial<Record<MissedReason, number>>
  /** Measured operations still in flight when a stop request cut the wait short (also in errorsByClass.aborted). */
  aborted: number
  durationMs: number
  /** When the measured interval started, on the wall clock (performance.timeOrigin + its start), ms since the epoch. */
  measureStartEpochMs: number
  latencyUs: Histogram
  /** Open loop: completed operations (reply − scheduled start) and missed ones (give-up − scheduled start). */
  latencyCorrectedUs: Histogram | null
  scheduleLagUs: Histogram | null
  /** Completed operations by operation name (with `nextOperation`; else {}): counts add up to ops. */
  latencyByOpUs: Record<string, Histogram>
  /** With `seriesHistograms`: each series interval's latency histogram, encoded, in the order of `series`. */
  seriesLatencyUs?: string[]
  /** With `seriesIntervalMs`: one entry per interval; ops and errors add up to the run's. Else []. */
  series: (SeriesInterval & Sample)[]
  /** With `stages`: the stages the run reached (the first always); counts add up to the run's. Else []. */
  stages: EngineStage[]
  /** What the warm-up was and why it ended. */
  warmup: WarmupOutcome
  interrupted: boolean
}

/** Mutable state of one run, owned by the engine. */
class RunState {
  measuring = false
  /** No new operation may start. */
  stopped = false
  interrupted = false
  /** Counts are final: operations that settle from now on are not recorded. */
  sealed = false
  measureStart = 0
  measureEnd = Number.POSITIVE_INFINITY
  /** Measured operations started (for --ops). */
  claimed = 0
  /** Measured operations started and not yet returned. */
  inFlight = 0
  /** Operations (measured or warm-up) started and not yet returned: the in-flight cap's occupancy. */
  executing = 0
  /** Open loop: slots scheduled in the measured interval, known once the run stops. */
  scheduled = 0
  ops = 0
  errors = 0
  aborted = 0
  readonly errorsByClass: Record<string, number> = {}
  readonly latencyUs = createHistogram()
  readonly latencyCorrectedUs: Histogram | null
  readonly scheduleLagUs: Histogram | null
  readonly latencyByOpUs = new Map<string, Histogram>()

  constructor(openLoop: boolean) {
    this.latencyCorrectedUs = openLoop ? createHistogram() : null
    this.scheduleLagUs = openLoop ? createHistogram() : null
  }

  countError(errorClass: string, series?: SeriesRecorder): void {
    series?.recordError(performance.now())
    this.errors += 1
    this.errorsByClass[errorClass] = (this.errorsByClass[errorClass] ?? 0) + 1
  }
}


export async function runEngine<Sample extends object = object>(plan: EnginePlan, hooks: EngineHooks<Sample>): Promise<EngineMeasurement<Sample>> {
  const openLoop = plan.rate !== undefined
  if (openLoop && plan.ops !== undefined) throw new Error('runEngine: an open-loop run is bounded by durationMs, not ops')
  if (plan.stages !== undefined && plan.ops !== undefined) throw new Error('runEngine: a staged run is bounded by its stages, not ops')
  if (plan.settle && openLoop && plan.stages !== undefined) throw new Error('runEngine: open-loop stages are planned from the start: give them a fixed warm-up')
  const state = new RunState(openLoop)
  const ledger = plan.stages === undefined ? undefined : new StageLedger(plan.stages, openLoop, plan.concurrency)
  const series = plan.seriesIntervalMs === undefined ? undefined : new SeriesRecorder<Sample>(plan.seriesIntervalMs, hooks.sampleSeries, plan.seriesHistograms)
  /** Closes each series interval at its end, so the caller's gauges are read then. */
  let seriesTimer: NodeJS.Timeout | undefined
  const closeSeriesIntervals = (): void => {
    if (!series || state.sealed) return
    const now = performance.now()
    series.closeBefore(now)
    const next = state.measureStart + (Math.floor((now - state.measureStart) / series.intervalMs) + 1) * series.intervalMs
    seriesTimer = setTimeout(closeSeriesIntervals, Math.max(1, next - now))
  }
  // Adaptive warm-up: decided by a gate (warmup.ts), not a timer.
  const warmupGate = plan.warmupMs > 0 && plan.settle ? (hooks.warmupGate ?? new LocalSettleGate(plan.settle, hooks.poolTotal)) : undefined
  const loopStart = performance.now()
  const stopDrainMs = Math.min(plan.stopDrainMs ?? STOP_DRAIN_MS, plan.drainTimeoutMs)

  // Open loop: slot i is due at loopStart + i / rate (with stages: each stage's rate from its planned boundary,
  // the first stage's also through the warm-up); one dispatcher starts them in order (slot-dispatcher.ts).
  if (openLoop && ledger) ledger.anchor(loopStart + Math.max(0, plan.warmupMs))
  const schedule = !openLoop
    ? undefined
    : new SlotSchedule(ledger ? plan.stages!.map((stage, index) => ({at: index === 0 ? loopStart : ledger.boundary(index), ratePerSec: stage.rate!})) : [{at: loopStart + (plan.slotOffsetMs ?? 0), ratePerSec: plan.rate!}])
  const slotTime = (slot: number): number => schedule!.slotTime(slot)
  const firstSlotAtOrAfter = (time: number): number => schedule!.firstSlotAtOrAfter(time)
  /** Open loop: starts the slots (set once the hooks it calls exist, below). */
  let dispatcher: SlotDispatcher | undefined
  /**
   * The interval's bounds must not cut between a slot that started early and
   * its scheduled time: a slot is measured exactly when its scheduled time is
   * inside the interval, whenever it started. Halfway from the latest started
   * slot (it may have started up to 1 ms early) to the next one is before the next one.
   */
  const afterStartedSlots = (time: number): number => {
    const latest = dispatcher?.latestStartedSlot ?? -1
    return latest >= 0 ? Math.max(time, (slotTime(latest) + slotTime(latest + 1)) / 2) : time
  }
  /** Measured slots that never started, by reason (ranges: they can be millions long). */
  let unstarted: UnstartedRange[] = []

  const beginMeasuring = (): void => {
    if (state.stopped) return // stopped during warm-up (or before it began): nothing is measured
    state.measuring = true
    // Without warm-up the interval starts with the loop, so slot 0 is measured.
    state.measureStart = afterStartedSlots(plan.warmupMs > 0 ? performance.now() : loopStart)
    // Closed-loop stages start with the measured interval; open-loop ones were planned with the schedule.
    ledger?.measureFrom(state.measureStart)
    if (ledger) state.measureEnd = ledger.endAt
    else if (plan.durationMs !== undefined) state.measureEnd = state.measureStart + plan.durationMs
    if (series) {
      series.start(state.measureStart)
      series.endAt(state.measureEnd)
      closeSeriesIntervals()
    }
    hooks.onMeasureStart?.(state.measureStart)
    if (ledger || plan.durationMs !== undefined) stopAtTheEnd()
    if (ledger && !openLoop) growAtBoundary(1)
  }
  /**
   * The natural end. A timer may fire up to a millisecond early (Node counts
   * from the event loop's cached clock): wait out the rest, so the interval
   * is exactly --duration long and holds exactly rate × duration slots.
   */
  const stopAtTheEnd = (): void => {
    const left = state.measureEnd - performance.now()
    if (left > 0) stopTimer = setTimeout(stopAtTheEnd, left)
    else stop()
  }
  let resolveStopped!: () => void
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve
  })
  const stop = (): void => {
    if (state.stopped) return
    state.stopped = true
    clearTimeout(stageTimer)
    warmupGate?.stop()
    state.measureEnd = Math.min(state.measureEnd, afterStartedSlots(performance.now()))
    series?.endAt(state.measureEnd)
    series?.sampleEnd(performance.now())
    if (openLoop) settleSchedule()
    resolveStopped()
  }
  /**
   * Open loop, at the stop: no slot starts from now on, except, at the natural end, those of the interval already
   * due that the cap has room for (the dispatcher's wake-up ran late); then count the interval's slots and those
   * that never started.
   */
  const settleSchedule = (): void => {
    dispatcher?.stop(!state.interrupted)
    if (state.measuring && dispatcher) {
      const firstMeasured = firstSlotAtOrAfter(state.measureStart)
      const endSlot = firstSlotAtOrAfter(state.measureEnd)
      state.scheduled = Math.max(0, endSlot - firstMeasured)
      unstarted = dispatcher.unstarted(firstMeasured, endSlot, state.interrupted)
    }
  }
  /** Set while waiting for operations in flight: a stop request shortens that wait. */
  let shortenDrain: (() => void) | undefined
  const onAbort = (): void => {
    state.interrupted = true
    if (!state.measuring) {
      // Interrupted during warm-up: nothing measured.
      state.measureStart = performance.now()
    }
    stop()
    shortenDrain?.()
  }

  let stopTimer: NodeJS.Timeout | undefined
  let stageTimer: NodeJS.Timeout | undefined
  if (hooks.signal.aborted) onAbort()
  hooks.signal.addEventListener('abort', onAbort, {once: true})
  const warmupTimer = plan.warmupMs > 0 && !warmupGate ? setTimeout(beginMeasuring, plan.warmupMs) : undefined
  if (plan.warmupMs <= 0) beginMeasuring()

  let lastTickOps = 0
  const ticker = setInterval(() => {
    if (!state.measuring || state.sealed) return
    const elapsedMs = performance.now() - state.measureStart
    hooks.onTick?.({
      elapsedMs,
      ops: state.ops,
      errors: state.errors,
      opsPerSecLastTick: ((state.ops - lastTickOps) * 1000) / plan.tickIntervalMs,
      latencyUs: state.latencyUs,
      ...(ledger ? {stage: {number: ledger.indexAt(performance.now()) + 1, of: ledger.stages.length}} : {}),
    })
    lastTickOps = state.ops
  }, plan.tickIntervalMs)

  /** Reserve a measured operation; false when --ops is exhausted. */
  const claim = (): boolean => {
    if (plan.ops === undefined || !state.measuring) return true
    if (state.claimed >= plan.ops) {
      stop()
      return false
    }
    state.claimed += 1
    return true
  }

  /**
   * Run one operation and record it. `scheduledAt` is set in open loop.
   * Nothing is recorded once the state is sealed: the operation was already
   * counted as unfinished or aborted when the engine stopped waiting for it.
   */
  const runOperation = async (measured: boolean, scheduledAt?: number, closedLoopStartAt?: number): Promise<void> => {
    const operation = hooks.nextOperation?.()
    const startedAt = performance.now()
    // Its stage: where it was scheduled (open loop) or where its worker decided to start it (closed loop).
    const stage = measured && ledger ? ledger.indexAt(scheduledAt ?? closedLoopStartAt ?? startedAt) : undefined
    state.executing += 1
    ledger?.inFlightChanged(startedAt, state.executing)
    if (measured) state.inFlight += 1
    if (stage !== undefined) ledger!.begin(stage)
    try {
      await hooks.execute(operation)
      if (measured && !state.sealed) {
        const doneAt = performance.now()
        if (stage !== undefined) ledger!.recordOp(stage, doneAt - startedAt, scheduledAt === undefined ? undefined : doneAt - Math.min(scheduledAt, startedAt))
        recordMs(state.latencyUs, doneAt - startedAt)
        series?.recordOp(doneAt, doneAt - startedAt)
        if (operation !== undefined) {
          let byOp = state.latencyByOpUs.get(operation)
          if (!byOp) state.latencyByOpUs.set(operation, (byOp = createHistogram()))
          recordMs(byOp, doneAt - startedAt)
        }
        if (scheduledAt !== undefined) {
          recordMs(state.latencyCorrectedUs!, doneAt - Math.min(scheduledAt, startedAt))
          recordMs(state.scheduleLagUs!, Math.max(0, startedAt - scheduledAt))
        }
        state.ops += 1
      }
    } catch (error) {
      if (measured && !state.sealed) {
        state.countError(hooks.classifyError(error), series)
        if (stage !== undefined) ledger!.recordError(stage)
      }
    } finally {
      if (!measured) warmupGate?.opDone()
      state.executing -= 1
      if (ledger) ledger.inFlightChanged(performance.now(), state.executing)
      if (measured) state.inFlight -= 1
      if (stage !== undefined) ledger!.end(stage)
    }
  }

  /** Closed loop: how many workers may start an operation at `time` (with stages, the stage's concurrency). */
  const concurrencyAt = (time: number): number => (ledger ? ledger.concurrencyAt(time) : plan.concurrency)
  const closedLoopWorker = async (index: number): Promise<void> => {
    while (!state.stopped) {
      const now = performance.now()
      // A stage with fewer workers: this one stops before its next operation (its current one has finished).
      if (index >= concurrencyAt(now)) return
      if (!claim()) return
      const measured = state.measuring && now >= state.measureStart
      await runOperation(measured, undefined, now)
    }
  }

  /** Workers running, by index (closed-loop stages start and stop them). */
  const running = new Set<number>()
  let resolveAllDone!: () => void
  const allDone = new Promise<void>((resolve) => {
    resolveAllDone = resolve
  })
  const startWorker = (index: number): void => {
    running.add(index)
    const done = (): void => {
      running.delete(index)
      // Worker 0 never stops for a stage (every stage has one), so none running means the run is over.
      if (running.size === 0) resolveAllDone()
    }
    void closedLoopWorker(index).then(done, done)
  }
  /** Closed-loop stages: at boundary `index`, start the workers the stage adds; then wait for the next one. */
  function growAtBoundary(index: number): void {
    if (!ledger || index >= ledger.stages.length || state.stopped) return
    const at = ledger.boundary(index)
    const fire = (): void => {
      const left = at - performance.now()
      // A timer can fire up to 1 ms early: a worker must not start before its stage does.
      if (left > 0) {
        stageTimer = setTimeout(fire, left)
        return
      }
      if (state.stopped) return
      for (let worker = 0; worker < ledger.stages[index]!.concurrency!; worker++) if (!running.has(worker)) startWorker(worker)
      growAtBoundary(index + 1)
    }
    stageTimer = setTimeout(fire, Math.max(0, at - performance.now()))
  }
  // Adaptive warm-up: the gate calls beginMeasuring once the load has settled (or at its cap); else a timer.
  warmupGate?.start(loopStart, beginMeasuring)
  if (openLoop) {
    // An operation is measured when its slot is scheduled inside the interval; after the natural end a slot of the
    // interval still starts (the dispatcher's wake-up ran late), nothing scheduled after it does.
    dispatcher = new SlotDispatcher(schedule!, plan.concurrency, () => state.measureEnd, (_slot, scheduledAt) => runOperation(state.measuring && scheduledAt >= state.measureStart, scheduledAt))
    void dispatcher.idle.then(resolveAllDone)
    if (state.stopped) dispatcher.stop(false) // stopped before the loop began
    else dispatcher.release()
  } else {
    const initialWorkers = concurrencyAt(loopStart)
    for (let index = 0; index < initialWorkers; index++) startWorker(index)
    if (initialWorkers === 0) resolveAllDone()
  }

  void allDone.then(stop)
  await stopped
  // Wait for measured operations still in flight, within the drain (a stop request shortens it).
  const drain = drainInFlight(allDone, state.interrupted ? stopDrainMs : plan.drainTimeoutMs, stopDrainMs)
  shortenDrain = drain.shorten
  const drained = await drain.drained
  shortenDrain = undefined
  if (!drained) {
    const givenUpClass = hooks.signal.aborted ? ABORTED_CLASS : UNFINISHED_CLASS
    for (let i = 0; i < state.inFlight; i++) state.countError(givenUpClass, series)
    for (const [stage, inFlight] of (ledger?.inFlightByStage() ?? []).entries()) for (let i = 0; i < inFlight; i++) ledger!.recordError(stage)
    if (givenUpClass === ABORTED_CLASS) state.aborted += state.inFlight
  }
  state.sealed = true
  if (openLoop) {
    const missed = new MissedSlots(state.latencyCorrectedUs!, schedule!, ledger, performance.now())
    for (const range of unstarted) missed.recordRange(range.first, range.end)
  }

  clearTimeout(warmupTimer)
  warmupGate?.stop()
  clearTimeout(stopTimer)
  clearTimeout(stageTimer)
  clearTimeout(seriesTimer)
  clearInterval(ticker)
  hooks.signal.removeEventListener('abort', onAbort)

  const warmedUpMs = (state.measuring ? state.measureStart : performance.now()) - loopStart
  if (!state.measuring) state.measureStart = state.measureEnd = performance.now()
  const end = plan.ops !== undefined && !state.interrupted ? performance.now() : state.measureEnd
  const missedByReason: Partial<Record<MissedReason, number>> = {}
  if (openLoop) {
    for (const reason of MISSED_REASONS) missedByReason[reason] = 0
    for (const range of unstarted) missedByReason[range.reason]! += range.end - range.first
  }
  return {
    ops: state.ops,
    errors: state.errors,
    errorsByClass: {...state.errorsByClass},
    scheduled: openLoop ? state.scheduled : null,
    missed: Object.values(missedByReason).reduce((sum, n) => sum + n, 0),
    missedByReason,
    aborted: state.aborted,
    durationMs: Math.max(0, end - state.measureStart),
    measureStartEpochMs: performance.timeOrigin + state.measureStart,
    latencyUs: state.latencyUs,
    latencyCorrectedUs: state.latencyCorrectedUs,
    scheduleLagUs: state.scheduleLagUs,
    latencyByOpUs: Object.fromEntries(state.latencyByOpUs),
    series: series?.finish(end) ?? [],
    ...(plan.seriesHistograms && series ? {seriesLatencyUs: series.encodedHistograms} : {}),
    stages: ledger?.finish(state.measureStart, end, openLoop ? (from, to) => firstSlotAtOrAfter(to) - firstSlotAtOrAfter(from) : undefined) ?? [],
    warmup: warmupGate ? {...warmupGate.outcome(), ms: Math.round(warmedUpMs)} : fixedOutcome(plan.warmupMs, warmedUpMs, !state.measuring || state.interrupted),
    interrupted: state.interrupted,
  }
}
