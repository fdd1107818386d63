/**
 * The unit of `pooltool auth`'s headline: pings through one warm pooled
 * client on the measured host, so "one new connection costs K pooled pings"
 * compares like with like (same host, same network path).
 */
import {performance} from 'node:perf_hooks'

import {createHistogram, type Histogram, recordMs} from '../metrics/histograms.js'
import {CLOSE_GRACE_MS, closeWithin} from '../mongo/client.js'
import {createClient} from '../mongo/client.js'

/** Untimed pings first, so the timed ones see a warm connection and a warm server path. */
const PING_WARMUP = 20

/**
 * `pings` timed pings (after the warm-up) through one pooled connection; stops early once
 * `signal` is aborted. Each ping is bounded by --timeout-ms (the driver's per-operation
 * AbortSignal: driver 7 ignores timeoutMS), so a host that stalls cannot hold the run.
 */
export async function pooledPings(uri: string, settings: {appName: string; timeoutMs: number}, pings: number, signal: AbortSignal): Promise<Histogram> {
  const client = createClient({uri, ...settings, pool: {maxPoolSize: 1}, extra: {serverMonitoringMode: 'poll'}})
  const histogram = createHistogram()
  const admin = client.db('admin')
  const ping = () => admin.command({ping: 1}, {signal: AbortSignal.any([signal, AbortSignal.timeout(settings.timeoutMs)])})
  try {
    await client.connect()
    for (let i = 0; i < PING_WARMUP && !signal.aborted; i++) await ping()
    for (let i = 0; i < pings && !signal.aborted; i++) {
      const started = performance.now()
      await ping()
      recordMs(histogram, performance.now() - started)
    }
  } catch (error) {
    // Ctrl-C cut a ping short: the pings measured so far stand.
    if (!signal.aborted) throw error
  } finally {
    await closeWithin(client, CLOSE_GRACE_MS)
  }
  return histogram
}
