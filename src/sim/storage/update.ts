/**
 * Update operators ($set $unset $inc $mul $min $max $setOnInsert $push $addToSet $pull
 * $pop $rename $currentDate), replacement documents and upsert seeds.
 */
import {ObjectId, type Document} from 'bson'
import {CommandError} from '../errors.js'
import {compileFilter} from './matcher.js'
import {getPath, setPath, unsetPath} from './paths.js'
import {arithmetic} from './numbers.js'
import {cloneValue, compareValues, isNumeric, isPlainObject, toNumber, valuesEqual} from './values.js'

export function isOperatorUpdate(update: Document): boolean {
  const keys = Object.keys(update)
  return keys.length > 0 && keys[0][0] === '$'
}

function typeMismatch(op: string, path: string, v: unknown): CommandError {
  return new CommandError(
    14,
    `Cannot apply ${op} to a value of non-numeric type. {_id: ...} has the field '${path}' of non-numeric type ${typeof v}`,
  )
}

/** Applies operators to `doc` in place (callers pass a clone). */
export function applyUpdateOperators(doc: Document, update: Document, upsertInsert: boolean): void {
  for (const op of Object.keys(update)) {
    const fields = update[op]
    if (!isPlainObject(fields)) throw new CommandError(9, `Modifiers operate on fields but we found type ${typeof fields} instead`)
    for (const path of Object.keys(fields)) {
      if ((path === '_id' || path.startsWith('_id.')) && op !== '$setOnInsert' && !(op === '$set' && upsertInsert)) {
        if (op === '$set' && valuesEqual(getPath(doc, path), fields[path])) continue
        throw new CommandError(66, `Performing an update on the path '_id' would modify the immutable field '_id'`)
      }
      applyOne(doc, op, path, fields[path], upsertInsert)
    }
  }
}

function applyOne(doc: Document, op: string, path: string, arg: unknown, upsertInsert: boolean): void {
  switch (op) {
    case '$set':
      setPath(doc, path, cloneValue(arg))
      return
    case '$setOnInsert':
      if (upsertInsert) setPath(doc, path, cloneValue(arg))
      return
    case '$unset':
      unsetPath(doc, path)
      return
    case '$inc':
    case '$mul': {
      if (!isNumeric(arg)) throw new CommandError(14, `Cannot ${op === '$inc' ? 'increment' : 'multiply'} with non-numeric argument: {${path}: ${JSON.stringify(arg)}}`)
      const cur = getPath(doc, path)
      if (cur === undefined) {
        // A missing field takes the argument's type: $inc stores it, $mul stores 0 of that type (SafeNum).
        setPath(doc, path, op === '$inc' ? cloneValue(arg) : arithmetic('multiply', arg, 0))
      } else if (!isNumeric(cur)) {
        throw typeMismatch(op, path, cur)
      } else {
        setPath(doc, path, arithmetic(op === '$inc' ? 'add' : 'multiply', cur, arg))
      }
      return
    }
    case '$min':
    case '$max': {
      const cur = getPath(doc, path)
      const c = cur === undefined ? 0 : compareValues(arg, cur)
      if (cur === undefined || (op === '$min' ? c < 0 : c > 0)) setPath(doc, path, cloneValue(arg))
      return
    }
    case '$currentDate':
      setPath(doc, path, new Date())
      return
    case '$rename': {
      if (typeof arg !== 'string') throw new CommandError(2, 'The \'to\' field for $rename must be a string')
      const cur = getPath(doc, path)
      if (cur !== undefined) {
        unsetPath(doc, path)
        setPath(doc, arg, cur)
      }
      return
    }
    case '$push':
    case '$addToSet': {
      const cur = getPath(doc, path)
      if (cur !== undefined && !Array.isArray(cur)) {
        throw new CommandError(2, `The field '${path}' must be an array but is of type ${typeof cur} in document {_id: ...}`)
      }
      const arr: unknown[] = cur === undefined ? [] : (cur as unknown[])
      let items: unknown[] = [arg]
      let slice: number | undefined
      let position: number | undefined
      if (isPlainObject(arg) && '$each' in arg) {
        if (!Array.isArray(arg.$each)) throw new CommandError(2, 'The argument to $each must be an array')
        items = arg.$each
        if (arg.$slice !== undefined) slice = toNumber(arg.$slice)
        if (arg.$position !== undefined) position = toNumber(arg.$position)
      }
      for (const item of items) {
        if (op === '$addToSet' && arr.some((e) => valuesEqual(e, item))) continue
        if (position !== undefined) arr.splice(position++, 0, cloneValue(item))
        else arr.push(cloneValue(item))
      }
      let result = arr
      if (slice !== undefined) result = slice >= 0 ? arr.slice(0, slice) : arr.slice(slice)
      setPath(doc, path, result)
      return
    }
    case '$pop': {
      const cur = getPath(doc, path)
      if (Array.isArray(cur) && cur.length > 0) {
        if (toNumber(arg) < 0) cur.shift()
        else cur.pop()
      }
      return
    }
    case '$pull': {
      const cur = getPath(doc, path)
      if (!Array.isArray(cur)) return
      let keep: (v: unknown) => boolean
      if (isPlainObject(arg)) {
        const keys = Object.keys(arg)
        const isOps = keys.length > 0 && keys[0][0] === '$'
        const pred = compileFilter(isOps ? {v: arg} : arg)
        keep = isOps ? (v) => !pred({v}) : (v) => !(isPlainObject(v) && pred(v))
      } else {
        keep = (v) => !valuesEqual(v, arg)
      }
      setPath(doc, path, cur.filter(keep))
      return
    }
    default:
      throw new CommandError(9, `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`)
  }
}

/** Replacement-style update: keeps the old _id; a different _id is an error. */
export function applyReplacement(old: Document, replacement: Document): Document {
  for (const k of Object.keys(replacement)) {
    if (k[0] === '$') throw new CommandError(2, `The dollar ($) prefixed field '${k}' in '${k}' is not allowed in the context of an update's replacement document.`)
  }
  if ('_id' in replacement && !valuesEqual(replacement._id, old._id)) {
    throw new CommandError(66, `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${String(replacement._id)}`)
  }
  const out: Document = {_id: old._id}
  for (const k of Object.keys(replacement)) if (k !== '_id') out[k] = cloneValue(replacement[k])
  return out
}

/** The equality fields of a query, as an upsert seed (`{a: 1, 'b.c': 2, x: {$eq: 3}}`). */
export function upsertSeed(query: Document | undefined): Document {
  const seed: Document = {}
  const visit = (q: Document) => {
    for (const k of Object.keys(q)) {
      const v = q[k]
      if (k === '$and' && Array.isArray(v)) {
        for (const sub of v) if (isPlainObject(sub)) visit(sub)
        continue
      }
      if (k[0] === '$') continue
      if (isPlainObject(v)) {
        const keys = Object.keys(v)
        if (keys.length > 0 && keys[0][0] === '$') {
          if ('$eq' in v) setPath(seed, k, cloneValue(v.$eq))
          continue
        }
      }
      if (v instanceof RegExp) continue
      setPath(seed, k, cloneValue(v))
    }
  }
  if (query) visit(query)
  return seed
}

/** Builds the document an upsert inserts. */
export function buildUpsertDocument(query: Document | undefined, update: Document): Document {
  let doc: Document
  if (isOperatorUpdate(update)) {
    doc = upsertSeed(query)
    applyUpdateOperators(doc, update, true)
  } else {
    const seed = upsertSeed(query)
    doc = {}
    if (seed._id !== undefined) doc._id = seed._id
    for (const k of Object.keys(update)) doc[k] = cloneValue(update[k])
  }
  if (doc._id === undefined) doc._id = new ObjectId()
  return withIdFirst(doc)
}

/** mongod stores _id as the first field. */
export function withIdFirst(doc: Document): Document {
  const keys = Object.keys(doc)
  if (keys[0] === '_id') return doc
  const out: Document = {_id: doc._id}
  for (const k of keys) if (k !== '_id') out[k] = doc[k]
  return out
}
