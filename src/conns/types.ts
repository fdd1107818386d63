/**
 * `pooltool conns watch` / `conns list`: the discovered cluster, one poll of
 * one host, and the results (the `--json` contract; the names `target`,
 * `hosts[].host|role|samples|current|totalCreatedRate|rejected|neverShrank|
 * holders` and `alerts` are fixed: scripts read them). A figure the server version
 * does not report stays absent (undefined, omitted from JSON), never 0.
 */
import type {ConnectionsStatus, ReadersWriters} from '../probes/server-status.js'
import type {ResultEnvelope} from '../result.js'
import type {CounterDefect} from './counter-defects.js'
import type {IncomingLimit} from './incoming-limit.js'
import type {ClusterHost, ClusterTopology, HostRole, TopologyKind} from '../probes/topology.js'

export type {ClusterHost, ClusterTopology, CounterDefect, HostRole, IncomingLimit, ReadersWriters, TopologyKind}

/** Who a host is, as discovery found it: shared by samples and summaries. */
export interface HostIdentity {
  host: string
  role: HostRole
  setName?: string
  shard?: string
  /** The node the URI reached: polled through the address the user gave. */
  entry?: true
  /** Where pooltool connects when that is not `host` (the entry node's address as the user gave it). */
  address?: string
  /** Other names of the same process (same `serverStatus.host`), polled once under `host`. */
  aliases?: string[]
  /** Routers: the version the router wrote to `config.mongos`. */
  mongoVersion?: string
  /** Shard members: the shard's zone tags. */
  tags?: string[]
  /** Replica-set member listed in hello's `passives` (priority 0). */
  passive?: true
  /** Replica-set member that says `hidden: true` of itself (only a hidden entry node is known: hello lists no hidden member). */
  hidden?: true
}

/**
 * Per-host figures beyond serverStatus.connections (absent when the server does not send them,
 * e.g. a mongos has no globalLock): the connection limit, lock queues and lock-wait rates.
 */
export interface HostLoadFigures {
  /** The most connections the server accepts now: current + available (+ queuedForEstablishment); the smaller of net.maxIncomingConnections and the OS limit. */
  maxIncoming?: number
  /** current as a percentage of maxIncoming. */
  usedPct?: number
  /** globalLock.currentQueue: operations waiting for a lock. */
  lockQueue?: ReadersWriters
  /** globalLock.activeClients (system threads included). */
  activeClients?: ReadersWriters
  /** serverStatus.locks acquireWaitCount (every resource and mode) per second since the previous answer. */
  lockWaitsPerSec?: number
  /** serverStatus.locks timeAcquiringMicros (every resource and mode) per second since the previous answer: µs spent waiting per second. */
  lockWaitUsPerSec?: number
}

/** Counts of one outgoing pool (or a sum of them) from `connPoolStats`. */
export interface PoolCounts {
  inUse: number
  available: number
  created: number
  refreshing: number
  /** Present when the server reports it. */
  leased?: number
  /** 7.x code; not in the docs' field list. */
  refreshed?: number
  /** Connections closed without ever being used (`wasNeverUsed`; newer servers, behind featureFlagConnHealthMetrics). */
  wasNeverUsed?: number
}

/** connPoolStats `acquisitionWaitTimes` (6.3+): how long acquiring a connection from the pool waited. */
export interface AcquisitionWaitTimes {
  totalCount: number
  /** Non-empty buckets in the server's order: its range label and bounds in ms (absent: -inf / inf). */
  buckets: Array<{range: string; fromMS?: number; toMS?: number; count: number}>
  /** Acquisitions that waited 50 ms or more (buckets from [50ms, …) on). */
  waitedAtLeast50MS: number
}

/** One remote host of a pool (or over every pool: `byHost`). */
export interface PoolHostDetail extends PoolCounts {
  host: string
  acquisitionWaitTimes?: AcquisitionWaitTimes
}

/** One pool by name (`NetworkInterfaceTL-TaskExecutorPool-0`, `NetworkInterfaceTL-ShardRegistry`, `NetworkInterfaceTL-ReplNetwork`, `global` …). */
export interface PoolDetail extends PoolCounts {
  pool: string
  hosts: PoolHostDetail[]
  acquisitionWaitTimes?: AcquisitionWaitTimes
}

/** A node's outgoing pools, from `connPoolStats` (every node that answers it: routers, shard, config and replica-set members). */
export interface ConnPoolStatsSummary {
  totals: PoolCounts
  /** Summed over each shard's hosts (and `config` for the config server); hosts no shard claims go under their host:port. */
  shards: Array<PoolCounts & {shard: string; hosts: number}>
  /** Each pool by name, with its remote hosts (`pools` of connPoolStats). */
  byPool?: PoolDetail[]
  /** Each remote host over every pool (`hosts` of connPoolStats, else the pools' host entries summed). */
  byHost?: PoolHostDetail[]
  /** Over every pool (6.3+). */
  acquisitionWaitTimes?: AcquisitionWaitTimes
  /** DBClient (sync) pools. */
  numClientConnections?: number
  numAScopedConnections?: number
  replicaSetMatchingStrategy?: string
}

/** Who holds connections on a host: `$currentOp` (idle connections included) grouped. */
export interface Holder {
  /** appName from the handshake ("(none)" when the client sent none). */
  appName: string
  /** Client host, without the port. */
  client: string
  /** clientMetadata.driver.name ("(unknown)" when absent). */
  driver: string
  count: number
  /** pooltool conns's own polling connections. */
  own?: boolean
  /** application (a driver's), internal (the server's own: NetworkInterfaceTL, MongoDB Internal Client) or pooltool (ours). */
  kind?: HolderKind
  /** Driver monitors: parked awaitable hellos (topologyVersion + maxAwaitTimeMS), one per MongoClient monitoring this host. Absent: not read. */
  monitors?: number
  /** Round-trip-time connections of streaming monitors (one per monitor, counted out of the idle connections). Absent: not read. */
  rttPingers?: number
  /** The rest: operation pool connections (count − monitors − rttPingers). Absent: not read. */
  pool?: number
}

export type HolderKind = 'application' | 'internal' | 'pooltool'

/** `unreachable`: no answer (down, restarting, network); `unauthorized`: answered but refused serverStatus. */
export type HostState = 'ok' | 'unreachable' | 'unauthorized'

/** One host at one poll round (`--ndjson` prints one per line, with `type: "sample"`). */
export interface HostSample extends Partial<ConnectionsStatus>, HostIdentity, HostLoadFigures {
  /** For members of a replica set (including shards and the config server): primary / secondary / other. */
  memberState?: 'primary' | 'secondary' | 'other'
  state: HostState
  /** Why the host did not answer (unreachable), one line, credentials scrubbed. */
  error?: string
  /** false: the host has not answered once since the start (a name that does not resolve or route from here); absent once it has. */
  reachedFromHere?: false
  /** Server clock minus this machine's, ms (serverStatus localTime). */
  clockSkewMS?: number
  /** totalCreated growth per second since this host's previous answer; absent on the first answer and after a restart. */
  totalCreatedRatePerSec?: number
  /** totalCreated went down: the server restarted since the previous answer. */
  counterReset?: boolean
  /** serverStatus.uptime (seconds since the process started). */
  uptimeSec?: number
  /** The lifetime churn baseline: totalCreated ÷ uptime, connections per second since the process started. */
  createdPerSecSinceStart?: number
  /** Outgoing pools (connPoolStats): a router's to the shards and the config server, a member's ReplNetwork and sharding pools. */
  pools?: ConnPoolStatsSummary
  /** The connection limit explained: net.maxIncomingConnections (getCmdLineOpts) against 80% of the open-files limit (hostInfo), which binds. */
  incomingLimit?: IncomingLimit
  /** Counters that cannot be true, with their known cause (e.g. awaitingTopologyChanges above current: SERVER-62082). */
  counterDefects?: CounterDefect[]
  holders?: Holder[]
  /** Why holders (or pools) are not shown: e.g. the user may not run $currentOp with allUsers. */
  holdersUnavailable?: string
  poolsUnavailable?: string
  /** The never-shrank detector's verdict so far. */
  neverShrank?: boolean
}

export interface RoundSample {
  round: number
  /** ISO time the round started. */
  at: string
  /** Since the watch started. */
  elapsedMS: number
  /** How long the round took (every host answered or the round's deadline passed). */
  roundMS: number
  hosts: HostSample[]
  /** This round's holders summed over every host (absent with --no-holders). */
  clusterHolders?: ClusterHolders
  /** Client-per-request leaks seen in this round's holders. */
  verdicts?: ConnsVerdict[]
}

export type AlertMetric = 'rate' | 'current' | 'available' | 'active' | 'rejected'

/** An `--alert` rule that fired on a host (edge-triggered: once per crossing). */
export interface ConnsAlert {
  /** ISO time of the round in which it fired. */
  at: string
  round: number
  host: string
  /** The rule as written, e.g. "rate>50/s". */
  rule: string
  metric: AlertMetric
  /** The value that crossed the limit, in the rule's unit. */
  value: number
  limit: number
  unit: '/s' | '%' | ''
}

/** Why a host was flagged as a pool that never shrinks. */
export interface NeverShrankDetail {
  /** Connections when creation stopped. */
  levelAtQuiet: number
  /** The lowest count since then. */
  minSinceQuiet: number
  /** The lowest count before the growth. */
  baseline: number
  /** How long totalCreated has not moved. */
  quietForMS: number
  /** Who held the host's connections when it was judged (from the holders; absent when they were not read). */
  heldBy?: {
    applications: number
    cluster: number
    /** Of the applications' connections, monitoring ones (parked monitors and their RTT connections): maxIdleTimeMS never closes them. Absent: not read. */
    applicationMonitoring?: number
    /** The application holder with the most parked monitors on this host: `clients` MongoClient instances monitor it. */
    topMonitoring?: {appName: string; client: string; driver: string; clients: number}
  }
  /**
   * Held mostly by the cluster's own pools: a router's ShardingTaskExecutorPool* parameters, read
   * (getParameter) from the router named, or why they could not be.
   */
  routerPools?: {router: string; parameters: Record<string, number>} | {router: string; unavailable: string}
}

export interface ConnsHostSummary extends HostIdentity {
  /** Successful polls. */
  samples: number
  /** Rounds in which the host did not answer. */
  unreachableRounds: number
  /** At the end of the watch. */
  state: HostState
  /** false: the host never answered during the watch (not reachable from here). */
  reachedFromHere: boolean
  lastError?: string
  /** Server clock minus this machine's, ms, at the last answer. */
  clockSkewMS?: number
  current: {min?: number; max?: number; last?: number}
  /** totalCreated growth, connections per second. */
  totalCreatedRate: {max?: number; mean?: number}
  /** Connections created during the watch (restarts accounted for). */
  created?: number
  /** serverStatus.uptime at the last answer (seconds). */
  uptimeSec?: number
  /** totalCreated at the last answer. */
  totalCreatedSinceStart?: number
  /** The lifetime churn baseline at the last answer: totalCreated ÷ uptime (/s), to hold totalCreatedRate against. */
  createdPerSecSinceStart?: number
  /** Connections the server rejected during the watch; absent when the server version does not report it (before 6.3). */
  rejected?: number
  neverShrank: boolean
  neverShrankDetail?: NeverShrankDetail
  /** The last answer's serverStatus.connections, with every field this server version has. */
  last?: Partial<ConnectionsStatus>
  /** The connection limit at the last answer (current + available). */
  maxIncoming?: number
  /** current as a percentage of the limit: highest and last. */
  usedPct: {max?: number; last?: number}
  /** globalLock.currentQueue.total: highest and last (absent on a mongos). */
  lockQueueTotal: {max?: number; last?: number}
  /** Lock waits per second (serverStatus.locks acquireWaitCount): highest and mean. */
  lockWaitsPerSec: {max?: number; mean?: number}
  /** µs spent waiting for locks per second (serverStatus.locks timeAcquiringMicros): highest and mean. */
  lockWaitUsPerSec: {max?: number; mean?: number}
  /** The last connPoolStats (every node that answers it). */
  pools?: ConnPoolStatsSummary
  /** Why connPoolStats was not available at the last answer (e.g. Unauthorized). */
  poolsUnavailable?: string
  /** The connection limit at the last answer, explained (see HostSample.incomingLimit). */
  incomingLimit?: IncomingLimit
  /** Counters that could not be true at the last answer. */
  counterDefects?: CounterDefect[]
  /** From the last answer (empty when not read). */
  holders: Holder[]
  holdersUnavailable?: string
  /** Alerts fired on this host. */
  alerts: number
}

export interface ConnsTopologySummary {
  kind: TopologyKind
  setName?: string
  sources: string[]
  warnings: string[]
  staleRouters: Array<{host: string; lastPing?: string; mongoVersion?: string}>
  /** Documents in config.mongos when read: 0 means no router has ever registered. */
  configMongosCount?: number
  /** The node the URI reached, as the cluster names it and as the user addressed it. */
  entry?: {host: string; address: string; role: HostRole}
  /** Router versions from config.mongos: version → routers (more than one key is a version mix). */
  routerVersions?: Record<string, string[]>
  /** The target is `pooltool sim --replay` serving a snapshot captured at this time. */
  replayOf?: {capturedAt: string}
  /**
   * A replica set: true when replSetGetConfig listed its hidden members (polled with role secondary, `hidden`);
   * false when it could not be read: hello lists no hidden member, so they are not polled unless the URI names one.
   */
  hiddenMembersVisible?: boolean
}

/** `conns watch --json` (and the `--ndjson` summary): the shared envelope (target, notes, interrupted) and the watch's figures. */
export interface ConnsWatchResult extends ResultEnvelope {
  topology: ConnsTopologySummary
  intervalMS: number
  idleWindowMS: number
  startedAt: string
  durationMS: number
  rounds: number
  /** Poll round duration: the cost of one round over every host. */
  roundMS: {max?: number; mean?: number}
  hosts: ConnsHostSummary[]
  alerts: ConnsAlert[]
  /** Firings per rule. */
  alertCounts: Record<string, number>
  /** The last holders of every host summed per holder, app, client host and driver (absent with --no-holders). */
  clusterHolders?: ClusterHolders
  /** What the connections say and the fix, each with its evidence: client-per-request leaks, never-shrank hosts by who holds them. */
  verdicts: ConnsVerdict[]
}

/** `conns list --json`: the shared envelope and one round over every host. */
export interface ConnsListResult extends ResultEnvelope {
  topology: ConnsTopologySummary
  at: string
  roundMS: number
  hosts: HostSample[]
  /** Every host's holders summed per holder, app, client host and driver (absent with --no-holders). */
  clusterHolders?: ClusterHolders
  /** What the connections say and the fix, each with its evidence (client-per-request leaks). */
  verdicts: ConnsVerdict[]
}

/** One holder (appName, client host, driver) over every host read. */
export interface ClusterHolder {
  appName: string
  client: string
  driver: string
  kind: HolderKind
  /** Connections over every host read. */
  count: number
  /** Hosts on which it holds connections. */
  hosts: number
  /** Connections per host (host → count). */
  perHost: Record<string, number>
  /** Monitoring connections (monitors + their RTT connections), pool connections, parked monitors: over every host; absent when a host's split was not read. */
  monitoring?: number
  pool?: number
  monitors?: number
  /** Parked monitors per host (host → count): one per MongoClient monitoring that host. */
  monitorsPerHost?: Record<string, number>
  /**
   * MongoClient instances implied: the most parked monitors it has on one host (each client keeps
   * exactly one monitor on every member it monitors, so that member counts every client; it is
   * monitoring connections ÷ (2 streaming, 1 polling) ÷ members reached when every client sees every member).
   */
  impliedClients?: number
}

/** A ranking line: connections of one app (or client host, or driver) over every host. */
export interface HolderTotal {
  name: string
  count: number
  /** Monitoring connections among them, when known for every part. */
  monitoring?: number
  hosts: number
}

export interface ClusterHolders {
  /** Hosts whose holders were read; the sums are over them only. */
  hostsRead: string[]
  /** Hosts whose holders were not read (unreachable, refused, --no-holders): their connections are unknown, not none. */
  hostsUnread: string[]
  holders: ClusterHolder[]
  byApp: HolderTotal[]
  byClient: HolderTotal[]
  byDriver: HolderTotal[]
  /** Connections by class over every host read; monitoring / pool absent when some application holder's split was not read. */
  totals: {application: number; internal: number; pooltool: number; monitoring?: number; pool?: number}
}

export type VerdictKind = 'client-per-request' | 'idle-pool' | 'router-pools'

/** What a holder's connections say, the fix, and the figures it rests on. */
export interface ConnsVerdict {
  kind: VerdictKind
  /** The holder (appName@client (driver)) it is about; absent for a host's verdict. */
  holder?: {appName: string; client: string; driver: string}
  /** The host it is about (idle-pool, router-pools: a never-shrank host). */
  host?: string
  impliedClients?: number
  /** One line: the pattern and its fix. */
  verdict: string
  /** The figures it rests on. */
  evidence: string
}
