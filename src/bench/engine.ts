/**
 * The measuring loop of one bench run. Knows nothing of oclif, tables or the
 * driver: it calls `execute` and records what happens.
 *
 * Rules, so numbers mean one thing:
 * - An operation is measured when it starts (closed loop) or is scheduled to
 *   start (open loop) inside the measured interval [start, end); every
 *   measured operation is awaited, so a stalled one still counts.
 * - Closed loop: `concurrency` workers, each starts its next operation when
 *   the previous one returns. Latency = reply − send.
 * - Open loop: operation i is scheduled at start + i/rate; at most
 *   `concurrency` are in flight. Corrected latency = reply − scheduled start
 *   (what a user arriving on schedule waits: no coordinated omission);
 *   uncorrected = reply − actual send, reported beside it.
 * - Warm-up runs the same loop first and is not recorded.
 */
import {createHistogram, type Histogram, recordMs} from '../metrics/histograms.js'

export interface EnginePlan {
  concurrency: number
  /** Open loop when set: operations per second. */
  rate?: number
  durationMs?: number
  ops?: number
  warmupMs: number
  /** How long to wait for operations still in flight when the interval ends. */
  drainTimeoutMs: number
  tickIntervalMs: number
}

export interface EngineHooks {
  execute(): Promise<unknown>
  classifyError(error: unknown): string
  signal: AbortSignal
  /** Called when warm-up ends and measuring begins. */
  onMeasureStart?(): void
  onTick?(tick: EngineTick): void
}

export interface EngineTick {
  elapsedMs: number
  ops: number
  errors: number
  opsPerSecLastTick: number
  latencyUs: Histogram
}

export interface EngineMeasurement {
  ops: number
  errors: number
  errorsByClass: Record<string, number>
  durationMs: number
  latencyUs: Histogram
  latencyCorrectedUs: Histogram | null
  scheduleLagUs: Histogram | null
  interrupted: boolean
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Mutable state of one run, owned by the engine. */
class RunState {
  measuring = false
  /** No new operation may start. */
  stopped = false
  interrupted = false
  measureStart = 0
  measureEnd = Number.POSITIVE_INFINITY
  /** Measured operations started (for --ops). */
  claimed = 0
  /** Measured operations started and not yet returned. */
  inFlight = 0
  ops = 0
  errors = 0
  readonly errorsByClass: Record<string, number> = {}
  readonly latencyUs = createHistogram()
  readonly latencyCorrectedUs: Histogram | null
  readonly scheduleLagUs: Histogram | null

  constructor(openLoop: boolean) {
    this.latencyCorrectedUs = openLoop ? createHistogram() : null
    this.scheduleLagUs = openLoop ? createHistogram() : null
  }

  countError(errorClass: string): void {
    this.errors += 1
    this.errorsByClass[errorClass] = (this.errorsByClass[errorClass] ?? 0) + 1
  }
}

export async function runEngine(plan: EnginePlan, hooks: EngineHooks): Promise<EngineMeasurement> {
  const openLoop = plan.rate !== undefined
  const state = new RunState(openLoop)
  const loopStart = performance.now()

  const beginMeasuring = (): void => {
    state.measuring = true
    state.measureStart = performance.now()
    if (plan.durationMs !== undefined) state.measureEnd = state.measureStart + plan.durationMs
    hooks.onMeasureStart?.()
    if (plan.durationMs !== undefined) stopTimer = setTimeout(stop, plan.durationMs)
  }
  let resolveStopped!: () => void
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve
  })
  const stop = (): void => {
    if (state.stopped) return
    state.stopped = true
    if (state.measureEnd === Number.POSITIVE_INFINITY || performance.now() < state.measureEnd) state.measureEnd = performance.now()
    resolveStopped()
  }
  const onAbort = (): void => {
    state.interrupted = true
    if (!state.measuring) {
      // Interrupted during warm-up: nothing measured.
      state.measureStart = performance.now()
    }
    stop()
  }

  let stopTimer: NodeJS.Timeout | undefined
  if (hooks.signal.aborted) onAbort()
  hooks.signal.addEventListener('abort', onAbort, {once: true})
  const warmupTimer = plan.warmupMs > 0 ? setTimeout(beginMeasuring, plan.warmupMs) : undefined
  if (plan.warmupMs <= 0) beginMeasuring()

  let lastTickOps = 0
  const ticker = setInterval(() => {
    if (!state.measuring) return
    const elapsedMs = performance.now() - state.measureStart
    hooks.onTick?.({
      elapsedMs,
      ops: state.ops,
      errors: state.errors,
      opsPerSecLastTick: ((state.ops - lastTickOps) * 1000) / plan.tickIntervalMs,
      latencyUs: state.latencyUs,
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

  const closedLoopWorker = async (): Promise<void> => {
    while (!state.stopped) {
      if (!claim()) return
      const startedAt = performance.now()
      const measured = state.measuring && startedAt >= state.measureStart
      if (measured) state.inFlight += 1
      try {
        await hooks.execute()
        if (measured) {
          recordMs(state.latencyUs, performance.now() - startedAt)
          state.ops += 1
        }
      } catch (error) {
        if (measured) state.countError(hooks.classifyError(error))
      } finally {
        if (measured) state.inFlight -= 1
      }
    }
  }

  const intervalMs = openLoop ? 1000 / plan.rate! : 0
  let nextSlot = 0
  const openLoopWorker = async (): Promise<void> => {
    while (!state.stopped) {
      const scheduledAt = loopStart + nextSlot * intervalMs
      nextSlot += 1
      const wait = scheduledAt - performance.now()
      if (wait >= 1) await sleep(wait)
      if (state.stopped || scheduledAt >= state.measureEnd) return
      const measured = state.measuring && scheduledAt >= state.measureStart
      if (measured && !claim()) return
      const startedAt = performance.now()
      if (measured) state.inFlight += 1
      try {
        await hooks.execute()
        if (measured) {
          const doneAt = performance.now()
          recordMs(state.latencyUs, doneAt - startedAt)
          recordMs(state.latencyCorrectedUs!, doneAt - scheduledAt)
          recordMs(state.scheduleLagUs!, Math.max(0, startedAt - scheduledAt))
          state.ops += 1
        }
      } catch (error) {
        if (measured) state.countError(hooks.classifyError(error))
      } finally {
        if (measured) state.inFlight -= 1
      }
    }
  }

  const worker = openLoop ? openLoopWorker : closedLoopWorker
  const workers = Array.from({length: plan.concurrency}, () => worker())
  const allDone = Promise.all(workers)

  // Wait for the stop condition, then for measured operations still in flight:
  // a stalled operation must be counted, not dropped. One that outlives the
  // drain timeout is counted as an 'unfinished' error.
  void allDone.then(stop)
  await stopped
  let drainTimer: NodeJS.Timeout | undefined
  const drained = await Promise.race([
    allDone.then(() => true),
    new Promise<boolean>((resolve) => {
      drainTimer = setTimeout(() => resolve(false), plan.drainTimeoutMs)
    }),
  ])
  clearTimeout(drainTimer)
  if (!drained) for (let i = 0; i < state.inFlight; i++) state.countError('unfinished')

  clearTimeout(warmupTimer)
  clearTimeout(stopTimer)
  clearInterval(ticker)
  hooks.signal.removeEventListener('abort', onAbort)

  if (!state.measuring) state.measureStart = state.measureEnd = performance.now()
  const end = plan.ops !== undefined && !state.interrupted ? performance.now() : state.measureEnd
  return {
    ops: state.ops,
    errors: state.errors,
    errorsByClass: state.errorsByClass,
    durationMs: Math.max(0, end - state.measureStart),
    latencyUs: state.latencyUs,
    latencyCorrectedUs: state.latencyCorrectedUs,
    scheduleLagUs: state.scheduleLagUs,
    interrupted: state.interrupted,
  }
}
