import {TargetCommand} from '../../src/cli/base-command.js'
import {embeddedLocksCluster, embeddedLocksFlags, listAllFlag, lockExpiryFlag, lockFilterFlags, lockStateFlag} from '../../src/cli/locks-flags.js'
import {runLocksList} from '../../src/locks/list.js'
import type {LocksListResult} from '../../src/locks/types.js'
import {expiryMsOf, toLockFilter} from '../../src/parse/lock-filter.js'
import {renderLocksList} from '../../src/reporters/locks.js'

export default class LocksList extends TargetCommand<typeof LocksList> {
  static override summary = 'Show who blocks whom on every node (any topology), and a sharded cluster\'s distributed locks.'

  static override description =
    'Works on every topology. It finds every host with the one discovery and reads the node locks: on a standalone or ' +
    'replica set every data-bearing member, on a sharded cluster every shard primary and the config primary. Per ' +
    'node: $currentOp (allUsers, idle connections left out), serverStatus (locks, globalLock, tickets) and lockInfo ' +
    'where the role may run it (refused: the chains are inferred from $currentOp, and lockInfo says why). It prints ' +
    'the deployment\'s worst root blocker first with the db.killOp(<opid>) a DBA would run (a hint: pooltool never ' +
    'kills), then per node the blocking tree (each waiter under what blocks it, with how long it has waited at most), ' +
    'the cumulative lock waits by resource and mode since start, and the execution tickets. A node that cannot be ' +
    'read is listed with its error: unknown, never "no contention". Each read is bounded by --timeout-ms.\n\n' +
    'On a sharded cluster it also reads the distributed locks, through a mongos, directly on a config-server member ' +
    '(hello configsvr; mongodb://cfg1:27019/?directConnection=true), or, entered through a shard member, on the config ' +
    'server\'s primary: config.locks joined with config.lockpings (and config.mongos / config.shards for names): for ' +
    'each lock its state, holder process, who, why, since when, the holder\'s last ping, and a verdict — free, ' +
    'held, stale (the holder has not pinged for the 15 min expiry: the next DDL can overtake it), no-ping (the holder ' +
    'has no ping document) or balancer (the permanent lock of 3.4). `since` is said for what the lock\'s `when` is: a ' +
    'released lock\'s last grab ("last taken 40m ago"); for ConfigServer (3.4–4.4) the config primary\'s grab or its ' +
    'step-up; for the balancer lock a 3.4 primary\'s step-up, which a cluster upgraded from 3.4 keeps for years by design. ' +
    'Verdicts follow the holder\'s ping, ages the server\'s clock; a client/server clock skew above 5 s is one note. ' +
    'Shapes differ by version: 3.4–4.4 processes are host:port:epoch:random and ConfigServer; 5.0–6.0 processes are ' +
    'shard names and "config" with fixed lock ids. On 6.1+ (7.0, 8.0) distributed locks live in memory: the command ' +
    'says so and shows DDL operations from $currentOp (through a mongos: every shard\'s; on a config-server member: ' +
    'its own) and the DDL entries of serverStatus.locks on each discovered shard (a shard that cannot be read is ' +
    '"unknown", and the note says how many were read). A standalone or replica set has no distributed locks: ' +
    'distributedLocks says "not applicable" and their fields are absent. Read only.\n\n' +
    'JSON: {target, topology: standalone|replset|sharded, distributedLocks: read|"not applicable: …"|"unknown: …", ' +
    'serverVersion, message, now, nodes: [{host, role: standalone|primary|secondary|other|shard primary|config primary, ' +
    'shard?, setName?, readAt, version?, view: {node, blocking: {chainSource, chainSourceText, operations, edges, chains: ' +
    '[{root, killOpHint, waiterCount}], unexplainedWaiters, inferredEdgesNotInLockInfo}, waits, tickets} | null, ' +
    'error?: {code, message}, lockInfo: read|"refused: …"|not read}], rootBlockers: [{host, role, opid, waiterCount, ' +
    'runningMicros, killOpHint}], and on a sharded cluster: entry: mongos|config-server, clockSkewMS?, model, expiryMS, ' +
    'locks: [{name, state, process, who, why, since, sinceAgeMS, whenMeans: taken|last-taken|config-primary|' +
    'balancer-step-up, holderLastPing, verdict, ts, term?, heldMS, holderPingAgeMS, holder, whyKind}], ' +
    'pings: [{process, ping, ageMS, alive, holds, role, host}], inMemory?: {note, ddlOpsFrom: router|config-server, ' +
    'ddlOps: [{shard, host, opid, command, ns, runningMS, waitingForLock}], shardsFound, shardsRead, ' +
    'serverStatusLocks: [{shard, host, resources?, unavailable?}]}; notes, interrupted}.'

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --uri "mongodb://db1:27017,db2:27017/?replicaSet=rs0"   # who blocks whom on every member',
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
