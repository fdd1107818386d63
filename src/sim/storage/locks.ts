/**
 * Lock accounting for serverStatus.locks and a per-collection write queue.
 *
 * Reads count intent-shared acquisitions (r) on Global/Database/Collection; writes take
 * the collection's queue exclusively (so concurrent writes with service latency queue
 * up), and count intent-exclusive (w) acquisitions, with acquireWaitCount and
 * timeAcquiringMicros when they had to wait. Output is sparse like mongod's.
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

interface ModeStats {
  acquireCount: number
  acquireWaitCount: number
  timeAcquiringMicros: number
}

interface Queue {
  held: boolean
  waiters: Array<() => void>
}

export type Release = () => void

export class LockManager {
  private readonly stats = new Map<ResourceType, Map<LockMode, ModeStats>>()
  private readonly queues = new Map<string, Queue>()
  /** Writers currently waiting for a collection queue (globalLock.currentQueue.writers). */
  waitingWriters = 0

  private bump(type: ResourceType, mode: LockMode, waitedMicros = -1): void {
    let modes = this.stats.get(type)
    if (!modes) {
      modes = new Map()
      this.stats.set(type, modes)
    }
    let s = modes.get(mode)
    if (!s) {
      s = {acquireCount: 0, acquireWaitCount: 0, timeAcquiringMicros: 0}
      modes.set(mode, s)
    }
    s.acquireCount++
    if (waitedMicros >= 0) {
      s.acquireWaitCount++
      s.timeAcquiringMicros += waitedMicros
    }
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

  /** Drops every queue (restart); waiters are woken so they fail on their closed sockets. */
  reset(): void {
    for (const q of this.queues.values()) for (const w of q.waiters.splice(0)) w()
    this.queues.clear()
    this.stats.clear()
    this.waitingWriters = 0
  }

  /** serverStatus.locks: only non-zero modes, Long counters. */
  toDocument(): Document {
    const out: Document = {}
    for (const [type, modes] of this.stats) {
      const acquireCount: Document = {}
      const acquireWaitCount: Document = {}
      const timeAcquiringMicros: Document = {}
      let waits = false
      for (const [mode, s] of modes) {
        if (s.acquireCount > 0) acquireCount[mode] = Long.fromNumber(s.acquireCount)
        if (s.acquireWaitCount > 0) {
          waits = true
          acquireWaitCount[mode] = Long.fromNumber(s.acquireWaitCount)
          timeAcquiringMicros[mode] = Long.fromNumber(s.timeAcquiringMicros)
        }
      }
      const entry: Document = {acquireCount}
      if (waits) {
        entry.acquireWaitCount = acquireWaitCount
        entry.timeAcquiringMicros = timeAcquiringMicros
      }
      out[type] = entry
    }
    return out
  }
}
