/**
 * BSON value helpers for the in-memory store: type order and comparison (mongod's
 * canonical order), canonical keys for Map lookups by _id, deep clone and equality.
 */
import type {Document} from 'bson'

type Bsonish = {_bsontype: string}

export function bsonType(v: unknown): string | undefined {
  return typeof v === 'object' && v !== null ? (v as Partial<Bsonish>)._bsontype : undefined
}

/** A plain sub-document (not an array, not a BSON value class, not a Date/RegExp/bytes). */
export function isPlainObject(v: unknown): v is Document {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  if ((v as Partial<Bsonish>)._bsontype !== undefined) return false
  if (v instanceof Date || v instanceof RegExp || v instanceof Uint8Array) return false
  return true
}

export function isNumeric(v: unknown): boolean {
  if (typeof v === 'number' || typeof v === 'bigint') return true
  const t = bsonType(v)
  return t === 'Long' || t === 'Int32' || t === 'Double' || t === 'Decimal128'
}

export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  const t = bsonType(v)
  if (t === 'Long') return (v as {toNumber(): number}).toNumber()
  if (t === 'Int32' || t === 'Double') return (v as {value: number}).value
  if (t === 'Decimal128') return Number((v as {toString(): string}).toString())
  return NaN
}

/** mongod's canonical type order (lower sorts first). */
export function typeOrder(v: unknown): number {
  if (v === undefined || v === null) return 5
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 10
    case 'string':
      return 15
    case 'boolean':
      return 40
    case 'object':
      break
    default:
      return 100
  }
  if (Array.isArray(v)) return 25
  if (v instanceof Date) return 45
  if (v instanceof RegExp) return 50
  if (v instanceof Uint8Array) return 30
  switch ((v as Partial<Bsonish>)._bsontype) {
    case undefined:
      return 20
    case 'MinKey':
      return 1
    case 'MaxKey':
      return 127
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return 10
    case 'BSONSymbol':
      return 15
    case 'Binary':
      return 30
    case 'ObjectId':
      return 35
    case 'Timestamp':
      return 47
    case 'BSONRegExp':
      return 50
    case 'Code':
      return 60
    default:
      return 20
  }
}

function cmp<T>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function bytesOf(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v
  const b = v as {buffer: Uint8Array; position: number}
  return b.buffer.subarray(0, b.position)
}

/** Total order over BSON values, as mongod sorts them (good enough for the simulation). */
export function compareValues(a: unknown, b: unknown): number {
  const ta = typeOrder(a)
  const tb = typeOrder(b)
  if (ta !== tb) return ta - tb
  switch (ta) {
    case 5:
    case 1:
    case 127:
      return 0
    case 10:
      return cmp(toNumber(a), toNumber(b))
    case 15:
      return cmp(String(a), String(b))
    case 40:
      return cmp(a as boolean, b as boolean)
    case 45:
      return cmp((a as Date).getTime(), (b as Date).getTime())
    case 35:
      return cmp((a as {toHexString(): string}).toHexString(), (b as {toHexString(): string}).toHexString())
    case 47:
      return (a as {compare(o: unknown): number}).compare(b)
    case 30: {
      const x = bytesOf(a)
      const y = bytesOf(b)
      if (x.length !== y.length) return x.length - y.length
      return Buffer.compare(x, y)
    }
    case 25: {
      const x = a as unknown[]
      const y = b as unknown[]
      const n = Math.min(x.length, y.length)
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i])
        if (c !== 0) return c
      }
      return x.length - y.length
    }
    case 20: {
      const xk = Object.keys(a as object)
      const yk = Object.keys(b as object)
      const n = Math.min(xk.length, yk.length)
      for (let i = 0; i < n; i++) {
        const va = (a as Document)[xk[i]]
        const vb = (b as Document)[yk[i]]
        const t = typeOrder(va) - typeOrder(vb)
        if (t !== 0) return t
        const k = cmp(xk[i], yk[i])
        if (k !== 0) return k
        const c = compareValues(va, vb)
        if (c !== 0) return c
      }
      return xk.length - yk.length
    }
    default:
      return cmp(String(a), String(b))
  }
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  return compareValues(a, b) === 0 && typeOrder(a) === typeOrder(b)
}

/** A string that is equal for values mongod considers equal (used as the _id map key). */
export function canonicalKey(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return 's' + v
    case 'number':
      return 'n' + (v === 0 ? 0 : v)
    case 'boolean':
      return v ? 'b1' : 'b0'
    case 'bigint':
      return 'n' + Number(v)
    case 'undefined':
      return 'z'
    default:
      break
  }
  if (v === null) return 'z'
  const t = bsonType(v)
  if (t === 'ObjectId') return 'o' + (v as {toHexString(): string}).toHexString()
  if (isNumeric(v)) return 'n' + toNumber(v)
  if (v instanceof Date) return 'd' + v.getTime()
  if (Array.isArray(v)) return '[' + v.map(canonicalKey).join(',') + ']'
  if (isPlainObject(v)) {
    let s = '{'
    for (const k of Object.keys(v)) s += JSON.stringify(k) + ':' + canonicalKey(v[k]) + ','
    return s + '}'
  }
  if (t === 'Binary' || v instanceof Uint8Array) {
    const sub = v instanceof Uint8Array ? 0 : (v as {sub_type: number}).sub_type
    return 'x' + sub + ':' + Buffer.from(bytesOf(v)).toString('base64')
  }
  if (t === 'Timestamp') return 't' + String(v)
  if (v instanceof RegExp) return 'r' + v.source + '/' + v.flags
  return (t ?? 'u') + ':' + String(v)
}

/** Deep copy of plain objects and arrays; BSON value instances (immutable) are shared. */
export function cloneValue<T>(v: T): T {
  if (Array.isArray(v)) return v.map(cloneValue) as T
  if (isPlainObject(v)) {
    const out: Document = {}
    for (const k of Object.keys(v)) out[k] = cloneValue(v[k])
    return out as T
  }
  if (v instanceof Date) return new Date(v.getTime()) as T
  return v
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    if (ka.length !== kb.length) return false
    for (let i = 0; i < ka.length; i++) {
      if (ka[i] !== kb[i] || !deepEqual(a[ka[i]], b[kb[i]])) return false
    }
    return true
  }
  return typeOrder(a) === typeOrder(b) && compareValues(a, b) === 0 && bsonType(a) === bsonType(b)
}
