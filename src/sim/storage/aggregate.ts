/**
 * Aggregation pipeline over documents in memory: $match $project $addFields/$set $unset
 * $group $sort $limit $skip $count $unwind $replaceRoot. Source stages ($currentOp, …)
 * are resolved by the caller, which passes the input documents.
 */
import type {Document} from 'bson'
import {CommandError} from '../errors.js'
import {compileExpression, type Expr} from './expressions.js'
import {compileFilter} from './matcher.js'
import {getPath, setPath, unsetPath} from './paths.js'
import {compileProjection, sortDocuments} from './projection.js'
import {arithmetic, fractional, numberKind} from './numbers.js'
import {canonicalKey, compareValues, isNumeric, isPlainObject, toNumber} from './values.js'

type Stage = (docs: Document[]) => Document[]

export function stageName(stage: unknown): string {
  if (!isPlainObject(stage)) throw new CommandError(14, 'Each element of the \'pipeline\' array must be an object')
  const keys = Object.keys(stage)
  if (keys.length !== 1) throw new CommandError(40323, 'A pipeline stage specification object must contain exactly one field.')
  return keys[0]
}

export function runPipeline(input: Document[], pipeline: Document[]): Document[] {
  let docs = input
  for (const stage of pipeline.map(compileStage)) docs = stage(docs)
  return docs
}

function compileStage(stage: Document): Stage {
  const name = stageName(stage)
  const arg = stage[name]
  switch (name) {
    case '$match': {
      const pred = compileFilter(arg)
      return (docs) => docs.filter(pred)
    }
    case '$project': {
      const proj = compileProjection(arg)
      return proj ? (docs) => docs.map(proj) : (docs) => docs
    }
    case '$addFields':
    case '$set': {
      if (!isPlainObject(arg)) throw new CommandError(40272, `${name} specification stage must be an object`)
      const fields = Object.keys(arg).map((k) => [k, compileExpression(arg[k])] as const)
      return (docs) =>
        docs.map((d) => {
          const out = {...d}
          for (const [k, e] of fields) setPath(out, k, e(d))
          return out
        })
    }
    case '$unset': {
      const paths: string[] = Array.isArray(arg) ? arg : [arg]
      return (docs) =>
        docs.map((d) => {
          const out = structuredCloneShallow(d)
          for (const p of paths) unsetPath(out, p)
          return out
        })
    }
    case '$replaceRoot':
    case '$replaceWith': {
      const e = compileExpression(name === '$replaceRoot' ? arg?.newRoot : arg)
      return (docs) =>
        docs.map((d) => {
          const v = e(d)
          if (!isPlainObject(v)) throw new CommandError(40228, "'newRoot' expression must evaluate to an object")
          return v
        })
    }
    case '$sort':
      if (!isPlainObject(arg)) throw new CommandError(15973, 'the $sort key specification must be an object')
      return (docs) => sortDocuments(docs.slice(), arg)
    case '$limit': {
      const n = toNumber(arg)
      if (!(n > 0)) throw new CommandError(15958, 'the limit must be positive')
      return (docs) => docs.slice(0, n)
    }
    case '$skip': {
      const n = toNumber(arg)
      if (!(n >= 0)) throw new CommandError(15956, 'Argument to $skip cannot be negative')
      return (docs) => docs.slice(n)
    }
    case '$count': {
      if (typeof arg !== 'string' || arg.length === 0) throw new CommandError(40156, 'the count field must be a non-empty string')
      return (docs) => (docs.length ? [{[arg]: docs.length}] : [])
    }
    case '$unwind':
      return compileUnwind(arg)
    case '$group':
      return compileGroup(arg)
    default:
      throw new CommandError(40324, `Unrecognized pipeline stage name: '${name}'`)
  }
}

function structuredCloneShallow(d: Document): Document {
  const out: Document = {}
  for (const k of Object.keys(d)) out[k] = isPlainObject(d[k]) ? structuredCloneShallow(d[k]) : d[k]
  return out
}

function compileUnwind(arg: unknown): Stage {
  const spec = typeof arg === 'string' ? {path: arg} : isPlainObject(arg) ? arg : null
  if (!spec || typeof spec.path !== 'string' || !spec.path.startsWith('$')) {
    throw new CommandError(28650, "$unwind requires a path prefixed by '$'")
  }
  const path = spec.path.slice(1)
  const preserve = Boolean(spec.preserveNullAndEmptyArrays)
  const indexField = typeof spec.includeArrayIndex === 'string' ? spec.includeArrayIndex : null
  return (docs) => {
    const out: Document[] = []
    for (const d of docs) {
      const v = getPath(d, path)
      if (Array.isArray(v) && v.length > 0) {
        v.forEach((el, i) => {
          const copy = structuredCloneShallow(d)
          setPath(copy, path, el)
          if (indexField) copy[indexField] = i
          out.push(copy)
        })
      } else if (v !== undefined && v !== null && !Array.isArray(v)) {
        const copy = indexField ? {...d, [indexField]: null} : d
        out.push(copy)
      } else if (preserve) {
        const copy = structuredCloneShallow(d)
        if (Array.isArray(v)) unsetPath(copy, path)
        if (indexField) copy[indexField] = null
        out.push(copy)
      }
    }
    return out
  }
}

interface Accumulator {
  init(): unknown
  add(state: unknown, doc: Document): unknown
  result(state: unknown): unknown
}

function compileAccumulator(spec: unknown, field: string): Accumulator {
  if (!isPlainObject(spec) || Object.keys(spec).length !== 1) {
    throw new CommandError(40234, `The field '${field}' must be an accumulator object`)
  }
  const op = Object.keys(spec)[0]
  const e: Expr = compileExpression(spec[op])
  switch (op) {
    case '$sum':
      return {
        init: () => 0,
        add: (s, d) => {
          const v = e(d)
          return isNumeric(v) ? arithmetic('add', s, v) : s
        },
        result: (s) => s,
      }
    case '$avg':
      return {
        init: () => ({sum: 0, n: 0, decimal: false}),
        add: (s, d) => {
          const st = s as {sum: number; n: number; decimal: boolean}
          const v = e(d)
          if (isNumeric(v)) {
            st.sum += toNumber(v)
            st.n++
            if (numberKind(v) === 'decimal') st.decimal = true
          }
          return st
        },
        // Always a double (a decimal when a term is one), as accumulator_avg.cpp.
        result: (s) => {
          const st = s as {sum: number; n: number; decimal: boolean}
          return st.n ? fractional(st.sum / st.n, st.decimal) : null
        },
      }
    case '$max':
    case '$min':
      return {
        init: () => undefined,
        add: (s, d) => {
          const v = e(d)
          if (v === undefined || v === null) return s
          if (s === undefined) return v
          const c = compareValues(v, s)
          return (op === '$max' ? c > 0 : c < 0) ? v : s
        },
        result: (s) => (s === undefined ? null : s),
      }
    case '$first':
      return {
        init: () => ({set: false, v: null as unknown}),
        add: (s, d) => {
          const st = s as {set: boolean; v: unknown}
          if (!st.set) {
            st.set = true
            st.v = e(d) ?? null
          }
          return st
        },
        result: (s) => (s as {v: unknown}).v,
      }
    case '$last':
      return {init: () => null, add: (_s, d) => e(d) ?? null, result: (s) => s}
    case '$push':
      return {
        init: () => [] as unknown[],
        add: (s, d) => {
          const v = e(d)
          if (v !== undefined) (s as unknown[]).push(v)
          return s
        },
        result: (s) => s,
      }
    case '$addToSet':
      return {
        init: () => new Map<string, unknown>(),
        add: (s, d) => {
          const v = e(d)
          if (v !== undefined) (s as Map<string, unknown>).set(canonicalKey(v), v)
          return s
        },
        result: (s) => [...(s as Map<string, unknown>).values()],
      }
    case '$count':
      return {init: () => 0, add: (s) => (s as number) + 1, result: (s) => s}
    default:
      throw new CommandError(15952, `Unknown group operator '${op}'`)
  }
}

function compileGroup(arg: unknown): Stage {
  if (!isPlainObject(arg) || !('_id' in arg)) throw new CommandError(15955, "a group specification must include an _id")
  const idExpr = compileExpression(arg._id)
  const fields = Object.keys(arg)
    .filter((k) => k !== '_id')
    .map((k) => {
      if (k.includes('.')) throw new CommandError(40235, `The field name '${k}' cannot contain '.'`)
      return [k, compileAccumulator(arg[k], k)] as const
    })
  return (docs) => {
    const groups = new Map<string, {id: unknown; states: unknown[]}>()
    for (const d of docs) {
      const id = idExpr(d) ?? null
      const key = canonicalKey(id)
      let g = groups.get(key)
      if (!g) {
        g = {id, states: fields.map(([, acc]) => acc.init())}
        groups.set(key, g)
      }
      for (let i = 0; i < fields.length; i++) g.states[i] = fields[i][1].add(g.states[i], d)
    }
    const out: Document[] = []
    for (const g of groups.values()) {
      const doc: Document = {_id: g.id}
      fields.forEach(([k, acc], i) => {
        doc[k] = acc.result(g.states[i])
      })
      out.push(doc)
    }
    return out
  }
}

