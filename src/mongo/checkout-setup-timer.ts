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

/** One checkout in flight. */
interface PendingCheckout {
  startedAt: number
  /** The connection the pool is creating for this waiter (set at connectionCreated). */
  connectionId?: number | string
}

/**
 * A pool's checkouts in flight, kept as two queues, each oldest first: waiters with no
 * connection yet (the pool's wait queue: thousands when the load outruns maxPoolSize) and
 * waiters the pool is creating a connection for (at most maxConnecting of them). The split
 * keeps an end event from scanning or copying the long queue: its waiter is almost always
 * the front one.
 */
interface PoolState {
  unbound: PendingCheckout[]
  bound: PendingCheckout[]
  /** connectionCreated time per connection id. */
  createdAt: Map<number | string, number>
  /** A bound connection whose creation just failed: the next connectionCheckOutFailed is its waiter's. */
  failedConnection?: number | string
}

export class CheckoutSetupTimer {
  private readonly pools = new Map<string, PoolState>()
  /** End events with no checkout start to pair them with. */
  unmatched = 0
  /** End events paired in the pool's order although no start agreed with the driver's durationMS (see take()). */
  disagreed = 0
  /** The first candidate in take()'s order, taken when none agrees (set by search()). */
  private firstQueue: PendingCheckout[] | undefined
  private firstIndex = -1

  private pool(address: string): PoolState {
    let state = this.pools.get(address)
    if (!state) {
      state = {unbound: [], bound: [], createdAt: new Map()}
      this.pools.set(address, state)
    }
    return state
  }

  checkOutStarted(address: string, now: number): void {
    this.pool(address).unbound.push({startedAt: now})
  }

  connectionCreated(address: string, connectionId: number | string, now: number): void {
    const state = this.pool(address)
    state.createdAt.set(connectionId, now)
    const waiter = state.unbound.shift()
    if (!waiter) return
    waiter.connectionId = connectionId
    state.bound.push(waiter)
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
    if (reason === 'error' && state.bound.some((p) => p.connectionId === connectionId)) state.failedConnection = connectionId
  }

  /** The wait of the checkout that got `connectionId`, or undefined when its start was not seen. */
  checkedOut(address: string, connectionId: number | string, driverMS: number | undefined, now: number): number | undefined {
    const state = this.pool(address)
    const waiter = this.take(state, connectionId, driverMS, now)
    return waiter === undefined ? undefined : now - waiter.startedAt
  }

  /** The wait of the checkout that failed, or undefined when its start was not seen. */
  checkOutFailed(address: string, driverMS: number | undefined, now: number): number | undefined {
    const state = this.pool(address)
    const failed = state.failedConnection
    state.failedConnection = undefined
    const waiter = this.take(state, failed, driverMS, now)
    return waiter === undefined ? undefined : now - waiter.startedAt
  }

  /** Checkouts whose end was not seen yet (for tests and leak checks). */
  get pendingCheckouts(): number {
    let n = 0
    for (const state of this.pools.values()) n += state.unbound.length + state.bound.length
    return n
  }

  /**
   * The waiter an end event belongs to: the one the event names (its
   * connection), else the oldest unbound waiter (the front of the pool's
   * queue), else the oldest bound one. The driver's durationMS only chooses
   * among them: the first candidate in that order whose start agrees with it
   * wins, else the first candidate (the pool's order), counted in `disagreed`.
   * It cannot be a hard rule: the driver reads its clock a moment before our
   * listener runs, and a GC pause or the OS taking the CPU in that moment
   * shifts our reading by milliseconds. An end event with no waiter at all is
   * `unmatched`. The search stops at the first agreeing waiter: on a healthy
   * pool the front of a queue, so an end event costs the same with 10 or
   * 10,000 waiters.
   */
  private take(state: PoolState, namedConnection: number | string | undefined, driverMS: number | undefined, now: number): PendingCheckout | undefined {
    // Every checkout comes through here (three CMAP events per operation): plain loops and fields, no closures
    // made per call (a profile of bench at concurrency 64 showed this method's four closures among pooltool's costliest lines).
    this.firstQueue = undefined
    this.firstIndex = -1
    const nowMs = Math.floor(now)
    if (namedConnection !== undefined) {
      const index = this.search(state.bound, namedConnection, driverMS, nowMs)
      if (index >= 0) return removeAt(state.bound, index)
    }
    let index = this.search(state.unbound, undefined, driverMS, nowMs)
    if (index >= 0) return removeAt(state.unbound, index)
    index = this.search(state.bound, undefined, driverMS, nowMs)
    if (index >= 0) return removeAt(state.bound, index)
    if (!this.firstQueue) {
      this.unmatched += 1
      return undefined
    }
    this.disagreed += 1
    const first = removeAt(this.firstQueue, this.firstIndex)
    this.firstQueue = undefined
    return first
  }

  /**
   * The index of the first waiter in `queue` (with `connection` set: only that connection's) whose start
   * agrees with the driver's durationMS, or -1; remembers the first candidate seen, agreeing or not.
   */
  private search(queue: PendingCheckout[], connection: number | string | undefined, driverMS: number | undefined, nowMs: number): number {
    for (let index = 0; index < queue.length; index++) {
      const waiter = queue[index]!
      if (connection !== undefined && waiter.connectionId !== connection) continue
      if (!this.firstQueue) {
        this.firstQueue = queue
        this.firstIndex = index
      }
      if (driverMS === undefined || Math.abs(nowMs - driverMS - Math.floor(waiter.startedAt)) <= 1) return index
    }
    return -1
  }
}

/** The waiter at `index`, taken out of its queue (the front, almost always: a shift). */
function removeAt(queue: PendingCheckout[], index: number): PendingCheckout {
  return index === 0 ? queue.shift()! : queue.splice(index, 1)[0]!
}
