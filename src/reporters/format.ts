/** Small number formatters shared by the reporters. */

// Microseconds and counts are read by the engine too (a run's rate-shortfall message), so they live
// with the measurements, below every feature; the reporters take them from here as before.
export {formatCount, formatUs} from '../metrics/format.js'

/** 850 → "850ms", 12_300 → "12.3s", 905_000 → "15m 5s", 7_300_000 → "2h 1m". */
export function formatAgeMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–'
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m ${Math.floor((ms % 60_000) / 1000)}s`
  if (ms < 172_800_000) return `${Math.floor(ms / 3_600_000)}h ${Math.floor((ms % 3_600_000) / 60_000)}m`
  return `${Math.floor(ms / 86_400_000)}d`
}

export function formatRecord(record: Record<string, number>): string {
  const entries = Object.entries(record).filter(([, n]) => n > 0)
  return entries.length === 0 ? '0' : entries.map(([key, n]) => `${key} ${n}`).join(', ')
}

/** Tables without colour codes when stdout is not a terminal (pipes, CI logs). */
export const TABLE_STYLE = {head: [] as string[], border: [] as string[]}
