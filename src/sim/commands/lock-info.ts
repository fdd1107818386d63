/**
 * lockInfo (src/mongo/db/commands/lock_info.cpp): the lock manager's granted and pending requests per
 * resource. mongod only (`MONGO_REGISTER_COMMAND(CmdLockInfo).forShard()`: a router has no such command,
 * CommandNotFound), admin only, allowed on secondaries (kAlways), and authorized by the `serverStatus`
 * action on the cluster resource (clusterMonitor and above; "Unauthorized" otherwise).
 *
 * Shape (LockManager::getLockInfoArray / _buildBucketBSON, lock_manager.cpp, and the manual's lockInfo
 * example): `{lockInfo: [{resourceId, granted: [...], pending: [...]}]}`, a resource listed only while
 * something is granted on it; each request `{mode: 'IS'|'IX'|'S'|'X', convertMode: 'NONE', enqueueAtFront:
 * false, compatibleFirst: false, debugInfo?, clientInfo: {desc, connectionId, client, opid}}` — a system
 * thread's clientInfo has only `desc` and `opid`.
 *
 * `resourceId` is `ResourceId::toString()`: `{<fullHash>: <type name>, <hashId>}` with fullHash =
 * type << 61 | hashId. The profiles' versions (4.4.29, 6.0.20, 7.0.14) all have SERVER-65821's layout
 * (6.0, backported to 4.4.15 / 5.0.10): PBWM, FCV, RSTL and the global lock are RESOURCE_GLOBAL (type 1)
 * with ids 0, 1, 2, 3 (ResourceGlobalId); then Database, Collection (7.0 inserts RESOURCE_TENANT before
 * them). A database or collection's hashId is the server's hash of its name; the sim uses its own 61-bit
 * hash (FNV-1a), so those numbers differ from a real server's while the type names and the layout agree.
 * The manual's example (`{6917529027641081857: Global, 1}`) predates that layout.
 */
import type {Document} from 'bson'
import type {SimProcess} from '../process.js'
import type {ActiveOp} from '../server/connection.js'
import type {SystemOp} from '../status/system-ops.js'
import {CommandError} from '../errors.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {clusterMonitor} from './util.js'

const GLOBAL_IDS: Record<string, bigint> = {ParallelBatchWriterMode: 0n, FeatureCompatibilityVersion: 1n, ReplicationStateTransition: 2n, Global: 3n}
/** 7.3+ (8.0) ResourceGlobalId: kMultiDocumentTransactionsBarrier, kReplicationStateTransitionLock, kGlobal (lock_manager_defs.h). */
const GLOBAL_IDS_80: Record<string, bigint> = {MultiDocumentTransactionsBarrier: 0n, ReplicationStateTransition: 1n, Global: 2n}
const HASH_MASK = (1n << 61n) - 1n

function fnv1a61(text: string): bigint {
  let h = 0xcbf29ce484222325n
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= BigInt(byte)
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return h & HASH_MASK
}

/** "Collection:app.c" → "{<fullHash>: Collection, <hashId>}". */
export function resourceIdString(resource: string, proc: SimProcess): string {
  const colon = resource.indexOf(':')
  const kind = colon < 0 ? resource : resource.slice(0, colon)
  const tenant = proc.profile.maxWireVersion >= 21 ? 1n : 0n
  let type: bigint
  let hashId: bigint
  let name: string
  const globalIds = proc.profile.txnBarrierLock ? GLOBAL_IDS_80 : GLOBAL_IDS
  if (kind in globalIds) {
    type = 1n
    hashId = globalIds[kind]
    name = 'Global'
  } else {
    type = (kind === 'Database' ? 2n : 3n) + tenant
    hashId = fnv1a61(resource.slice(colon + 1))
    name = kind
  }
  return `{${(type << 61n) | hashId}: ${name}, ${hashId}}`
}

function isSystemOp(owner: object, proc: SimProcess): owner is SystemOp {
  return proc.locks.systemOps.has(owner as SystemOp)
}

function requestDocument(proc: SimProcess, owner: object, mode: string): Document {
  const doc: Document = {mode, convertMode: 'NONE', enqueueAtFront: false, compatibleFirst: false}
  if (isSystemOp(owner, proc)) {
    if (owner.debugInfo !== undefined) doc.debugInfo = owner.debugInfo
    doc.clientInfo = {desc: owner.desc, opid: owner.opid}
    return doc
  }
  for (const conn of proc.connections.values()) {
    if (conn.op !== (owner as ActiveOp)) continue
    doc.clientInfo = {desc: `conn${conn.id}`, connectionId: conn.id, client: conn.remote, opid: conn.op.opid}
    break
  }
  return doc
}

function lockInfo(ctx: CommandContext): Document {
  if (ctx.db !== 'admin') throw CommandError.of('Unauthorized', 'lockInfo may only be run against the admin database.')
  const proc = ctx.proc
  const out: Document[] = []
  for (const head of proc.locks.table.heads()) {
    if (head.granted.length === 0) continue
    out.push({
      resourceId: resourceIdString(head.resource, proc),
      granted: head.granted.map((r) => requestDocument(proc, r.owner, r.mode)),
      pending: head.pending.map((r) => requestDocument(proc, r.owner, r.mode)),
    })
  }
  return {lockInfo: out, ok: 1}
}

export const lockInfoCommands: CommandSpec[] = [{name: 'lockInfo', handler: lockInfo, authz: clusterMonitor}]
