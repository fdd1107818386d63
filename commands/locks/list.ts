import {TargetCommand} from '../../src/cli/base-command.js'
import {embeddedLocksCluster, embeddedLocksFlags, listAllFlag, lockExpiryFlag, lockFilterFlags, lockStateFlag} from '../../src/cli/locks-flags.js'
import {runLocksList} from '../../src/locks/list.js'
import type {LocksListResult} from '../../src/locks/types.js'
import {expiryMsOf, toLockFilter} from '../../src/parse/lock-filter.js'
import {renderLocksList} from '../../src/reporters/locks.js'

export default class LocksList extends TargetCommand<typeof LocksList> {
  static override summary = 'Show the distributed locks of a sharded cluster, who holds them and whether they are stale.'

  static override description =
    'Reads config.locks joined with config.lockpings (and config.mongos / config.shards for names) through a mongos, ' +
    'or directly on a config-server member (hello configsvr; mongodb://cfg1:27019/?directConnection=true), where they ' +
    'live: for each lock its state, holder process, who, why, since when, the holder\'s last ping, and a verdict — free, ' +
    'held, stale (the holder has not pinged for the 15 min expiry: the next DDL can overtake it), no-ping (the holder ' +
    'has no ping document) or balancer (the permanent lock of 3.4). `since` is said for what the lock\'s `when` is: a ' +
    'released lock\'s last grab ("last taken 40m ago"); for ConfigServer (3.4–4.4) the config primary\'s grab or its ' +
    'step-up; for the balancer lock a 3.4 primary\'s step-up, which a cluster upgraded from 3.4 keeps for years by design. ' +
    'Verdicts follow the holder\'s ping, ages the server\'s clock; a client/server clock skew above 5 s is one note. ' +
    'Shapes differ by version: 3.4–4.4 processes are host:port:epoch:random and ConfigServer; 5.0–6.0 processes are ' +
    'shard names and "config" with fixed lock ids. On 6.1+ (7.0, 8.0) distributed locks live in memory: the command ' +
    'says so and shows DDL operations from $currentOp (through a mongos: every shard\'s; on a config-server member: ' +
    'its own) and the DDL entries of serverStatus.locks on each discovered shard (a shard that cannot be read is ' +
    '"unknown", and the note says how many were read). A shard member exits 7 naming its config server ' +
    '(serverStatus.sharding); a replica set or standalone exits 7. Read only.\n\n' +
    'JSON: {target, entry: mongos|config-server, clockSkewMS?, serverVersion, model, message, now, expiryMS, ' +
    'locks: [{name, state, process, who, why, since, sinceAgeMS, whenMeans: taken|last-taken|config-primary|' +
    'balancer-step-up, holderLastPing, verdict, ts, term?, heldMS, holderPingAgeMS, holder, whyKind}], ' +
    'pings: [{process, ping, ageMS, alive, holds, role, host}], inMemory?: {note, ddlOpsFrom: router|config-server, ' +
    'ddlOps: [{shard, host, opid, command, ns, runningMS, waitingForLock}], shardsFound, shardsRead, ' +
    'serverStatusLocks: [{shard, host, resources?, unavailable?}]}, notes, interrupted}.'

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --state stale',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --db orders --json',
    '<%= config.bin %> <%= command.id %> --uri "mongodb://cfg1:27019/?directConnection=true"   # a config-server member',
    '<%= config.bin %> sim --topology sharded --version-profile 4.4 --time-scale 0.01 --scenario dead-lock-holder   # then: <%= config.bin %> <%= command.id %> --uri <printed uri>',
  ]

  static override flags = {...lockFilterFlags, ...lockStateFlag, ...lockExpiryFlag, ...listAllFlag, ...embeddedLocksFlags}

  async run(): Promise<LocksListResult> {
    const {flags} = this
    const filter = toLockFilter(flags)
    const expiryMS = expiryMsOf(flags)
    const target = await this.openTarget(embeddedLocksCluster(flags))
    const result = await runLocksList(target, {filter, expiryMS})
    this.logText((layout) => renderLocksList(result, layout, {all: flags.all}))
    return result
  }
}
