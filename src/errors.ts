/**
 * The one error type pooltool raises on purpose. Every failure a user can fix
 * carries a stable code, a one-line message, a hint and an exit code of its
 * class, so scripts can branch on `$?` and humans see no stack trace.
 */

export const EXIT_CODES = {
  /** Unexpected failure inside pooltool. */
  internal: 1,
  /** Flags or arguments that cannot work (oclif also uses 2 for parse errors). */
  usage: 2,
  /** The connection string cannot be parsed. */
  invalidUri: 3,
  /** Nothing answered at the address within the timeout. */
  unreachable: 4,
  /** The server refused the credentials. */
  authFailed: 5,
  /** Authenticated, but the user lacks a privilege the command needs. */
  unauthorized: 6,
  /** The command needs another topology (e.g. locks need a sharded cluster). */
  wrongTopology: 7,
  /** A `--fail-on` threshold was crossed: the run itself worked. */
  thresholdBreached: 8,
  /** The server answered with an error the command cannot work around. */
  serverError: 9,
  /** Stopped by SIGHUP (the terminal went away): partial results were reported. */
  hangup: 129,
  /** Stopped by Ctrl-C (SIGINT): partial results were reported. */
  interrupted: 130,
  /** stdout was closed by its reader (EPIPE, e.g. `| head`): stopped quietly, as SIGPIPE would. */
  brokenPipe: 141,
  /** Stopped by SIGTERM (timeout, a CI cancel, docker stop): partial results were reported. */
  terminated: 143,
} as const

export type ErrorClass = keyof typeof EXIT_CODES

/** Stable codes, one per situation; documented in the README. */
export type PoolToolErrorCode =
  | 'USAGE'
  | 'INVALID_URI'
  | 'UNREACHABLE'
  | 'AUTH_FAILED'
  | 'UNAUTHORIZED'
  | 'WRONG_TOPOLOGY'
  | 'THRESHOLD_BREACHED'
  | 'SERVER_ERROR'
  | 'INTERRUPTED'
  | 'OUTPUT_FAILED'
  | 'INTERNAL'

const CLASS_OF_CODE: Record<PoolToolErrorCode, ErrorClass> = {
  USAGE: 'usage',
  INVALID_URI: 'invalidUri',
  UNREACHABLE: 'unreachable',
  AUTH_FAILED: 'authFailed',
  UNAUTHORIZED: 'unauthorized',
  WRONG_TOPOLOGY: 'wrongTopology',
  THRESHOLD_BREACHED: 'thresholdBreached',
  SERVER_ERROR: 'serverError',
  INTERRUPTED: 'interrupted',
  /** A result file could not be written at the end (the measurement itself was printed). */
  OUTPUT_FAILED: 'usage',
  INTERNAL: 'internal',
}

export class PoolToolError extends Error {
  readonly code: PoolToolErrorCode
  readonly hint: string
  readonly exitCode: number

  constructor(code: PoolToolErrorCode, message: string, hint: string, options?: {cause?: unknown; exitCode?: number}) {
    super(message, options?.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'PoolToolError'
    this.code = code
    this.hint = hint
    // INTERRUPTED takes the code of what stopped the command (130, 143, 129), as a shell reports the signal.
    this.exitCode = options?.exitCode ?? EXIT_CODES[CLASS_OF_CODE[code]]
  }

  /** What `--json` prints under `error`. */
  toJSON(): {code: PoolToolErrorCode; message: string; hint: string; exitCode: number} {
    return {code: this.code, message: this.message, hint: this.hint, exitCode: this.exitCode}
  }
}

/** Shorthand for the most common case: a flag value that cannot work. */
export function usageError(message: string, hint: string): PoolToolError {
  return new PoolToolError('USAGE', message, hint)
}

/** The exit code of each stop request, by the reason the command's stop signal was aborted with (src/cli/stop-signals.ts). */
const EXIT_CODE_OF_STOP_REASON: Record<string, number> = {
  SIGINT: EXIT_CODES.interrupted,
  SIGTERM: EXIT_CODES.terminated,
  SIGHUP: EXIT_CODES.hangup,
  EPIPE: EXIT_CODES.brokenPipe,
}

/**
 * A command stopped (Ctrl-C, SIGTERM …) before it had anything to report: one line, and the exit
 * code of the stop request, as when partial results are printed.
 */
export function stoppedError(signal: AbortSignal, message: string, hint: string): PoolToolError {
  const reason = typeof signal.reason === 'string' ? signal.reason : 'SIGINT'
  return new PoolToolError('INTERRUPTED', message, hint, {exitCode: EXIT_CODE_OF_STOP_REASON[reason] ?? EXIT_CODES.interrupted})
}
