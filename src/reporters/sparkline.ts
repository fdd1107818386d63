/** A one-line chart of a series: ▁▂▃▄▅▆▇█, a space where a value is missing. Pure. */
const BARS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const

/**
 * The last `width` values on a scale from zero to their max, so 2 and 42 stay apart (scaled between
 * min and max, 40 and 42 would look like 2 and 42); a series that is all zeros lies on the bottom.
 * A series whose values are all equal is idle and lies on the bottom at any level (its level is said beside it).
 * A negative value stretches the scale down to it. `undefined` (host unreachable) is drawn as a space.
 * Say the level beside it (`sparklineWithLevel`): the bars alone have no unit.
 */
export function sparkline(values: ReadonlyArray<number | undefined>, width = values.length): string {
  const shown = values.slice(Math.max(0, values.length - width))
  const numbers = shown.filter((v): v is number => v !== undefined && Number.isFinite(v))
  if (numbers.length === 0) return ' '.repeat(shown.length)
  // A series that never moved is idle: flat low bars, whatever its level (the level is said beside it), never a row of full blocks.
  if (Math.min(...numbers) === Math.max(...numbers)) return shown.map((v) => (v === undefined || !Number.isFinite(v) ? ' ' : BARS[0])).join('')
  const low = Math.min(0, ...numbers)
  const span = Math.max(...numbers) - low
  return shown
    .map((v) => {
      if (v === undefined || !Number.isFinite(v)) return ' '
      if (span === 0) return BARS[0]
      return BARS[Math.min(BARS.length - 1, Math.floor(((v - low) / span) * BARS.length))]
    })
    .join('')
}

/** "▁▃█▆ max 42": the bars and the top of their scale, in the series' unit. */
export function sparklineWithLevel(values: ReadonlyArray<number | undefined>, width: number, format: (value: number) => string): string {
  const shown = values.slice(Math.max(0, values.length - width)).filter((v): v is number => v !== undefined && Number.isFinite(v))
  return shown.length === 0 ? sparkline(values, width) : `${sparkline(values, width)} max ${format(Math.max(...shown))}`
}
