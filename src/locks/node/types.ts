/**
 * The JSON of "node locks": operations that hold or wait for locks on a mongod, who blocks whom,
 * cumulative lock waits (serverStatus.locks) and execution tickets. Units are in field names.
 * Sources of each shape: the manual's serverStatus.locks, lockInfo and $currentOp, and the modules that build them.
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
  /** Emitted by older servers only when non-zero; absent on newer ones. */
  deadlockCount?: Partial<Record<string, number>>
}

/** One `$currentOp` document, typed. User data (filters, documents, update specs) is never kept. */
export interface NodeOperation {
  /** The node the document was read on (host:port), as the caller names it; null when not given. */
  node: string | null
  /**
   * A number on a mongod; `shard:opid` (a string) through a router. An idle session's transaction has no opid:
   * `lsid:<uuid>`, its session's id (what killSessions takes); '' when a document has neither.
   */
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
  /** A createIndexes operation: the collection it builds on (never its index names or keys: they spell fields). */
  indexBuild?: IndexBuild
}

/** The collection an index build builds on, as its command and `ns` name it; null where they do not say. */
export interface IndexBuild {
  db: string | null
  collection: string | null
}

/**
 * How a DBA would end a root blocker, by what it is (the manual's killOp): a client's operation with killOp; an
 * index build with dropIndexes on the primary; an fsyncLock with fsyncUnlock; an internal operation not at all.
 */
export interface StopAdvice {
  /** `db.killOp(<opid>)` where killOp is the manual's way to end it; null where the manual says not to. */
  killOpHint: string | null
  /** What to run, or why nothing should be, in a line. Printed as a hint: pooltool never kills. */
  stopHint: string
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

export interface BlockingChain extends StopAdvice {
  root: BlockingTreeNode
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

/**
 * An operation that holds a lock in a mode that stops others (S or X on Global, a Database or a Collection) while
 * nothing waits for it yet: an fsyncLock left on (Global S: every write on the node will wait), an exclusive
 * hold on a collection. What a DBA reads in $currentOp before the queue forms.
 */
export interface HoldThatBlocks extends StopAdvice {
  operation: NodeOperation
  /** The outermost such resource it holds. */
  resource: LockResource
  mode: 'S' | 'X'
  /** S stops writes (IX, X requests); X stops every operation on the resource. */
  blocks: 'writes' | 'every operation'
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
  /** Holds that stop others while nothing waits for them yet (a root blocker with waiters is in `chains`). */
  holdsThatBlock: HoldThatBlocks[]
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

/*
 * Blocking episodes over a watch (episodes.ts): what `locks watch` records on every topology.
 * Times are ISO instants on the node's own clock (serverStatus.localTime, or the poll's time).
 */

/** One poll's view of one node, as the watch hands it to the episode tracker. */
export interface NodeLocksSample {
  /** When the node was read: the server's clock (serverStatus.localTime) or, without it, the poll's time. */
  at: Date
  /** host:port (or a label such as `rs0/host:27017`): the tracker's key for the node. */
  node: string
  view: NodeLocksView
}

/** Who an episode's root blocker is: its $currentOp fields as parsed (never the command's values). */
export type NodeLockEpisodeRoot = Pick<
  NodeOperation,
  'opid' | 'desc' | 'client' | 'appName' | 'driver' | 'op' | 'ns' | 'commandName' | 'msg' | 'progress' | 'runningMicros' | 'locks'
> & {
  /** The root itself waits, with no visible blocker (blocking.ts point 4); its `locks` then hold what it wants. */
  waiting: boolean
} & StopAdvice

/** A resource the episode's waiters wait on, with the modes seen on each side. */
export interface NodeLockEpisodeResource {
  type: string
  /** Database or namespace; null for a singleton (Global …). */
  name: string | null
  /** Modes the blockers hold (or have queued ahead) on it. */
  blockerModes: LockModeName[]
  /** Modes the waiters want. */
  waiterModes: LockModeName[]
}

/** A run of polls during which one root blocker (or one unseen one) kept operations waiting on a node. */
export interface NodeLockEpisode {
  /** 1, 2, 3 … in the order the tracker saw episodes start (over every node). */
  id: number
  node: string
  /** Start: the first poll that saw the waiting. */
  firstSeenAt: string
  /** The node's poll before it: the episode began after it. Null when it was under way at the node's first poll. */
  previousPollAt: string | null
  /** Under way at the node's first poll: it began before the watch, so no upper bound of its length is known. */
  inProgressAtFirstPoll: boolean
  /** The last poll that saw it. */
  lastSeenAt: string
  /** End: the first poll that saw nobody waiting any more; null while open. */
  endedAt: string | null
  /** endedAt − firstSeenAt (lastSeenAt − firstSeenAt while open): within one poll interval of the truth. */
  durationMS: number
  /** lastSeenAt − firstSeenAt: it surely lasted that long. */
  durationMinMS: number
  /** endedAt − previousPollAt: it cannot have lasted longer. Null while open or when it began before the watch. */
  durationMaxMS: number | null
  /**
   * The last root blocker that could be seen (a poll that saw the waiters with no visible blocker
   * does not erase it: roots[] has that too); null when no blocker was ever seen (waiters only).
   */
  root: NodeLockEpisodeRoot | null
  /** Every root the episode had, in order (more than one: the root changed while waiters remained). */
  roots: Array<{root: NodeLockEpisodeRoot | null; firstSeenAt: string; lastSeenAt: string}>
  peakWaiters: {count: number; at: string}
  resources: NodeLockEpisodeResource[]
  /**
   * The waiter with the longest running time seen: an upper bound of its wait ($currentOp does not
   * say when a wait began). Null when no waiter's document had a running time.
   */
  longestWait: {opid: number | string; desc: string | null; atMostMicros: number; at: string} | null
  /** The waiter seen waiting over the longest span of polls: it waited at least `atLeastMS`. */
  longestSeenWaiting: {opid: number | string; desc: string | null; atLeastMS: number} | null
  /** Polls that saw the episode, and among them those where lockInfo decided its edges. */
  polls: number
  lockInfoPolls: number
  /** lockInfo's granted and pending lists showed the chain at least once; otherwise it is inferred from $currentOp. */
  confirmedByLockInfo: boolean
  /** Its waiters joined another open episode's chain at `endedAt` (they still wait, there). */
  mergedInto: number | null
}

interface NodeLockEpisodeEventBase {
  /** The poll that saw the change (ISO, the node's clock). */
  at: string
  node: string
  episodeId: number
  root: NodeLockEpisodeRoot | null
}

export interface NodeLockEpisodeStartEvent extends NodeLockEpisodeEventBase {
  kind: 'episode-start'
  waiters: number
  resources: NodeLockEpisodeResource[]
  previousPollAt: string | null
  inProgressAtFirstPoll: boolean
  confirmedByLockInfo: boolean
}

/** peak-waiters: more waiters than ever in this episode · root-changed: another op is now the root, waiters remaining. */
export type NodeLockEpisodeUpdateReason = 'peak-waiters' | 'root-changed'

export interface NodeLockEpisodeUpdateEvent extends NodeLockEpisodeEventBase {
  kind: 'episode-update'
  reasons: NodeLockEpisodeUpdateReason[]
  waiters: number
  resources: NodeLockEpisodeResource[]
  /** The root before this poll (given when the root changed). */
  previousRoot?: NodeLockEpisodeRoot | null
}

export interface NodeLockEpisodeEndEvent extends NodeLockEpisodeEventBase {
  kind: 'episode-end'
  firstSeenAt: string
  lastSeenAt: string
  durationMS: number
  durationMinMS: number
  durationMaxMS: number | null
  peakWaiters: {count: number; at: string}
  resources: NodeLockEpisodeResource[]
  confirmedByLockInfo: boolean
  mergedInto: number | null
}

export type NodeLockEpisodeEvent = NodeLockEpisodeStartEvent | NodeLockEpisodeUpdateEvent | NodeLockEpisodeEndEvent

/** One interval's lock waits on one node, per resource and mode (compact, for --ndjson). */
export interface NodeLockWaitRatesRecord {
  kind: 'lock-wait-rates'
  at: string
  node: string
  intervalMS: number
  /** A counter went down (a restart): no rows this interval. */
  reset: boolean
  rows: Array<{resource: string; mode: string; waits: number; waitedMicros: number; waitsPerSecond: number; waitMicrosPerSecond: number}>
}

/** What one sample changed: the episode events, and the interval's wait rates when the view had them. */
export interface NodeLockEpisodeObservation {
  events: NodeLockEpisodeEvent[]
  rates: NodeLockWaitRatesRecord | null
}

/** A node over the whole watch. */
export interface NodeLockEpisodeNodeTotals {
  node: string
  /** Samples of the node the tracker was given. */
  polls: number
  episodes: number
  openEpisodes: number
  /**
   * Time with at least one operation waiting, from the first poll that saw waiting to the first that
   * saw none (still waiting at the end: to the last poll): overlapping episodes counted once.
   */
  blockedMS: number
  /** The longest episode (durationMS), or null when none. */
  worstEpisode: {id: number; durationMS: number; rootOpid: number | string | null; open: boolean} | null
  /** Sum of the intervals that gave wait rates (resets excluded), and how many intervals were resets. */
  rateIntervalMS: number
  resetIntervals: number
}

/** One node's waits on one resource and mode, summed over the watch. */
export interface NodeLockWaitRateTotal {
  node: string
  resource: string
  mode: string
  waits: number
  waitedMicros: number
  /** Over the node's rateIntervalMS. */
  waitsPerSecond: number
  waitMicrosPerSecond: number
  meanWaitMicros: number | null
}

/** The --json of the node-lock part of a watch. */
export interface NodeLockEpisodesSummary {
  /** In the order they started; at most `maxEpisodesKept`. */
  episodes: NodeLockEpisode[]
  episodesTotal: number
  /** Episodes beyond the cap: counted in the totals, not listed. */
  episodesNotKept: number
  maxEpisodesKept: number
  nodes: NodeLockEpisodeNodeTotals[]
  /** Most time waited first. */
  waitRates: NodeLockWaitRateTotal[]
}
