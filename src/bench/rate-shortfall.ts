/**
 * Did an open-loop run deliver its `--rate`? Pure: from the engine's counts to
 * the `achievedRatePerSec` and `rateShortfall` of a RunResult.
 */
import {formatCount, formatUs} from '../metrics/format.js'
import type {EngineMeasurement} from './engine.js'
import type {RateShortfall} from './types.js'

/** Below this share of the scheduled operations started, the run did not deliver its rate. */
export const DELIVERED_SHARE = 0.99

type Counts = Pick<EngineMeasurement, 'ops' | 'errors' | 'scheduled' | 'missedByReason' | 'durationMs'>

/** Operations started (completed or failed) per second of the measured interval; null in closed loop. */
export function achievedRatePerSec(counts: Counts): number | null {
  if (counts.scheduled === null) return null
  if (counts.durationMs <= 0) return 0
  return Math.round(((counts.ops + counts.errors) * 1000 * 10) / counts.durationMs) / 10
}

/**
 * The shortfall, judged on started ÷ scheduled rather than on ops/s ÷ rate:
 * the interval holds a whole number of slots, so a short run at a low rate
 * would read below its rate without having missed anything.
 */
export function rateShortfallOf(counts: Counts, targetPerSec: number | null, inFlightCap: number, meanLatencyUs?: number): RateShortfall | null {
  if (targetPerSec === null || counts.scheduled === null || counts.scheduled === 0) return null
  const started = counts.ops + counts.errors
  if (started >= DELIVERED_SHARE * counts.scheduled) return null
  const achievedPerSec = achievedRatePerSec(counts) ?? 0
  const missed = counts.scheduled - started
  const capWasFull = (counts.missedByReason.inFlightCapFull ?? 0) > 0
  const why = capWasFull
    ? `the in-flight cap --concurrency ${inFlightCap} was full; raise it${neededInFlight(targetPerSec, inFlightCap, meanLatencyUs)}`
    : `the load generator fell behind its schedule (${formatCount(missed)} operations had not started when the run ended)`
  return {
    targetPerSec,
    achievedPerSec,
    inFlightCap,
    message: `achieved ${formatCount(Math.round(achievedPerSec))} of ${formatCount(targetPerSec)} ops/s: ${why}`,
  }
}

/**
 * Little's law: a rate at a mean latency keeps rate × latency operations in
 * flight. Said only when that is above the cap: then raising the cap is the
 * fix; a stall (huge mean latency) shows up here as an absurd count, which is
 * the honest answer too.
 */
function neededInFlight(targetPerSec: number, inFlightCap: number, meanLatencyUs: number | undefined): string {
  if (meanLatencyUs === undefined || meanLatencyUs <= 0) return ''
  const needed = Math.ceil((targetPerSec * meanLatencyUs) / 1_000_000)
  return needed > inFlightCap ? ` (${formatCount(targetPerSec)} ops/s at a mean latency of ${formatUs(meanLatencyUs)} keep about ${formatCount(needed)} in flight)` : ''
}
