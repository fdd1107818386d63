import {Flags} from '@oclif/core'

import {TargetCommand} from '../../src/cli/base-command.js'
import type {ConnsListResult} from '../../src/conns/types.js'
import {noHostAnswered, runConnsList} from '../../src/conns/watch.js'
import {CONNS_DEFAULTS} from '../../src/defaults.js'
import {EXIT_CODES} from '../../src/errors.js'
import {connectionFieldsHelp, renderList} from '../../src/reporters/conns.js'
import {SIM_TOPOLOGIES, type SimTopology} from '../../src/sim/index.js'

export default class ConnsList extends TargetCommand<typeof ConnsList> {
  static override summary = 'One snapshot of server connection counts, outgoing pools, connection limits and who holds the connections, on every host.'

  static override description =
    'The same discovery and per-host figures as `conns watch`, polled once: serverStatus.connections with every ' +
    'field the server version has (absent ones stay absent), connPoolStats on every node that answers it (each pool by ' +
    'name and each remote host: in use/available/created/refreshing), and $currentOp with idle ' +
    'connections grouped by appName, client host and driver; the connection limit (current + available) and % used, ' +
    'explained: net.maxIncomingConnections (getCmdLineOpts) against 80% of the open-files limit (hostInfo.extra.maxOpenFiles), ' +
    'naming which binds ("unknown" where a command is refused); awaitingTopologyChanges above current flagged as the ' +
    'SERVER-62082 counter defect; arbiters (role arbiter) and passive members listed with their role; lock ' +
    'queues (globalLock.currentQueue, activeClients). The node the URI reached is polled through the address you gave; ' +
    'a discovered host that does not answer is "not reachable from here". Two names of one process are listed once. ' +
    `Every column, in words (the JSON keeps the server's names): ${connectionFieldsHelp()}. ` +
    'Holders are classified from $currentOp: application pool connections, driver monitors (a parked awaitable hello: topologyVersion + maxAwaitTimeMS), ' +
    'their round-trip-time connections (one per streaming monitor, idle between pings), internal (NetworkInterfaceTL, MongoDB Internal Client) and pooltool\'s own; ' +
    'summed over every host (cluster-wide holders: per holder, app, client host and driver) with the MongoClient instances the monitors imply, and verdicts that name the fix ' +
    '(one client per process; maxIdleTimeMS; ShardingTaskExecutorPool*), each with its evidence. The churn baseline is totalCreated over serverStatus.uptime. ' +
    'Rates (lock waits too) need two polls: use `conns watch` for them. Exit 4 when no host answered.\n\n' +
    '--json: {target, topology: {kind, setName?, sources, warnings, staleRouters, configMongosCount?, entry?, ' +
    'routerVersions?, replayOf?, hiddenMembersVisible?}, at, roundMS, hosts: [{host, role, setName?, shard?, memberState?, passive?, hidden?, entry?, address?, aliases?, ' +
    'mongoVersion?, tags?, state, error?, reachedFromHere?, clockSkewMS?, current, available, totalCreated, <fields this ' +
    'version sends>, maxIncoming?, usedPct?, lockQueue?: {total, readers, writers}, activeClients?: {total, readers, ' +
    'writers}, pools?: {totals, shards, byPool: [{pool, inUse, available, created, refreshing, leased?, refreshed?, ' +
    'wasNeverUsed?, acquisitionWaitTimes?, hosts: [{host, …}]}], byHost: [{host, inUse, …}], acquisitionWaitTimes?: ' +
    '{totalCount, buckets: [{range, fromMS?, toMS?, count}], waitedAtLeast50MS}}, incomingLimit?: {effective, ' +
    'maxIncomingConnections?, maxIncomingConnectionsSet?, maxIncomingConnectionsUnknown?, maxOpenFiles?, openFilesCap?, ' +
    'maxOpenFilesUnknown?, binds, inferred?, explanation}, counterDefects?: [{field, value, current, ticket, cause}], ' +
    'holders?: [{appName, client, driver, count, own?, kind?, monitors?, rttPingers?, pool?}], holdersUnavailable?, poolsUnavailable?, uptimeSec?, createdPerSecSinceStart?}], ' +
    'clusterHolders?: {hostsRead, hostsUnread, holders: [{appName, client, driver, kind, count, hosts, perHost, monitoring?, pool?, monitors?, monitorsPerHost?, impliedClients?}], ' +
    'byApp, byClient, byDriver: [{name, count, monitoring?, hosts}], totals: {application, internal, pooltool, monitoring?, pool?}}, ' +
    'verdicts: [{kind, holder?, host?, impliedClients?, verdict, evidence}], notes, interrupted}. A figure the server does ' +
    'not send is absent, never 0.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017',
    "<%= config.bin %> <%= command.id %> --uri 'mongodb://localhost:27017/?directConnection=true'   # a member through kubectl port-forward",
    '<%= config.bin %> <%= command.id %> --json | jq \'.hosts[] | {host, current, holders}\'',
  ]

  static override flags = {
    holders: Flags.boolean({default: true, allowNo: true, summary: 'Read who holds the connections ($currentOp with idle connections); --no-holders skips it.'}),
    discover: Flags.boolean({default: true, allowNo: true, summary: "Find every host of the cluster from the entry point; --no-discover polls the URI's hosts only.", helpGroup: 'CONNECTION'}),
    'sim-topology': Flags.string({options: [...SIM_TOPOLOGIES], default: CONNS_DEFAULTS.simTopology, summary: 'Embedded cluster only (no --uri): its shape.', helpGroup: 'CONNECTION'}),
  }

  async run(): Promise<ConnsListResult> {
    const {flags} = this
    const target = await this.openTarget({topology: flags['sim-topology'] as SimTopology})
    const result = await runConnsList(target, {holders: flags.holders, discover: flags.discover, signal: this.interruptSignal})
    this.logText((layout) => renderList(result, layout))
    // Stopped before every host answered: the hosts that did, and the stop's exit code (130 for Ctrl-C).
    if (result.interrupted) process.exitCode = this.interruptedExitCode
    // Nothing answered: the same class as an entry point that cannot be reached (exit 4), with the figures we have.
    else if (noHostAnswered(result)) process.exitCode = EXIT_CODES.unreachable
    return result
  }
}
