/** Small helpers shared by command handlers: argument checks and privilege builders. */
import type {Document} from 'bson'
import type {Requirement} from '../auth/roles.js'
import {CommandError} from '../errors.js'
import {validateCollectionName} from '../storage/collection.js'
import {isNumeric, isPlainObject, toNumber} from '../storage/values.js'
import type {CommandContext} from './registry.js'

export const readOn = (ctx: CommandContext): Requirement => ({kind: 'read', db: ctx.db})
export const writeOn = (ctx: CommandContext): Requirement => ({kind: 'write', db: ctx.db})
export const dbAdminOn = (ctx: CommandContext): Requirement => ({kind: 'dbAdmin', db: ctx.db})
export const userAdminOn = (ctx: CommandContext): Requirement => ({kind: 'userAdmin', db: ctx.db})
export const clusterMonitor = (): Requirement => ({kind: 'clusterMonitor'})
export const clusterAdmin = (): Requirement => ({kind: 'clusterAdmin'})

/** The collection named by the command's first field. */
export function collectionArg(ctx: CommandContext): string {
  return validateCollectionName(ctx.db, ctx.cmd[ctx.name])
}

export function optionalDoc(cmd: Document, field: string): Document | undefined {
  const v = cmd[field]
  if (v === undefined || v === null) return undefined
  if (!isPlainObject(v)) throw new CommandError(14, `BSON field '${field}' is the wrong type '${typeof v}', expected type 'object'`)
  return v
}

export function optionalNumber(cmd: Document, field: string): number | undefined {
  const v = cmd[field]
  if (v === undefined || v === null) return undefined
  if (!isNumeric(v)) throw new CommandError(14, `BSON field '${field}' is the wrong type '${typeof v}', expected a number`)
  return toNumber(v)
}

export function nonNegative(cmd: Document, field: string): number | undefined {
  const n = optionalNumber(cmd, field)
  if (n !== undefined && n < 0) throw new CommandError(51024, `BSON field '${field}' value must be >= 0, actual value '${n}'`)
  return n
}

export function requireArray(cmd: Document, field: string): Document[] {
  const v = cmd[field]
  if (!Array.isArray(v)) throw new CommandError(40414, `BSON field '${field}' is missing but a required field`)
  return v
}

export function truthyFlag(v: unknown): boolean {
  return v === true || (isNumeric(v) && toNumber(v) !== 0)
}

/** Generic command fields every command accepts and ignores here (sessions, concerns, API version…). */
export const GENERIC_FIELDS = new Set([
  'lsid', 'txnNumber', 'autocommit', 'startTransaction', 'comment', 'maxTimeMS', 'writeConcern', 'readConcern',
  'readPreference', 'apiVersion', 'apiStrict', 'apiDeprecationErrors', 'mayBypassWriteBlocking',
])

/** The command's own argument names (not the command name, `$`-fields or generic fields). */
export function argumentNames(ctx: CommandContext): string[] {
  return Object.keys(ctx.cmd).filter((k) => k !== ctx.name && k[0] !== '$' && !GENERIC_FIELDS.has(k))
}
