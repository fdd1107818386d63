/**
 * What a bench run's time series reads besides the engine's counts, as each
 * interval closes: the client pool's gauges, the checkout wait of that
 * interval alone, and each host's server connections at the sampler's latest
 * poll.
 */
import {createHistogram, type Histogram, percentileUs} from '../metrics/histograms.js'
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
 * Each call: the checkouts that ended since the previous call. The telemetry's histogram is cumulative
 * (and replaced when measuring starts): an interval's checkouts are its growth.
 */
export function checkoutWaitIntervals(telemetry: PoolTelemetry): () => Histogram {
  let seenOf: Histogram | undefined
  let seen = createHistogram()
  return () => {
    const cumulative = telemetry.checkoutWaitUs
    const interval = createHistogram()
    interval.add(cumulative)
    if (seenOf === cumulative) interval.subtract(seen)
    seenOf = cumulative
    seen = createHistogram()
    seen.add(cumulative)
    return interval
  }
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
