/**
 * Exact BSON number types in the store: how a value keeps the type the client sent, and the
 * type an arithmetic result has, as mongod decides it.
 *
 * Representation (the "exact" form every document in the sim is in):
 * - a JS `number` is an int32 when it is an integer in int32 range (not -0), a double otherwise;
 *   that is exactly how the bson serializer writes a JS number, so such a value round-trips;
 * - a double whose value looks like an int32 (5.0, -0.0) stays a `Double` instance;
 * - int64 stays a `Long`, decimal128 a `Decimal128`.
 * Int32 stays a plain number so every handler that reads `limit: 5` keeps working unchanged.
 *
 * Result types follow mongod's SafeNum / aggregation rules (src/mongo/util/safe_num.cpp,
 * src/mongo/db/pipeline/accumulator_sum.cpp, accumulator_avg.cpp): the wider of the operand
 * types (int < long < double < decimal); int overflow widens to long, long overflow to double;
 * `$avg` and `$divide` are doubles (decimals stay decimal).
 */
import {Decimal128, Double, Long, type DeserializeOptions, type Document, type Int32} from 'bson'
import {bsonType, isPlainObject, toNumber} from './values.js'

export type NumberKind = 'int' | 'long' | 'double' | 'decimal'

const KIND_RANK: Record<NumberKind, number> = {int: 0, long: 1, double: 2, decimal: 3}

const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1

function looksLikeInt32(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX && !Object.is(n, -0)
}

/** The BSON number type of a value in exact form (undefined for a non-number). */
export function numberKind(v: unknown): NumberKind | undefined {
  if (typeof v === 'number') return looksLikeInt32(v) ? 'int' : 'double'
  if (typeof v === 'bigint') return 'long'
  switch (bsonType(v)) {
    case 'Int32':
      return 'int'
    case 'Long':
      return 'long'
    case 'Double':
      return 'double'
    case 'Decimal128':
      return 'decimal'
    default:
      return undefined
  }
}

export function widerKind(a: NumberKind, b: NumberKind): NumberKind {
  return KIND_RANK[a] >= KIND_RANK[b] ? a : b
}

/** A double in exact form: a plain number unless the serializer would write it as an int32. */
export function exactDouble(n: number): number | Double {
  return looksLikeInt32(n) ? new Double(n) : n
}

function toLong(v: unknown): Long {
  if (bsonType(v) === 'Long') return v as Long
  if (typeof v === 'bigint') return Long.fromBigInt(v)
  return Long.fromNumber(toNumber(v))
}

const LONG_MIN = Long.MIN_VALUE.toBigInt()
const LONG_MAX = Long.MAX_VALUE.toBigInt()

/** `value` as a number of `kind`, widening on overflow (int → long → double) like SafeNum. */
function fromBig(kind: 'int' | 'long', value: bigint): number | Long | Double {
  if (kind === 'int' && value >= BigInt(INT32_MIN) && value <= BigInt(INT32_MAX)) return Number(value)
  if (value >= LONG_MIN && value <= LONG_MAX) return Long.fromBigInt(value)
  return exactDouble(Number(value))
}

function decimal(n: number): Decimal128 {
  return Decimal128.fromString(String(n))
}

/**
 * `a + b` or `a * b` with mongod's result type. Decimal arithmetic goes through doubles here
 * (the sim has no decimal engine): the type is right, digits beyond a double's are not kept.
 */
export function arithmetic(op: 'add' | 'multiply' | 'subtract', a: unknown, b: unknown): unknown {
  const kind = widerKind(numberKind(a) ?? 'double', numberKind(b) ?? 'double')
  if (kind === 'int' || kind === 'long') {
    const x = toLong(a).toBigInt()
    const y = toLong(b).toBigInt()
    return fromBig(kind, op === 'add' ? x + y : op === 'subtract' ? x - y : x * y)
  }
  const x = toNumber(a)
  const y = toNumber(b)
  const r = op === 'add' ? x + y : op === 'subtract' ? x - y : x * y
  return kind === 'decimal' ? decimal(r) : exactDouble(r)
}

/** A quotient or mean: a double, or a decimal when an operand is one. */
export function fractional(n: number, decimalResult: boolean): unknown {
  return decimalResult ? decimal(n) : exactDouble(n)
}

/** `$sum`: int while every term is an int and it fits, then long, then double (accumulator_sum.cpp). */
export function sumOf(values: readonly unknown[]): unknown {
  let acc: unknown = 0
  for (const v of values) if (numberKind(v) !== undefined) acc = arithmetic('add', acc, v)
  return acc
}

/** `$avg`: always a double (a decimal when a term is one), null without numeric terms. */
export function averageOf(values: readonly unknown[]): unknown {
  const nums = values.filter((v) => numberKind(v) !== undefined)
  if (nums.length === 0) return null
  const isDecimal = nums.some((v) => numberKind(v) === 'decimal')
  return fractional(nums.reduce((s: number, v) => s + toNumber(v), 0) / nums.length, isDecimal)
}

/**
 * How the sim decodes what arrives on the wire: every number keeps its BSON type
 * (`promoteValues: false`), then `toExactForm` turns int32s back into plain numbers.
 */
export const EXACT_DECODE: DeserializeOptions = {promoteValues: false}

/** Converts a `promoteValues: false` decode into exact form (in place for documents and arrays). */
export function toExactForm<T>(v: T): T {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = toExactForm(v[i])
    return v
  }
  if (isPlainObject(v)) {
    for (const k of Object.keys(v)) (v as Document)[k] = toExactForm((v as Document)[k])
    return v
  }
  const t = bsonType(v)
  if (t === 'Int32') return (v as unknown as Int32).value as T
  if (t === 'Double') return exactDouble((v as unknown as Double).value) as T
  return v
}
