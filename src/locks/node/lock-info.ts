/**
 * `lockInfo` (admin command, mongod only) into typed granted / pending lists per resource (pure).
 *
 * Shape: the manual's lockInfo "Output Example" (reference/command/lockInfo): `lockInfo: [{resourceId,
 * granted: [{mode, convertMode, enqueueAtFront, compatibleFirst, debugInfo, clientInfo: {desc,
 * connectionId, client, opid}}], pending: [...]}]`, and the server source (lock_info.cpp,
 * lock_manager.cpp::_buildBucketBSON). `debugInfo` holds the command with its values (the example's
 * `query: { _id: 585.0 }`): it is never read.
 *
 * resourceId strings seen: "{6917529027641081857: Global, 1}", "{10123292395995783581: Database,
 * 899920359141007773, test}", "{12576221391967629173: Collection, 1047006345899159413,
 * test.hugeindex}" (the manual), and "{…: Collection, test.foo}" (older servers: no second hash).
 */
import {toNumber} from '../../probes/server-status.js'
import {modeName} from './modes.js'
import type {LockInfoRequest, LockInfoResource, LockInfoSnapshot} from './types.js'

type Doc = Record<string, unknown>
const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v)

/** "{hash: Type, …, name}" → its type and name (null for a singleton such as "Global, 1"). */
export function parseResourceId(resourceId: string): {type: string; name: string | null} {
  const inner = resourceId.trim().replace(/^\{/, '').replace(/\}$/, '')
  const colon = inner.indexOf(':')
  const parts = (colon >= 0 ? inner.slice(colon + 1) : inner).split(',').map((part) => part.trim())
  const type = parts[0] || 'unknown'
  const last = parts.length > 1 ? parts[parts.length - 1]! : ''
  // A trailing number is an id (the singleton's 1, a hash), not a database or namespace name.
  return {type, name: last === '' || /^\d+$/.test(last) ? null : last}
}

function requestOf(v: unknown): LockInfoRequest {
  const d = isDoc(v) ? v : {}
  const client = isDoc(d.clientInfo) ? d.clientInfo : {}
  const opid = typeof client.opid === 'string' ? client.opid : (toNumber(client.opid) ?? null)
  return {
    mode: modeName(d.mode),
    opid,
    desc: typeof client.desc === 'string' ? client.desc : null,
    client: typeof client.client === 'string' ? client.client : null,
    connectionId: toNumber(client.connectionId) ?? null,
  }
}

/** A lockInfo reply (or its `lockInfo` array) read on `node`. */
export function parseLockInfo(reply: unknown, node: string | null = null): LockInfoSnapshot {
  const list = Array.isArray(reply) ? reply : isDoc(reply) && Array.isArray(reply.lockInfo) ? reply.lockInfo : []
  const resources: LockInfoResource[] = []
  for (const entry of list) {
    if (!isDoc(entry) || typeof entry.resourceId !== 'string') continue
    const {type, name} = parseResourceId(entry.resourceId)
    resources.push({
      resourceId: entry.resourceId,
      type,
      name,
      granted: Array.isArray(entry.granted) ? entry.granted.map(requestOf) : [],
      pending: Array.isArray(entry.pending) ? entry.pending.map(requestOf) : [],
    })
  }
  return {node, resources}
}
