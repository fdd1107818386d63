/**
 * Which captured read answers an incoming command. The read layer's name of
 * the command comes first (`hello` also answers `isMaster`, a `find` on
 * config.X is `config.X`, an aggregate starting with `$currentOp` is
 * `$currentOp`); among that host's reads of that name, the one whose request
 * equals the incoming one (fields the driver adds on its own — `$db`, `lsid`,
 * `$clusterTime`, `$readPreference`, `maxTimeMS`, `apiVersion` … — left out);
 * for serverStatus, one whose sections cover the ones asked for; else the
 * latest read of that name. `$currentOp` is answered only by a read of the
 * same kind: raw operation documents (nothing after `$currentOp`: the node-lock
 * and DDL reads) or what a pipeline computed (the holders' `$group`), since one
 * is no stand-in for the other; a snapshot holding neither kind says so (not
 * captured), which the commands report as unknown.
 */
import {EJSON, type Document} from 'bson'

import type {SnapshotRead} from '../snapshot/format.js'

/** Fields the driver (or the reader's bounds) add to a command: not part of what was asked. */
const IGNORED_FIELDS = new Set([
  '$db', 'lsid', '$clusterTime', '$readPreference', 'readPreference', 'maxTimeMS', 'apiVersion', 'apiStrict', 'apiDeprecationErrors',
  'txnNumber', 'autocommit', 'startTransaction', 'readConcern', 'writeConcern', 'comment', 'cursor', 'batchSize', '$audit', 'signature',
  'client', 'compression', 'loadBalanced', 'helloOk', 'speculativeAuthenticate', 'saslSupportedMechs', 'topologyVersion', 'maxAwaitTimeMS',
])

const HELLO_NAMES = new Set(['hello', 'ismaster'])

/** The read layer's name for an incoming command (undefined: not a read the layer makes). */
export function readNameOf(command: Document, db: string): string | undefined {
  const verb = Object.keys(command)[0] ?? ''
  const lower = verb.toLowerCase()
  if (HELLO_NAMES.has(lower)) return 'hello'
  switch (lower) {
    case 'buildinfo':
      return 'buildInfo'
    case 'hostinfo':
      return 'hostInfo'
    case 'getcmdlineopts':
      return 'getCmdLineOpts'
    case 'replsetgetconfig':
      return 'replSetGetConfig'
    case 'serverstatus':
      return 'serverStatus'
    case 'connpoolstats':
      return 'connPoolStats'
    case 'listshards':
      return 'listShards'
    case 'getshardmap':
      return 'getShardMap'
    case 'lockinfo':
      return 'lockInfo'
    case 'getparameter':
      return 'getParameter'
    case 'listcollections':
      return `${db}.listCollections`
    case 'find':
      return typeof command.find === 'string' ? `${db}.${command.find}` : undefined
    case 'aggregate': {
      const first = (command.pipeline as Document[] | undefined)?.[0]
      return first && typeof first === 'object' && '$currentOp' in first ? '$currentOp' : undefined
    }
    default:
      return undefined
  }
}

/** What a request asks, as comparable text: ignored fields dropped, numbers compared by value (1 == 1.0 == Long 1). */
export function requestKey(request: Document): string {
  const kept: Document = {}
  for (const [key, value] of Object.entries(request)) if (!IGNORED_FIELDS.has(key)) kept[key] = value
  return EJSON.stringify(normalizeNumbers(kept), {relaxed: true})
}

function normalizeNumbers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeNumbers)
  if (value && typeof value === 'object') {
    const v = value as {_bsontype?: string; valueOf?: () => unknown; toNumber?: () => number}
    if (v._bsontype === 'Int32' || v._bsontype === 'Double') return Number(v.valueOf?.())
    if (v._bsontype === 'Long') return v.toNumber?.()
    if (v._bsontype !== undefined || value instanceof Date) return value
    const out: Document = {}
    for (const [key, inner] of Object.entries(value)) out[key] = normalizeNumbers(inner)
    return out
  }
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'boolean') return value ? 1 : 0
  return value
}

const isOff = (value: unknown): boolean => {
  const n = Number((value as {valueOf?: () => unknown})?.valueOf?.() ?? value)
  return value === false || n === 0
}

/** Sections a serverStatus request switches off (`{section: 0}`); every other one comes. */
function sectionsOff(request: Document): Set<string> {
  const off = new Set<string>()
  for (const [key, value] of Object.entries(request)) if (key !== 'serverStatus' && !IGNORED_FIELDS.has(key) && isOff(value)) off.add(key)
  return off
}

/** A captured serverStatus covers a request when it did not switch off a section the request wants. */
export function serverStatusCovers(captured: Document, incoming: Document): boolean {
  const offIncoming = sectionsOff(incoming)
  for (const section of sectionsOff(captured)) if (!offIncoming.has(section)) return false
  return true
}

/**
 * A `$currentOp` request's kind: `raw` when the pipeline stops at `$currentOp` (operation documents), `staged` when
 * stages follow; undefined for a fixture's read without a request (it answers either).
 */
export function currentOpKind(request: Document): 'raw' | 'staged' | undefined {
  const pipeline = request.pipeline
  if (!Array.isArray(pipeline)) return undefined
  return pipeline.length <= 1 ? 'raw' : 'staged'
}

/** The captured read that answers `command` (on `db`), among one host's reads; undefined when none has that name. */
export function matchRead(reads: readonly SnapshotRead[], command: Document, db: string): SnapshotRead | undefined {
  const name = readNameOf(command, db)
  if (name === undefined) return undefined
  const kind = name === '$currentOp' ? currentOpKind(command) : undefined
  const named = reads.filter(
    (r) => (r.name === name || (name === 'hello' && r.name === 'isMaster')) && (kind === undefined || (currentOpKind(r.request) ?? kind) === kind),
  )
  if (named.length === 0) return undefined
  const latest = (candidates: readonly SnapshotRead[]) => candidates[candidates.length - 1]
  const wanted = requestKey(command)
  const equal = named.filter((r) => requestKey(r.request) === wanted)
  // An answer beats an error for the same request: a read that failed once and worked later is served as it worked.
  const answered = equal.filter((r) => r.error === undefined)
  if (answered.length > 0) return latest(answered)
  if (equal.length > 0) return latest(equal)
  if (name === 'serverStatus') {
    const covering = named.filter((r) => r.error === undefined && serverStatusCovers(r.request, command))
    if (covering.length > 0) return latest(covering)
  }
  return latest(named)
}
