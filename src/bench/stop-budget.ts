/**
 * How long the end of a bench run may take once the user asked it to stop.
 *
 * A stop request (first signal) gives the rest of the run STOP_BUDGET_MS from
 * the moment it arrived: the engine's short drain, the last server samples,
 * closing the clients and dropping the namespace all share it, so a stop
 * completes within about 2 s even when the server stalls. A step that does not
 * finish in time is abandoned (its promise left to settle on its own) and
 * named in `abandoned`, so the report can say what was cut short. A second
 * signal (`force`) ends every remaining step at once.
 * Without a stop request, steps run to completion as usual.
 */
export const STOP_BUDGET_MS = 1800

export class StopBudget {
  private stoppedAt: number | undefined
  /** Steps cut short, in order: "closing the clients", … */
  readonly abandoned: string[] = []

  constructor(
    private readonly stop: AbortSignal,
    private readonly force?: AbortSignal,
    private readonly budgetMs = STOP_BUDGET_MS,
  ) {
    const markStopped = () => {
      this.stoppedAt ??= performance.now()
    }
    if (stop.aborted) markStopped()
    else stop.addEventListener('abort', markStopped, {once: true})
  }

  get forced(): boolean {
    return this.force?.aborted === true
  }

  markAbandoned(what: string): void {
    if (!this.abandoned.includes(what)) this.abandoned.push(what)
  }

  /** Run `work` within what is left of the budget; `fallback` when it is cut short. */
  async step<T>(what: string, work: () => Promise<T>, fallback: T): Promise<T> {
    if (this.forced) {
      this.markAbandoned(what)
      return fallback
    }
    const running = work()
    const limits: Array<Promise<'cut'>> = []
    const timers: NodeJS.Timeout[] = []
    const listeners: Array<[AbortSignal, () => void]> = []
    const cutWhen = (signal: AbortSignal | undefined, afterMs: () => number | undefined) => {
      if (!signal) return
      limits.push(
        new Promise((resolve) => {
          const arm = () => {
            const ms = afterMs()
            if (ms !== undefined) timers.push(setTimeout(() => resolve('cut'), Math.max(0, ms)))
          }
          if (signal.aborted) arm()
          else {
            signal.addEventListener('abort', arm, {once: true})
            listeners.push([signal, arm])
          }
        }),
      )
    }
    // A stop request arms the budget's clock; a second signal cuts at once.
    cutWhen(this.stop, () => this.budgetMs - (performance.now() - (this.stoppedAt ?? performance.now())))
    cutWhen(this.force, () => 0)
    try {
      const outcome = await Promise.race([running.then((value) => ({value})), ...limits])
      if (outcome === 'cut') {
        running.catch(() => undefined)
        this.markAbandoned(what)
        return fallback
      }
      return outcome.value
    } finally {
      for (const timer of timers) clearTimeout(timer)
      for (const [signal, listener] of listeners) signal.removeEventListener('abort', listener)
    }
  }
}
