/**
 * What a bench run's time series reads besides the engine's counts, as each
 * interval closes: the client pool's gauges, the checkout wait of that
 * interval alone, and each host's server connections at the sampler's latest
 * poll.
 */
import {createHistogram, type Histogram, percentileUs} from '../metrics/histograms.js'
import type {PoolTelemetry} from '../mongo/pool-telemetry.js'
import type {ServerSampler} from './server-sampler.js'

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

/** A reader of the gauges, one per run: it keeps the checkout histogram as last seen to take the interval's part. */
export function seriesGauges(telemetry: PoolTelemetry, sampler: ServerSampler): () => SeriesGauges {
  // The telemetry's histogram is cumulative (and replaced when measuring starts): an interval's checkouts are its growth.
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
    return {
      poolInUse: telemetry.inUse,
      poolTotal: telemetry.total,
      ...(interval.totalCount > 0 ? {checkoutWaitP99Us: percentileUs(interval, 99)} : {}),
      serverConnections: sampler.currentConnections(),
    }
  }
}
