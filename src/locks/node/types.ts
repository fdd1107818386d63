/**
 * The JSON of "node locks": operations that hold or wait for locks on a mongod, who blocks whom,
 * cumulative lock waits (serverStatus.locks) and execution tickets. Units are in field names.
 * Sources of each shape: mongodb-server-facts.md §4 and the modules that build them.
 */

/** `$currentOp` / `serverStatus.locks` letters: r = IS, w = IX, R = S, W = X. */
export type LockModeLetter = 'r' | 'w' | 'R' | 'W'
/** `lockInfo` names. */
export type LockModeName = 'IS' | 'IX' | 'S' | 'X'

/** Per mode counters of one resource (serverStatus.locks, an operation's lockStats); absent modes are not kept. */
export interface LockCounters {
  acquireCount: Partial<Record<string, number>>
  acquireWaitCount: Partial<Record<string, number>>
  timeAcquiringMicros: Partial<Record<string, number>>
  /** Emitted by older servers only when non-zero (facts §4.1); absent on newer ones. */
  deadlockCount?: Partial<Record<string, number>>
}

/** One `$currentOp` document, typed. User data (filters, documents, update specs) is never kept. */
export interface NodeOperation {
  /** The node the document was read on (host:port), as the caller names it; null when not given. */
  node: string | null
  /** A number on a mongod; `shard:opid` (a string) through a router. */
  opid: number | string
  /** `conn123`, or a thread name (`IndexBuildsCoordinatorMongod-0`, `fsyncLockWorker`). */
  desc: string | null
  connectionId: number | null
  /** Client address (`client`, or `client_s` through a router). */
  client: string | null
  appName: string | null
  /** `clientMetadata.driver.name` and `.version`, e.g. "nodejs 6.9.0". */
  driver: string | null
  op: string | null
  ns: string | null
  /** The command's NAME only (first key of `command`); never its values. */
  commandName: string | null
  /** From `microsecs_running` (or `secs_running` × 10⁶); null when the document does not say. */
  runningMicros: number | null
  waitingForLock: boolean
  /** Resource type → mode letter as the server sent it (unknown types and modes kept as sent). */
  locks: Record<string, string>
  lockStats: Record<string, LockCounters>
  /** Index builds and other long commands: "Index Build: scanning collection …". */
  msg: string | null
  progress: {done: number; total: number} | null
  /** `shard` through a router. */
  shard: string | null
}

/**
 * A lock resource on one node. Its identity is inferred from the operation: a Database lock is the
 * op's `ns` database, a Collection lock its `ns`; Global and the other types are singletons per node.
 */
export interface LockResource {
  node: string | null
  type: string
  /** The database (Database), the namespace (Collection), null for singletons or an op without `ns`. */
  name: string | null
}

/**
 * holds: the blocker holds the resource in a conflicting mode · queued-ahead: the blocker's own
 * conflicting request is queued before the waiter's (the lock manager grants in FIFO order).
 */
export type BlockingEdgeKind = 'holds' | 'queued-ahead'

/** lockInfo confirms the edge · lockInfo alone shows it · only $currentOp suggests it. */
export type EdgeEvidence = 'confirmed-by-lockInfo' | 'lockInfo' | 'inferred-from-currentOp'

export interface BlockingEdge {
  waiter: number | string
  blocker: number | string
  resource: LockResource
  waiterMode: LockModeName
  blockerMode: LockModeName
  kind: BlockingEdgeKind
  evidence: EdgeEvidence
}

/** One operation in the who-blocks-whom tree: the root blocker, or a waiter under what blocks it. */
export interface BlockingTreeNode {
  operation: NodeOperation
  /** How this op waits on its parent (absent on the root). */
  edge?: BlockingEdge
  /**
   * The op's running time, an upper bound of how long it has waited for this lock ($currentOp does
   * not say when the wait began). Null when the document has no running time.
   */
  waitingAtMostMicros: number | null
  /** Other ops that block it too (it is drawn once, under the first). */
  alsoBlockedBy: Array<number | string>
  children: BlockingTreeNode[]
}

export interface BlockingChain {
  root: BlockingTreeNode
  /** `db.killOp(<opid>)`: what a DBA would run; printed as a hint only, pooltool never kills. */
  killOpHint: string
  /** Every op blocked, directly or not, by the root. */
  waiterCount: number
}

/** A waiter none of whose blockers could be seen (the conflicting request may be a system thread's, or the listing partial). */
export interface UnexplainedWaiter {
  operation: NodeOperation
  /** The resource it waits on, by the acquisition-order inference. */
  resource: LockResource | null
  mode: LockModeName | null
  /** Ops holding that same resource in a compatible mode: an unseen conflicting request may sit between them and the waiter. */
  compatibleHolders: Array<number | string>
}

export interface BlockingAnalysis {
  /** lockInfo's granted/pending lists decided the edges, or only $currentOp could be read. */
  chainSource: 'lockInfo' | 'currentOp'
  /** "confirmed by lockInfo" / "inferred from $currentOp", for a human. */
  chainSourceText: string
  operations: NodeOperation[]
  edges: BlockingEdge[]
  chains: BlockingChain[]
  unexplainedWaiters: UnexplainedWaiter[]
  /** Edges $currentOp suggested that lockInfo did not show (lockInfo ran): left out of the chains. */
  inferredEdgesNotInLockInfo: number
}

/** One `lockInfo` request. */
export interface LockInfoRequest {
  mode: LockModeName | null
  opid: number | string | null
  desc: string | null
  client: string | null
  connectionId: number | null
}

export interface LockInfoResource {
  /** As sent: "{6917529027641081857: Global, 1}". */
  resourceId: string
  type: string
  name: string | null
  granted: LockInfoRequest[]
  pending: LockInfoRequest[]
}

export interface LockInfoSnapshot {
  node: string | null
  resources: LockInfoResource[]
}

/** One resource × mode of serverStatus.locks. */
export interface LockWaitRow {
  resource: string
  mode: string
  modeName: LockModeName | null
  acquireCount: number | null
  acquireWaitCount: number
  timeAcquiringMicros: number
  deadlockCount: number | null
  /** acquireWaitCount / acquireCount (0..1); null without acquireCount. */
  waitedShare: number | null
  /** timeAcquiringMicros / acquireWaitCount; null when nothing waited. */
  meanWaitMicros: number | null
}

/**
 * counted: a `locks` section was read · router: a mongos keeps none (read the shards) ·
 * unknown: the section is missing on a mongod (not zero: the document does not say).
 */
export type LockWaitsState = 'counted' | 'router' | 'unknown'

export interface LockWaitsView {
  state: LockWaitsState
  /** Seconds since the process started, and the field it came from; null when none of them was sent. */
  uptimeSeconds: number | null
  uptimeFrom: 'uptime' | 'uptimeMillis' | 'globalLock.totalTime' | null
  /** Rows that waited, most time waited first; then rows that never waited, by acquisitions. */
  rows: LockWaitRow[]
  /** Some resource and mode has waited since start. */
  anyWaited: boolean
  /** One line for humans: "since start, 47 days", "no lock has waited since start", the router or unknown sentence. */
  summary: string
}

/** Waits between two samples, per resource and mode. */
export interface LockWaitRateRow {
  resource: string
  mode: string
  acquireDelta: number | null
  acquireWaitDelta: number
  timeAcquiringMicrosDelta: number
  /** Waits per second over the interval. */
  waitsPerSecond: number
  /** Microseconds waited per second of the interval (1,000,000 = one op waiting all the time). */
  waitMicrosPerSecond: number
  meanWaitMicros: number | null
}

export interface LockWaitRates {
  intervalMS: number
  /** A counter went down: the server restarted between the samples; no rates then. */
  reset: boolean
  rows: LockWaitRateRow[]
}

/** One ticket pool (read or write). */
export interface TicketPool {
  out: number | null
  available: number | null
  totalTickets: number | null
  /** Operations queued for a ticket now (6.1+ / 7.0+ fields), null when not sent. */
  queueLength: number | null
}

/**
 * exhausted (before 7.0: no ticket available and operations queued) · all-in-use (before 7.0, nothing
 * queued yet) · throttled (7.0+: available 0 under dynamic sizing, not exhaustion) · queued (7.0+: ops
 * wait for a ticket now; only a queue that persists means overload) · ok · unknown.
 */
export type TicketVerdict = 'exhausted' | 'all-in-use' | 'throttled' | 'queued' | 'ok' | 'unknown'

export interface TicketPoolView extends TicketPool {
  verdict: TicketVerdict
}

export interface TicketsView {
  /** Where the figures came from. */
  source: 'queues.execution' | 'wiredTiger.concurrentTransactions' | 'none'
  /** 7.0+ sizes tickets dynamically (manual, 7.0 concurrent transactions); null when the version is unknown. */
  dynamicSizing: boolean | null
  read: TicketPoolView | null
  write: TicketPoolView | null
  /** serverStatus.globalLock.currentQueue / activeClients. */
  currentQueue: {total: number | null; readers: number | null; writers: number | null} | null
  activeClients: {total: number | null; readers: number | null; writers: number | null} | null
  /** Why the verdicts say what they say, for a human. */
  explanation: string
}

/** Everything "node locks" knows of one node at one moment: what nodeLocksView returns and the reporter prints. */
export interface NodeLocksView {
  /** host:port of the node. */
  node: string | null
  blocking: BlockingAnalysis
  waits: LockWaitsView
  tickets: TicketsView
  /** Waits since the previous sample, when one was given (a watch). */
  rates?: LockWaitRates
}
