/**
 * Pure parsers of what replaced config.locks on 6.1+ (distributed locks moved into memory
 * on the coordinating shard): DDL operations in `$currentOp` documents, and the
 * `DDLDatabase` / `DDLCollection` entries of `serverStatus.locks` (7.1+).
 */
import type {Document} from '../mongo/driver.js'
import {toNumber} from '../probes/server-status.js'
import type {DdlLockEntry, DdlOpRow} from './types.js'

const USER_DDL = new Set(['create', 'drop', 'dropDatabase', 'shardCollection', 'movePrimary', 'renameCollection', 'collMod', 'reshardCollection', 'refineCollectionShardKey', 'createDatabase', 'enableSharding'])

function nsOf(command: Document, db: unknown): string | null {
  const [name] = Object.keys(command)
  const v = command[name]
  if (typeof v === 'string' && v.length > 0) return v.includes('.') || typeof db !== 'string' ? v : `${db}.${v}`
  return typeof db === 'string' ? db : null
}

/** DDL operations (user commands and the internal _shardsvr* / _configsvr* coordinators) from $currentOp documents, longest running first. */
export function ddlOpsFrom(docs: Document[]): DdlOpRow[] {
  const out: DdlOpRow[] = []
  for (const d of docs) {
    const command = d.command && typeof d.command === 'object' ? (d.command as Document) : undefined
    if (!command) continue
    const [name = ''] = Object.keys(command)
    // A coordinator reports itself by name in `desc` ("DropCollectionCoordinator", …) with an empty `command`, no
    // opid and no running time (ShardingDDLCoordinator::basicReportBuilder); "ShardingDDLCoordinator" is the service.
    const coordinator = typeof d.desc === 'string' && /Coordinator$/.test(d.desc)
    const ddl = USER_DDL.has(name) || name.startsWith('_shardsvr') || name.startsWith('_configsvr') || coordinator
    if (!ddl) continue
    const micros = toNumber(d.microsecs_running)
    out.push({
      shard: typeof d.shard === 'string' ? d.shard : null,
      host: typeof d.host === 'string' ? d.host : null,
      opid: String(d.opid ?? ''),
      command: name || (coordinator ? String(d.desc) : ''),
      ns: nsOf(command, command.$db) ?? (typeof d.ns === 'string' ? d.ns : null),
      runningMS: micros === undefined ? null : Math.round(micros / 1000),
      waitingForLock: d.waitingForLock === true,
    })
  }
  // Longest running first; those that do not say how long (coordinators) last.
  return out.sort((a, b) => (b.runningMS ?? -1) - (a.runningMS ?? -1))
}

/** Sum of a `{mode: count}` document (serverStatus.locks omits modes that are zero). */
function sumModes(modes: unknown): number {
  if (!modes || typeof modes !== 'object') return 0
  let n = 0
  for (const value of Object.values(modes as Document)) n += toNumber(value) ?? 0
  return n
}

/** serverStatus.locks entries that are DDL locks (DDLDatabase / DDLCollection, 7.1+). */
export function ddlLockEntries(locks: Document | undefined): Record<string, DdlLockEntry> {
  const out: Record<string, DdlLockEntry> = {}
  for (const [resource, entry] of Object.entries(locks ?? {})) {
    if (!/^DDL/.test(resource) || !entry || typeof entry !== 'object') continue
    const e = entry as Document
    out[resource] = {acquireCount: sumModes(e.acquireCount), acquireWaitCount: sumModes(e.acquireWaitCount), timeAcquiringMicros: sumModes(e.timeAcquiringMicros)}
  }
  return out
}
