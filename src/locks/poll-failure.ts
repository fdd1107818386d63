/**
 * A failed poll of `locks watch`, sorted into the reason a user acts on. The watch
 * marks the round and goes on; only a failure that is not the cluster's (a pooltool
 * bug) is thrown on, so it still ends the command with exit 1.
 */
import {PoolToolError} from '../errors.js'
import {errorClass, toPoolToolError} from '../mongo/errors.js'
import {redactText} from '../redact.js'
import type {LockPollFailureReason} from './types.js'

/**
 * A router stepping through a failover says so with these codes; the hosts it cannot reach at all
 * (HostUnreachable, NetworkTimeout …) are UNREACHABLE already in toPoolToolError.
 */
const TRANSIENT_SERVER_CODES = new Set([
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
])

const TIMEOUT_CLASSES = new Set(['timeout'])
const UNREACHABLE_CLASSES = new Set(['network', 'serverSelection', 'poolCleared', 'poolClosed'])

export interface ClassifiedPollFailure {
  reason: LockPollFailureReason
  /** One line, credentials redacted. */
  error: string
}

/**
 * The reason and redacted text of a failed poll; throws the error on when it is not a
 * cluster failure (an internal error that the watch must not hide).
 */
export function classifyPollFailure(error: unknown, context: {target: string; secrets: readonly string[]; timeoutMs: number; timedOut: boolean}): ClassifiedPollFailure {
  const failure = toPoolToolError(error, {target: context.target, secrets: context.secrets})
  const text = failure.message
  const cls = errorClass(error)
  const name = (error as {name?: string} | null)?.name ?? ''
  if (failure.code === 'UNAUTHORIZED' || failure.code === 'AUTH_FAILED') return {reason: 'unauthorized', error: text}
  const driverText = redactText(String((error as {message?: unknown} | null)?.message ?? error), context.secrets).split('\n')[0]!.replace(/\s*\(undefinedms\)/, '')
  const timeout = () => ({reason: 'timeout' as const, error: `no answer within ${context.timeoutMs} ms (--timeout-ms): ${driverText}`})
  // The poll's own deadline cut the read (the driver's wording names no bound: "(undefinedms)").
  if (TIMEOUT_CLASSES.has(cls)) return timeout()
  // A refused or failed connection is what it says, even when the poll's timer ran out meanwhile.
  const code = (error as {code?: unknown} | null)?.code
  if (failure.code === 'UNREACHABLE' || UNREACHABLE_CLASSES.has(cls) || (typeof code === 'number' && TRANSIENT_SERVER_CODES.has(code))) {
    return {reason: 'unreachable', error: text}
  }
  if (context.timedOut) return timeout()
  if (failure.code === 'SERVER_ERROR') return {reason: 'server-error', error: text}
  // Any other driver error still comes from talking to the cluster; anything else is ours.
  if (/^Mongo/.test(name) && !(error instanceof PoolToolError)) return {reason: 'server-error', error: text}
  throw error
}
