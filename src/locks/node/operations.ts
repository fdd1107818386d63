/**
 * `$currentOp` documents (allUsers: true; idle connections excluded) into typed operations (pure).
 *
 * Shapes read (the manual's currentOp "Output Fields"): 3.0 – 3.0.x printed the
 * operation under `query` (SERVER-17039's and pastebin FGjTrnC5's printouts), 3.2+ under `command`;
 * `locks` maps a resource type (Global, Database, Collection, Metadata, Mutex, oplog,
 * ParallelBatchWriterMode, ReplicationStateTransition, FeatureCompatibilityVersion, DDLDatabase,
 * DDLCollection, MMAPV1Journal …) to a mode letter. Resource types we do not know are kept as sent.
 *
 * Only a command's NAME is kept: its values are the user's filters and documents (an index build's index names
 * too: they spell its key's fields). An index build's namespace is kept where `ns` does not give it, since the
 * dropIndexes that aborts it needs it.
 */
import {toNumber} from '../../probes/server-status.js'
import type {IndexBuild, LockCounters, NodeOperation} from './types.js'

type Doc = Record<string, unknown>

const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const numOrNull = (v: unknown): number | null => toNumber(v) ?? null

/**
 * Command names a 3.0 server printed under `query` (with `op: "query"`), where the first key may
 * otherwise be a filter's field: only these are taken as a command's name there.
 */
const LEGACY_COMMAND_NAMES = new Set(
  [
    'aggregate', 'collMod', 'collStats', 'compact', 'convertToCapped', 'count', 'create', 'createIndexes', 'dbStats',
    'delete', 'distinct', 'drop', 'dropDatabase', 'dropIndexes', 'findAndModify', 'fsync', 'geoNear', 'group',
    'insert', 'listCollections', 'listIndexes', 'mapReduce', 'reIndex', 'renameCollection', 'repairDatabase',
    'update', 'validate', 'dbHash', 'cloneCollection', 'copydb', 'eval', 'text',
  ].map((name) => name.toLowerCase()),
)

/** What an idle transaction's `opid` reads: `lsid:<its session's id>`. */
export const SESSION_OPID_PREFIX = 'lsid:'

/** The session id an opid names (an idle transaction's `lsid:<uuid>`), or null for an operation's own opid. */
export function sessionIdOf(opid: number | string): string | null {
  return typeof opid === 'string' && opid.startsWith(SESSION_OPID_PREFIX) ? opid.slice(SESSION_OPID_PREFIX.length) : null
}

/** A UUID as mongosh prints it inside `UUID("…")`: a BSON Binary of subtype 4 (or the legacy 3), 16 bytes. */
function uuidText(v: unknown): string | null {
  if (!isDoc(v) || v._bsontype !== 'Binary' || (v.sub_type !== 4 && v.sub_type !== 3)) return null
  const bytes = v.buffer
  if (!(bytes instanceof Uint8Array) || bytes.length !== 16) return null
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * The operation's opid. An idle session's transaction ($currentOp idleSessions, desc "inactive transaction") has
 * none; the manual's $currentOp "returns a document for each operation or session", and the session's `lsid.id`
 * is what tells two of them apart (and what killSessions takes), so it is named `lsid:<uuid>`. Without either, ''.
 */
function opidOf(doc: Doc): number | string {
  const v = doc.opid
  if (v === undefined) {
    const session = isDoc(doc.lsid) ? uuidText(doc.lsid.id) : null
    if (session !== null) return `${SESSION_OPID_PREFIX}${session}`
  }
  if (typeof v === 'string') return v
  return toNumber(v) ?? String(v ?? '')
}

function commandNameOf(doc: Doc): string | null {
  if (isDoc(doc.command)) {
    const [name] = Object.keys(doc.command)
    return name ?? null
  }
  // 3.0: `query` holds either a command ({dbstats: 1}) or a find's filter ({foo: "bar"}).
  if (isDoc(doc.query)) {
    const [name] = Object.keys(doc.query)
    if (name !== undefined && (LEGACY_COMMAND_NAMES.has(name.toLowerCase()) || doc.op === 'command')) return name
  }
  return null
}

function countersOf(v: unknown): Partial<Record<string, number>> {
  const out: Partial<Record<string, number>> = {}
  if (!isDoc(v)) return out
  for (const [mode, value] of Object.entries(v)) {
    const n = toNumber(value)
    if (n !== undefined) out[mode] = n
  }
  return out
}

/** One resource's counters (serverStatus.locks and an operation's lockStats share the shape). */
export function parseLockCounters(v: unknown): LockCounters {
  const d = isDoc(v) ? v : {}
  const counters: LockCounters = {
    acquireCount: countersOf(d.acquireCount),
    acquireWaitCount: countersOf(d.acquireWaitCount),
    timeAcquiringMicros: countersOf(d.timeAcquiringMicros),
  }
  if (d.deadlockCount !== undefined) counters.deadlockCount = countersOf(d.deadlockCount)
  return counters
}

function locksOf(v: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (!isDoc(v)) return out
  // Every resource type is kept, known or not; a mode that is not a string is kept as its text.
  for (const [resource, mode] of Object.entries(v)) out[resource] = typeof mode === 'string' ? mode : String(mode)
  return out
}

function driverOf(doc: Doc): string | null {
  const driver = isDoc(doc.clientMetadata) && isDoc(doc.clientMetadata.driver) ? doc.clientMetadata.driver : null
  if (!driver) return null
  const name = str(driver.name)
  const version = str(driver.version)
  if (name === null) return null
  return version === null ? name : `${name} ${version}`
}

function appNameOf(doc: Doc): string | null {
  if (typeof doc.appName === 'string') return doc.appName
  const app = isDoc(doc.clientMetadata) && isDoc(doc.clientMetadata.application) ? doc.clientMetadata.application : null
  return app ? str(app.name) : null
}

/**
 * The collection an index build builds on, from its createIndexes command. The database comes from the op's `ns`,
 * else from an index spec's `ns` (a 4.2 secondary's IndexBuildsCoordinatorMongod printed `ns: ""` with
 * `indexes[].ns: "db.coll"`), else from `command.$db`.
 */
function indexBuildOf(doc: Doc): IndexBuild | undefined {
  const command = isDoc(doc.command) ? doc.command : undefined
  if (!command || Object.keys(command)[0] !== 'createIndexes') return undefined
  const specs = Array.isArray(command.indexes) ? command.indexes.filter(isDoc) : []
  const dbOf = (ns: unknown): string | null => {
    const dot = typeof ns === 'string' ? ns.indexOf('.') : -1
    return dot > 0 ? (ns as string).slice(0, dot) : null
  }
  const db = dbOf(doc.ns) ?? specs.map((spec) => dbOf(spec.ns)).find((name) => name !== null) ?? str(command.$db)
  return {db, collection: str(command.createIndexes)}
}

function runningMicrosOf(doc: Doc): number | null {
  const micros = toNumber(doc.microsecs_running)
  if (micros !== undefined) return micros
  const secs = toNumber(doc.secs_running)
  return secs === undefined ? null : secs * 1_000_000
}

/**
 * An idle connection: not active, waiting for nothing and holding nothing. (`active: false` alone is
 * not idle: a 3.0 operation queued for a lock reported `active: false`, pastebin FGjTrnC5.)
 */
export function isIdleConnection(doc: Doc): boolean {
  return doc.active === false && doc.waitingForLock !== true && Object.keys(isDoc(doc.locks) ? doc.locks : {}).length === 0
}

/** One `$currentOp` document. `node` names where it was read (host:port), for ops of several nodes. */
export function parseOperation(doc: Doc, node: string | null = null): NodeOperation {
  const lockStats: Record<string, LockCounters> = {}
  if (isDoc(doc.lockStats)) for (const [resource, counters] of Object.entries(doc.lockStats)) lockStats[resource] = parseLockCounters(counters)
  const progress = isDoc(doc.progress) ? {done: numOrNull(doc.progress.done), total: numOrNull(doc.progress.total)} : null
  return {
    node: node ?? str(doc.host),
    opid: opidOf(doc),
    desc: str(doc.desc),
    connectionId: numOrNull(doc.connectionId),
    client: str(doc.client) ?? str(doc.client_s),
    appName: appNameOf(doc),
    driver: driverOf(doc),
    op: str(doc.op),
    ns: str(doc.ns),
    commandName: commandNameOf(doc),
    runningMicros: runningMicrosOf(doc),
    waitingForLock: doc.waitingForLock === true,
    locks: locksOf(doc.locks),
    lockStats,
    msg: str(doc.msg),
    progress: progress && progress.done !== null && progress.total !== null ? {done: progress.done, total: progress.total} : null,
    shard: str(doc.shard),
    ...withIndexBuild(indexBuildOf(doc)),
  }
}

const withIndexBuild = (build: IndexBuild | undefined): {indexBuild?: IndexBuild} => (build ? {indexBuild: build} : {})

/** `$currentOp` documents (or a `currentOp` command's `inprog`), idle connections left out. */
export function parseOperations(docs: readonly Doc[], node: string | null = null): NodeOperation[] {
  return docs.filter((doc) => isDoc(doc) && !isIdleConnection(doc)).map((doc) => parseOperation(doc, node))
}
