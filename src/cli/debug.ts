/**
 * `--debug`: what a user can paste into a bug report. One stream on stderr,
 * every line prefixed `pooltool debug:` and redacted (URIs by shape, the
 * target's password in every printed form): the driver's own log (commands,
 * connection pool, topology, server selection), the target pooltool chose,
 * and a failure's stack with its causes.
 *
 * The driver's MONGODB_LOG_* variables are ignored (see src/mongo/client.ts):
 * their output would bypass this redaction and could land on stdout.
 */
import {redactText} from '../redact.js'
import {terminalSafe} from '../reporters/escape.js'

const PREFIX = 'pooltool debug:'

let enabled = false

/** URIs are redacted by shape here; the invocation's passwords by the secret guard every stderr write passes. */
function write(line: string): void {
  // The driver's log quotes what servers sent (errmsg, host names): escaped, newlines kept for stacks.
  process.stderr.write(`${PREFIX} ${terminalSafe(redactText(line))}\n`)
}

/**
 * Turn the stream on (the driver's log included) for clients created from now on. The driver's
 * module is imported here, not at the top: every start that is not `--debug` (help, a usage
 * error) must not pay for loading the driver.
 */
export async function enableDebug(): Promise<void> {
  enabled = true
  const {setDriverLogSink} = await import('../mongo/client.js')
  setDriverLogSink(write)
}

/**
 * Off, for an invocation without `--debug`. A process runs one invocation (bin/run.js), so there this
 * changes nothing; the tests' in-process runner runs many in one process, and one `--debug` run must
 * not leave the stream (and the driver's log) on for every run after it.
 */
export async function disableDebug(): Promise<void> {
  if (!enabled) return
  enabled = false
  const {setDriverLogSink} = await import('../mongo/client.js')
  setDriverLogSink(undefined)
}

export function debugEnabled(): boolean {
  return enabled
}

export function debugLine(line: string): void {
  if (enabled) write(line)
}

/** A failure's stack and its causes (redacted), for the line the user saw. */
export function debugError(error: unknown): void {
  if (!enabled) return
  let current: unknown = error
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const text = current instanceof Error ? current.stack ?? `${current.name}: ${current.message}` : String(current)
    for (const line of text.split('\n')) write(depth === 0 ? line : `  caused by: ${line}`)
    current = current instanceof Error ? current.cause : undefined
  }
}

/** Names of set MONGODB_LOG_* variables: pooltool does not let the driver print on its own. */
export function ignoredDriverLogVariables(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.keys(env).filter((name) => name.startsWith('MONGODB_LOG_') && env[name])
}
