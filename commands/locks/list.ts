import {TargetCommand} from '../../src/cli/base-command.js'
import {lockExpiryFlag, lockFilterFlags, lockStateFlag} from '../../src/cli/locks-flags.js'
import {runLocksList} from '../../src/locks/list.js'
import type {LocksListResult} from '../../src/locks/types.js'
import {expiryMsOf, toLockFilter} from '../../src/parse/lock-filter.js'
import {renderLocksList} from '../../src/reporters/locks.js'

export default class LocksList extends TargetCommand<typeof LocksList> {
  static override summary = 'Show the distributed locks of a sharded cluster, who holds them and whether they are stale.'

  static override description =
    'Reads config.locks joined with config.lockpings (and config.mongos / config.shards for names) through a mongos: ' +
    'for each lock its state, holder process, who, why, since when, the holder\'s last ping, and a verdict — free, ' +
    'held, stale (the holder has not pinged for the 15 min expiry: the next DDL can overtake it), no-ping (the holder ' +
    'has no ping document) or balancer (the permanent lock of 3.4). Shapes differ by version: 3.4–4.4 processes are ' +
    'host:port:epoch:random and ConfigServer; 5.0–6.0 processes are shard names and "config" with fixed lock ids. ' +
    'On 6.1+ (7.0, 8.0) distributed locks live in memory: the command says so and shows DDL operations from ' +
    '$currentOp and the DDL entries of serverStatus.locks instead. A replica set or standalone exits 7. Read only.'

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --state stale',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --db orders --json',
    '<%= config.bin %> sim --topology sharded --version-profile 4.4 --time-scale 0.01 --scenario dead-lock-holder   # then: <%= config.bin %> <%= command.id %> --uri <printed uri>',
  ]

  static override flags = {...lockFilterFlags, ...lockStateFlag, ...lockExpiryFlag}

  async run(): Promise<LocksListResult> {
    const {flags} = this
    const filter = toLockFilter(flags)
    const expiryMS = expiryMsOf(flags)
    const target = await this.openTarget({topology: 'sharded'})
    const result = await runLocksList(target, {filter, expiryMS})
    this.log(renderLocksList(result))
    return result
  }
}
