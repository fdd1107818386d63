/**
 * A failed poll of `locks watch`, sorted into the reason a user acts on. The watch
 * marks the round and goes on; only a failure that is not the cluster's (a pooltool
 * bug) is thrown on, so it still ends the command with exit 1.
 */
import {PoolToolError} from '../errors.js'
import {errorClass, toPoolToolError} from '../mongo/errors.js'
import type {LockPollFailureReason} from './types.js'

/** Server error codes that mean "the router could not reach a config server or shard" rather than a refusal. */
const UNREACHABLE_SERVER_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  133, // FailedToSatisfyReadPreference
  189, // PrimarySteppedDown
  202, // NetworkInterfaceExceededTimeLimit
  9001, // SocketException
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
  // A refused or failed connection is what it says, even when the poll's timer ran out meanwhile.
  if (failure.code === 'UNREACHABLE' || UNREACHABLE_CLASSES.has(cls)) return {reason: 'unreachable', error: text}
  if (context.timedOut || TIMEOUT_CLASSES.has(cls)) {
    // The driver's own wording of an aborted read ("Timed out during socket read (undefinedms)") names no bound.
    const driverText = text.replace(/\s*\(undefinedms\)/, '')
    return {reason: 'timeout', error: `no answer within ${context.timeoutMs} ms (--timeout-ms): ${driverText}`}
  }
  if (failure.code === 'SERVER_ERROR') {
    const code = (error as {code?: unknown} | null)?.code
    return {reason: typeof code === 'number' && UNREACHABLE_SERVER_CODES.has(code) ? 'unreachable' : 'server-error', error: text}
  }
  // Any other driver error still comes from talking to the cluster; anything else is ours.
  if (/^Mongo/.test(name) && !(error instanceof PoolToolError)) return {reason: 'server-error', error: text}
  throw error
}
