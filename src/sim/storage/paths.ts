/** Dotted-path reads and writes on documents. */
import type {Document} from 'bson'
import {CommandError} from '../errors.js'
import {isPlainObject} from './values.js'

const splitCache = new Map<string, string[]>()

export function splitPath(path: string): string[] {
  let parts = splitCache.get(path)
  if (parts === undefined) {
    parts = path.split('.')
    if (splitCache.size > 10_000) splitCache.clear()
    splitCache.set(path, parts)
  }
  return parts
}

function isIndex(part: string): boolean {
  return part.length > 0 && part.length < 10 && /^\d+$/.test(part)
}

/**
 * Every value a query path reaches, expanding arrays like mongod does for matching
 * (`a.b` on `{a: [{b: 1}, {b: 2}]}` reaches 1 and 2). Missing paths reach `undefined`.
 */
export function collectValues(value: unknown, parts: string[], i: number, out: unknown[]): void {
  if (i === parts.length) {
    out.push(value)
    return
  }
  if (Array.isArray(value)) {
    const part = parts[i]
    if (isIndex(part)) collectValues(value[Number(part)], parts, i + 1, out)
    let any = false
    for (const el of value) {
      if (isPlainObject(el) || Array.isArray(el)) {
        if (Array.isArray(el)) continue
        any = true
        collectValues(el, parts, i, out)
      }
    }
    if (!any && !isIndex(part)) out.push(undefined)
    return
  }
  if (isPlainObject(value)) {
    collectValues(value[parts[i]], parts, i + 1, out)
    return
  }
  out.push(undefined)
}

export function valuesAtPath(doc: Document, path: string): unknown[] {
  const out: unknown[] = []
  collectValues(doc, splitPath(path), 0, out)
  return out
}

/** The single value at a path without array expansion (numeric parts index arrays). */
export function getPath(doc: unknown, path: string): unknown {
  let cur: unknown = doc
  for (const part of splitPath(path)) {
    if (Array.isArray(cur)) {
      if (!isIndex(part)) return undefined
      cur = cur[Number(part)]
    } else if (isPlainObject(cur)) {
      cur = cur[part]
    } else {
      return undefined
    }
  }
  return cur
}

/** Aggregation-style field path: arrays map over their elements. */
export function getFieldPath(doc: unknown, parts: string[], i = 0): unknown {
  if (i === parts.length) return doc
  if (Array.isArray(doc)) {
    const out: unknown[] = []
    for (const el of doc) {
      const v = getFieldPath(el, parts, i)
      if (v !== undefined) out.push(v)
    }
    return out
  }
  if (isPlainObject(doc)) return getFieldPath(doc[parts[i]], parts, i + 1)
  return undefined
}

/** Sets a value, creating intermediate documents. Throws when a path crosses a scalar. */
export function setPath(doc: Document, path: string, value: unknown): void {
  const parts = splitPath(path)
  let cur: unknown = doc
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]
    if (Array.isArray(cur)) {
      if (!isIndex(part)) throw pathError(path, part)
      const idx = Number(part)
      while (cur.length < idx) cur.push(null)
      if (cur[idx] === undefined || cur[idx] === null) cur[idx] = {}
      cur = cur[idx]
    } else if (isPlainObject(cur)) {
      const next = cur[part]
      if (next === undefined || next === null) cur[part] = {}
      else if (!isPlainObject(next) && !Array.isArray(next)) throw pathError(path, part, next)
      cur = cur[part]
    } else {
      throw pathError(path, part)
    }
  }
  const last = parts[parts.length - 1]
  if (Array.isArray(cur)) {
    if (!isIndex(last)) throw pathError(path, last)
    const idx = Number(last)
    while (cur.length < idx) cur.push(null)
    cur[idx] = value
  } else if (isPlainObject(cur)) {
    cur[last] = value
  } else {
    throw pathError(path, last)
  }
}

export function unsetPath(doc: Document, path: string): boolean {
  const parts = splitPath(path)
  let cur: unknown = doc
  for (let i = 0; i < parts.length - 1; i++) {
    if (Array.isArray(cur)) cur = isIndex(parts[i]) ? cur[Number(parts[i])] : undefined
    else if (isPlainObject(cur)) cur = cur[parts[i]]
    else return false
    if (cur === undefined) return false
  }
  const last = parts[parts.length - 1]
  if (Array.isArray(cur)) {
    if (!isIndex(last) || Number(last) >= cur.length) return false
    cur[Number(last)] = null
    return true
  }
  if (isPlainObject(cur) && last in cur) {
    delete cur[last]
    return true
  }
  return false
}

function pathError(path: string, part: string, value?: unknown): CommandError {
  return new CommandError(
    28,
    `Cannot create field '${part}' in element {${part}: ${JSON.stringify(value ?? null)}} (path '${path}')`,
  )
}
