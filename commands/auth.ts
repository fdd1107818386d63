import {Flags} from '@oclif/core'

import {toAuthConfig} from '../src/auth/config.js'
import {AUTH_MECHANISMS, type AuthResult} from '../src/auth/types.js'
import {TargetCommand} from '../src/cli/base-command.js'
import {failureLine} from '../src/cli/failures.js'
import {AUTH_DEFAULTS} from '../src/defaults.js'

export default class Auth extends TargetCommand<typeof Auth> {
  static override summary = 'Measure what one new (authenticated) connection costs, per mechanism, in pooled pings.'

  static override description =
    'For each mechanism (none, SCRAM-SHA-1, SCRAM-SHA-256) opens --connections new connections one at a time, then ' +
    'again in storms of --parallel; each does its handshake, authenticates, runs one ping and closes. Every connection ' +
    'is timed twice over: driver-free over raw TCP (TCP connect, handshake, auth split; PBKDF2 computed every time) and ' +
    'through the official driver (connectionCreated → connectionReady; the driver caches PBKDF2 after its first connection ' +
    'per process). Reports round trips, the SCRAM iteration count the user\'s credential uses, connections per second in ' +
    'the storms, the server\'s auth counter deltas, and how many pooled pings one new connection costs. All connections ' +
    'go to one host from discovery (a replica set\'s primary, the standalone, or the router the URI names first). Plain TCP only for the driver-free split: with TLS it is skipped.'

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --mechanisms none,SCRAM-SHA-256 --connections 100 --parallel 20',
    '<%= config.bin %> <%= command.id %> --uri "mongodb://user:pw@db1:27017/?authSource=admin" --json',
  ]

  static override flags = {
    mechanisms: Flags.string({
      summary: `Comma list of ${AUTH_MECHANISMS.join(', ')} (default: none plus the SCRAM mechanisms the server offers and the URI's user has).`,
      helpGroup: 'AUTH',
    }),
    connections: Flags.integer({
      default: AUTH_DEFAULTS.connections,
      min: 1,
      max: 100_000,
      summary: 'New connections per mechanism, per pass (one at a time, then in storms), per path (driver-free, driver).',
      helpGroup: 'AUTH',
    }),
    parallel: Flags.integer({
      min: 1,
      max: 10_000,
      summary: `Connections opened at once in a storm (at most --connections; default ${AUTH_DEFAULTS.parallel}, or --connections when that is smaller).`,
      helpGroup: 'AUTH',
    }),
    pings: Flags.integer({
      default: AUTH_DEFAULTS.pings,
      min: 1,
      max: 1_000_000,
      summary: 'Pooled pings through one warm client: the unit of "one new connection costs K pooled pings".',
      helpGroup: 'AUTH',
    }),
  }

  async run(): Promise<AuthResult> {
    const {flags} = this
    const config = toAuthConfig(flags)
    // Imported once the flags are checked: oclif loads this file for a usage error, which must not load the driver.
    const [{measureAuth}, {renderAuth, renderAuthProgress}, {createProgress}] = await Promise.all([
      import('../src/auth/run-auth.js'),
      import('../src/reporters/auth.js'),
      import('../src/reporters/progress.js'),
    ])
    const target = await this.openTarget({auth: true})
    const progress = createProgress()
    let result: AuthResult
    try {
      result = await measureAuth(target, config, {
        signal: this.interruptSignal,
        onProgress: (text) => progress.update(renderAuthProgress(text)),
      })
    } finally {
      progress.stop()
    }
    this.logText((layout) => renderAuth(result, layout))
    if (result.interrupted) process.exitCode = this.interruptedExitCode
    else if (result.error) {
      // Stopped early (host gone, credentials refused): the partial figures are printed, the exit code says why.
      if (!this.jsonEnabled()) process.stderr.write(`${failureLine(result.error)}\n`)
      process.exitCode = result.error.exitCode
    }
    return result
  }

}

