/**
 * The lock manager's queue per resource, as mongod's LockManager keeps it
 * (src/mongo/db/concurrency/lock_manager.cpp): each resource has a granted list and a FIFO conflict
 * list. A request is granted at once when its mode is compatible with every granted mode and with
 * every request already waiting (compatibleFirst is never set here, so a new IS queues behind a
 * pending X: new readers wait behind a waiting index build); when a holder releases, the waiters are
 * granted front to back, each one that conflicts with neither the granted modes nor the requests
 * still waiting before it. Compatibility is the manual's lock matrix (IS with IS/IX/S, IX with IS/IX,
 * S with IS/S, X with none; `LockConflictsTable`, lock_manager_defs.h).
 *
 * Owners are the operations themselves (a connection's ActiveOp or a system thread's SystemOp); a
 * request an owner already holds granted is recursive and granted again at once, as mongod's is.
 * `lockInfo` reads `heads()`.
 */
export type FullLockMode = 'IS' | 'IX' | 'S' | 'X'

/** currentOp's letters → lockInfo's names (`LegacyLockModeNames` / `LockModeNames`, lock_manager_defs.cpp). */
export const FULL_MODE = {r: 'IS', w: 'IX', R: 'S', W: 'X'} as const

const CONFLICTS: Record<FullLockMode, ReadonlySet<FullLockMode>> = {
  IS: new Set(['X']),
  IX: new Set(['S', 'X']),
  S: new Set(['IX', 'X']),
  X: new Set(['IS', 'IX', 'S', 'X']),
}

export function conflicts(a: FullLockMode, b: FullLockMode): boolean {
  return CONFLICTS[a].has(b)
}

export interface LockRequest {
  owner: object
  mode: FullLockMode
  wake?: () => void
}

export interface LockHead {
  /** "Global:Global", "Database:app", "Collection:app.c" … (type, colon, name). */
  resource: string
  granted: LockRequest[]
  pending: LockRequest[]
}

export class LockTable {
  private readonly table = new Map<string, LockHead>()

  /** undefined when granted now; else a promise that resolves when granted (or when the table is cleared). */
  request(resource: string, mode: FullLockMode, owner: object): Promise<void> | undefined {
    let head = this.table.get(resource)
    if (!head) {
      head = {resource, granted: [], pending: []}
      this.table.set(resource, head)
    }
    if (head.granted.some((r) => r.owner === owner)) return undefined
    const blocked = head.granted.some((r) => conflicts(mode, r.mode)) || head.pending.some((r) => conflicts(mode, r.mode))
    if (!blocked) {
      head.granted.push({owner, mode})
      return undefined
    }
    return new Promise<void>((resolve) => head.pending.push({owner, mode, wake: resolve}))
  }

  /** Drops every request of `owner` (granted or pending) and grants what can now run. */
  releaseAll(owner: object): void {
    for (const [key, head] of this.table) {
      // Every operation ends here: most heads (Global, RSTL … held by the other connections) do not hold it,
      // and rebuilding their lists for nothing was most of this method's time in a bench's profile.
      if (!head.granted.some((r) => r.owner === owner) && !head.pending.some((r) => r.owner === owner)) continue
      const before = head.granted.length + head.pending.length
      head.granted = head.granted.filter((r) => r.owner !== owner)
      head.pending = head.pending.filter((r) => r.owner !== owner)
      if (head.granted.length + head.pending.length !== before) this.grantWaiting(head)
      if (head.granted.length === 0 && head.pending.length === 0) this.table.delete(key)
    }
  }

  private grantWaiting(head: LockHead): void {
    const still: LockRequest[] = []
    for (const r of head.pending) {
      const blocked = head.granted.some((g) => conflicts(r.mode, g.mode)) || still.some((w) => conflicts(r.mode, w.mode))
      if (blocked) still.push(r)
      else {
        head.granted.push({owner: r.owner, mode: r.mode})
        r.wake?.()
      }
    }
    head.pending = still
  }

  /** Whether `owner` waits for any resource. */
  isWaiting(owner: object): boolean {
    for (const head of this.table.values()) if (head.pending.some((r) => r.owner === owner)) return true
    return false
  }

  heads(): LockHead[] {
    return [...this.table.values()]
  }

  /** Restart: every request goes; waiters are woken (their sockets are closed by then). */
  clear(): void {
    const waiting = [...this.table.values()].flatMap((h) => h.pending)
    this.table.clear()
    for (const r of waiting) r.wake?.()
  }
}
