import {TargetCommand} from '../../src/cli/base-command.js'
import {embeddedLocksCluster, embeddedLocksFlags, listAllFlag, lockExpiryFlag} from '../../src/cli/locks-flags.js'
import {runLocksPings} from '../../src/locks/list.js'
import type {LocksPingsResult} from '../../src/locks/types.js'
import {expiryMsOf} from '../../src/parse/lock-filter.js'
import {renderLocksPings} from '../../src/reporters/locks.js'

export default class LocksPings extends TargetCommand<typeof LocksPings> {
  static override summary = 'Show every process that pings config.lockpings: last ping age, alive or dead, what it holds.'

  static override description =
    'Each mongos, shard and config server process upserts its config.lockpings document every 30 s (3.4–4.4: one per ' +
    'process instance, host:port:epoch:random — a restarted process leaves its old document behind; ConfigServer is ' +
    'whichever config member is primary; 5.0–6.0: one per shard name plus "config"). A process is alive while its ' +
    'ping is younger than 3 intervals (on the server\'s clock); the locks it holds are listed beside it. Read through ' +
    'a mongos or directly on a config-server member; a shard member exits 7 naming its config server. A replica set ' +
    'or standalone exits 7: config.lockpings is a sharded cluster\'s config-server collection and cannot exist there ' +
    '(locks list shows their node locks). On 6.1+ there is nothing to show: the collections are gone by design. Read only.\n\n' +
    'JSON: {target, entry: mongos|config-server, clockSkewMS?, serverVersion, model, message, now, pingIntervalMS, ' +
    'pings: [{process, ping, ageMS, alive, holds, role, host, processStarted?}], notes, interrupted}.'

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --json',
  ]

  static override flags = {...lockExpiryFlag, ...listAllFlag, ...embeddedLocksFlags}

  async run(): Promise<LocksPingsResult> {
    const {flags} = this
    // Checked before the embedded cluster starts.
    const expiryMS = expiryMsOf(flags)
    const target = await this.openTarget(embeddedLocksCluster(flags))
    const result = await runLocksPings(target, {expiryMS})
    this.logText((layout) => renderLocksPings(result, layout, {all: flags.all}))
    return result
  }
}
