/** A small aggregation expression evaluator ($field paths, literals and common operators). */
import {Long, type Document} from 'bson'
import {CommandError} from '../errors.js'
import {getFieldPath, splitPath} from './paths.js'
import {arithmetic, averageOf, fractional, numberKind, sumOf, widerKind} from './numbers.js'
import {compareValues, isNumeric, isPlainObject, toNumber, valuesEqual} from './values.js'

export type Expr = (doc: Document) => unknown

export function compileExpression(spec: unknown): Expr {
  if (typeof spec === 'string') {
    if (spec.startsWith('$$')) {
      if (spec === '$$ROOT' || spec === '$$CURRENT') return (d) => d
      if (spec.startsWith('$$ROOT.') || spec.startsWith('$$CURRENT.')) {
        const parts = splitPath(spec.slice(spec.indexOf('.') + 1))
        return (d) => getFieldPath(d, parts)
      }
      throw new CommandError(17276, `Use of undefined variable: ${spec.slice(2)}`)
    }
    if (spec.startsWith('$')) {
      const parts = splitPath(spec.slice(1))
      return (d) => getFieldPath(d, parts)
    }
    return () => spec
  }
  if (Array.isArray(spec)) {
    const items = spec.map(compileExpression)
    return (d) => items.map((e) => e(d))
  }
  if (isPlainObject(spec)) {
    const keys = Object.keys(spec)
    if (keys.length === 1 && keys[0][0] === '$') return compileOperator(keys[0], spec[keys[0]])
    const fields = keys.map((k) => [k, compileExpression(spec[k])] as const)
    return (d) => {
      const out: Document = {}
      for (const [k, e] of fields) {
        const v = e(d)
        if (v !== undefined) out[k] = v
      }
      return out
    }
  }
  return () => spec
}

function args(arg: unknown): Expr[] {
  return (Array.isArray(arg) ? arg : [arg]).map(compileExpression)
}

function num(v: unknown): number | null {
  return isNumeric(v) ? toNumber(v) : null
}

function compileOperator(op: string, arg: unknown): Expr {
  if (op === '$literal') return () => arg
  const a = args(arg)
  switch (op) {
    case '$add':
    case '$multiply': {
      return (d) => {
        let acc: unknown = op === '$add' ? 0 : 1
        let dateMs: number | undefined
        for (const e of a) {
          const v = e(d)
          if (v === null || v === undefined) return null
          if (v instanceof Date) {
            dateMs = v.getTime()
            continue
          }
          if (num(v) === null) throw new CommandError(16554, `${op} only supports numeric or date types`)
          acc = arithmetic(op === '$add' ? 'add' : 'multiply', acc, v)
        }
        return dateMs !== undefined ? new Date(dateMs + toNumber(acc)) : acc
      }
    }
    case '$subtract':
    case '$divide':
    case '$mod':
      return (d) => {
        const x = a[0](d)
        const y = a[1](d)
        if (x == null || y == null) return null
        if (x instanceof Date && y instanceof Date) return x.getTime() - y.getTime()
        const nx = x instanceof Date ? x.getTime() : num(x)
        const ny = num(y)
        if (nx === null || ny === null) throw new CommandError(16556, `${op} only supports numeric types`)
        if (op === '$subtract') return x instanceof Date ? new Date(nx - ny) : arithmetic('subtract', x, y)
        if (ny === 0) throw new CommandError(16608, "can't divide by zero")
        if (op === '$divide') return fractional(nx / ny, numberKind(x) === 'decimal' || numberKind(y) === 'decimal')
        // $mod keeps the wider operand type (int, long, double), as mongod's ExpressionMod.
        const kind = widerKind(numberKind(x)!, numberKind(y)!)
        return kind === 'int' ? nx % ny : kind === 'long' ? Long.fromNumber(nx % ny) : fractional(nx % ny, kind === 'decimal')
      }
    case '$concat':
      return (d) => {
        let s = ''
        for (const e of a) {
          const v = e(d)
          if (v == null) return null
          if (typeof v !== 'string') throw new CommandError(16702, '$concat only supports strings')
          s += v
        }
        return s
      }
    case '$toLower':
    case '$toUpper':
      return (d) => {
        const v = a[0](d)
        const s = v == null ? '' : String(v)
        return op === '$toLower' ? s.toLowerCase() : s.toUpperCase()
      }
    case '$toString':
      return (d) => {
        const v = a[0](d)
        return v == null ? null : String(v)
      }
    case '$size':
      return (d) => {
        const v = a[0](d)
        if (!Array.isArray(v)) throw new CommandError(17124, 'The argument to $size must be an array')
        return v.length
      }
    case '$ifNull':
      return (d) => {
        for (const e of a) {
          const v = e(d)
          if (v !== null && v !== undefined) return v
        }
        return null
      }
    case '$cond': {
      let c: Expr, t: Expr, f: Expr
      if (isPlainObject(arg)) {
        c = compileExpression(arg.if)
        t = compileExpression(arg.then)
        f = compileExpression(arg.else)
      } else {
        ;[c, t, f] = a
      }
      return (d) => (truthy(c(d)) ? t(d) : f(d))
    }
    case '$eq':
    case '$ne':
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
    case '$cmp':
      return (d) => {
        const x = a[0](d) ?? null
        const y = a[1](d) ?? null
        const c = compareValues(x, y)
        switch (op) {
          case '$eq':
            return valuesEqual(x, y)
          case '$ne':
            return !valuesEqual(x, y)
          case '$gt':
            return c > 0
          case '$gte':
            return c >= 0
          case '$lt':
            return c < 0
          case '$lte':
            return c <= 0
          default:
            return c < 0 ? -1 : c > 0 ? 1 : 0
        }
      }
    case '$and':
      return (d) => a.every((e) => truthy(e(d)))
    case '$or':
      return (d) => a.some((e) => truthy(e(d)))
    case '$not':
      return (d) => !truthy(a[0](d))
    case '$in':
      return (d) => {
        const list = a[1](d)
        if (!Array.isArray(list)) throw new CommandError(40081, '$in requires an array as a second argument')
        const v = a[0](d)
        return list.some((x) => valuesEqual(x, v))
      }
    case '$arrayElemAt':
      return (d) => {
        const list = a[0](d)
        const i = num(a[1](d)) ?? 0
        if (!Array.isArray(list)) return null
        return list[i < 0 ? list.length + i : i]
      }
    case '$first':
    case '$last':
      return (d) => {
        const list = a[0](d)
        if (!Array.isArray(list)) return null
        return op === '$first' ? list[0] : list[list.length - 1]
      }
    case '$sum':
    case '$avg':
    case '$max':
    case '$min':
      return (d) => {
        const vals = a.length === 1 ? a[0](d) : a.map((e) => e(d))
        const list = Array.isArray(vals) ? vals : [vals]
        if (op === '$max' || op === '$min') {
          let best: unknown = null
          for (const v of list) {
            if (v == null) continue
            if (best === null || (op === '$max' ? compareValues(v, best) > 0 : compareValues(v, best) < 0)) best = v
          }
          return best
        }
        return op === '$sum' ? sumOf(list) : averageOf(list)
      }
    case '$type':
      return (d) => {
        const v = a[0](d)
        if (v === undefined) return 'missing'
        if (v === null) return 'null'
        if (Array.isArray(v)) return 'array'
        if (typeof v === 'string') return 'string'
        if (typeof v === 'boolean') return 'bool'
        const kind = numberKind(v)
        if (kind !== undefined) return kind
        if (v instanceof Date) return 'date'
        return (v as {_bsontype?: string})._bsontype?.toLowerCase() ?? 'object'
      }
    default:
      throw new CommandError(168, `Unrecognized expression '${op}'`)
  }
}

export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false) return false
  if (isNumeric(v)) return toNumber(v) !== 0
  return true
}
