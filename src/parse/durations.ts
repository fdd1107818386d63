/**
 * Durations as users write them: `500ms`, `10s`, `1.5m`, `2h`. One grammar for
 * every duration flag of every command and for the durations inside other
 * values (`--fault stall:1s@5s`). Pure, throwing PoolToolError('USAGE') with a
 * hint; the oclif flag type on top of it is src/cli/flags.ts.
 *
 * A bare number is refused: `--interval 500` used to mean 500 s in one command
 * and 500 ms in another. Zero is the exception, since it means the same in
 * every unit (`--warmup 0`, `--fault restart:2s@0`).
 */
import {usageError} from '../errors.js'

export const DURATION_UNITS_MS = {ms: 1, s: 1000, m: 60_000, h: 3_600_000} as const

export type DurationUnit = keyof typeof DURATION_UNITS_MS

/** What every duration error suggests. */
export const DURATION_HINT = 'write it with a unit: 500ms, 10s, 2m or 1h'

/**
 * The longest timer Node.js keeps: setTimeout/setInterval treat anything above
 * 2^31-1 ms as 1 ms, so `--duration 1000h` used to measure about 1 ms. Every
 * duration flag goes through parseDurationMs and most end in a timer, so the
 * limit is refused here, once, rather than chaining timers in each consumer:
 * no load run or watch needs more than 24 days in one invocation.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i

/** "10s", "250ms", "1.5m", "2h" (or "0") → milliseconds, rounded to a whole one. `flagName` names the flag in errors. */
export function parseDurationMs(text: string, flagName: string): number {
  const match = DURATION.exec(text)
  if (!match) throw usageError(`--${flagName} '${text}' is not a duration`, DURATION_HINT)
  const [, number, unit] = match as unknown as [string, string, string | undefined]
  const amount = Number(number)
  if (unit === undefined) {
    if (amount === 0) return 0
    throw usageError(`--${flagName} ${text.trim()} has no unit`, `say ${number}ms or ${number}s; the units are ms, s, m and h`)
  }
  const value = Math.round(amount * DURATION_UNITS_MS[unit.toLowerCase() as DurationUnit])
  if (value > MAX_DURATION_MS) {
    throw usageError(`--${flagName} '${text}' is above the longest duration pooltool can time (${MAX_DURATION_MS} ms, about 24.8 days)`, 'use at most 596h')
  }
  return value
}

/** A duration flag that also takes `auto` (bench --warmup): milliseconds, or 'auto'. */
export function parseDurationOrAutoMs(text: string, flagName: string): number | 'auto' {
  if (text.trim().toLowerCase() === 'auto') return 'auto'
  try {
    return parseDurationMs(text, flagName)
  } catch (error) {
    // Neither a duration nor auto: the hint names both (a number without a unit keeps its own, sharper message).
    if (error instanceof Error && /is not a duration/.test(error.message)) {
      throw usageError(`--${flagName} '${text}' is neither auto nor a duration`, `give auto (the default) or a length with a unit, e.g. 10s; 0s turns it off`)
    }
    throw error
  }
}

/** Milliseconds the way a user would write them back (help texts, messages): 250 → "250ms", 90000 → "90s", 900000 → "15m". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s'
  for (const unit of ['h', 'm', 's'] as const) {
    if (ms % DURATION_UNITS_MS[unit] === 0) return `${ms / DURATION_UNITS_MS[unit]}${unit}`
  }
  return `${ms}ms`
}
