/** find projections (inclusion / exclusion / computed fields) and sort specifications. */
import type {Document} from 'bson'
import {CommandError} from '../errors.js'
import {compileExpression, type Expr} from './expressions.js'
import {collectValues, splitPath} from './paths.js'
import {compareValues, isNumeric, isPlainObject, toNumber} from './values.js'

export type Projector = (doc: Document) => Document

interface Node {
  children: Map<string, Node>
  /** leaf: include / exclude / computed */
  leaf?: 'include' | 'exclude' | Expr
}

function newNode(): Node {
  return {children: new Map()}
}

export function compileProjection(spec: Document | undefined | null): Projector | null {
  if (!spec || Object.keys(spec).length === 0) return null
  const root = newNode()
  let mode: 'include' | 'exclude' | null = null
  let includeId = true
  for (const path of Object.keys(spec)) {
    const v = spec[path]
    let leaf: Node['leaf']
    if (typeof v === 'boolean' || isNumeric(v)) {
      leaf = (typeof v === 'boolean' ? v : toNumber(v) !== 0) ? 'include' : 'exclude'
    } else {
      leaf = compileExpression(v)
    }
    if (path === '_id') {
      if (leaf === 'exclude') {
        includeId = false
        continue
      }
      if (leaf === 'include') continue
    }
    const kind = leaf === 'exclude' ? 'exclude' : 'include'
    if (mode !== null && mode !== kind) {
      throw new CommandError(31254, `Cannot do ${kind === 'exclude' ? 'exclusion' : 'inclusion'} on field ${path} in ${mode === 'exclude' ? 'exclusion' : 'inclusion'} projection`)
    }
    mode = kind
    let node = root
    for (const part of splitPath(path)) {
      let next = node.children.get(part)
      if (!next) {
        next = newNode()
        node.children.set(part, next)
      }
      node = next
    }
    node.leaf = leaf
  }
  if (path_id_only(root, spec)) mode = mode ?? 'include'
  if (mode === 'exclude' || mode === null) {
    const excludeId = !includeId
    return (doc) => {
      const out = exclude(doc, root)
      if (excludeId) delete out._id
      return out
    }
  }
  if (!includeId && root.children.has('_id')) root.children.delete('_id')
  return (doc) => {
    const out: Document = {}
    if (includeId && doc._id !== undefined && !root.children.has('_id')) out._id = doc._id
    include(doc, doc, root, out)
    return out
  }
}

function path_id_only(root: Node, spec: Document): boolean {
  return root.children.size === 0 && '_id' in spec && spec._id !== 0 && spec._id !== false
}

function exclude(doc: Document, node: Node): Document {
  const out: Document = {}
  for (const k of Object.keys(doc)) {
    const child = node.children.get(k)
    if (!child) out[k] = doc[k]
    else if (child.leaf === 'exclude') continue
    else {
      const v = doc[k]
      if (isPlainObject(v)) out[k] = exclude(v, child)
      else if (Array.isArray(v)) out[k] = v.map((e) => (isPlainObject(e) ? exclude(e, child) : e))
      else out[k] = v
    }
  }
  return out
}

function include(root: Document, doc: Document, node: Node, out: Document): void {
  for (const [k, child] of node.children) {
    if (child.leaf !== undefined && child.leaf !== 'include' && child.leaf !== 'exclude') {
      out[k] = child.leaf(root)
      continue
    }
    if (!(k in doc)) continue
    const v = doc[k]
    if (child.leaf === 'include') {
      out[k] = v
    } else if (isPlainObject(v)) {
      const sub: Document = {}
      include(root, v, child, sub)
      out[k] = sub
    } else if (Array.isArray(v)) {
      out[k] = v
        .filter((e) => isPlainObject(e))
        .map((e) => {
          const sub: Document = {}
          include(root, e, child, sub)
          return sub
        })
    }
  }
}

// ---------------------------------------------------------------- sort

export type Comparator = (a: Document, b: Document) => number

function sortKey(doc: Document, parts: string[], dir: number): unknown {
  const vals: unknown[] = []
  collectValues(doc, parts, 0, vals)
  let best: unknown = undefined
  let first = true
  for (const v of vals) {
    const candidates = Array.isArray(v) ? (v.length ? v : [undefined]) : [v]
    for (const c of candidates) {
      const x = c === undefined ? null : c
      if (first || (dir > 0 ? compareValues(x, best) < 0 : compareValues(x, best) > 0)) best = x
      first = false
    }
  }
  return first ? null : best
}

export function compileSort(spec: Document | undefined | null): Comparator | null {
  if (!spec || Object.keys(spec).length === 0) return null
  const keys = Object.keys(spec).map((path) => {
    const v = spec[path]
    const dir = isNumeric(v) ? toNumber(v) : NaN
    if (dir !== 1 && dir !== -1) {
      if (isPlainObject(v) && v.$meta) return {parts: splitPath(path), dir: 1}
      throw new CommandError(15974, `Illegal key in $sort specification: ${path}: ${JSON.stringify(v)}`)
    }
    return {parts: splitPath(path), dir}
  })
  return (a, b) => {
    for (const {parts, dir} of keys) {
      const c = compareValues(sortKey(a, parts, dir), sortKey(b, parts, dir))
      if (c !== 0) return c * dir
    }
    return 0
  }
}

/** Sorts a list (stable), computing each document's keys once. */
export function sortDocuments(docs: Document[], spec: Document | undefined | null): Document[] {
  if (!spec || Object.keys(spec).length === 0) return docs
  // {$natural: ±1}: insertion order or its reverse (how mongosh reads the oplog's first and last entries).
  if (Object.keys(spec).length === 1 && spec.$natural !== undefined) return toNumber(spec.$natural) < 0 ? [...docs].reverse() : docs
  compileSort(spec) // validates
  const keys = Object.keys(spec).map((path) => ({parts: splitPath(path), dir: toNumber(spec[path]) === -1 ? -1 : 1}))
  const decorated = docs.map((doc, i) => ({doc, i, k: keys.map(({parts, dir}) => sortKey(doc, parts, dir))}))
  decorated.sort((a, b) => {
    for (let j = 0; j < keys.length; j++) {
      const c = compareValues(a.k[j], b.k[j])
      if (c !== 0) return c * keys[j].dir
    }
    return a.i - b.i
  })
  return decorated.map((d) => d.doc)
}
