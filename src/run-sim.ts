/**
 * `pooltool sim`: start the embedded cluster, hand its details to the caller,
 * keep it up until Ctrl-C or the duration ends, then stop it cleanly. If the
 * cluster's process dies meanwhile, say so (a PoolToolError) instead of
 * serving nothing.
 */
import {type FiredFault, type FiredScenario, type SimClusterInfo, type SimExit, type SimOptions, startSimCluster, unexpectedExitError} from './sim/index.js'

export interface RunSimHooks extends StopWhen {
  onReady(info: SimClusterInfo): void
  /** Each scheduled fault as it fires (after onReady, in firing order). */
  onFaultFired?(event: FiredFault): void
  /** Each scenario the cluster set up (they fire during start; reported after onReady, in order). */
  onScenarioFired?(event: FiredScenario): void
}

const MAX_TIMER_MS = 2 ** 31 - 1

/** What ended the wait: the caller (signal or duration) or the cluster's own death. */
type Ending = {kind: 'requested'} | {kind: 'died'; exit: SimExit}

/** How long to serve: until the signal aborts or the duration ends. */
export interface StopWhen {
  signal: AbortSignal
  durationMs?: number
}

/**
 * Resolves when the caller wants the server stopped (signal or duration). A served
 * cluster or replay is the whole point of the process, so this holds the event loop
 * open; `cancel` releases it. Re-armed in steps: setTimeout fires at once for delays
 * past 2^31-1 ms (~24.8 days).
 */
export function stopRequested(when: StopWhen): {requested: Promise<void>; cancel(): void} {
  let timer: NodeJS.Timeout | undefined
  const requested = new Promise<void>((resolve) => {
    if (when.signal.aborted) return resolve()
    const deadline = when.durationMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + when.durationMs
    const arm = () => {
      const left = deadline - Date.now()
      if (left <= 0) resolve()
      else timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS))
    }
    arm()
    when.signal.addEventListener('abort', () => resolve(), {once: true})
  })
  return {requested, cancel: () => clearTimeout(timer)}
}

export async function runSimUntilStopped(options: Partial<SimOptions>, hooks: RunSimHooks): Promise<void> {
  const cluster = await startSimCluster(options)
  // The child is unref'd (so library callers exit promptly); stopRequested holds the event loop open here.
  const stop = stopRequested(hooks)
  try {
    hooks.onReady(cluster.info)
    if (hooks.onScenarioFired) cluster.onScenarioFired(hooks.onScenarioFired)
    if (hooks.onFaultFired) cluster.onFaultFired(hooks.onFaultFired)
    const requested = stop.requested.then((): Ending => ({kind: 'requested'}))
    const died = cluster.exited.then((exit): Ending => ({kind: 'died', exit}))
    const ending = await Promise.race([requested, died])
    if (ending.kind === 'died') throw unexpectedExitError(ending.exit, cluster.info.pid)
  } finally {
    stop.cancel()
    await cluster.stop()
  }
}
