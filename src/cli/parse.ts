/**
 * Parsers for flag values that oclif has no type for: durations and comma
 * lists (a comma list on a sweepable flag runs the matrix). Pure functions,
 * throwing PoolToolError('USAGE') with a hint; shared by every command.
 */
import {usageError} from '../errors.js'

const DURATION_UNITS_MS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000}

/** "10s", "250ms", "1.5m", "2h"; a bare number counts in `bareUnit`. Returns milliseconds. */
export function parseDurationMs(text: string, flagName: string, bareUnit: 'ms' | 's' = 's'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text)
  if (!match) {
    throw usageError(`--${flagName} '${text}' is not a duration`, `write it as 500ms, 10s, 2m or 1h`)
  }
  const value = Math.round(Number(match[1]) * DURATION_UNITS_MS[(match[2] ?? bareUnit).toLowerCase()]!)
  if (value > MAX_DURATION_MS) {
    throw usageError(`--${flagName} '${text}' is above the longest duration pooltool can time (${MAX_DURATION_MS} ms, about 24.8 days)`, `use at most 596h`)
  }
  return value
}

/**
 * The longest timer Node.js keeps: setTimeout/setInterval treat anything above
 * 2^31-1 ms as 1 ms, so `--duration 1000h` used to measure about 1 ms. Every
 * duration flag goes through parseDurationMs and most end in a timer, so the
 * limit is refused here, once, rather than chaining timers in each consumer:
 * no load run or watch needs more than 24 days in one invocation.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1

/** "1,8,64" → [1, 8, 64]; every entry an integer within [min, max]. */
export function parseIntegerList(text: string, flagName: string, min: number, max = Number.MAX_SAFE_INTEGER): number[] {
  const values = text.split(',').map((part) => part.trim())
  if (values.some((v) => v === '')) throw usageError(`--${flagName} '${text}' has an empty entry`, `give a number or a comma list such as 1,8,64`)
  return values.map((v) => {
    if (!/^-?\d+$/.test(v)) throw usageError(`--${flagName} '${v}' is not a whole number`, `give a number or a comma list such as 1,8,64`)
    const n = Number(v)
    if (n < min || n > max) {
      throw usageError(`--${flagName} ${n} is out of range`, max === Number.MAX_SAFE_INTEGER ? `use a value of at least ${min}` : `use a value from ${min} to ${max}`)
    }
    return n
  })
}

/** "a,b" → ["a", "b"], each one of `allowed`. */
export function parseChoiceList<T extends string>(text: string, flagName: string, allowed: readonly T[]): T[] {
  return text.split(',').map((part) => {
    const value = part.trim()
    if (!(allowed as readonly string[]).includes(value)) {
      throw usageError(`--${flagName} '${value}' is not one of ${allowed.join(', ')}`, `choose from: ${allowed.join(', ')}`)
    }
    return value as T
  })
}
