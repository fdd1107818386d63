/** A one-line chart of a series: ▁▂▃▄▅▆▇█, a space where a value is missing. Pure. */
const BARS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const

/**
 * The last `width` values scaled between their min and max (a flat series is
 * drawn at the bottom). `undefined` (host unreachable) is drawn as a space.
 */
export function sparkline(values: ReadonlyArray<number | undefined>, width = values.length): string {
  const shown = values.slice(Math.max(0, values.length - width))
  const numbers = shown.filter((v): v is number => v !== undefined && Number.isFinite(v))
  if (numbers.length === 0) return ' '.repeat(shown.length)
  const min = Math.min(...numbers)
  const max = Math.max(...numbers)
  const span = max - min
  return shown
    .map((v) => {
      if (v === undefined || !Number.isFinite(v)) return ' '
      if (span === 0) return BARS[0]
      return BARS[Math.min(BARS.length - 1, Math.floor(((v - min) / span) * BARS.length))]
    })
    .join('')
}
