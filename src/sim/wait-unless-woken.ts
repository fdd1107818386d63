/**
 * A wait that news can end early: resolves after `ms`, or as soon as a function in `waiters` is called. The sim
 * holds replies this way (an awaitData getMore waiting for oplog entries, the replies a stall holds): whoever has
 * the news calls every waiter in the set, and a wait takes itself out of the set when it ends either way.
 */
export function waitUnlessWoken(ms: number, waiters: Set<() => void>, options: {unref?: boolean} = {}): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer)
      waiters.delete(wake)
      resolve()
    }
    const timer = setTimeout(wake, Math.max(0, ms))
    if (options.unref) timer.unref()
    waiters.add(wake)
  })
}
