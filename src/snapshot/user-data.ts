/**
 * User data stays out of a snapshot as it stays out of pooltool's output. The live commands read whole
 * `$currentOp` documents and `lockInfo` replies but keep only what they show: an operation's command
 * NAME (src/locks/node/operations.ts `commandNameOf`), the namespace it names (src/locks/in-memory.ts
 * `ddlOpsFrom`), never the command's values (a find's filter, an insert's documents, an update's
 * changes); `lockInfo`'s `debugInfo` (the command with its values) is never read. A snapshot keeps
 * the same and no more, so a replay gives the commands the very documents they used:
 *
 * - a `$currentOp` read of raw operations (no stage after `$currentOp`: the node-lock and DDL
 *   reads): each document keeps the fields pooltool reads (whitelist below), its `command` only its
 *   first key (the name) with that key's value when it is a string (the collection or namespace
 *   named, as `ns` carries anyway) and `$db`, its `lsid` only its `id` (the session's random UUID: what
 *   names an idle transaction, which has no opid, and what killSessions takes; the `uid`, a hash of the
 *   user's name, is dropped); every other field (`originatingCommand`, `cursor`, `query`, `planSummary`,
 *   `effectiveUsers` …) is dropped. A read with further stages (the
 *   holders' `$group`) returns what pooltool's own pipeline computed: no operation's values.
 * - a `lockInfo` reply: each granted or pending request keeps its mode flags and `clientInfo`
 *   (desc, connectionId, client, opid); `debugInfo` is dropped.
 */
import type {Document} from 'bson'

import type {SnapshotRead} from './format.js'

/** `$currentOp` fields kept: what parseOperation, isIdleConnection and ddlOpsFrom read, and the operation's bare state. */
const OPERATION_FIELDS = new Set([
  'type', 'host', 'shard', 'desc', 'connectionId', 'client', 'client_s', 'appName', 'active', 'currentOpTime', 'threaded', 'opid',
  'secs_running', 'microsecs_running', 'op', 'ns', 'numYields', 'locks', 'waitingForLock', 'lockStats', 'waitingForFlowControl',
  'msg', 'progress', 'killPending',
])

/** clientMetadata: the driver and the application's name (the rest — os, platform, env — is not read). */
const CLIENT_METADATA_FIELDS = ['driver', 'application'] as const

const LOCK_REQUEST_FIELDS = new Set(['mode', 'convertMode', 'enqueueAtFront', 'compatibleFirst'])
const CLIENT_INFO_FIELDS = new Set(['desc', 'connectionId', 'client', 'opid'])

const isDoc = (v: unknown): v is Document => v !== null && typeof v === 'object' && !Array.isArray(v) && (v as {_bsontype?: unknown})._bsontype === undefined

/** `{insert: "orders", documents: [...], $db: "app"}` → `{insert: "orders", $db: "app"}`; a non-string first value becomes 1. */
export function commandNameOnly(command: Document): Document {
  const [name] = Object.keys(command)
  if (name === undefined) return {}
  const value = command[name]
  return {[name]: typeof value === 'string' ? value : 1, ...(typeof command.$db === 'string' && name !== '$db' ? {$db: command.$db} : {})}
}

function pick(doc: Document, fields: ReadonlySet<string>): Document {
  const out: Document = {}
  for (const [key, value] of Object.entries(doc)) if (fields.has(key)) out[key] = value
  return out
}

/** One `$currentOp` document without its command's values. */
export function operationWithoutUserData(doc: Document): Document {
  if (!isDoc(doc)) return doc
  const out = pick(doc, OPERATION_FIELDS)
  if (isDoc(doc.command)) out.command = commandNameOnly(doc.command)
  if (isDoc(doc.lsid) && doc.lsid.id !== undefined) out.lsid = {id: doc.lsid.id}
  if (isDoc(doc.clientMetadata)) {
    const metadata: Document = {}
    for (const field of CLIENT_METADATA_FIELDS) if (doc.clientMetadata[field] !== undefined) metadata[field] = doc.clientMetadata[field]
    out.clientMetadata = metadata
  }
  return out
}

function lockRequest(request: unknown): unknown {
  if (!isDoc(request)) return request
  const out = pick(request, LOCK_REQUEST_FIELDS)
  if (isDoc(request.clientInfo)) out.clientInfo = pick(request.clientInfo, CLIENT_INFO_FIELDS)
  return out
}

/** A lockInfo reply without `debugInfo`. */
export function lockInfoWithoutUserData(reply: Document): Document {
  if (!Array.isArray(reply.lockInfo)) return reply
  return {
    ...reply,
    lockInfo: reply.lockInfo.map((entry: unknown) =>
      isDoc(entry)
        ? {
            ...entry,
            ...(Array.isArray(entry.granted) ? {granted: entry.granted.map(lockRequest)} : {}),
            ...(Array.isArray(entry.pending) ? {pending: entry.pending.map(lockRequest)} : {}),
          }
        : entry,
    ),
  }
}

/** A `$currentOp` read of raw operation documents (nothing after the `$currentOp` stage). */
function isRawCurrentOp(read: SnapshotRead): boolean {
  const pipeline = (read.request as Document | undefined)?.pipeline
  return read.name === '$currentOp' && Array.isArray(pipeline) && pipeline.length === 1
}

/** One captured read as the file keeps it. */
export function readWithoutUserData(read: SnapshotRead): SnapshotRead {
  if (read.reply === undefined) return read
  if (isRawCurrentOp(read) && Array.isArray(read.reply)) return {...read, reply: read.reply.map(operationWithoutUserData)}
  if (read.name === 'lockInfo' && isDoc(read.reply)) return {...read, reply: lockInfoWithoutUserData(read.reply)}
  return read
}
