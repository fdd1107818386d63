/**
 * Times of day in what a watch prints: local time by default, with the zone said once, or UTC
 * (--utc). The result documents (--json, --ndjson) keep ISO instants in UTC: this is text only.
 */

/** Which clock times of day are shown on. `timeZone` undefined: this machine's local zone. */
export interface TimeDisplay {
  timeZone?: string
}

export const LOCAL_TIME: TimeDisplay = {}
export const UTC_TIME: TimeDisplay = {timeZone: 'UTC'}

/** --utc → UTC, else local. */
export function timeDisplayOf(utc: boolean | undefined): TimeDisplay {
  return utc ? UTC_TIME : LOCAL_TIME
}

const formatters = new Map<string, Intl.DateTimeFormat>()
function formatter(display: TimeDisplay): Intl.DateTimeFormat {
  const key = display.timeZone ?? ''
  let format = formatters.get(key)
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZone: display.timeZone})
    formatters.set(key, format)
  }
  return format
}

/** "14:03:07" (or "14:03:07.250" with milliseconds) of an ISO instant, on the chosen clock. */
export function timeOfDay(iso: string, display: TimeDisplay, milliseconds = false): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  const time = formatter(display).format(date)
  return milliseconds ? `${time}.${String(date.getUTCMilliseconds()).padStart(3, '0')}` : time
}

/** "2026-11-23 14:03:07" of an ISO instant, on the chosen clock. */
export function dateAndTime(iso: string, display: TimeDisplay): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {year: 'numeric', month: '2-digit', day: '2-digit', timeZone: display.timeZone}).formatToParts(date).map((part) => [part.type, part.value]),
  )
  return `${parts.year}-${parts.month}-${parts.day} ${timeOfDay(iso, display)}`
}

/** The zone's offset at `at`, "+05:30" or "-08:00". */
function offsetAt(at: Date, timeZone: string | undefined): string {
  const name = new Intl.DateTimeFormat('en-US', {timeZone, timeZoneName: 'longOffset'}).formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT'
  // "GMT+05:30", "GMT-08:00", or "GMT" for UTC itself.
  return name === 'GMT' ? '+00:00' : name.slice(3)
}

/** "times are local, UTC+05:30 (Asia/Kolkata); --utc for UTC" or "times are UTC". */
export function zoneNote(display: TimeDisplay, at: Date = new Date()): string {
  if (display.timeZone === 'UTC') return 'times are UTC'
  const zone = new Intl.DateTimeFormat('en-US', {timeZone: display.timeZone}).resolvedOptions().timeZone
  return `times are ${display.timeZone ? zone : 'local'}, UTC${offsetAt(at, display.timeZone)}${display.timeZone ? '' : ` (${zone})`}; --utc for UTC`
}
