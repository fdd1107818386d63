/**
 * `pooltool sim`: start the embedded cluster, hand its details to the caller,
 * keep it up until Ctrl-C or the duration ends, then stop it cleanly. If the
 * cluster's process dies meanwhile, say so (a PoolToolError) instead of
 * serving nothing.
 */
import {type SimExit, startSimCluster, unexpectedExitError} from './sim/host.js'
import type {FiredFault, SimClusterInfo, SimOptions} from './sim/types.js'

export interface RunSimHooks {
  signal: AbortSignal
  durationMs?: number
  onReady(info: SimClusterInfo): void
  /** Each scheduled fault as it fires (after onReady, in firing order). */
  onFaultFired?(event: FiredFault): void
}

const MAX_TIMER_MS = 2 ** 31 - 1

/** What ended the wait: the caller (signal or duration) or the cluster's own death. */
type Ending = {kind: 'requested'} | {kind: 'died'; exit: SimExit}

export async function runSimUntilStopped(options: Partial<SimOptions>, hooks: RunSimHooks): Promise<void> {
  const cluster = await startSimCluster(options)
  let timer: NodeJS.Timeout | undefined
  try {
    hooks.onReady(cluster.info)
    if (hooks.onFaultFired) cluster.onFaultFired(hooks.onFaultFired)
    const requested = new Promise<Ending>((resolve) => {
      if (hooks.signal.aborted) return resolve({kind: 'requested'})
      // The child is unref'd (so library callers exit promptly); here the
      // cluster is the whole point, so hold the event loop open ourselves.
      // Re-armed in steps: setTimeout fires at once for delays past 2^31-1 ms (~24.8 days).
      const deadline = hooks.durationMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + hooks.durationMs
      const arm = () => {
        const left = deadline - Date.now()
        if (left <= 0) resolve({kind: 'requested'})
        else timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS))
      }
      arm()
      hooks.signal.addEventListener('abort', () => resolve({kind: 'requested'}), {once: true})
    })
    const died = cluster.exited.then((exit): Ending => ({kind: 'died', exit}))
    const ending = await Promise.race([requested, died])
    if (ending.kind === 'died') throw unexpectedExitError(ending.exit, cluster.info.pid)
  } finally {
    clearTimeout(timer)
    await cluster.stop()
  }
}
