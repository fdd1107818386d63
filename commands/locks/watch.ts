import {Flags} from '@oclif/core'

import {TargetCommand} from '../../src/cli/base-command.js'
import {expiryMsOf, lockExpiryFlag, lockFilterFlags, toLockFilter} from '../../src/cli/locks-flags.js'
import {parseDurationMs} from '../../src/cli/parse.js'
import {usageError} from '../../src/errors.js'
import type {LocksWatchResult} from '../../src/locks/types.js'
import {runLocksWatch} from '../../src/locks/watch.js'
import {renderLockEvent, renderLocksWatch} from '../../src/reporters/locks.js'

export default class LocksWatch extends TargetCommand<typeof LocksWatch> {
  static override summary = 'Poll the locks and print each acquisition, release and overtake with its hold time.'

  static override description =
    'Polls config.locks (with the holders\' pings) every --interval and prints transitions as they happen: acquired, ' +
    'released (with how long it was held) and overtaken (a stale or ping-less holder\'s lock taken by someone else). ' +
    'Hold times are measured from the lock\'s `when` to the poll that saw it free, so they are accurate to one ' +
    'interval. Runs for --duration or until Ctrl-C, then prints hold-time percentiles per lock (--json: the summary ' +
    'with every event). On 6.1+ it follows DDL operations in $currentOp instead. Read only.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --duration 60s',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --db orders --interval 200ms',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --duration 5m --json > locks.json',
  ]

  static override flags = {
    duration: Flags.string({summary: 'Stop after this long, e.g. 30s, 5m (default: until Ctrl-C).'}),
    interval: Flags.string({default: '500ms', summary: 'Time between polls, e.g. 200ms, 1s.'}),
    ...lockFilterFlags,
    ...lockExpiryFlag,
  }

  async run(): Promise<LocksWatchResult> {
    const {flags} = this
    const intervalMs = parseDurationMs(flags.interval, 'interval', 'ms')
    if (intervalMs < 10) throw usageError(`--interval ${flags.interval} is too short`, 'poll at most every 10ms')
    const durationMs = flags.duration === undefined ? undefined : parseDurationMs(flags.duration, 'duration')
    const target = await this.openTarget({topology: 'sharded'})
    const json = this.jsonEnabled()
    const result = await runLocksWatch(
      target,
      {appName: flags['app-name'], timeoutMs: flags['timeout-ms'], expiryMS: expiryMsOf(flags)},
      {durationMs, intervalMs, filter: toLockFilter(flags)},
      {
        signal: this.interruptSignal,
        onStart: (info) => {
          if (!json) this.log(`${target.redactedUri}: ${info.message}`)
        },
        onEvent: (event) => {
          if (!json) this.log(renderLockEvent(event))
        },
      },
    )
    this.log(renderLocksWatch(result))
    return result
  }
}
