/**
 * pooltool's own clock on the driver's CMAP events: how long a checkout waited
 * (connectionCheckOutStarted → connectionCheckedOut / connectionCheckOutFailed)
 * and how long a new connection took to set up (connectionCreated →
 * connectionReady), in fractional milliseconds of `performance.now()`.
 *
 * Why not the events' own `durationMS`: the driver floors both ends to whole
 * milliseconds (`Math.floor(performance.now())`), so a 300 µs checkout reads
 * 0 or 1 ms. The listeners run synchronously inside the driver's `emit`, so
 * their timestamps bound the same interval without the rounding.
 *
 * Set-up is keyed by connection id (per pool address): exact. A checkout
 * carries no key of its own, so the pool's behaviour is followed (driver 7,
 * cmap/connection_pool.js): the wait queue is served oldest first; a waiter
 * the pool creates a new connection for is taken off the queue at
 * connectionCreated (the oldest one still unbound), and its
 * connectionCheckedOut names that connection; a failed creation emits
 * connectionClosed(id, 'error') right before its connectionCheckOutFailed.
 * Where the pool's order leaves a choice, the driver's whole-millisecond
 * `durationMS` (both ends floored: within 1 ms) picks the waiter that started
 * at that time, so a waiter that does not fit the order (a timeout, a
 * connection minPoolSize created) is not paired with another's start.
 */

/** One checkout in flight, oldest first per pool. */
interface PendingCheckout {
  startedAt: number
  /** The connection the pool is creating for this waiter (set at connectionCreated). */
  connectionId?: number | string
}

interface PoolState {
  pending: PendingCheckout[]
  /** connectionCreated time per connection id. */
  createdAt: Map<number | string, number>
  /** A bound connection whose creation just failed: the next connectionCheckOutFailed is its waiter's. */
  failedConnection?: number | string
}

export class CmapClock {
  private readonly pools = new Map<string, PoolState>()
  /** End events with no checkout start to pair them with. */
  unmatched = 0
  /** End events paired in the pool's order although no start agreed with the driver's durationMS (see take()). */
  disagreed = 0

  private pool(address: string): PoolState {
    let state = this.pools.get(address)
    if (!state) {
      state = {pending: [], createdAt: new Map()}
      this.pools.set(address, state)
    }
    return state
  }

  checkOutStarted(address: string, now: number): void {
    this.pool(address).pending.push({startedAt: now})
  }

  connectionCreated(address: string, connectionId: number | string, now: number): void {
    const state = this.pool(address)
    state.createdAt.set(connectionId, now)
    const waiter = state.pending.find((p) => p.connectionId === undefined)
    if (waiter) waiter.connectionId = connectionId
  }

  /** Set-up time of the connection, or undefined when its creation was not seen. */
  connectionReady(address: string, connectionId: number | string, now: number): number | undefined {
    const state = this.pool(address)
    const createdAt = state.createdAt.get(connectionId)
    state.createdAt.delete(connectionId)
    return createdAt === undefined ? undefined : now - createdAt
  }

  connectionClosed(address: string, connectionId: number | string, reason: string): void {
    const state = this.pool(address)
    state.createdAt.delete(connectionId)
    if (reason === 'error' && state.pending.some((p) => p.connectionId === connectionId)) state.failedConnection = connectionId
  }

  /** The wait of the checkout that got `connectionId`, or undefined when its start was not seen. */
  checkedOut(address: string, connectionId: number | string, driverMS: number | undefined, now: number): number | undefined {
    const state = this.pool(address)
    const waiter = this.take(state, (p) => p.connectionId === connectionId, driverMS, now)
    return waiter === undefined ? undefined : now - waiter.startedAt
  }

  /** The wait of the checkout that failed, or undefined when its start was not seen. */
  checkOutFailed(address: string, driverMS: number | undefined, now: number): number | undefined {
    const state = this.pool(address)
    const failed = state.failedConnection
    state.failedConnection = undefined
    const waiter = this.take(state, failed === undefined ? undefined : (p) => p.connectionId === failed, driverMS, now)
    return waiter === undefined ? undefined : now - waiter.startedAt
  }

  /** Checkouts whose end was not seen yet (for tests and leak checks). */
  get pendingCheckouts(): number {
    let n = 0
    for (const state of this.pools.values()) n += state.pending.length
    return n
  }

  /**
   * The waiter an end event belongs to: the one the event names (its
   * connection), else the oldest unbound waiter (the front of the pool's
   * queue), else the oldest bound one. The driver's durationMS only chooses
   * among them: the first candidate whose start agrees with it wins, else the
   * first candidate (the pool's order), counted in `disagreed`. It cannot be
   * a hard rule: the driver reads its clock a moment before our listener runs,
   * and a GC pause or the OS taking the CPU in that moment shifts our reading
   * by milliseconds. An end event with no waiter at all is `unmatched`.
   */
  private take(state: PoolState, named: ((p: PendingCheckout) => boolean) | undefined, driverMS: number | undefined, now: number): PendingCheckout | undefined {
    const candidates = [
      ...(named ? state.pending.filter(named) : []),
      ...state.pending.filter((p) => p.connectionId === undefined),
      ...state.pending.filter((p) => p.connectionId !== undefined),
    ]
    if (candidates.length === 0) {
      this.unmatched += 1
      return undefined
    }
    const agrees = (p: PendingCheckout) => driverMS === undefined || Math.abs(Math.floor(now) - driverMS - Math.floor(p.startedAt)) <= 1
    const agreeing = candidates.find(agrees)
    if (!agreeing) this.disagreed += 1
    const waiter = agreeing ?? candidates[0]!
    state.pending.splice(state.pending.indexOf(waiter), 1)
    return waiter
  }
}
