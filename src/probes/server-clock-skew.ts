/**
 * The server's clock against this machine's. Every age pooltool judges (lock
 * pings, router pings, heartbeats) is taken on the server's clock; the skew is
 * only reported, once per host, so a DBA knows why a machine-clock tool
 * (or a log line) disagrees.
 *
 * Skew = server time − the machine's time at the middle of the round trip
 * (the server read its clock somewhere in between), so the round trip bounds
 * the error: below SKEW_REPORT_MS it is not worth a line.
 */
import type {Reading} from './reader.js'

/** Skews smaller than this are noise (round trips, the server's clock resolution): not reported. */
export const SKEW_REPORT_MS = 5000

/** Server clock minus this machine's, in ms, from a reading that carries the server's clock (hello, serverStatus). */
export function clockSkewMS(reading: Pick<Reading<unknown>, 'serverTime' | 'receivedAt' | 'durationMS'>): number | undefined {
  if (!reading.serverTime) return undefined
  const machineMidpoint = reading.receivedAt.getTime() - reading.durationMS / 2
  return Math.round(reading.serverTime.getTime() - machineMidpoint)
}

/** One line for a skew worth reporting, else undefined. */
export function clockSkewNote(host: string, skewMS: number | undefined): string | undefined {
  if (skewMS === undefined || Math.abs(skewMS) < SKEW_REPORT_MS) return undefined
  const seconds = (Math.abs(skewMS) / 1000).toFixed(1)
  return `${host}'s clock is ${seconds} s ${skewMS > 0 ? 'ahead of' : 'behind'} this machine's: ages are judged on the server's clock`
}
