/**
 * Lock accounting for serverStatus.locks and a per-collection write queue.
 *
 * Reads count intent-shared acquisitions (r) on Global/Database/Collection; writes take
 * the collection's queue exclusively (so concurrent writes with service latency queue
 * up), and count intent-exclusive (w) acquisitions, with acquireWaitCount and
 * timeAcquiringMicros when they had to wait. Output is sparse like mongod's.
 *
 * Real lock conflicts go through `table` (storage/lock-table.ts, mongod's FIFO lock queues): every
 * mongod operation requests its Global / Database / Collection locks there (server/dispatch.ts), and
 * system threads hold theirs — the `fsyncLockWorker` that `fsync: 1, lock: true` starts holds Global S
 * until as many `fsyncUnlock` (fsync.cpp), so writers queue on Global IX; an index build held by the
 * `lock-hold` fault holds Collection X (or S). A wait counts `acquireWaitCount` when it starts and adds
 * `timeAcquiringMicros` when granted (LockerImpl::_lockBegin / _lockComplete, lock_state.cpp), and the
 * waiter counts in globalLock.currentQueue as a reader or writer. Tests use these holders to keep a
 * known number of operations waiting until a state is reached, instead of hoping a latency outlasts
 * connection set-up.
 */
import {Long, type Document} from 'bson'
import {LockTable} from './lock-table.js'
import type {SystemOp} from '../status/system-ops.js'

export type LockMode = 'r' | 'w' | 'R' | 'W'
export type ResourceType =
  | 'ParallelBatchWriterMode'
  | 'MultiDocumentTransactionsBarrier'
  | 'ReplicationStateTransition'
  | 'Global'
  | 'Database'
  | 'Collection'
  | 'Mutex'
  | 'Metadata'
  | 'oplog'

export interface ModeStats {
  acquireCount: number
  acquireWaitCount: number
  timeAcquiringMicros: number
}

/** Counters per resource type and mode, as serverStatus.locks and currentOp lockStats report them. */
export type LockStats<Type extends string = string> = Map<Type, Map<LockMode, ModeStats>>

/** The counters of one resource type and mode, created at zero on first use. */
export function modeStatsOf<Type extends string>(stats: LockStats<Type>, type: Type, mode: LockMode): ModeStats {
  let modes = stats.get(type)
  if (!modes) {
    modes = new Map()
    stats.set(type, modes)
  }
  let s = modes.get(mode)
  if (!s) {
    s = {acquireCount: 0, acquireWaitCount: 0, timeAcquiringMicros: 0}
    modes.set(mode, s)
  }
  return s
}

/**
 * One resource's entry as the server writes it: only non-zero modes, Long counters, the wait
 * counters only when something waited. `ongoingMicros` adds a wait still in progress (currentOp).
 */
export function lockStatsEntry(modes: Map<LockMode, ModeStats>, ongoingMicros: (mode: LockMode) => number = () => 0): Document {
  const acquireCount: Document = {}
  const acquireWaitCount: Document = {}
  const timeAcquiringMicros: Document = {}
  let waits = false
  for (const [mode, s] of modes) {
    if (s.acquireCount > 0) acquireCount[mode] = Long.fromNumber(s.acquireCount)
    if (s.acquireWaitCount > 0) {
      waits = true
      acquireWaitCount[mode] = Long.fromNumber(s.acquireWaitCount)
      timeAcquiringMicros[mode] = Long.fromNumber(s.timeAcquiringMicros + ongoingMicros(mode))
    }
  }
  return waits ? {acquireCount, acquireWaitCount, timeAcquiringMicros} : {acquireCount}
}

interface Queue {
  held: boolean
  waiters: Array<() => void>
}

export type Release = () => void

export class LockManager {
  private readonly stats: LockStats<ResourceType> = new Map()
  private readonly queues = new Map<string, Queue>()
  /** Writers currently waiting for the sim's own per-collection write queue. */
  waitingWriters = 0
  /** Operations waiting in the lock table, by the kind of their global lock (globalLock.currentQueue). */
  readonly queued = {readers: 0, writers: 0}
  /** The resources' granted and pending requests (lockInfo, real conflicts). */
  readonly table = new LockTable()
  /** Threads without a client that run an operation (fsyncLockWorker, index builds): currentOp lists them. */
  readonly systemOps = new Set<SystemOp>()
  /** Index builds holding a collection lock (lock-hold fault), by "<ns>:<mode>". */
  readonly holds = new Map<string, {op: SystemOp; granted: boolean; ms: number; timer?: NodeJS.Timeout}>()
  /** The fsyncLockWorker while fsyncLock is in force. */
  fsyncWorker: SystemOp | undefined
  /** Thread numbers of IndexBuildsCoordinatorMongod-N. */
  nextIndexBuilder = 0
  /** Nesting depth of fsyncLock: writes are held while it is above 0. */
  private fsyncLockCount = 0

  private statsOf(type: ResourceType, mode: LockMode): ModeStats {
    return modeStatsOf(this.stats, type, mode)
  }

  private bump(type: ResourceType, mode: LockMode, waitedMicros = -1): void {
    const s = this.statsOf(type, mode)
    s.acquireCount++
    if (waitedMicros >= 0) this.recordWait(type, mode, waitedMicros)
  }

  /**
   * A lock is requested: its acquisition counts now, before any wait and whatever the outcome (a wait that
   * is interrupted or times out still counted one), as LockerImpl::_lockBegin increments acquireCount ahead
   * of acquireWaitCount; so acquireCount ≥ acquireWaitCount at every moment, as on a real server.
   */
  requested(type: ResourceType, mode: LockMode): void {
    this.statsOf(type, mode).acquireCount++
  }

  /** A wait begins in the lock table: counted now, as LockerImpl::_lockBegin records it. */
  waitBegins(type: ResourceType, mode: LockMode): void {
    this.statsOf(type, mode).acquireWaitCount++
  }

  /** The wait ended (granted): its time is added, as LockerImpl::_lockComplete does. */
  waitEnds(type: ResourceType, mode: LockMode, micros: number): void {
    this.statsOf(type, mode).timeAcquiringMicros += micros
  }

  /** A wait alone: its acquisition is counted once, when the lock is granted. */
  private recordWait(type: ResourceType, mode: LockMode, waitedMicros: number): void {
    const s = this.statsOf(type, mode)
    s.acquireWaitCount++
    s.timeAcquiringMicros += waitedMicros
  }

  private countIntent(mode: 'r' | 'w', waitedMicros = -1): void {
    this.bump('ParallelBatchWriterMode', 'r')
    this.bump('ReplicationStateTransition', 'w')
    this.bump('Global', mode)
    this.bump('Database', mode)
    this.bump('Collection', mode, waitedMicros)
  }

  /** Counts the locks a read takes (never waits: reads do not queue behind writes here). */
  read(): void {
    this.countIntent('r')
  }

  /** Counts a lock-free-ish command that only takes the global lock (e.g. listDatabases). */
  globalRead(): void {
    this.bump('ParallelBatchWriterMode', 'r')
    this.bump('ReplicationStateTransition', 'w')
    this.bump('Global', 'r')
  }

  /** Exclusive database-level operation (drop, dropDatabase, create): Database W. */
  databaseExclusive(): void {
    this.bump('ParallelBatchWriterMode', 'r')
    this.bump('ReplicationStateTransition', 'w')
    this.bump('Global', 'w')
    this.bump('Database', 'W')
  }

  /**
   * Takes the write queue of a namespace. Returns the release function synchronously when
   * the queue was free, else a promise of it. `counted`: the write's acquisitions were counted when
   * its locks were requested (acquireLocks, status/op-locks.ts), so only the queue's wait is added
   * here (begun now, its time when granted); else the acquisitions count here too.
   */
  acquireWrite(ns: string, counted = false): Release | Promise<Release> {
    let q = this.queues.get(ns)
    if (!q) {
      q = {held: false, waiters: []}
      this.queues.set(ns, q)
    }
    const queue = q
    const release: Release = () => {
      const next = queue.waiters.shift()
      if (next) next()
      else {
        queue.held = false
        this.queues.delete(ns)
      }
    }
    if (!queue.held) {
      queue.held = true
      if (!counted) this.countIntent('w')
      return release
    }
    const started = process.hrtime.bigint()
    this.waitingWriters++
    if (counted) this.waitBegins('Collection', 'w')
    return new Promise<Release>((resolve) => {
      queue.waiters.push(() => {
        this.waitingWriters--
        const micros = Number((process.hrtime.bigint() - started) / 1000n)
        if (counted) this.waitEnds('Collection', 'w', micros)
        else this.countIntent('w', micros)
        resolve(release)
      })
    })
  }

  get fsyncLockDepth(): number {
    return this.fsyncLockCount
  }

  /** fsync with lock: one more level. Returns the new lock count (the caller starts the worker at 1). */
  fsyncLock(): number {
    return ++this.fsyncLockCount
  }

  /** Undoes one fsyncLock. Returns the new lock count (the caller ends the worker at 0), or -1 when not locked. */
  fsyncUnlock(): number {
    if (this.fsyncLockCount === 0) return -1
    return --this.fsyncLockCount
  }

  /** Drops every queue and the fsync lock (restart); waiters are woken so they fail on their closed sockets. */
  reset(): void {
    this.fsyncLockCount = 0
    this.fsyncWorker = undefined
    for (const h of this.holds.values()) clearTimeout(h.timer)
    this.holds.clear()
    this.systemOps.clear()
    this.table.clear()
    this.queued.readers = 0
    this.queued.writers = 0
    for (const q of this.queues.values()) for (const w of q.waiters.splice(0)) w()
    this.queues.clear()
    this.stats.clear()
    this.waitingWriters = 0
  }

  /** serverStatus.locks: only non-zero modes, Long counters. */
  toDocument(): Document {
    const out: Document = {}
    for (const [type, modes] of this.stats) out[type] = lockStatsEntry(modes)
    return out
  }
}
