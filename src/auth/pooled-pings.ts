/**
 * The unit of `pooltool auth`'s headline: pings through one warm pooled
 * client on the measured host, so "one new connection costs K pooled pings"
 * compares like with like (same host, same network path).
 */
import {performance} from 'node:perf_hooks'

import {createHistogram, type Histogram, recordMs} from '../metrics/histograms.js'
import {createClient} from '../mongo/client.js'

/** Untimed pings first, so the timed ones see a warm connection and a warm server path. */
const PING_WARMUP = 20

/** `pings` timed pings (after the warm-up) through one pooled connection; stops early once `signal` is aborted. */
export async function pooledPings(uri: string, settings: {appName: string; timeoutMs: number}, pings: number, signal: AbortSignal): Promise<Histogram> {
  const client = createClient({uri, ...settings, pool: {maxPoolSize: 1}, extra: {serverMonitoringMode: 'poll'}})
  const histogram = createHistogram()
  try {
    const admin = client.db('admin')
    await client.connect()
    for (let i = 0; i < PING_WARMUP && !signal.aborted; i++) await admin.command({ping: 1})
    for (let i = 0; i < pings && !signal.aborted; i++) {
      const started = performance.now()
      await admin.command({ping: 1})
      recordMs(histogram, performance.now() - started)
    }
  } finally {
    await client.close().catch(() => undefined)
  }
  return histogram
}
