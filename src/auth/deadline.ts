/**
 * One connection of `pooltool auth` is bounded as a whole by --timeout-ms (TCP
 * connect, handshake, SCRAM, ping together: a stalled server must not hold a pass
 * for a multiple of it), and Ctrl-C ends it at once. Steps are raced against the
 * deadline; whoever loses is left to fail on its own when the caller closes the socket.
 */
import {WireNetworkError} from '../wire/index.js'

/** The connection ran out of --timeout-ms (class `timeout` in the counts). */
export class ConnectionDeadlineError extends WireNetworkError {
  constructor(timeoutMs: number) {
    super(`no reply within ${timeoutMs} ms (--timeout-ms)`)
  }
}

/** Ctrl-C (or another stop) arrived while the connection was being opened: not a failure of the server. */
export class ConnectionAbortedError extends Error {
  override name = 'ConnectionAbortedError'
  constructor() {
    super('interrupted')
  }
}

export class Deadline {
  private readonly timer: NodeJS.Timeout
  private readonly expired: Promise<never>
  private rejectExpired!: (error: Error) => void
  private readonly onAbort = () => this.rejectExpired(new ConnectionAbortedError())

  constructor(
    timeoutMs: number,
    private readonly signal?: AbortSignal,
  ) {
    this.expired = new Promise<never>((_, reject) => {
      this.rejectExpired = reject
    })
    // Nobody may be racing at the moment it fires: the rejection is observed by the next race.
    this.expired.catch(() => undefined)
    this.timer = setTimeout(() => this.rejectExpired(new ConnectionDeadlineError(timeoutMs)), timeoutMs)
    if (signal?.aborted) this.onAbort()
    else signal?.addEventListener('abort', this.onAbort, {once: true})
  }

  /** `step`, unless the deadline passes or the signal aborts first. */
  race<T>(step: Promise<T>): Promise<T> {
    // The loser still settles later (its socket is closed by the caller): keep that from being unhandled.
    step.catch(() => undefined)
    return Promise.race([step, this.expired])
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.signal?.removeEventListener('abort', this.onAbort)
  }
}

/**
 * `step`, or `undefined` as soon as `signal` aborts: Ctrl-C must not wait for a read a stalled host
 * holds for up to --timeout-ms. The abandoned step still settles later (its connection is closed
 * by the caller's cleanup): its rejection is observed here.
 */
export function unlessAborted<T>(step: Promise<T>, signal?: AbortSignal): Promise<T | undefined> {
  step.catch(() => undefined)
  if (!signal) return step
  if (signal.aborted) return Promise.resolve(undefined)
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined)
    signal.addEventListener('abort', onAbort, {once: true})
    step.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
