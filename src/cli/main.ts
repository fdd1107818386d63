/**
 * The CLI entry behind bin/run.js and bin/dev.js: oclif's `execute`, plus the
 * failures that happen before any command exists (an unknown command, a
 * config that does not load). Those would otherwise be printed by oclif as a
 * multi-line block, outside `--json`. Failures inside a command are reported
 * by BaseCommand.catch, which ends them with an ExitError.
 *
 * bin/run.js installs the secret guard (src/cli/secret-guard.ts) before it
 * imports this module, so that nothing below loads first.
 */
import {Config, Errors, flush, handle, run, settings} from '@oclif/core'

import {EXIT_CODES, PoolToolError} from '../errors.js'
import {toPoolToolError} from '../mongo/errors.js'
import {debugError, debugLine, disableDebug, enableDebug, ignoredDriverLogVariables} from './debug.js'
import {failureJson, failureLine, fromOclifError, isOclifError, jsonRequested} from './failures.js'

/** One line (or the JSON object), then the exit code of the failure's class. `commandIds`: for "did you mean". */
function report(error: unknown, argv: readonly string[], commandIds: readonly string[] = []): number {
  const failure: PoolToolError = isOclifError(error) ? fromOclifError(error, undefined, commandIds) : toPoolToolError(error, {target: 'the target', secrets: []})
  debugError(error)
  if (jsonRequested(argv)) process.stdout.write(`${JSON.stringify(failureJson(failure), null, 2)}\n`)
  else process.stderr.write(`${failureLine(failure)}\n`)
  return failure.exitCode
}

/**
 * An error nobody caught (a stream or timer callback) would make Node print
 * its stack straight to fd 2, past the secret guard: report it like any other.
 */
function reportUncaught(argv: readonly string[]): void {
  const onUncaught = (error: unknown) => {
    // stdout's reader went away before a command listened for it (`pooltool --help | head -1`): end quietly, as SIGPIPE would.
    if ((error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE') process.exit(EXIT_CODES.brokenPipe)
    process.exit(report(error, argv))
  }
  process.on('uncaughtException', onUncaught)
  process.on('unhandledRejection', onUncaught)
}

/** The commands pooltool has (for "did you mean"); none when the config itself cannot load. */
async function commandIdsOf(dir: string): Promise<string[]> {
  try {
    return (await Config.load(dir)).commandIDs
  } catch {
    return []
  }
}

export async function runPooltool(dir: string, options: {development?: boolean} = {}): Promise<void> {
  if (options.development) {
    process.env.NODE_ENV = 'development'
    settings.debug = true
  }
  const argv = process.argv.slice(2)
  reportUncaught(argv)
  const exitCode = await executePooltool(argv, dir)
  if (exitCode === undefined) {
    // Not awaited, as oclif's execute() does: with stdout's reader gone, 'drain' never comes.
    flush().catch(() => {})
    return
  }
  await handle(new Errors.ExitError(exitCode))
}

/**
 * One invocation, as bin/run.js makes it, up to the exit: the commands' own failures (an ExitError with
 * the code they chose) and those before any command exists, each said in one line or the JSON object.
 * Returns the exit code of a failure; undefined when the command returned (its process.exitCode stands).
 * The test suite's in-process runner calls this directly, with a Config it loaded once.
 */
export async function executePooltool(argv: string[], dir: string | Config): Promise<number | undefined> {
  const flagArgs = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv
  if (flagArgs.includes('--debug')) {
    await enableDebug()
    debugLine(`node ${process.version} on ${process.platform}-${process.arch}; argv ${JSON.stringify(argv)}`)
  } else {
    await disableDebug()
  }
  const ignored = ignoredDriverLogVariables()
  if (ignored.length > 0) {
    process.stderr.write(`pooltool: ignoring ${ignored.join(', ')} (the driver's own log bypasses redaction); --debug prints it with credentials redacted\n`)
  }
  try {
    await run(argv, dir)
    return undefined
  } catch (error) {
    if (error instanceof Errors.ExitError) return error.oclif.exit ?? EXIT_CODES.internal
    return report(error, argv, typeof dir === 'string' ? await commandIdsOf(dir) : dir.commandIDs)
  }
}
