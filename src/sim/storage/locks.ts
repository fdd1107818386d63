/**
 * Lock accounting for serverStatus.locks and a per-collection write queue.
 *
 * Reads count intent-shared acquisitions (r) on Global/Database/Collection; writes take
 * the collection's queue exclusively (so concurrent writes with service latency queue
 * up), and count intent-exclusive (w) acquisitions, with acquireWaitCount and
 * timeAcquiringMicros when they had to wait. Output is sparse like mongod's.
 *
 * `fsync: 1, lock: true` holds every write until as many `fsyncUnlock` (mongod's fsyncLock
 * takes the global lock in S mode, so writers queue on Global IX): writes wait in
 * `whenWritesAllowed()`, are counted in globalLock.currentQueue.writers and have their
 * wait recorded on Global w. Tests use it to keep a known number of writes in flight
 * until a state is reached, instead of hoping a latency outlasts connection set-up.
 */
import {Long, type Document} from 'bson'

export type LockMode = 'r' | 'w' | 'R' | 'W'
export type ResourceType =
  | 'ParallelBatchWriterMode'
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
  /** Writers currently waiting for a collection queue or the fsync lock (globalLock.currentQueue.writers). */
  waitingWriters = 0
  /** Nesting depth of fsyncLock: writes are held while it is above 0. */
  private fsyncLockCount = 0
  private readonly heldByFsync: Array<() => void> = []

  private statsOf(type: ResourceType, mode: LockMode): ModeStats {
    return modeStatsOf(this.stats, type, mode)
  }

  private bump(type: ResourceType, mode: LockMode, waitedMicros = -1): void {
    const s = this.statsOf(type, mode)
    s.acquireCount++
    if (waitedMicros >= 0) this.recordWait(type, mode, waitedMicros)
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
   * the queue was free, else a promise of it.
   */
  acquireWrite(ns: string): Release | Promise<Release> {
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
      this.countIntent('w')
      return release
    }
    const started = process.hrtime.bigint()
    this.waitingWriters++
    return new Promise<Release>((resolve) => {
      queue.waiters.push(() => {
        this.waitingWriters--
        this.countIntent('w', Number((process.hrtime.bigint() - started) / 1000n))
        resolve(release)
      })
    })
  }

  get fsyncLockDepth(): number {
    return this.fsyncLockCount
  }

  /** fsync with lock: writes are held from now on. Returns the new lock count. */
  fsyncLock(): number {
    return ++this.fsyncLockCount
  }

  /** Undoes one fsyncLock; the last one lets every held write go. Returns the new lock count, or -1 when not locked. */
  fsyncUnlock(): number {
    if (this.fsyncLockCount === 0) return -1
    if (--this.fsyncLockCount === 0) for (const go of this.heldByFsync.splice(0)) go()
    return this.fsyncLockCount
  }

  /** undefined when writes may run now, else a promise that resolves at the last fsyncUnlock. */
  whenWritesAllowed(): Promise<void> | undefined {
    if (this.fsyncLockCount === 0) return undefined
    const started = process.hrtime.bigint()
    this.waitingWriters++
    return new Promise<void>((resolve) => {
      this.heldByFsync.push(() => {
        this.waitingWriters--
        this.recordWait('Global', 'w', Number((process.hrtime.bigint() - started) / 1000n))
        resolve()
      })
    })
  }

  /** Drops every queue and the fsync lock (restart); waiters are woken so they fail on their closed sockets. */
  reset(): void {
    this.fsyncLockCount = 0
    for (const go of this.heldByFsync.splice(0)) go()
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
