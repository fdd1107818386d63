/**
 * Replace whole names inside every string and object key of a document tree:
 * the replay maps captured "host:port" names to its listeners, `--redact-hosts`
 * maps host names and addresses to aliases. A name is replaced only where it
 * stands whole: `h1:27017` is rewritten inside "rs0/h1:27017,h2:27017" and
 * "h1:27017:1700000000:42", but not inside "h1:270170" or "xh1:27017"; `db1` is
 * not rewritten inside "db1.example.com". One pass over each string, so a
 * replacement is never rewritten again (127.0.0.1:1 → 127.0.0.1:2 → …).
 *
 * BSON values (Long, Timestamp, ObjectId, Date, Binary …) are kept as they are:
 * only plain objects and arrays are walked.
 */
import type {Document} from 'bson'

export type NameMap = ReadonlyMap<string, string>

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Characters that continue a host name: a match must not have one right before or after it. */
const BEFORE = '(?<![A-Za-z0-9_.-])'
const AFTER = '(?![A-Za-z0-9_-]|\\.[A-Za-z0-9])'

/** A function rewriting one string; the identity when the map is empty. */
export function stringRewriter(names: NameMap): (text: string) => string {
  if (names.size === 0) return (text) => text
  // Longest first: where two names start at the same place, the longer one wins.
  const alternatives = [...names.keys()].sort((a, b) => b.length - a.length).map(escape)
  const pattern = new RegExp(`${BEFORE}(?:${alternatives.join('|')})${AFTER}`, 'g')
  return (text) => text.replace(pattern, (match) => names.get(match) ?? match)
}

function isPlainObject(value: unknown): value is Document {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Rewrite a whole tree (a new tree; the input is not changed). */
export function rewriteTree<T>(value: T, rewrite: (text: string) => string): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return rewrite(v)
    if (Array.isArray(v)) return v.map(walk)
    if (isPlainObject(v)) {
      const out: Document = {}
      for (const [key, inner] of Object.entries(v)) out[rewrite(key)] = walk(inner)
      return out
    }
    return v
  }
  return walk(value) as T
}

/** Rewrite every whole occurrence of the map's names in a tree. */
export function rewriteNames<T>(value: T, names: NameMap): T {
  return names.size === 0 ? value : rewriteTree(value, stringRewriter(names))
}
