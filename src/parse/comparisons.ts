/**
 * Comma lists of `METRIC OP VALUE[UNIT]` comparisons, shared by `bench
 * --fail-on 'p99>50ms,errors>0'` and `conns watch --alert 'rate>50/s'`: one
 * grammar, one operator table; each caller gives the metrics and units meaning.
 */
import {usageError} from '../errors.js'

export const COMPARISON_OPERATORS = {
  '>': (a: number, b: number) => a > b,
  '>=': (a: number, b: number) => a >= b,
  '<': (a: number, b: number) => a < b,
  '<=': (a: number, b: number) => a <= b,
} as const

export type ComparisonOperator = keyof typeof COMPARISON_OPERATORS

export interface Comparison {
  /** As written, without white space, e.g. "p99>50ms". */
  expression: string
  /** As written, for error messages. */
  raw: string
  name: string
  operator: ComparisonOperator
  value: number
  /** The unit suffix as written, if any (one of `units`). */
  unit?: string
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/** Parse `text`; every unit suffix must be one of `units` (longest first is not needed: the pattern is anchored). */
export function parseComparisons(text: string, flagName: string, units: readonly string[], hint: string): Comparison[] {
  const parts = text.split(',').map((part) => part.trim())
  if (parts.every((part) => part === '')) throw usageError(`--${flagName} '${text}' is empty`, hint)
  const unitPattern = units.length > 0 ? `(${units.map(escape).join('|')})?` : '()?'
  const pattern = new RegExp(`^([A-Za-z][A-Za-z0-9]*)(>=|<=|>|<)(\\d+(?:\\.\\d+)?)${unitPattern}$`)
  return parts
    .filter((part) => part !== '')
    .map((raw) => {
      const expression = raw.replace(/\s+/g, '')
      const match = pattern.exec(expression)
      if (!match) throw usageError(`--${flagName} '${raw}' does not parse`, hint)
      const [, name, operator, value, unit] = match as unknown as [string, string, ComparisonOperator, string, string | undefined]
      return {expression, raw, name, operator, value: Number(value), unit}
    })
}

export function holds(operator: ComparisonOperator, actual: number, limit: number): boolean {
  return COMPARISON_OPERATORS[operator](actual, limit)
}
