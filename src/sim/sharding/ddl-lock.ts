/**
 * In-memory, per-process DDL locks: exclusive, FIFO, with a wait limit.
 *
 * - 7.0 profile: the DDLLockManager of 6.1+ (in memory, no config.locks): local to the coordinator and only
 *   in memory (gone when the process dies); database then collection; 5 min wait; on timeout
 *   LockBusy "Failed to acquire DDL lock for namespace '<ns>' after <t> that is currently
 *   locked with reason '<reason>'".
 * - 6.0 profile: the in-process namespace serializer (`lockDirectLocally`) that runs before
 *   the config.locks write; its timeout surfaces as the dist lock's "timed out waiting for".
 *
 * Waiting operations are flagged on their connection's ActiveOp (`waitingForLock`), and
 * held locks are listed on it, so `$currentOp` shows both.
 */
import {CommandError} from '../errors.js'
import type {ActiveOp} from '../server/connection.js'

export const DDL_LOCK_WAIT_MS = 300_000

interface Holder {
  reason: string
  op?: ActiveOp
  since: Date
}

interface Waiter {
  reason: string
  op?: ActiveOp
  grant: () => void
}

interface Resource {
  holder: Holder | null
  waiters: Waiter[]
}

export interface DdlLockView {
  resource: string
  kind: 'database' | 'collection'
  reason: string
  since: Date
  waiters: number
}

export class DdlLockManager {
  private readonly resources = new Map<string, Resource>()
  /** Counters in the shape of serverStatus.locks (DDLDatabase / DDLCollection, mode W). */
  readonly stats = {
    database: {acquireCount: 0, acquireWaitCount: 0, timeAcquiringMicros: 0},
    collection: {acquireCount: 0, acquireWaitCount: 0, timeAcquiringMicros: 0},
  }

  constructor(private readonly timeoutMessage: (resource: string, waitedMs: number, holderReason: string) => string) {}

  static kindOf(resource: string): 'database' | 'collection' {
    return resource.includes('.') ? 'collection' : 'database'
  }

  /** Waits up to `timeoutMs`; returns the release function. */
  async lock(resource: string, reason: string, timeoutMs: number, op?: ActiveOp): Promise<() => void> {
    let r = this.resources.get(resource)
    if (!r) {
      r = {holder: null, waiters: []}
      this.resources.set(resource, r)
    }
    const res = r
    const stats = this.stats[DdlLockManager.kindOf(resource)]
    const markHeld = () => {
      res.holder = {reason, op, since: new Date()}
      if (op) (op.ddlLocks ??= []).push({resource, reason})
    }
    const release = () => {
      if (op?.ddlLocks) op.ddlLocks = op.ddlLocks.filter((l) => l.resource !== resource)
      const next = res.waiters.shift()
      if (next) next.grant()
      else {
        res.holder = null
        this.resources.delete(resource)
      }
    }
    // Counted when requested, before any wait and whether or not it is granted (a LockBusy timeout still
    // counted one), as LockerImpl::_lockBegin does: acquireCount ≥ acquireWaitCount at every moment.
    stats.acquireCount++
    if (!res.holder) {
      markHeld()
      return once(release)
    }
    const started = Date.now()
    if (op) op.waitingForLock = true
    stats.acquireWaitCount++
    try {
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          reason,
          op,
          grant: () => {
            clearTimeout(timer)
            markHeld()
            resolve()
          },
        }
        const timer = setTimeout(() => {
          const i = res.waiters.indexOf(waiter)
          if (i >= 0) res.waiters.splice(i, 1)
          reject(new CommandError(46, this.timeoutMessage(resource, Date.now() - started, res.holder?.reason ?? 'unknown')))
        }, Math.max(0, timeoutMs))
        res.waiters.push(waiter)
      })
    } finally {
      if (op) op.waitingForLock = false
      stats.timeAcquiringMicros += (Date.now() - started) * 1000
    }
    return once(release)
  }

  held(): DdlLockView[] {
    const out: DdlLockView[] = []
    for (const [resource, r] of this.resources) {
      if (r.holder) out.push({resource, kind: DdlLockManager.kindOf(resource), reason: r.holder.reason, since: r.holder.since, waiters: r.waiters.length})
    }
    return out
  }

  /** The process died: in-memory locks die with it. */
  reset(): void {
    this.resources.clear()
  }
}

function once(f: () => void): () => void {
  let done = false
  return () => {
    if (done) return
    done = true
    f()
  }
}

/** 6.1+ message. */
export function ddlLockTimeoutMessage(resource: string, waitedMs: number, reason: string): string {
  return `Failed to acquire DDL lock for namespace '${resource}' after ${Math.round(waitedMs)}ms that is currently locked with reason '${reason}'`
}
