/**
 * `pooltool locks`: the result contracts (names fixed by the issue; units in field names).
 * Every result shares the envelope of src/result.ts: `target`, `notes`, `interrupted`.
 */
import type {ResultEnvelope} from '../result.js'
import type {NodeLockEpisodesSummary, NodeLocksView} from './node/types.js'

/** Where a cluster keeps its DDL locks (config.locks up to 6.0, the in-memory DDLLockManager from 6.1). */
export type LockModel = 'config.locks' | 'in-memory' | 'unsupported'

/**
 * free: unlocked · held: locked by a process that pings · stale: the holder's ping is older
 * than the expiry (15 min), so the next acquirer can overtake it · no-ping: locked by a
 * process with no ping document (nothing moves its expiry clock) · balancer: the 3.4
 * balancer's permanent lock.
 */
export type LockVerdict = 'free' | 'held' | 'stale' | 'no-ping' | 'balancer'
export const LOCK_VERDICTS: readonly LockVerdict[] = ['free', 'held', 'stale', 'no-ping', 'balancer']

export type LockStateName = 'unlocked' | 'lock-prep' | 'locked'

/**
 * What a lock's `when` (`since`) is, so an age is read for what it is:
 * - taken: a held lock's grab or overtake by its holder;
 * - last-taken: a released lock's last grab (unlocking sets only `state: 0`: when it was freed is not recorded);
 * - config-primary: held by `ConfigServer` (3.4 – 4.4): when the config server primary took it, which is the
 *   operation's start, or that primary's step-up for a migration lock it re-took from config.migrations;
 * - balancer-step-up: the 3.4 balancer's lock, claimed by each new config server primary at its step-up and held
 *   while it is primary; 3.6+ neither takes nor frees it, so a cluster upgraded from 3.4 keeps it for years.
 */
export type LockWhenMeaning = 'taken' | 'last-taken' | 'config-primary' | 'balancer-step-up'

/** Where the locks were read: through a mongos, or directly on a config-server member (hello `configsvr`). */
export type LocksEntry = 'mongos' | 'config-server'

export interface LockRow {
  /** `_id`: a database, a namespace, or "balancer". */
  name: string
  state: LockStateName
  process: string | null
  who: string | null
  why: string | null
  /** `when` of the last grab or overtake (ISO), null when absent; `whenMeans` says what that instant is. */
  since: string | null
  /** now − since on the server's clock, whatever the state (a released lock: how long ago it was last taken). */
  sinceAgeMS: number | null
  whenMeans: LockWhenMeaning | null
  /** The holder's `config.lockpings` ping (ISO), null when it has none. */
  holderLastPing: string | null
  verdict: LockVerdict
  /** Lock session id (hex). */
  ts: string | null
  /** 5.0+: replica-set term of the shard that took it. */
  term?: number
  /** now − since, for locked locks (null for released ones: see sinceAgeMS). */
  heldMS: number | null
  holderPingAgeMS: number | null
  /** The holder as config.mongos / config.shards name it ("mongos 10.0.0.5:27017", "shard01", "config server"). */
  holder: string | null
  /** The `why` sorted into a family (matched case-insensitively: wording differs by version). */
  whyKind: WhyKind | null
}

export interface PingRow {
  process: string
  ping: string | null
  ageMS: number | null
  alive: boolean
  /** Lock names this process holds (state != 0). */
  holds: string[]
  role: 'mongos' | 'shard' | 'config' | 'unknown'
  /** host:port for `host:port:epoch:random` ids, the shard's host for 5.0+ shard names. */
  host: string | null
  /** For `host:port:epoch:random` ids: when that process instance started (ISO). */
  processStarted?: string
}

/** One DDL lock resource of serverStatus.locks, its modes summed. */
export interface DdlLockEntry {
  acquireCount: number
  acquireWaitCount: number
  timeAcquiringMicros: number
}

/** One shard's serverStatus.locks DDL entries (read from the first host discovery lists for it). */
export interface ShardDdlLocks {
  shard: string
  host: string
  /** Absent when serverStatus could not be read there (unknown, never "none"). */
  resources?: Record<string, DdlLockEntry>
  /** Why serverStatus could not be read there (credentials redacted). */
  unavailable?: string
}

/** What replaced config.locks on 6.1+: DDL operations and serverStatus.locks DDL entries. */
export interface InMemoryView {
  /** One line for humans: what was found, and over which part of the cluster. */
  note: string
  /**
   * Where the DDL operations come from: `router` ($currentOp through a mongos: every shard's operations), or
   * `config-server` (a config-server entry: $currentOp there shows only that node's own operations).
   */
  ddlOpsFrom: 'router' | 'config-server'
  ddlOps: DdlOpRow[]
  /** Shards discovery found, and how many of them answered serverStatus. */
  shardsFound: number
  shardsRead: number
  serverStatusLocks: ShardDdlLocks[]
}

export interface DdlOpRow {
  shard: string | null
  host: string | null
  opid: string
  command: string
  ns: string | null
  /** From `microsecs_running`; null when the document does not say (a coordinator's own entry). */
  runningMS: number | null
  waitingForLock: boolean
}

export interface LockTiming {
  /** Expiry used for the stale verdict (15 min × the simulated time scale, or --lock-expiry). */
  expiryMS: number
  /** Pinger interval (30 s × time scale). A process is alive while its ping is younger than 3 intervals. */
  pingIntervalMS: number
}

/** What list, pings and watch all carry about where and on which clock they read. */
export interface LocksReadContext {
  /** Where the locks were read (a mongos, or a config-server member directly). */
  entry: LocksEntry
  /** The entry's clock minus this machine's (ms), from the session's hello; absent when the reply had no clock. Above 5 s it is also a note. */
  clockSkewMS?: number
}

/** What a node is in its deployment, as read: a sharded cluster's node locks are read on the primaries. */
export type NodeLocksRole = 'standalone' | 'primary' | 'secondary' | 'other' | 'shard primary' | 'config primary'

export interface NodeReadError {
  /** pooltool's error code (UNREACHABLE, UNAUTHORIZED, SERVER_ERROR …; NO_PRIMARY: a set answered without a primary). */
  code: string
  /** Credentials redacted. */
  message: string
}

/**
 * One node's lock contention (`nodes[]` of list and watch): the view of src/locks/node, or null with
 * the error when the node could not be read (its locks are unknown, never "no contention").
 */
export interface NodeLocksEntry {
  /** host:port as the deployment names it. */
  host: string
  role: NodeLocksRole
  /** Shard id (a sharded cluster's shard primaries). */
  shard?: string
  setName?: string
  /** The node's clock (serverStatus localTime) at the read (ISO); null when it was not read. */
  readAt: string | null
  /** serverStatus `version` (absent when the node was not read). */
  version?: string
  view: NodeLocksView | null
  error?: NodeReadError
  /**
   * read: lockInfo's granted/pending lists decided the chains · `refused: <why>`: the role, the server
   * or a replay would not run it, so the chains are inferred from $currentOp · not read: the node was not.
   */
  lockInfo: 'read' | `refused: ${string}` | 'not read'
}

/** A root blocker somewhere in the deployment (`rootBlockers`, worst first). */
export interface RootBlocker {
  host: string
  role: NodeLocksRole
  opid: number | string
  /** Operations it blocks, directly or not. */
  waiterCount: number
  runningMicros: number | null
  /** `db.killOp(<opid>)`, to run on `host`, where killOp is the manual's way to end it; else null (see stopHint). */
  killOpHint: string | null
  /** How a DBA would end it (killOp, dropIndexes for an index build, fsyncUnlock), or why not: a hint only, pooltool never kills. */
  stopHint: string
}

/** standalone and replset keep no distributed locks; a sharded cluster's are read through a mongos or its config server. */
export type LocksTopology = 'standalone' | 'replset' | 'sharded'

/**
 * read: the distributed-lock fields are set · `not applicable: <why>` (standalone, replica set: those
 * fields are absent) · `unknown: <why>`: a sharded cluster whose config server could not be read from here.
 */
export type DistributedLocksState = 'read' | `not applicable: ${string}` | `unknown: ${string}`

/** Where and how list and watch read the node locks, beside the distributed locks. */
export interface NodeLocksContext {
  topology: LocksTopology
  distributedLocks: DistributedLocksState
}

export interface LocksListResult extends ResultEnvelope, Partial<LocksReadContext>, NodeLocksContext {
  /** The entry's version (on a standalone or replica set: the entry node's). */
  serverVersion: string
  /** Absent where distributed locks do not apply (standalone, replica set). */
  model?: LockModel
  /** One line explaining what was read (the lock model, or why there are no distributed locks). */
  message: string
  /** The entry's clock (hello.localTime, or the entry node's serverStatus) at the snapshot: every age is measured on it. */
  now: string
  expiryMS?: number
  locks?: LockRow[]
  pings?: PingRow[]
  inMemory?: InMemoryView
  /** Node locks on every data-bearing node (standalone, replica set) or every shard and config primary. */
  nodes: NodeLocksEntry[]
  /** Every root blocker in the deployment, most waiters first (the first is named first in the text). */
  rootBlockers: RootBlocker[]
}

export interface LocksPingsResult extends ResultEnvelope, LocksReadContext {
  serverVersion: string
  model: LockModel
  message: string
  /** The entry's clock (hello.localTime) at the snapshot: every age is measured on it. */
  now: string
  pingIntervalMS: number
  pings: PingRow[]
}

/**
 * held-at-start: held (or stale) when the watch began, with its verdict · acquired · released · overtaken
 * (a stale or ping-less holder's lock taken by another) · stale: a held lock's holder stopped pinging for the
 * expiry · waiting (6.1+: a DDL operation waits for the in-memory lock).
 */
export type LockEventKind = 'held-at-start' | 'acquired' | 'released' | 'overtaken' | 'stale' | 'waiting'

export interface LockEvent {
  /** On the server's clock: the lock's `when` for acquisitions, the poll that saw it for the rest; never before the lock's previous event (config.locks). */
  at: string
  kind: LockEventKind
  name: string
  process: string | null
  who: string | null
  why: string | null
  /** held-at-start / stale: the verdict then. */
  verdict?: LockVerdict
  /** held-at-start: the lock's `when` (ISO) and what it means. */
  since?: string | null
  whenMeans?: LockWhenMeaning | null
  /** overtaken: the process the lock was taken from. */
  previousProcess?: string | null
  /**
   * released / overtaken: how long the (previous) holder had it at most: from its `when` to the first poll that
   * saw it free, or to the next holder's `when` (a release the polls could not see).
   */
  holdMS?: number
  /** The hold's upper bound, as holdMS (named for what it is: the hold lies in [holdMinMS, holdMaxMS]). */
  holdMaxMS?: number
  /** The least it was held: from its start to the last poll that saw it held; 0 when no poll saw it (between polls). */
  holdMinMS?: number
  /** Taken and released between two polls (never seen held): only the bound `holdMaxMS` is known (holdMinMS 0). */
  holdBetweenPolls?: true
}

/**
 * Percentiles of one bound of every hold of a lock: `lower` (holdMinMS: each hold's start to the last poll that
 * saw it, 0 for one no poll saw) or `upper` (holdMaxMS: to the first poll that saw it free, or the next holder's
 * start). The true percentile lies between the two: p50 of the lower bounds ≤ the holds' p50 ≤ p50 of the upper.
 */
export interface HoldBoundPercentiles {
  bound: 'lower' | 'upper'
  count: number
  p50: number
  p90: number
  p99: number
  max: number
}

export interface LockHoldSummary {
  name: string
  acquired: number
  released: number
  overtaken: number
  /**
   * Holds a poll saw held, their upper bounds: from `when` to the first poll that saw it free (or the next holder's
   * `when`), so each figure is over by up to one interval (kept as it was; holdMinMS and holdMaxMS bound every hold). Holds never seen (between polls) are in `betweenPolls`, not here.
   */
  holdMS: {count: number; p50: number; p90: number; p99: number; max: number}
  /** Every hold's lower bound (between polls: 0), percentiles: the holds' percentiles are at least these. */
  holdMinMS: HoldBoundPercentiles
  /** Every hold's upper bound (between polls included), percentiles: the holds' percentiles are at most these. */
  holdMaxMS: HoldBoundPercentiles
  /** Holds taken and released between two polls: only bounded by the gap (`maxMS`: the largest such bound). */
  betweenPolls: {count: number; maxMS: number}
}

/**
 * Why a poll of `locks watch` got no snapshot: the router did not answer (or could not
 * reach the config server: `unreachable`), it answered nothing within --timeout-ms
 * (`timeout`: a stalled server), the user lost a privilege or its credentials
 * (`unauthorized`), or the server answered with another error (`server-error`).
 */
export type LockPollFailureReason = 'unreachable' | 'timeout' | 'unauthorized' | 'server-error'
export const LOCK_POLL_FAILURE_REASONS: readonly LockPollFailureReason[] = ['unreachable', 'timeout', 'unauthorized', 'server-error']

/** One failed poll: a marked round of the watch, which goes on. */
export interface LockPollFailure {
  /** When the poll started (ISO), on the server's clock (this machine's plus the skew measured at the start). */
  at: string
  /** 1-based number of the poll among all polls. */
  poll: number
  reason: LockPollFailureReason
  /** The driver's or server's message, credentials redacted. */
  error: string
}

/** A node a poll of `locks watch` could not read (its locks unknown that poll; the watch goes on). */
export interface NodeReadFailure {
  /** When the poll started (ISO, this machine's clock plus the skew measured at the start). */
  at: string
  poll: number
  host: string
  role: NodeLocksRole
  error: NodeReadError
}

/** What the watch says of the nodes it polled: every host, and the reads that failed. */
export interface NodePollsSummary {
  /** The nodes polled (a sharded cluster's primaries as last found). */
  hosts: string[]
  /** Node reads that failed, by host; `latest` keeps the last 50 with their errors. */
  failedReads: number
  failedReadsByHost: Record<string, number>
  latest: NodeReadFailure[]
}

export interface LocksWatchResult extends ResultEnvelope, Partial<LocksReadContext>, NodeLocksContext {
  serverVersion: string
  /** Absent where distributed locks do not apply (standalone, replica set). */
  model?: LockModel
  message: string
  /** This machine's clock at the first poll (ISO): the HTML timeline's start. */
  startedAt: string
  /** From the first poll to the last (the whole --duration when it ran its course). */
  durationMS: number
  intervalMS: number
  /** Every poll, failed ones included. */
  polls: number
  /** Polls that got no snapshot; their transitions show up at the next poll that answers. */
  failedPolls: number
  failedPollsByReason: Record<LockPollFailureReason, number>
  pollFailures: LockPollFailure[]
  /**
   * Bound of each poll (--timeout-ms): one deadline every read of the poll shares (the distributed locks, and each
   * node's, a shard's primary found by hello first); a node that misses it is unknown for that poll, its error naming it.
   */
  pollTimeoutMS: number
  /** Distributed-lock transitions and hold summaries (a sharded cluster; absent where not applicable). */
  events?: LockEvent[]
  locks?: LockHoldSummary[]
  /**
   * Follow-up reads of the distributed locks between polls (src/locks/follow-up.ts), which pin the end of a hold begun
   * recently: `reads` answered (their transitions are among `events`), `failed` (each ended its burst; not a failed poll).
   * Absent where distributed locks are not read.
   */
  followUps?: {reads: number; failed: number}
  /**
   * Blocking episodes on the nodes (src/locks/node/episodes.ts): start, end, duration within one poll
   * interval, root blocker, peak waiters, resources; per node totals; lock waits summed per resource and mode.
   */
  nodeEpisodes: NodeLockEpisodesSummary
  nodePolls: NodePollsSummary
}

export type WhyKind =
  | 'balancer'
  | 'migration'
  | 'split'
  | 'merge'
  | 'createCollection'
  | 'dropCollection'
  | 'dropDatabase'
  | 'shardCollection'
  | 'enableSharding'
  | 'movePrimary'
  | 'createDatabase'
  | 'renameCollection'
  | 'refineCollectionShardKey'
  | 'reshardCollection'
  | 'collMod'
  | 'setAllowMigrations'
  | 'mapReduce'
  | 'other'

/** Each poll's node reads, for a live view. */
export interface NodesPoll {
  poll: number
  nodes: NodeLocksEntry[]
}

/** One answered poll, for a live view. */
export interface LocksPoll {
  poll: number
  /** The server's clock at the poll (ISO). */
  at: string
  /** config.locks model: the locks not free now; absent on 6.1+. */
  held?: LockRow[]
  /** 6.1+: DDL operations running now. */
  ddlRunning?: number
}
