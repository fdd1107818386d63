/** insert / find / getMore / killCursors / update / delete / findAndModify / count / distinct. */
import {Long, type Document, type Timestamp} from 'bson'
import {CommandError, errorDocument} from '../errors.js'
import {type Oplog, oplogOf} from '../repl/oplog.js'
import {runPipeline} from '../storage/aggregate.js'
import type {TailSource} from '../storage/cursors.js'
import {yieldLocks} from '../status/op-locks.js'
import type {Collection} from '../storage/collection.js'
import {compileFilter} from '../storage/matcher.js'
import {valuesAtPath} from '../storage/paths.js'
import {compileProjection, sortDocuments} from '../storage/projection.js'
import {applyReplacement, applyUpdateOperators, buildUpsertDocument, isOperatorUpdate, withIdFirst} from '../storage/update.js'
import {canonicalKey, cloneValue, deepEqual, isNumeric, isPlainObject, toNumber} from '../storage/values.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {collectionArg, nonNegative, optionalDoc, optionalNumber, readOn, requireArray, truthyFlag, writeOn} from './util.js'

function writeError(index: number, err: unknown): Document {
  const doc = errorDocument(err)
  const out: Document = {index, code: doc.code, errmsg: doc.errmsg}
  if (doc.keyPattern) out.keyPattern = doc.keyPattern
  if (doc.keyValue) out.keyValue = doc.keyValue
  return out
}

function insert(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const docs = requireArray(ctx.cmd, 'documents')
  const ordered = ctx.cmd.ordered !== false
  const coll = ctx.proc.data.collection(ctx.db, name, true)!
  const counters = ctx.proc.counters.opcounters
  let n = 0
  const writeErrors: Document[] = []
  for (let i = 0; i < docs.length; i++) {
    counters.insert++
    try {
      if (!isPlainObject(docs[i])) throw new CommandError(2, 'documents to insert must be objects')
      coll.insert(docs[i])
      n++
    } catch (e) {
      writeErrors.push(writeError(i, e))
      if (ordered) break
    }
  }
  return writeErrors.length ? {n, writeErrors, ok: 1} : {n, ok: 1}
}

function find(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const {cmd, proc} = ctx
  const filter = optionalDoc(cmd, 'filter')
  const sort = optionalDoc(cmd, 'sort')
  const projection = compileProjection(optionalDoc(cmd, 'projection'))
  const skip = nonNegative(cmd, 'skip') ?? 0
  let limit = optionalNumber(cmd, 'limit') ?? 0
  const batchSize = nonNegative(cmd, 'batchSize')
  let singleBatch = truthyFlag(cmd.singleBatch)
  if (limit < 0) {
    limit = -limit
    singleBatch = true
  }
  const coll = proc.data.collection(ctx.db, name, false)
  const predicate = compileFilter(filter)
  let docs: Document[] = []
  if (coll) {
    const hasSort = sort && Object.keys(sort).length > 0
    docs = coll.find(filter, !hasSort && limit > 0 ? skip + limit : 0, predicate)
    if (hasSort) docs = sortDocuments(docs, sort)
    if (skip > 0 || limit > 0) docs = docs.slice(skip, limit > 0 ? skip + limit : undefined)
  }
  if (projection) docs = docs.map(projection)
  const oplog = ctx.db === 'local' && name === 'oplog.rs' && truthyFlag(cmd.tailable) && !singleBatch ? oplogOf(proc.data) : undefined
  if (oplog) return tailOplog(ctx, oplog, docs, batchSize)
  return proc.cursors.open(`${ctx.db}.${name}`, docs, batchSize, singleBatch, ctx.conn.id)
}

/**
 * A tailable find on the oplog (what an oplog fetcher sends: `{ts: {$gte: lastFetched}}`, tailable,
 * awaitData): the first batch, then a cursor that reads the entries appended after the last one
 * returned. Other capped collections answer tailable finds as plain ones (not modelled).
 */
function tailOplog(ctx: CommandContext, oplog: Oplog, docs: Document[], batchSize: number | undefined): Document {
  const firstBatch = batchSize === undefined || batchSize === 0 ? docs : docs.slice(0, batchSize)
  let last = (firstBatch.at(-1)?.ts as Timestamp | undefined) ?? oplog.last().opTime.ts
  const tail: TailSource = {
    next: (max) => {
      const batch = oplog.entriesAfter(last, max)
      if (batch.length > 0) last = batch.at(-1)!.ts as Timestamp
      return batch
    },
    wait: truthyFlag(ctx.cmd.awaitData) ? (ms) => oplog.waitForEntry(ms) : undefined,
  }
  return ctx.proc.cursors.openTailable(`${ctx.db}.oplog.rs`, firstBatch, tail, ctx.conn.id)
}

function cursorId(v: unknown): number {
  if (!isNumeric(v)) throw new CommandError(14, "BSON field 'getMore.getMore' is the wrong type, expected type 'long'")
  return toNumber(v)
}

function getMore(ctx: CommandContext): Document | Promise<Document> {
  const {cmd} = ctx
  const id = cursorId(cmd.getMore)
  if (typeof cmd.collection !== 'string') throw new CommandError(40414, "BSON field 'getMore.collection' is missing but a required field")
  const batchSize = nonNegative(cmd, 'batchSize')
  const ns = `${ctx.db}.${cmd.collection}`
  // An awaitData getMore is held until new entries arrive or its maxTimeMS passes (an active op meanwhile).
  if (ctx.proc.cursors.isTailable(id)) {
    if (ctx.conn.op) yieldLocks(ctx.conn.op, ctx.proc.locks) // it holds no lock while it waits
    return ctx.proc.cursors.getMoreTailable(id, ns, batchSize, optionalNumber(cmd, 'maxTimeMS'))
  }
  return ctx.proc.cursors.getMore(id, ns, batchSize)
}

function killCursors(ctx: CommandContext): Document {
  collectionArg(ctx)
  const ids = requireArray(ctx.cmd, 'cursors')
  const killed: Long[] = []
  const notFound: Long[] = []
  for (const raw of ids) {
    const id = cursorId(raw)
    ;(ctx.proc.cursors.kill(id) ? killed : notFound).push(Long.fromNumber(id))
  }
  return {cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1}
}

/** The document an update statement produces from `doc` (a new object; stored docs are never mutated). */
function updatedDocument(doc: Document, update: unknown): Document {
  if (Array.isArray(update)) {
    const [out] = runPipeline([cloneValue(doc)], update as Document[])
    if (!out) throw new CommandError(2, 'update pipeline removed the document')
    if (!deepEqual(out._id, doc._id)) throw new CommandError(66, "Performing an update on the path '_id' would modify the immutable field '_id'")
    return withIdFirst(out)
  }
  if (!isPlainObject(update)) throw new CommandError(14, 'Update argument must be either an object or an array')
  if (isOperatorUpdate(update)) {
    const copy = cloneValue(doc)
    applyUpdateOperators(copy, update, false)
    return copy
  }
  return applyReplacement(doc, update)
}

function upsertDocument(query: Document | undefined, update: unknown): Document {
  if (Array.isArray(update)) {
    const seed = buildUpsertDocument(query, {$set: {}})
    return updatedDocument(seed, update)
  }
  if (!isPlainObject(update)) throw new CommandError(14, 'Update argument must be either an object or an array')
  return buildUpsertDocument(query, update)
}

interface StatementResult {
  n: number
  nModified: number
  upsertedId?: unknown
}

function updateStatement(coll: Collection | undefined, ctx: CommandContext, name: string, stmt: Document): StatementResult {
  if (!isPlainObject(stmt)) throw new CommandError(14, 'update statements must be objects')
  const q = optionalDoc(stmt, 'q') ?? {}
  const u = stmt.u
  const multi = truthyFlag(stmt.multi)
  if (multi && isPlainObject(u) && !isOperatorUpdate(u) && Object.keys(u).length > 0) {
    throw new CommandError(9, 'multi update is not supported for replacement-style update')
  }
  let matches = coll ? coll.find(q, multi || stmt.sort ? 0 : 1) : []
  if (stmt.sort && isPlainObject(stmt.sort)) matches = sortDocuments(matches, stmt.sort).slice(0, multi ? undefined : 1)
  if (matches.length === 0) {
    if (!truthyFlag(stmt.upsert)) return {n: 0, nModified: 0}
    const target = coll ?? ctx.proc.data.collection(ctx.db, name, true)!
    const doc = upsertDocument(q, u)
    target.insert(doc)
    return {n: 1, nModified: 0, upsertedId: doc._id}
  }
  let nModified = 0
  for (const doc of matches) {
    const next = updatedDocument(doc, u)
    if (!deepEqual(doc, next)) {
      coll!.replace(doc, next)
      nModified++
    }
  }
  return {n: matches.length, nModified}
}

function update(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const updates = requireArray(ctx.cmd, 'updates')
  const ordered = ctx.cmd.ordered !== false
  let coll = ctx.proc.data.collection(ctx.db, name, false)
  let n = 0
  let nModified = 0
  const upserted: Document[] = []
  const writeErrors: Document[] = []
  for (let i = 0; i < updates.length; i++) {
    ctx.proc.counters.opcounters.update++
    try {
      const r = updateStatement(coll, ctx, name, updates[i])
      n += r.n
      nModified += r.nModified
      if (r.upsertedId !== undefined) {
        upserted.push({index: i, _id: r.upsertedId})
        coll = ctx.proc.data.collection(ctx.db, name, false)
      }
    } catch (e) {
      writeErrors.push(writeError(i, e))
      if (ordered) break
    }
  }
  const reply: Document = {n, nModified}
  if (upserted.length) reply.upserted = upserted
  if (writeErrors.length) reply.writeErrors = writeErrors
  reply.ok = 1
  return reply
}

function del(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const deletes = requireArray(ctx.cmd, 'deletes')
  const ordered = ctx.cmd.ordered !== false
  const coll = ctx.proc.data.collection(ctx.db, name, false)
  let n = 0
  const writeErrors: Document[] = []
  for (let i = 0; i < deletes.length; i++) {
    ctx.proc.counters.opcounters.delete++
    try {
      const stmt = deletes[i]
      if (!isPlainObject(stmt)) throw new CommandError(14, 'delete statements must be objects')
      const limit = stmt.limit === undefined ? 0 : toNumber(stmt.limit)
      if (limit !== 0 && limit !== 1) throw new CommandError(9, `The limit field in delete objects must be 0 or 1. Got ${limit}`)
      if (!coll) continue
      for (const doc of coll.find(optionalDoc(stmt, 'q') ?? {}, limit)) {
        if (coll.remove(doc)) n++
      }
    } catch (e) {
      writeErrors.push(writeError(i, e))
      if (ordered) break
    }
  }
  return writeErrors.length ? {n, writeErrors, ok: 1} : {n, ok: 1}
}

function findAndModify(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const {cmd} = ctx
  const query = optionalDoc(cmd, 'query') ?? {}
  const sort = optionalDoc(cmd, 'sort')
  const remove = truthyFlag(cmd.remove)
  const returnNew = truthyFlag(cmd.new)
  const upsert = truthyFlag(cmd.upsert)
  const projection = compileProjection(optionalDoc(cmd, 'fields'))
  if (remove && cmd.update !== undefined) throw new CommandError(9, 'Cannot specify both an update and remove=true')
  if (!remove && cmd.update === undefined) throw new CommandError(9, 'Either an update or remove=true must be specified')
  if (remove && (upsert || returnNew)) throw new CommandError(9, 'Cannot specify both upsert=true and remove=true')
  let coll = ctx.proc.data.collection(ctx.db, name, false)
  let matches = coll ? coll.find(query, sort ? 0 : 1) : []
  if (sort) matches = sortDocuments(matches, sort)
  const target = matches[0]
  const shape = (d: Document | null | undefined) => (d ? (projection ? projection(d) : d) : null)
  if (remove) {
    if (target) coll!.remove(target)
    return {lastErrorObject: {n: target ? 1 : 0}, value: shape(target), ok: 1}
  }
  if (target) {
    const next = updatedDocument(target, cmd.update)
    if (!deepEqual(target, next)) coll!.replace(target, next)
    return {lastErrorObject: {n: 1, updatedExisting: true}, value: shape(returnNew ? next : target), ok: 1}
  }
  if (!upsert) return {lastErrorObject: {n: 0, updatedExisting: false}, value: null, ok: 1}
  coll = coll ?? ctx.proc.data.collection(ctx.db, name, true)!
  const doc = upsertDocument(query, cmd.update)
  coll.insert(doc)
  return {lastErrorObject: {n: 1, updatedExisting: false, upserted: doc._id}, value: returnNew ? shape(doc) : null, ok: 1}
}

function count(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const coll = ctx.proc.data.collection(ctx.db, name, false)
  const query = optionalDoc(ctx.cmd, 'query')
  const skip = nonNegative(ctx.cmd, 'skip') ?? 0
  const limit = Math.abs(optionalNumber(ctx.cmd, 'limit') ?? 0)
  let n = 0
  if (coll) {
    n = query && Object.keys(query).length > 0 ? coll.find(query).length : coll.size
    n = Math.max(0, n - skip)
    if (limit > 0) n = Math.min(n, limit)
  }
  return {n, ok: 1}
}

function distinct(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const key = ctx.cmd.key
  if (typeof key !== 'string') throw new CommandError(40414, "BSON field 'distinct.key' is missing but a required field")
  const coll = ctx.proc.data.collection(ctx.db, name, false)
  const seen = new Map<string, unknown>()
  for (const doc of coll ? coll.find(optionalDoc(ctx.cmd, 'query')) : []) {
    for (const v of valuesAtPath(doc, key)) {
      const list = Array.isArray(v) ? v : [v]
      for (const x of list) if (x !== undefined) seen.set(canonicalKey(x), x)
    }
  }
  return {values: [...seen.values()], ok: 1}
}


// secondaryAllowed as each command declares it: find_cmd.cpp, count_cmd.cpp, distinct.cpp kOptIn;
// getmore_cmd.cpp, killcursors_common.h kAlways (the default); writes kNever.
export const crudCommands: CommandSpec[] = [
  {name: 'insert', handler: insert, authz: writeOn, write: true, lock: 'write', opCounter: 'self', currentOpType: 'insert'},
  {name: 'update', handler: update, authz: writeOn, write: true, lock: 'write', opCounter: 'self', currentOpType: 'update'},
  {name: 'delete', handler: del, authz: writeOn, write: true, lock: 'write', opCounter: 'self', currentOpType: 'remove'},
  {name: 'findAndModify', aliases: ['findandmodify'], handler: findAndModify, authz: writeOn, write: true, lock: 'write', currentOpType: 'command'},
  {name: 'find', handler: find, authz: readOn, secondaryAllowed: 'optIn', lock: 'read', opCounter: 'query', currentOpType: 'query'},
  {name: 'getMore', handler: getMore, authz: readOn, lock: 'read', opCounter: 'getmore', currentOpType: 'getmore'},
  {name: 'killCursors', handler: killCursors, authz: readOn},
  {name: 'count', handler: count, authz: readOn, secondaryAllowed: 'optIn', lock: 'read', currentOpType: 'command'},
  {name: 'distinct', handler: distinct, authz: readOn, secondaryAllowed: 'optIn', lock: 'read', currentOpType: 'command'},
]
