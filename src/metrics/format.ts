/** How a measured time and a measured count read: in the reporters' tables and in the engine's own messages. */

/** 850 → "850µs", 12_345 → "12.3ms", 1_234_567 → "1.23s". */
export function formatUs(us: number | null | undefined): string {
  if (us === null || us === undefined) return '–'
  if (us < 1000) return `${Math.round(us)}µs`
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)}ms`
  return `${(us / 1_000_000).toFixed(2)}s`
}

export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–'
  return Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', {maximumFractionDigits: 1})
}
