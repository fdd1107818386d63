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
import {Errors, flush, handle, run, settings} from '@oclif/core'

import {PoolToolError} from '../errors.js'
import {toPoolToolError} from '../mongo/errors.js'
import {enableDebug, ignoredDriverLogVariables} from './debug.js'
import {failureJson, failureLine, fromOclifError, isOclifError, jsonRequested} from './failures.js'

export async function runPooltool(dir: string, options: {development?: boolean} = {}): Promise<void> {
  if (options.development) {
    process.env.NODE_ENV = 'development'
    settings.debug = true
  }
  const argv = process.argv.slice(2)
  const flagArgs = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv
  if (flagArgs.includes('--debug')) enableDebug()
  const ignored = ignoredDriverLogVariables()
  if (ignored.length > 0) {
    process.stderr.write(`pooltool: ignoring ${ignored.join(', ')} (the driver's own log bypasses redaction); --debug prints it with credentials redacted\n`)
  }
  try {
    await run(argv, dir)
    await flush()
  } catch (error) {
    if (error instanceof Errors.ExitError) {
      await handle(error)
      return
    }
    const failure: PoolToolError = isOclifError(error) ? fromOclifError(error, undefined) : toPoolToolError(error, {target: 'the target', secrets: []})
    if (jsonRequested(argv)) process.stdout.write(`${JSON.stringify(failureJson(failure), null, 2)}\n`)
    else process.stderr.write(`${failureLine(failure)}\n`)
    await handle(new Errors.ExitError(failure.exitCode))
  }
}
