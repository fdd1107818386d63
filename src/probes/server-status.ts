/**
 * Pure parsers for the parts of `serverStatus` pooltool reads. Fields differ
 * by server version (the manual's serverStatus, per release): a field the
 * server does not send stays absent (undefined), never 0.
 */
import type {Document} from '../mongo/driver.js'

export interface ConnectionsStatus {
  current: number
  available: number
  totalCreated: number
  /** 4.0.7+ */
  active?: number
  /** 6.3+ */
  rejected?: number
  /** 5.0+ */
  threaded?: number
  /** 4.4+ */
  exhaustIsMaster?: number
  /** 5.0+ (4.4.2+) */
  exhaustHello?: number
  /** 4.4+ */
  awaitingTopologyChanges?: number
  /** 5.3+ */
  loadBalanced?: number
  /** 8.2 / 8.0.12 / 7.0.23+ */
  queuedForEstablishment?: number
  /** 5.0-era; only when net.maxIncomingConnectionsOverride is set */
  limitExempt?: number
}

const OPTIONAL_CONNECTION_FIELDS = [
  'active',
  'rejected',
  'threaded',
  'exhaustIsMaster',
  'exhaustHello',
  'awaitingTopologyChanges',
  'loadBalanced',
  'queuedForEstablishment',
  'limitExempt',
] as const

/** The optional (version-dependent) fields of `serverStatus.connections`, in display order. */
export const CONNECTION_OPTIONAL_FIELDS: readonly (keyof ConnectionsStatus)[] = OPTIONAL_CONNECTION_FIELDS

/** BSON numbers arrive as number, Long or Int32/Double wrappers; read any of them. */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value
  if (typeof value === 'bigint') return Number(value)
  if (value !== null && typeof value === 'object') {
    const v = value as {toNumber?: () => number; valueOf?: () => unknown}
    if (typeof v.toNumber === 'function') return v.toNumber()
    const primitive = v.valueOf?.()
    if (typeof primitive === 'number') return primitive
  }
  return undefined
}

export function parseConnections(serverStatus: Document): ConnectionsStatus | undefined {
  const c = serverStatus.connections as Document | undefined
  if (!c) return undefined
  const current = toNumber(c.current)
  const available = toNumber(c.available)
  const totalCreated = toNumber(c.totalCreated)
  if (current === undefined || available === undefined || totalCreated === undefined) return undefined
  const parsed: ConnectionsStatus = {current, available, totalCreated}
  for (const field of OPTIONAL_CONNECTION_FIELDS) {
    const value = toNumber(c[field])
    if (value !== undefined) parsed[field] = value
  }
  return parsed
}

/** Readers and writers, as `globalLock.currentQueue` and `globalLock.activeClients` count them. */
export interface ReadersWriters {
  total: number
  readers: number
  writers: number
}

/**
 * `serverStatus.globalLock` (manual: serverStatus, "globalLock"): operations queued waiting for a lock, and active clients
 * (`activeClients.total` includes system threads). A mongod section: a mongos
 * does not send it, and a part it lacks stays absent.
 */
export interface GlobalLockStatus {
  currentQueue?: ReadersWriters
  activeClients?: ReadersWriters
}

function readersWriters(value: unknown): ReadersWriters | undefined {
  if (!value || typeof value !== 'object') return undefined
  const doc = value as Document
  const total = toNumber(doc.total)
  const readers = toNumber(doc.readers)
  const writers = toNumber(doc.writers)
  if (total === undefined || readers === undefined || writers === undefined) return undefined
  return {total, readers, writers}
}

export function parseGlobalLock(serverStatus: Document): GlobalLockStatus | undefined {
  const globalLock = serverStatus.globalLock as Document | undefined
  if (!globalLock || typeof globalLock !== 'object') return undefined
  const out: GlobalLockStatus = {}
  const currentQueue = readersWriters(globalLock.currentQueue)
  if (currentQueue) out.currentQueue = currentQueue
  const activeClients = readersWriters(globalLock.activeClients)
  if (activeClients) out.activeClients = activeClients
  return out.currentQueue || out.activeClients ? out : undefined
}

export interface LockWaitTotals {
  /** Sum over resource types and modes of acquireWaitCount. */
  acquireWaitCount: number
  /** Sum over resource types and modes of timeAcquiringMicros. */
  timeAcquiringMicros: number
  /** Per resource type (Global, Database, Collection, DDLDatabase …). */
  byResource: Record<string, {acquireWaitCount: number; timeAcquiringMicros: number}>
}

const sumModes = (modes: unknown): number => {
  if (!modes || typeof modes !== 'object') return 0
  let sum = 0
  for (const value of Object.values(modes as Record<string, unknown>)) sum += toNumber(value) ?? 0
  return sum
}

/** `serverStatus.locks`: sparse (zero modes are omitted), open-ended resource types. */
export function parseLockWaits(serverStatus: Document): LockWaitTotals | undefined {
  const locks = serverStatus.locks as Document | undefined
  if (!locks || typeof locks !== 'object') return undefined
  const totals: LockWaitTotals = {acquireWaitCount: 0, timeAcquiringMicros: 0, byResource: {}}
  for (const [resource, stats] of Object.entries(locks)) {
    if (!stats || typeof stats !== 'object') continue
    const s = stats as Document
    const waits = sumModes(s.acquireWaitCount)
    const micros = sumModes(s.timeAcquiringMicros)
    totals.byResource[resource] = {acquireWaitCount: waits, timeAcquiringMicros: micros}
    totals.acquireWaitCount += waits
    totals.timeAcquiringMicros += micros
  }
  return totals
}

export function diffLockWaits(before: LockWaitTotals, after: LockWaitTotals): LockWaitTotals {
  const byResource: LockWaitTotals['byResource'] = {}
  for (const [resource, a] of Object.entries(after.byResource)) {
    const b = before.byResource[resource] ?? {acquireWaitCount: 0, timeAcquiringMicros: 0}
    const waits = a.acquireWaitCount - b.acquireWaitCount
    const micros = a.timeAcquiringMicros - b.timeAcquiringMicros
    if (waits !== 0 || micros !== 0) byResource[resource] = {acquireWaitCount: waits, timeAcquiringMicros: micros}
  }
  return {
    acquireWaitCount: after.acquireWaitCount - before.acquireWaitCount,
    timeAcquiringMicros: after.timeAcquiringMicros - before.timeAcquiringMicros,
    byResource,
  }
}

export interface AuthMechanismCounters {
  /** authenticate.received: every attempt, speculative included. */
  received: number
  successful: number
  speculativeReceived?: number
  speculativeSuccessful?: number
}

/**
 * `security.authentication.mechanisms` (4.4+). Newer development servers nest
 * the counters under `ingress` with `total` instead of `received`; read both.
 */
export function parseAuthCounters(serverStatus: Document): Record<string, AuthMechanismCounters> | undefined {
  const mechanisms = (serverStatus.security as Document | undefined)?.authentication?.mechanisms as Document | undefined
  if (!mechanisms || typeof mechanisms !== 'object') return undefined
  const out: Record<string, AuthMechanismCounters> = {}
  for (const [mechanism, raw] of Object.entries(mechanisms)) {
    const doc = ((raw as Document)?.ingress ?? raw) as Document
    const authenticate = doc?.authenticate as Document | undefined
    const speculative = doc?.speculativeAuthenticate as Document | undefined
    const received = toNumber(authenticate?.received ?? authenticate?.total)
    const successful = toNumber(authenticate?.successful)
    if (received === undefined || successful === undefined) continue
    out[mechanism] = {
      received,
      successful,
      speculativeReceived: toNumber(speculative?.received ?? speculative?.total),
      speculativeSuccessful: toNumber(speculative?.successful),
    }
  }
  return out
}

export interface ShardingStatus {
  /** "<configReplSet>/host:port,host:port": the config server replica set (mongos and shard members). */
  configsvrConnectionString?: string
}

/**
 * `serverStatus.sharding` (mongos, and mongod members of a sharded cluster):
 * where the config server is. Absent on standalones and plain replica sets.
 */
export function parseShardingStatus(serverStatus: Document): ShardingStatus | undefined {
  const sharding = serverStatus.sharding as Document | undefined
  if (!sharding || typeof sharding !== 'object') return undefined
  const out: ShardingStatus = {}
  if (typeof sharding.configsvrConnectionString === 'string') out.configsvrConnectionString = sharding.configsvrConnectionString
  return out
}

/**
 * The sections of `serverStatus` a command may ask for. serverStatus sends
 * most sections unless told `{section: 0}`; the builder switches off every
 * section in this list that is not asked for (unknown names are ignored by the
 * server), so each read costs the server only what the caller parses.
 */
export const SERVER_STATUS_SECTIONS = [
  'asserts', 'connections', 'electionMetrics', 'extra_info', 'flowControl', 'globalLock', 'health', 'indexBuilds',
  'locks', 'logicalSessionRecordCache', 'mem', 'metrics', 'network', 'opLatencies', 'opcounters', 'opcountersRepl',
  'oplogTruncation', 'queryAnalyzers', 'repl', 'security', 'sharding', 'shardingStatistics', 'storageEngine',
  'tcmalloc', 'tenantMigrations', 'transactions', 'twoPhaseCommitCoordinator', 'catalogStats', 'batchedDeletes', 'wiredTiger',
] as const

export type ServerStatusSection = (typeof SERVER_STATUS_SECTIONS)[number]

/** `{serverStatus: 1, <every other section>: 0}`: the top-level fields (host, version, localTime, uptime…) always come. */
export function serverStatusCommand(wanted: readonly ServerStatusSection[]): Document {
  const command: Document = {serverStatus: 1}
  for (const section of SERVER_STATUS_SECTIONS) if (!wanted.includes(section)) command[section] = 0
  return command
}
