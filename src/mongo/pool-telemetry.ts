/**
 * Client pool telemetry rebuilt from the driver's CMAP events (the pool's own
 * gauges are @internal): connections created and closed by reason, total and
 * in-use gauges with their peaks, checkout wait and connection set-up
 * histograms (durationMS, driver 6.9+), checkout failures by reason, clears.
 */
import {createHistogram, type Histogram, recordMs} from '../metrics/histograms.js'
import type {
  ConnectionCheckedOutEvent,
  ConnectionCheckOutFailedEvent,
  ConnectionClosedEvent,
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

export class PoolTelemetry {
  created = 0
  cleared = 0
  total = 0
  inUse = 0
  peakTotal = 0
  peakInUse = 0
  readonly closed: Record<string, number> = {}
  readonly checkOutFailed: Record<string, number> = {}
  /** Checkout wait: connectionCheckOutStarted → connectionCheckedOut, µs. */
  checkoutWaitUs: Histogram = createHistogram()
  /** Connection set-up (TCP + handshake + auth): connectionCreated → connectionReady, µs. */
  setupUs: Histogram = createHistogram()

  private readonly onCreated = (): void => {
    this.created += 1
    this.total += 1
    if (this.total > this.peakTotal) this.peakTotal = this.total
  }
  private readonly onReady = (event: ConnectionReadyEvent): void => {
    if (typeof event.durationMS === 'number') recordMs(this.setupUs, event.durationMS)
  }
  private readonly onClosed = (event: ConnectionClosedEvent): void => {
    this.total -= 1
    this.closed[event.reason] = (this.closed[event.reason] ?? 0) + 1
  }
  private readonly onCheckedOut = (event: ConnectionCheckedOutEvent): void => {
    this.inUse += 1
    if (this.inUse > this.peakInUse) this.peakInUse = this.inUse
    if (typeof event.durationMS === 'number') recordMs(this.checkoutWaitUs, event.durationMS)
  }
  private readonly onCheckedIn = (): void => {
    this.inUse -= 1
  }
  private readonly onCheckOutFailed = (event: ConnectionCheckOutFailedEvent): void => {
    this.checkOutFailed[event.reason] = (this.checkOutFailed[event.reason] ?? 0) + 1
  }
  private readonly onCleared = (): void => {
    this.cleared += 1
  }

  /** Start listening to a client's pool events; returns the function that stops it. */
  attach(client: MongoClient): () => void {
    const listeners = [
      ['connectionCreated', this.onCreated],
      ['connectionReady', this.onReady],
      ['connectionClosed', this.onClosed],
      ['connectionCheckedOut', this.onCheckedOut],
      ['connectionCheckedIn', this.onCheckedIn],
      ['connectionCheckOutFailed', this.onCheckOutFailed],
      ['connectionPoolCleared', this.onCleared],
    ] as const
    for (const [event, listener] of listeners) client.on(event, listener as never)
    return () => {
      for (const [event, listener] of listeners) client.off(event, listener as never)
    }
  }

  /**
   * Start a measured interval (after warm-up): counters and histograms restart,
   * gauges keep their current value and peaks restart from it.
   */
  resetCounters(): void {
    this.created = 0
    this.cleared = 0
    for (const key of Object.keys(this.closed)) delete this.closed[key]
    for (const key of Object.keys(this.checkOutFailed)) delete this.checkOutFailed[key]
    this.peakTotal = this.total
    this.peakInUse = this.inUse
    this.checkoutWaitUs = createHistogram()
    this.setupUs = createHistogram()
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
