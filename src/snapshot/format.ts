/**
 * The snapshot file (`pooltool snapshot` writes it, `pooltool sim --replay`
 * serves it, published-document fixtures are written in it): one document in
 * canonical Extended JSON, so Int32/Int64/Double/Date/Timestamp/ObjectId come
 * back as the types the server sent. The contract is described field by field
 * in src/replay/README.md.
 */
import {EJSON, type Document} from 'bson'

import {PoolToolError} from '../errors.js'
import type {ReadEvent} from '../probes/reader.js'
import type {HostRole} from '../probes/topology.js'

export const SNAPSHOT_FORMAT = 'pooltool-snapshot'
/**
 * 2: node locks captured on every topology (a standalone's and replica set's data-bearing members, a
 * sharded cluster's shard and config primaries: the `$currentOp`, serverStatus and lockInfo reads of
 * `locks list`, stated per host in `nodeLocks`), and `$currentOp` documents and lockInfo requests kept
 * without the commands' values (src/snapshot/user-data.ts). 1: node locks on a sharded cluster only,
 * no `nodeLocks`. Both replay; a read a file does not hold is answered "not captured" (unknown).
 */
export const SNAPSHOT_FORMAT_VERSION = 2
/** The oldest format this pooltool replays. */
export const OLDEST_SNAPSHOT_FORMAT_VERSION = 1

/** One read as the read layer made it (`ReadEvent`; the host is the group's), with the database it ran on. */
export interface SnapshotRead extends Omit<ReadEvent, 'host' | 'receivedAt' | 'durationMS'> {
  /** Database the command ran on. */
  db: string
  /** Absent in hand-assembled fixtures. */
  receivedAt?: Date
  durationMS?: number
}

export interface SnapshotHost {
  /** The name the cluster uses for this process ("host:port"). */
  host: string
  /** Where the capture connected, when not `host` (the entry node reached through a tunnel). */
  address?: string
  role: HostRole
  /** From this host's first hello: the server's clock and this machine's when the reply arrived. */
  clock?: {serverTime?: Date; receivedAt: Date}
  /**
   * Format 2: the node-lock reads `locks list` made on this host (absent on a host it does not read: a
   * router, a sharded cluster's secondaries, an arbiter; absent everywhere in format 1).
   */
  nodeLocks?: NodeLocksCapture
  reads: SnapshotRead[]
}

/** How one node-lock read went at capture: answered, refused for the user's role, or failed (with the server's words). */
export type CapturedReadState = 'captured' | `not permitted: ${string}` | `failed: ${string}` | 'not read'

export interface NodeLocksCapture {
  /** `$currentOp` with allUsers, idle connections excluded. */
  currentOp: CapturedReadState
  /** serverStatus (locks, globalLock, queues, wiredTiger.concurrentTransactions, uptime, localTime). */
  serverStatus: CapturedReadState
  /** lockInfo: "not permitted" is the role's refusal (the chain is then inferred from $currentOp), never "no locks". */
  lockInfo: CapturedReadState
}

export interface SnapshotFile {
  format: typeof SNAPSHOT_FORMAT
  formatVersion: number
  capturedAt: Date
  pooltoolVersion?: string
  entry: {uri: string; seedHosts: string[]}
  redactedHosts: boolean
  hosts: SnapshotHost[]
  unreachable: Array<{host: string; error: string}>
  views?: Record<string, unknown>
  /** Fixtures only: where the documents come from, and what a DBA concludes from them. */
  source?: Document
  verdicts?: Document
  notes?: string[]
}

/** The snapshot as canonical Extended JSON values (plain JSON: `{"$numberLong": "…"}`, `{"$date": …}`), ready for JSON.stringify. */
export function toCanonicalJson(snapshot: SnapshotFile): Document {
  return EJSON.serialize(snapshot as unknown as Document, {relaxed: false})
}

/** Canonical Extended JSON text, two-space indented, newline-terminated. */
export function serializeSnapshot(snapshot: SnapshotFile): string {
  return `${JSON.stringify(toCanonicalJson(snapshot), null, 2)}\n`
}

/** The database a read of this name ran on (`config.locks` → config, `admin.listCollections` → admin). */
export function dbOfRead(name: string): string {
  const dot = name.indexOf('.')
  if (name.startsWith('$') || dot <= 0) return 'admin'
  return name.slice(0, dot)
}

/** Hand-assembled fixtures may leave out what a capture always writes: a read's database and request, a host's role. */
function normalizeHost(host: Document): SnapshotHost {
  const reads = (host.reads as Document[]).map((read) => ({
    ...read,
    db: typeof read.db === 'string' ? read.db : dbOfRead(String(read.name)),
    request: read.request && typeof read.request === 'object' ? read.request : {},
  }))
  return {...host, role: host.role ?? 'standalone', reads} as SnapshotHost
}

const badFile = (file: string, why: string) =>
  new PoolToolError('USAGE', `${file} is not a pooltool snapshot: ${why}`, 'pass a file written by `pooltool snapshot --out FILE` (or a fixture in that format)')

/** Parse and check a snapshot's text (bad input is a usage error naming the file). */
export function parseSnapshot(text: string, file: string): SnapshotFile {
  let doc: Document
  try {
    doc = EJSON.parse(text, {relaxed: false}) as Document
  } catch (error) {
    throw badFile(file, `not Extended JSON (${(error as Error).message})`)
  }
  if (doc?.format !== SNAPSHOT_FORMAT) throw badFile(file, `"format" is ${JSON.stringify(doc?.format)}, expected "${SNAPSHOT_FORMAT}"`)
  const version = Number(doc.formatVersion)
  if (!Number.isInteger(version) || version < OLDEST_SNAPSHOT_FORMAT_VERSION || version > SNAPSHOT_FORMAT_VERSION) {
    throw badFile(file, `formatVersion ${String(doc.formatVersion)} (this pooltool reads ${OLDEST_SNAPSHOT_FORMAT_VERSION} to ${SNAPSHOT_FORMAT_VERSION})`)
  }
  if (!Array.isArray(doc.hosts) || doc.hosts.length === 0) throw badFile(file, 'no "hosts"')
  for (const host of doc.hosts as Document[]) {
    if (typeof host?.host !== 'string' || !Array.isArray(host.reads)) throw badFile(file, 'a host without "host" or "reads"')
  }
  if (typeof doc.entry?.uri !== 'string') throw badFile(file, 'no "entry.uri"')
  return {
    ...(doc as unknown as SnapshotFile),
    hosts: (doc.hosts as Document[]).map(normalizeHost),
    formatVersion: version,
    capturedAt: doc.capturedAt instanceof Date ? doc.capturedAt : new Date(String(doc.capturedAt)),
    redactedHosts: doc.redactedHosts === true,
    unreachable: Array.isArray(doc.unreachable) ? doc.unreachable : [],
    entry: {uri: doc.entry.uri, seedHosts: Array.isArray(doc.entry.seedHosts) ? doc.entry.seedHosts : []},
  }
}
