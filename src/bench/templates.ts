/**
 * Generated values in a workload file: a string that is one template is replaced by a value of
 * its type, a string with templates inside it by the string with each filled in:
 *   "{{int 0 999}}"      an integer in [0, 999]
 *   "{{double 0 1}}"     a double in [0, 1)
 *   "{{string 16}}"      16 random letters and digits
 *   "{{choice a b c}}"   one of the words, equally often
 *   "{{seededId}}"       a seeded document's _id, drawn by --key-dist
 *   "{{now}}"            the current date
 *   "{{objectId}}"       a new ObjectId
 * A document is compiled once into a function that builds a fresh copy per operation: nothing is
 * parsed on the hot path. Draws come from the workload's seeded PRNG.
 */
import {ObjectId} from 'bson'

export interface TemplateContext {
  random: () => number
  seededId: () => number
}

type Generate = (ctx: TemplateContext) => unknown

export const TEMPLATE_NAMES = ['int', 'double', 'string', 'choice', 'seededId', 'now', 'objectId'] as const

/** A template that does not parse; `path` is where in the document it sits, e.g. `filter._id`. */
export class TemplateError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message)
  }
}

const TEMPLATE = /\{\{\s*([^}]*?)\s*\}\}/g
const WHOLE_TEMPLATE = /^\{\{\s*([^}]*?)\s*\}\}$/
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

function numberArg(text: string | undefined, path: string, template: string): number {
  const n = Number(text)
  if (text === undefined || text === '' || !Number.isFinite(n)) throw new TemplateError(path, `'{{${template}}}' needs numbers, e.g. {{int 0 999}}`)
  return n
}

function compileTemplate(template: string, path: string): Generate {
  const [name, ...args] = template.split(/\s+/)
  const arity = (n: number) => {
    if (args.length !== n) throw new TemplateError(path, `'{{${template}}}' takes ${n} argument${n === 1 ? '' : 's'}`)
  }
  switch (name) {
    case 'int': {
      arity(2)
      const [min, max] = [numberArg(args[0], path, template), numberArg(args[1], path, template)]
      if (!Number.isInteger(min) || !Number.isInteger(max) || min > max) throw new TemplateError(path, `'{{${template}}}' needs two integers, the first not above the second`)
      return ({random}) => min + Math.floor(random() * (max - min + 1))
    }
    case 'double': {
      arity(2)
      const [min, max] = [numberArg(args[0], path, template), numberArg(args[1], path, template)]
      if (min > max) throw new TemplateError(path, `'{{${template}}}': the first number is above the second`)
      return ({random}) => min + random() * (max - min)
    }
    case 'string': {
      arity(1)
      const length = numberArg(args[0], path, template)
      if (!Number.isInteger(length) || length < 0 || length > 16_000_000) throw new TemplateError(path, `'{{${template}}}' needs a length from 0 to 16000000`)
      return ({random}) => {
        let s = ''
        for (let i = 0; i < length; i++) s += ALPHABET[Math.floor(random() * ALPHABET.length)]
        return s
      }
    }
    case 'choice': {
      if (args.length === 0) throw new TemplateError(path, `'{{${template}}}' needs at least one word to choose from`)
      return ({random}) => args[Math.floor(random() * args.length)]
    }
    case 'seededId':
      arity(0)
      return ({seededId}) => seededId()
    case 'now':
      arity(0)
      return () => new Date()
    case 'objectId':
      arity(0)
      return () => new ObjectId()
    default:
      throw new TemplateError(path, `unknown template '{{${template}}}' (known: ${TEMPLATE_NAMES.join(', ')})`)
  }
}

function compileString(value: string, path: string): Generate | undefined {
  const whole = WHOLE_TEMPLATE.exec(value)
  if (whole) return compileTemplate(whole[1]!, path)
  const parts: Array<string | Generate> = []
  let last = 0
  for (const match of value.matchAll(TEMPLATE)) {
    parts.push(value.slice(last, match.index), compileTemplate(match[1]!, path))
    last = match.index! + match[0].length
  }
  if (parts.length === 0) return undefined
  parts.push(value.slice(last))
  return (ctx) => parts.map((part) => (typeof part === 'string' ? part : String(part(ctx)))).join('')
}

/**
 * A function that builds `value` with its templates filled in. Parts without templates are built
 * once and shared between calls, so a caller must not change what it is given (copy it first if the
 * driver would, as insertOne sets _id).
 */
export function compileValue(value: unknown, path = ''): Generate {
  const generate = compileTemplated(value, path)
  return generate ?? (() => value)
}

/** undefined when `value` holds no template. */
function compileTemplated(value: unknown, path: string): Generate | undefined {
  if (typeof value === 'string') return compileString(value, path)
  const join = (key: string | number) => (path === '' ? String(key) : `${path}.${key}`)
  if (Array.isArray(value)) {
    const items = value.map((item, i) => compileTemplated(item, join(i)))
    if (items.every((item) => item === undefined)) return undefined
    return (ctx) => items.map((item, i) => (item ? item(ctx) : value[i]))
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value).map(([key, item]) => [key, item, compileTemplated(item, join(key))] as const)
    if (entries.every(([, , item]) => item === undefined)) return undefined
    return (ctx) => {
      const out: Record<string, unknown> = {}
      for (const [key, item, generate] of entries) out[key] = generate ? generate(ctx) : item
      return out
    }
  }
  return undefined
}
