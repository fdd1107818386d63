/**
 * Query filters compiled once into predicates: equality (dotted paths, arrays contain),
 * $eq $ne $gt $gte $lt $lte $in $nin $exists $and $or $nor $not $regex $size $all
 * $elemMatch $type $mod.
 */
import type {Document} from 'bson'
import {CommandError} from '../errors.js'
import {splitPath, collectValues} from './paths.js'
import {numberKind} from './numbers.js'
import {bsonType, compareValues, isNumeric, isPlainObject, toNumber, typeOrder, valuesEqual} from './values.js'

export type Predicate = (doc: Document) => boolean
type ValuePred = (v: unknown) => boolean
/** A predicate over every value a path reaches. */
type ListPred = (values: unknown[]) => boolean

const matchAll: Predicate = () => true

export function compileFilter(filter: Document | undefined | null): Predicate {
  if (filter === undefined || filter === null) return matchAll
  if (!isPlainObject(filter)) throw new CommandError(2, 'query filter must be an object')
  const preds: Predicate[] = []
  for (const key of Object.keys(filter)) {
    const value = filter[key]
    if (key[0] === '$') {
      preds.push(compileLogical(key, value))
    } else {
      preds.push(compileField(key, value))
    }
  }
  if (preds.length === 0) return matchAll
  if (preds.length === 1) return preds[0]
  return (doc) => {
    for (const p of preds) if (!p(doc)) return false
    return true
  }
}

function compileLogical(op: string, value: unknown): Predicate {
  switch (op) {
    case '$and':
    case '$or':
    case '$nor': {
      if (!Array.isArray(value) || value.length === 0) {
        throw new CommandError(2, `${op} must be a nonempty array`)
      }
      const subs = value.map((f) => compileFilter(f as Document))
      if (op === '$and') return (d) => subs.every((p) => p(d))
      if (op === '$or') return (d) => subs.some((p) => p(d))
      return (d) => !subs.some((p) => p(d))
    }
    case '$comment':
      return matchAll
    case '$expr':
    case '$where':
    case '$text':
    default:
      throw new CommandError(2, `unknown top level operator: ${op}. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.`)
  }
}

function isOperatorObject(v: unknown): v is Document {
  if (!isPlainObject(v)) return false
  const keys = Object.keys(v)
  return keys.length > 0 && keys[0][0] === '$'
}

function compileField(path: string, spec: unknown): Predicate {
  const parts = splitPath(path)
  const listPred = compileValueSpec(spec)
  return (doc) => {
    const values: unknown[] = []
    collectValues(doc, parts, 0, values)
    return listPred(values)
  }
}

/**
 * Returns a predicate over the list of values a path reaches.
 * Positive operators hold if any value (or array element) satisfies them.
 */
function compileValueSpec(spec: unknown): ListPred {
  if (isOperatorObject(spec)) {
    const preds: ListPred[] = []
    const keys = Object.keys(spec)
    for (const op of keys) {
      if (op === '$options') continue
      preds.push(compileOperator(op, spec[op], spec))
    }
    return (values) => {
      for (const p of preds) if (!p(values)) return false
      return true
    }
  }
  if (spec instanceof RegExp || bsonType(spec) === 'BSONRegExp') {
    return anyValue(regexPred(toRegExp(spec)))
  }
  return anyValue(eqPred(spec))
}

/** Applies an element predicate to each reached value and to elements of reached arrays. */
function anyValue(pred: ValuePred, wholeArrays = true): ListPred {
  return (values) => {
    for (const v of values) {
      if (Array.isArray(v)) {
        if (wholeArrays && pred(v)) return true
        for (const el of v) if (pred(el)) return true
      } else if (pred(v)) {
        return true
      }
    }
    return false
  }
}

function eqPred(target: unknown): ValuePred {
  if (target === null) return (v) => v === null || v === undefined
  return (v) => v !== undefined && valuesEqual(v, target)
}

function regexPred(re: RegExp): ValuePred {
  return (v) => {
    if (typeof v === 'string') {
      re.lastIndex = 0
      return re.test(v)
    }
    if (v instanceof RegExp) return v.source === re.source
    return false
  }
}

function toRegExp(v: unknown, options?: unknown): RegExp {
  if (v instanceof RegExp) {
    return options ? new RegExp(v.source, String(options).replace(/[^imsu]/g, '')) : v
  }
  if (bsonType(v) === 'BSONRegExp') {
    const r = v as {pattern: string; options: string}
    return new RegExp(r.pattern, String(options ?? r.options).replace(/[^imsu]/g, ''))
  }
  if (typeof v === 'string') return new RegExp(v, String(options ?? '').replace(/[^imsu]/g, ''))
  throw new CommandError(2, '$regex has to be a string')
}

function comparePred(op: string, target: unknown): ValuePred {
  const order = typeOrder(target)
  return (v) => {
    if (v === undefined) return false
    if (typeOrder(v) !== order) return false
    const c = compareValues(v, target)
    switch (op) {
      case '$gt':
        return c > 0
      case '$gte':
        return c >= 0
      case '$lt':
        return c < 0
      default:
        return c <= 0
    }
  }
}

function inPred(list: unknown): ValuePred {
  if (!Array.isArray(list)) throw new CommandError(2, '$in needs an array')
  const preds = list.map((t) =>
    t instanceof RegExp || bsonType(t) === 'BSONRegExp' ? regexPred(toRegExp(t)) : eqPred(t),
  )
  return (v) => preds.some((p) => p(v))
}

const TYPE_ALIASES: Record<string, number> = {
  double: 1, string: 2, object: 3, array: 4, binData: 5, undefined: 6, objectId: 7, bool: 8,
  date: 9, null: 10, regex: 11, int: 16, timestamp: 17, long: 18, decimal: 19, minKey: -1, maxKey: 127,
}

function bsonTypeNumber(v: unknown): number {
  if (v === null) return 10
  if (v === undefined) return 6
  if (typeof v === 'string') return 2
  if (typeof v === 'boolean') return 8
  if (typeof v === 'number') return numberKind(v) === 'int' ? 16 : 1
  if (typeof v === 'bigint') return 18
  if (Array.isArray(v)) return 4
  if (v instanceof Date) return 9
  if (v instanceof RegExp) return 11
  switch (bsonType(v)) {
    case 'ObjectId': return 7
    case 'Binary': return 5
    case 'Long': return 18
    case 'Int32': return 16
    case 'Double': return 1
    case 'Decimal128': return 19
    case 'Timestamp': return 17
    case 'MinKey': return -1
    case 'MaxKey': return 127
    case 'BSONRegExp': return 11
    default: return 3
  }
}

function compileOperator(op: string, arg: unknown, whole: Document): ListPred {
  switch (op) {
    case '$eq':
      return anyValue(eqPred(arg))
    case '$ne': {
      const p = anyValue(eqPred(arg))
      return (vs) => !p(vs)
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return anyValue(comparePred(op, arg), false)
    case '$in':
      return anyValue(inPred(arg))
    case '$nin': {
      const p = anyValue(inPred(arg))
      return (vs) => !p(vs)
    }
    case '$exists': {
      const want = Boolean(arg)
      return (vs) => vs.some((v) => v !== undefined) === want
    }
    case '$regex':
      return anyValue(regexPred(toRegExp(arg, whole.$options)), false)
    case '$not': {
      const inner =
        arg instanceof RegExp || bsonType(arg) === 'BSONRegExp'
          ? anyValue(regexPred(toRegExp(arg)), false)
          : isOperatorObject(arg)
            ? compileValueSpec(arg)
            : null
      if (!inner) throw new CommandError(2, '$not needs a regex or a document')
      return (vs) => !inner(vs)
    }
    case '$size': {
      const n = toNumber(arg)
      return (vs) => vs.some((v) => Array.isArray(v) && v.length === n)
    }
    case '$all': {
      if (!Array.isArray(arg)) throw new CommandError(2, '$all needs an array')
      const preds = arg.map((t) => anyValue(eqPred(t)))
      return (vs) => preds.length > 0 && preds.every((p) => p(vs))
    }
    case '$elemMatch': {
      if (!isPlainObject(arg)) throw new CommandError(2, '$elemMatch needs an Object')
      const elemPred: ValuePred = isOperatorObject(arg)
        ? ((p: ListPred) => (el: unknown) => p([el]))(compileValueSpec(arg))
        : ((p: Predicate) => (el: unknown) => isPlainObject(el) && p(el))(compileFilter(arg))
      return (vs) => vs.some((v) => Array.isArray(v) && v.some(elemPred))
    }
    case '$type': {
      const wanted = (Array.isArray(arg) ? arg : [arg]).map((t) =>
        typeof t === 'string' ? (t === 'number' ? 'number' : TYPE_ALIASES[t]) : toNumber(t),
      )
      const el: ValuePred = (v) =>
        v !== undefined &&
        wanted.some((w) => (w === 'number' ? isNumeric(v) : bsonTypeNumber(v) === w))
      return anyValue(el)
    }
    case '$mod': {
      if (!Array.isArray(arg) || arg.length !== 2) throw new CommandError(2, 'malformed mod, needs to be an array')
      const d = toNumber(arg[0])
      const r = toNumber(arg[1])
      return anyValue((v) => isNumeric(v) && Math.trunc(toNumber(v)) % d === r, false)
    }
    case '$comment':
      return () => true
    default:
      throw new CommandError(2, `unknown operator: ${op}`)
  }
}

/**
 * The _id values a filter pins down (`{_id: v}`, `{_id: {$eq: v}}`, `{_id: {$in: [...]}}`),
 * or null when the whole collection must be scanned.
 */
export function idLookupKeys(filter: Document | undefined | null): unknown[] | null {
  if (!filter || !('_id' in filter)) return null
  const spec = filter._id
  if (isOperatorObject(spec)) {
    const keys = Object.keys(spec)
    if (keys.length !== 1) return null
    if (keys[0] === '$eq') return isPlainObject(spec.$eq) ? null : [spec.$eq]
    if (keys[0] === '$in' && Array.isArray(spec.$in)) {
      return spec.$in.every((v: unknown) => !isPlainObject(v) && !Array.isArray(v) && !(v instanceof RegExp)) ? spec.$in : null
    }
    return null
  }
  if (isPlainObject(spec) || Array.isArray(spec) || spec instanceof RegExp || bsonType(spec) === 'BSONRegExp') return null
  return [spec]
}
