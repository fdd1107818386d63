/**
 * The end of a run: wait for the measured operations still in flight, but not
 * for ever. After the natural end the wait is the drain timeout; a stop request
 * (Ctrl-C, SIGTERM), also one that comes during the wait, shortens it to the
 * stop drain, so a stalled server cannot hold a stop.
 */
export interface DrainWait {
  /** true: every operation returned; false: the wait ran out (the rest is counted unfinished or aborted). */
  drained: Promise<boolean>
  /** A stop request came: end the wait within the stop drain from now. */
  shorten(): void
}

export function drainInFlight(allDone: Promise<void>, waitMs: number, stopDrainMs: number): DrainWait {
  let timer: NodeJS.Timeout | undefined
  let deadline = performance.now() + waitMs
  let arm = (): void => {}
  const drained = new Promise<boolean>((resolve) => {
    arm = () => {
      clearTimeout(timer)
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()))
    }
    arm()
    void allDone.then(() => resolve(true))
  }).finally(() => clearTimeout(timer))
  return {
    drained,
    shorten: () => {
      deadline = Math.min(deadline, performance.now() + stopDrainMs)
      arm()
    },
  }
}
