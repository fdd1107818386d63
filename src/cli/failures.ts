/**
 * How a failure reaches the user, whoever raised it: one line on stderr,
 * `Error [CODE]: message (hint: …)`, or under `--json` the documented
 * `{"error": {code, message, hint, exitCode}}` on stdout. Never a stack trace
 * (`--debug` shows it, redacted).
 *
 * oclif's own errors (unknown flag, missing value, value not in options, an
 * integer below its min, an unknown command) become USAGE errors (exit 2)
 * here, so they read and serialise like pooltool's.
 */
import {Errors} from '@oclif/core'

import {EXIT_CODES, PoolToolError, type PoolToolErrorCode} from '../errors.js'
import {BUG_HINT} from '../mongo/errors.js'
import {redactText} from '../redact.js'
import {oneLine} from './failure-text.js'

// The line itself lives where the fast usage path (fast-usage.ts) reaches it without oclif.
export {failureLine} from './failure-text.js'

/** Whether the invocation asked for JSON (as oclif decides it: `--json` before any `--`, or POOLTOOL_CONTENT_TYPE=json). */
export function jsonRequested(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.POOLTOOL_CONTENT_TYPE?.toLowerCase() === 'json') return true
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}

const CODE_OF_EXIT = new Map<number, PoolToolErrorCode>([
  [EXIT_CODES.usage, 'USAGE'],
  [EXIT_CODES.invalidUri, 'INVALID_URI'],
  [EXIT_CODES.unreachable, 'UNREACHABLE'],
  [EXIT_CODES.authFailed, 'AUTH_FAILED'],
  [EXIT_CODES.unauthorized, 'UNAUTHORIZED'],
  [EXIT_CODES.wrongTopology, 'WRONG_TOPOLOGY'],
  [EXIT_CODES.serverError, 'SERVER_ERROR'],
])

/** Edits (insert, delete, replace) between two words. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }
  return previous[b.length]!
}

/** The command a mistyped one most likely meant ("bnech" → "bench"), if one is close enough; ids as oclif has them. */
export function closestCommand(typed: string, commandIds: readonly string[]): string | undefined {
  const word = typed.replaceAll(':', ' ')
  let best: {id: string; distance: number} | undefined
  for (const id of commandIds) {
    const distance = editDistance(word, id.replaceAll(':', ' '))
    if (!best || distance < best.distance) best = {id, distance}
  }
  // At most a third of the word wrong: "bnech" is bench, "xyz" is nothing.
  return best && best.distance <= Math.ceil(word.length / 3) ? best.id.replaceAll(':', ' ') : undefined
}

/**
 * An oclif CLIError (parse failures, `this.error()`, unknown command) as a PoolToolError. With the
 * command ids, an unknown command's hint names the closest one ("did you mean").
 */
export function fromOclifError(error: Errors.CLIError, commandId: string | undefined, commandIds: readonly string[] = []): PoolToolError {
  const exit = error.oclif?.exit ?? EXIT_CODES.usage
  const code = CODE_OF_EXIT.get(exit) ?? 'INTERNAL'
  const help = commandId ? `pooltool ${commandId.replaceAll(':', ' ')} --help` : 'pooltool --help'
  let hint = code === 'INTERNAL' ? BUG_HINT : `see '${help}'`
  // oclif names commands by their ids ("command locks:list:extra not found"): say it the way users type it.
  const message = oneLine(error.message).replace(/^command (\S+) not found/, (_all, id: string) => {
    const meant = closestCommand(id, commandIds)
    if (meant) hint = `did you mean 'pooltool ${meant}'? see '${help}'`
    return `command '${id.replaceAll(':', ' ')}' not found`
  })
  return new PoolToolError(code, redactText(message), hint, {cause: error})
}

export function isOclifError(error: unknown): error is Errors.CLIError {
  return error instanceof Errors.CLIError && !(error instanceof Errors.ExitError)
}

/** What `--json` prints for a failure. */
export function failureJson(failure: PoolToolError): {error: ReturnType<PoolToolError['toJSON']>} {
  return {error: failure.toJSON()}
}
