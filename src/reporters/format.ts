/** Small number formatters shared by the reporters. */

/** 850 → "850µs", 12_345 → "12.3ms", 1_234_567 → "1.23s". */
export function formatUs(us: number | null | undefined): string {
  if (us === null || us === undefined) return '–'
  if (us < 1000) return `${Math.round(us)}µs`
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)}ms`
  return `${(us / 1_000_000).toFixed(2)}s`
}

/** 850 → "850ms", 12_300 → "12.3s", 905_000 → "15m 5s", 7_300_000 → "2h 1m". */
export function formatAgeMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–'
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m ${Math.floor((ms % 60_000) / 1000)}s`
  if (ms < 172_800_000) return `${Math.floor(ms / 3_600_000)}h ${Math.floor((ms % 3_600_000) / 60_000)}m`
  return `${Math.floor(ms / 86_400_000)}d`
}

export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–'
  return Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', {maximumFractionDigits: 1})
}

export function formatRecord(record: Record<string, number>): string {
  const entries = Object.entries(record).filter(([, n]) => n > 0)
  return entries.length === 0 ? '0' : entries.map(([key, n]) => `${key} ${n}`).join(', ')
}

/** Tables without colour codes when stdout is not a terminal (pipes, CI logs). */
export const TABLE_STYLE = {head: [] as string[], border: [] as string[]}
