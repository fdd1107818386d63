/**
 * How a command is asked to stop, and with which exit code it then ends.
 *
 * - The first SIGINT, SIGTERM or SIGHUP (or a closed stdout: EPIPE) aborts
 *   `graceful`: long-running work stops, reports what it measured and cleans
 *   up (bench drops its namespace). The exit code follows the cause: 130, 143,
 *   129, or 141 for a closed pipe, as a shell reports a process killed by it.
 * - A second signal (a different one, or the same one more than half a second
 *   later) aborts `force`: cleanup is skipped, but what was measured
 *   is still printed and written, and the command says what it left behind.
 *   If the command has not ended `FORCE_EXIT_MS` later, the process exits.
 *
 * Signals reach the whole process group (`timeout`, a CI cancel, Ctrl-C), so
 * the embedded cluster's child process ignores them and leaves only when its
 * parent tells it to or is gone (src/sim/child.ts).
 */
import {EXIT_CODES} from '../errors.js'
import {isClosedPipe} from '../output.js'
import {commandOwnsProcess} from './process-owner.js'

export type StopCause = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'EPIPE'

export const EXIT_CODE_OF_STOP: Record<StopCause, number> = {
  SIGINT: EXIT_CODES.interrupted,
  SIGTERM: EXIT_CODES.terminated,
  SIGHUP: EXIT_CODES.hangup,
  EPIPE: EXIT_CODES.brokenPipe,
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** The same signal again within this window is the same stop request delivered twice, not a second one. */
export const SAME_REQUEST_WINDOW_MS = 500

/** After a second signal, the command has this long to print what it has before the process exits. */
export const FORCE_EXIT_MS = 2000

export class StopSignals {
  private readonly gracefulController = new AbortController()
  private readonly forceController = new AbortController()
  private stopCause: StopCause | undefined
  private firstStopAt = 0
  private installed = false
  private readonly onSignal = (signal: NodeJS.Signals): void => this.stop(signal as StopCause)
  private readonly onStdoutError = (error: NodeJS.ErrnoException): void => {
    if (!isClosedPipe(error)) throw error
    // Also after the command's finally() (oclif prints a --json document after it, and a big one is
    // still being written when the reader goes away): a cut-off document must not end with exit 0.
    process.exitCode = EXIT_CODE_OF_STOP.EPIPE
    this.stop('EPIPE')
  }
  private readonly onStderrError = (error: NodeJS.ErrnoException): void => {
    if (!isClosedPipe(error)) throw error
    this.stderrClosed = true
  }

  /** stderr's reader went away: the stop notices have nowhere to go. */
  private stderrClosed = false

  constructor(
    private readonly say: (line: string) => void,
    /** What the first signal starts, in the command's words (e.g. "stopping; partial results follow"). */
    private readonly stopping: () => string = () => 'stopping; partial results follow',
  ) {}

  /** Aborted by the first stop request: work stops, reports and cleans up. */
  get graceful(): AbortSignal {
    return this.gracefulController.signal
  }

  /** Aborted by the second stop request: skip cleanup, report at once. */
  get force(): AbortSignal {
    return this.forceController.signal
  }

  /** What stopped the command, if anything did. */
  get cause(): StopCause | undefined {
    return this.stopCause
  }

  /** The exit code for the cause (130 for Ctrl-C …); `undefined` when nothing stopped us. */
  get exitCode(): number | undefined {
    return this.stopCause === undefined ? undefined : EXIT_CODE_OF_STOP[this.stopCause]
  }

  install(): void {
    if (this.installed) return
    this.installed = true
    for (const signal of SIGNALS) process.on(signal, this.onSignal)
    process.stdout.on('error', this.onStdoutError)
    process.stderr.on('error', this.onStderrError)
  }

  uninstall(): void {
    if (!this.installed) return
    this.installed = false
    for (const signal of SIGNALS) process.off(signal, this.onSignal)
    // The stream listeners stay: a write still queued when the command ends may yet fail with EPIPE. Unless the
    // process goes on to run other commands (the tests' in-process runner): each would add its own pair.
    if (!commandOwnsProcess()) {
      process.stdout.off('error', this.onStdoutError)
      process.stderr.off('error', this.onStderrError)
    }
  }

  stop(cause: StopCause): void {
    if (!this.gracefulController.signal.aborted) {
      this.stopCause = cause
      this.firstStopAt = performance.now()
      if (cause !== 'EPIPE') this.tell(`\npooltool: ${cause} received: ${this.stopping()} (send it again to skip cleanup)`)
      this.gracefulController.abort(cause)
      return
    }
    if (cause === 'EPIPE' || this.forceController.signal.aborted) return
    // GNU timeout (and some supervisors) signal the command, then its whole group: one request, delivered twice.
    if (cause === this.stopCause && performance.now() - this.firstStopAt < SAME_REQUEST_WINDOW_MS) return
    this.tell(`pooltool: ${cause} received while stopping: skipping cleanup; printing what was measured`)
    this.forceController.abort(cause)
    const code = this.exitCode ?? EXIT_CODE_OF_STOP[cause]
    setTimeout(() => process.exit(code), FORCE_EXIT_MS).unref()
  }

  private tell(line: string): void {
    if (!this.stderrClosed) this.say(line)
  }
}
