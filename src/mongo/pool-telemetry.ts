/**
 * Client pool telemetry rebuilt from the driver's CMAP events (the pool's own
 * gauges are @internal): connections created and closed by reason, total and
 * in-use gauges with their peaks, checkout failures by reason, clears; and
 * checkout wait and connection set-up twice over: on pooltool's own monotonic
 * clock in µs (src/mongo/checkout-setup-timer.ts, the figures reports lead with), and as
 * the driver's `durationMS` (whole milliseconds, both ends floored: a 0 there
 * is anything below about a millisecond), kept beside them.
 */
import {createHistogram, type Histogram} from '../metrics/histograms.js'
import {CheckoutSetupTimer} from './checkout-setup-timer.js'
import type {
  ConnectionCheckedOutEvent,
  ConnectionCheckOutFailedEvent,
  ConnectionCheckOutStartedEvent,
  ConnectionClosedEvent,
  ConnectionCreatedEvent,
  ConnectionReadyEvent,
  MongoClient,
} from './driver.js'

export interface PoolTelemetrySnapshot {
  created: number
  closed: Record<string, number>
  checkOutFailed: Record<string, number>
  cleared: number
  /** Gauges now. */
  total: number
  inUse: number
  peakTotal: number
  peakInUse: number
}

/** A duration on pooltool's clock, in whole µs; 0 stays 0 (no floor of 1 µs). */
function recordOwnMs(histogram: Histogram, ms: number): void {
  histogram.recordValue(Math.max(0, Math.round(ms * 1000)))
}

/** The driver's whole milliseconds as they are (0 included). */
function recordDriverMS(histogram: Histogram, durationMS: unknown): void {
  if (typeof durationMS === 'number' && Number.isFinite(durationMS)) histogram.recordValue(Math.max(0, Math.round(durationMS)))
}

export class PoolTelemetry {
  created = 0
  cleared = 0
  total = 0
  inUse = 0
  peakTotal = 0
  peakInUse = 0
  readonly closed: Record<string, number> = {}
  readonly checkOutFailed: Record<string, number> = {}
  /** Checkout wait of successful checkouts: connectionCheckOutStarted → connectionCheckedOut, µs on pooltool's clock. */
  checkoutWaitUs: Histogram = createHistogram()
  /**
   * The same checkouts since a bench series interval last took them (takeCheckoutWaitInterval). Recorded beside the
   * cumulative one: an interval's own histogram was the cumulative one copied twice and subtracted, a pause of
   * milliseconds at each interval's close (a --cpu-prof of bench showed that HDR work beside the per-operation path).
   */
  private checkoutWaitIntervalUs: Histogram = createHistogram()
  /** The same checkouts' connectionCheckedOut.durationMS (the driver's whole ms). */
  checkoutWaitDriverMS: Histogram = createHistogram()
  /** Connection set-up (TCP + handshake + auth): connectionCreated → connectionReady, µs on pooltool's clock. */
  setupUs: Histogram = createHistogram()
  /** The same connections' connectionReady.durationMS (the driver's whole ms). */
  setupDriverMS: Histogram = createHistogram()
  /** The clocks of attached clients; a detached client's unmatched count is kept in `unmatchedOfDetached`. */
  private readonly clocks = new Set<CheckoutSetupTimer>()
  private unmatchedOfDetached = 0

  private readonly onCreated = (clock: CheckoutSetupTimer, event: ConnectionCreatedEvent): void => {
    clock.connectionCreated(event.address, event.connectionId, performance.now())
    this.created += 1
    this.total += 1
    if (this.total > this.peakTotal) this.peakTotal = this.total
  }
  private readonly onReady = (clock: CheckoutSetupTimer, event: ConnectionReadyEvent): void => {
    const setupMs = clock.connectionReady(event.address, event.connectionId, performance.now())
    // A connection created before this listener was attached has no start of ours: the driver's figure stands in.
    recordOwnMs(this.setupUs, setupMs ?? event.durationMS)
    recordDriverMS(this.setupDriverMS, event.durationMS)
  }
  private readonly onClosed = (clock: CheckoutSetupTimer, event: ConnectionClosedEvent): void => {
    clock.connectionClosed(event.address, event.connectionId, event.reason)
    this.total -= 1
    this.closed[event.reason] = (this.closed[event.reason] ?? 0) + 1
  }
  private readonly onCheckOutStarted = (clock: CheckoutSetupTimer, event: ConnectionCheckOutStartedEvent): void => {
    clock.checkOutStarted(event.address, performance.now())
  }
  private readonly onCheckedOut = (clock: CheckoutSetupTimer, event: ConnectionCheckedOutEvent): void => {
    const waitMs = clock.checkedOut(event.address, event.connectionId, event.durationMS, performance.now())
    this.inUse += 1
    if (this.inUse > this.peakInUse) this.peakInUse = this.inUse
    recordOwnMs(this.checkoutWaitUs, waitMs ?? event.durationMS)
    recordOwnMs(this.checkoutWaitIntervalUs, waitMs ?? event.durationMS)
    recordDriverMS(this.checkoutWaitDriverMS, event.durationMS)
  }
  private readonly onCheckedIn = (): void => {
    this.inUse -= 1
  }
  private readonly onCheckOutFailed = (clock: CheckoutSetupTimer, event: ConnectionCheckOutFailedEvent): void => {
    clock.checkOutFailed(event.address, event.durationMS, performance.now())
    this.checkOutFailed[event.reason] = (this.checkOutFailed[event.reason] ?? 0) + 1
  }
  private readonly onCleared = (): void => {
    this.cleared += 1
  }

  /** Start listening to a client's pool events; returns the function that stops it. */
  attach(client: MongoClient): () => void {
    // One clock per client: connection ids and wait queues are per pool.
    const clock = new CheckoutSetupTimer()
    this.clocks.add(clock)
    const on = <E>(handler: (clock: CheckoutSetupTimer, event: E) => void) => (event: E) => handler(clock, event)
    const listeners = [
      ['connectionCreated', on(this.onCreated)],
      ['connectionReady', on(this.onReady)],
      ['connectionClosed', on(this.onClosed)],
      ['connectionCheckOutStarted', on(this.onCheckOutStarted)],
      ['connectionCheckedOut', on(this.onCheckedOut)],
      ['connectionCheckedIn', this.onCheckedIn],
      ['connectionCheckOutFailed', on(this.onCheckOutFailed)],
      ['connectionPoolCleared', this.onCleared],
    ] as const
    for (const [event, listener] of listeners) client.on(event, listener as never)
    return () => {
      for (const [event, listener] of listeners) client.off(event, listener as never)
      if (this.clocks.delete(clock)) this.unmatchedOfDetached += clock.unmatched
    }
  }

  /**
   * Start a measured interval (after warm-up): counters and histograms restart,
   * gauges keep their current value and peaks restart from it. Checkouts in
   * flight stay tracked and count when they end.
   */
  resetCounters(): void {
    this.created = 0
    this.cleared = 0
    for (const key of Object.keys(this.closed)) delete this.closed[key]
    for (const key of Object.keys(this.checkOutFailed)) delete this.checkOutFailed[key]
    this.peakTotal = this.total
    this.peakInUse = this.inUse
    this.checkoutWaitUs = createHistogram()
    this.checkoutWaitIntervalUs = createHistogram()
    this.checkoutWaitDriverMS = createHistogram()
    this.setupUs = createHistogram()
    this.setupDriverMS = createHistogram()
  }

  /** The checkouts (µs on pooltool's clock) since the previous call, or since measuring began: one series interval's. */
  takeCheckoutWaitInterval(): Histogram {
    const interval = this.checkoutWaitIntervalUs
    this.checkoutWaitIntervalUs = createHistogram()
    return interval
  }

  /**
   * Checkout ends pooltool could not pair with a start that agrees with the
   * driver's durationMS (their wait is still recorded, from the best guess or
   * the driver's figure). 0 on a healthy run: a check for tests and debugging.
   */
  get unmatchedCheckouts(): number {
    let sum = this.unmatchedOfDetached
    for (const clock of this.clocks) sum += clock.unmatched
    return sum
  }

  snapshot(): PoolTelemetrySnapshot {
    return {
      created: this.created,
      closed: {...this.closed},
      checkOutFailed: {...this.checkOutFailed},
      cleared: this.cleared,
      total: this.total,
      inUse: this.inUse,
      peakTotal: this.peakTotal,
      peakInUse: this.peakInUse,
    }
  }
}
