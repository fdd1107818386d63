/**
 * `pooltool sim`: start the embedded cluster, hand its details to the caller,
 * keep it up until Ctrl-C or the duration ends, then stop it cleanly.
 */
import {startSimCluster} from './sim/host.js'
import type {SimClusterInfo, SimOptions} from './sim/types.js'

export interface RunSimHooks {
  signal: AbortSignal
  durationMs?: number
  onReady(info: SimClusterInfo): void
}

export async function runSimUntilStopped(options: Partial<SimOptions>, hooks: RunSimHooks): Promise<void> {
  const cluster = await startSimCluster(options)
  try {
    hooks.onReady(cluster.info)
    await new Promise<void>((resolve) => {
      if (hooks.signal.aborted) return resolve()
      // The child is unref'd (so library callers exit promptly); here the
      // cluster is the whole point, so hold the event loop open ourselves.
      const timer = setTimeout(resolve, hooks.durationMs ?? 2 ** 31 - 1)
      hooks.signal.addEventListener('abort', () => {
        clearTimeout(timer)
        resolve()
      }, {once: true})
    })
  } finally {
    await cluster.stop()
  }
}
