/**
 * Comma lists in flag values (a comma list on a sweepable flag runs the
 * matrix). Pure, throwing PoolToolError('USAGE') with a hint.
 */
import {usageError} from '../errors.js'

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
