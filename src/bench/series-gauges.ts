/**
 * What a bench run's time series reads besides the engine's counts, as each
 * interval closes: the client pool's gauges, the checkout wait of that
 * interval alone, and each host's server connections at the sampler's latest
 * poll.
 */
import {type Histogram, percentileUs} from '../metrics/histograms.js'
import type {PoolTelemetry} from '../mongo/pool-telemetry.js'

export interface SeriesGauges {
  /** Connections checked out of the client pool(s) at the interval's end. */
  poolInUse: number
  /** Connections open in the client pool(s) at the interval's end. */
  poolTotal: number
  /** Checkouts that ended in this interval; absent when none did. */
  checkoutWaitP99Us?: number
  /** Per host: serverStatus connections.current at the latest poll; a host whose figure is unknown is left out. */
  serverConnections: Record<string, number>
}

/**
 * Each call: the checkouts that ended since the previous call (or since measuring began: resetCounters starts the
 * telemetry's interval afresh). The telemetry records them apart, so an interval's close copies no histogram.
 */
export function checkoutWaitIntervals(telemetry: PoolTelemetry): () => Histogram {
  return () => telemetry.takeCheckoutWaitInterval()
}

/** A reader of the gauges, one per run; `serverConnections` gives each host's latest reading. */
export function seriesGauges(telemetry: PoolTelemetry, serverConnections: () => Record<string, number>): () => SeriesGauges {
  const checkoutWait = checkoutWaitIntervals(telemetry)
  return () => {
    const interval = checkoutWait()
    return {
      poolInUse: telemetry.inUse,
      poolTotal: telemetry.total,
      ...(interval.totalCount > 0 ? {checkoutWaitP99Us: percentileUs(interval, 99)} : {}),
      serverConnections: serverConnections(),
    }
  }
}
