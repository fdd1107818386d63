/**
 * `pooltool locks`: the result contracts (names fixed by the issue; units in field names).
 * Every result shares the envelope of src/result.ts: `target`, `notes`, `interrupted`.
 */
import type {ResultEnvelope} from '../result.js'

/** Where a cluster keeps its DDL locks (facts §1.2, §1.5). */
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

export interface LockRow {
  /** `_id`: a database, a namespace, or "balancer". */
  name: string
  state: LockStateName
  process: string | null
  who: string | null
  why: string | null
  /** `when` of the last grab or overtake (ISO), null when absent. */
  since: string | null
  /** The holder's `config.lockpings` ping (ISO), null when it has none. */
  holderLastPing: string | null
  verdict: LockVerdict
  /** Lock session id (hex). */
  ts: string | null
  /** 5.0+: replica-set term of the shard that took it. */
  term?: number
  /** now − since, for locked locks. */
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
  resources: Record<string, DdlLockEntry>
  /** Why serverStatus could not be read there (credentials redacted). */
  unavailable?: string
}

/** What replaced config.locks on 6.1+: DDL operations and serverStatus.locks DDL entries. */
export interface InMemoryView {
  /** One line for humans. */
  note: string
  ddlOps: DdlOpRow[]
  serverStatusLocks: ShardDdlLocks[]
}

export interface DdlOpRow {
  shard: string | null
  host: string | null
  opid: string
  command: string
  ns: string | null
  runningMS: number
  waitingForLock: boolean
}

export interface LockTiming {
  /** Expiry used for the stale verdict (15 min × the simulated time scale, or --lock-expiry). */
  expiryMS: number
  /** Pinger interval (30 s × time scale). A process is alive while its ping is younger than 3 intervals. */
  pingIntervalMS: number
}

export interface LocksListResult extends ResultEnvelope {
  serverVersion: string
  model: LockModel
  /** One line explaining the model (always set for in-memory / unsupported). */
  message: string
  /** The router's clock (hello.localTime) at the snapshot: every age is measured on it. */
  now: string
  expiryMS: number
  locks: LockRow[]
  pings: PingRow[]
  inMemory?: InMemoryView
}

export interface LocksPingsResult extends ResultEnvelope {
  serverVersion: string
  model: LockModel
  message: string
  /** The router's clock (hello.localTime) at the snapshot: every age is measured on it. */
  now: string
  pingIntervalMS: number
  pings: PingRow[]
}

export type LockEventKind = 'acquired' | 'released' | 'overtaken' | 'waiting'

export interface LockEvent {
  at: string
  kind: LockEventKind
  name: string
  process: string | null
  who: string | null
  why: string | null
  /** overtaken: the process the lock was taken from. */
  previousProcess?: string | null
  /** released / overtaken: how long the (previous) holder had it. */
  holdMS?: number
}

export interface LockHoldSummary {
  name: string
  acquired: number
  released: number
  overtaken: number
  holdMS: {count: number; p50: number; p90: number; p99: number; max: number}
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
  /** When the poll started (ISO). */
  at: string
  /** 1-based number of the poll among all polls. */
  poll: number
  reason: LockPollFailureReason
  /** The driver's or server's message, credentials redacted. */
  error: string
}

export interface LocksWatchResult extends ResultEnvelope {
  serverVersion: string
  model: LockModel
  message: string
  durationMS: number
  intervalMS: number
  /** Every poll, failed ones included. */
  polls: number
  /** Polls that got no snapshot; their transitions show up at the next poll that answers. */
  failedPolls: number
  failedPollsByReason: Record<LockPollFailureReason, number>
  pollFailures: LockPollFailure[]
  /** Bound of each poll (--timeout-ms). */
  pollTimeoutMS: number
  events: LockEvent[]
  locks: LockHoldSummary[]
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
