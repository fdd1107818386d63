/**
 * Readers for `pooltool locks`: one small driver client on the target (a mongos), which
 * decides the lock model and then reads `config.locks`, `config.lockpings`,
 * `config.mongos` and `config.shards` with plain finds — or, on 6.1+, what replaced them
 * (`$currentOp` DDL operations, serverStatus.locks DDL entries on each shard). Read only.
 */
import {PoolToolError} from '../errors.js'
import {CLOSE_GRACE_MS, closeWithin, createClient, createHostClient, type MongoClient} from '../mongo/client.js'
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import type {Target} from '../target.js'
import {lockTiming, parseShardDoc, versionAtLeast, versionParts} from './parse.js'
import type {DdlOpRow, InMemoryView, LockModel, LockTiming} from './types.js'

export interface LocksClientSettings {
  appName: string
  timeoutMs: number
  /** Overrides the 15 min expiry (e.g. a cluster with a patched setDistLockTimeout). */
  expiryMS?: number
}

export interface LocksSession {
  client: MongoClient
  target: Target
  settings: LocksClientSettings
  serverVersion: string
  model: LockModel
  message: string
  timing: LockTiming
  close(): Promise<void>
}

/**
 * Bounds one read with the driver's per-operation AbortSignal: it cancels server
 * selection, the checkout and the socket read, and the driver closes that connection,
 * so a stalled server cannot keep a pooled connection busy for the next read. (Driver 7
 * ignores timeoutMS, and maxTimeMS only bounds server-side work, which a stalled server
 * never starts.) Callers combine Ctrl-C with AbortSignal.timeout(--timeout-ms).
 */
export interface ReadBounds {
  signal?: AbortSignal
}

export interface ConfigSnapshot {
  now: Date
  locks: Document[]
  pings: Document[]
  mongos: Document[]
  shards: Document[]
}

function topologyName(hello: Document): string {
  if (typeof hello.setName === 'string') return `a replica set member (set '${hello.setName}')`
  return 'a standalone mongod'
}

/** The one-line explanation of each model. */
export function modelMessage(model: LockModel, version: string, collectionsPresent: boolean): string {
  if (model === 'in-memory') {
    return (
      `MongoDB ${version} keeps DDL locks in memory on the coordinating shard (distributed locks left config.locks / ` +
      `config.lockpings in 6.1${collectionsPresent ? '; the leftover documents here are from before the FCV upgrade' : ''}): ` +
      'showing DDL operations from $currentOp and DDL lock entries of serverStatus.locks instead'
    )
  }
  if (model === 'unsupported') return `MongoDB ${version}: pooltool reads the config.locks shapes of 3.4 – 6.0 only`
  return versionAtLeast(version, 5, 0)
    ? `MongoDB ${version}: config.locks written by shard primaries (process = shard name, fixed lock session ids) and the config server ("config")`
    : `MongoDB ${version}: config.locks written by the config server ("ConfigServer"), shards and routers (host:port:epoch:random)`
}

export function modelFor(version: string): LockModel {
  const [major = 0] = versionParts(version)
  if (major === 0 || !versionAtLeast(version, 3, 4)) return 'unsupported'
  return versionAtLeast(version, 6, 1) ? 'in-memory' : 'config.locks'
}

/**
 * `read` with its reads bounded by --timeout-ms (ReadBounds); running out of it is
 * UNREACHABLE (exit 4: the README's "cannot be reached within --timeout-ms"), not a
 * driver error nobody classified. For the one-shot reads (opening a session, list, pings).
 */
export async function withinTimeout<T>(target: Target, timeoutMs: number, read: (bounds: ReadBounds) => Promise<T>): Promise<T> {
  const timeout = AbortSignal.timeout(timeoutMs)
  try {
    return await read({signal: timeout})
  } catch (error) {
    if (!timeout.aborted || error instanceof PoolToolError) throw error
    throw new PoolToolError(
      'UNREACHABLE',
      `${target.redactedUri} did not answer within ${timeoutMs} ms (--timeout-ms)`,
      'the router (or the config server behind it) is stalled or overloaded; raise --timeout-ms for slow links',
      {cause: error},
    )
  }
}

/** Opens the session; a replica set or standalone is WRONG_TOPOLOGY (exit 7). Bounded by --timeout-ms. */
export async function openLocksSession(target: Target, settings: LocksClientSettings): Promise<LocksSession> {
  const client = createClient({uri: target.uri, appName: settings.appName, timeoutMs: settings.timeoutMs, pool: {maxPoolSize: 2}})
  try {
    return await withinTimeout(target, settings.timeoutMs, (bounds) => describeSession(client, target, settings, bounds))
  } catch (error) {
    await closeWithin(client, CLOSE_GRACE_MS)
    throw error
  }
}

/** What the router says about itself: topology (mongos or not), version, lock model, the sim's time scale. */
async function describeSession(client: MongoClient, target: Target, settings: LocksClientSettings, bounds: ReadBounds): Promise<LocksSession> {
  const admin = client.db('admin')
  const hello = await admin.command({hello: 1}, bounds)
  if (hello.msg !== 'isdbgrid') {
    throw new PoolToolError(
      'WRONG_TOPOLOGY',
      `locks need a sharded cluster: ${target.redactedUri} is ${topologyName(hello)}`,
      'distributed locks live on the config servers of a sharded cluster: point --uri at a mongos (mongodb://mongos-host:27017)',
    )
  }
  const info = await admin.command({buildInfo: 1}, bounds)
  const serverVersion = String(info.version ?? 'unknown')
  let timeScale = 1
  try {
    // The embedded cluster says how much it shrinks its intervals; a real server has no such field.
    const host = await admin.command({hostInfo: 1}, bounds)
    const scale = host?.extra?.timeScale
    if (typeof scale === 'number' && scale > 0) timeScale = scale
  } catch {
    // hostInfo needs clusterMonitor; the real-server default applies.
  }
  const names = await client
    .db('config')
    .listCollections({name: {$in: ['locks', 'lockpings']}}, {nameOnly: true, ...bounds})
    .toArray()
  const model = modelFor(serverVersion)
  return {
    client,
    target,
    settings,
    serverVersion,
    model,
    message: modelMessage(model, serverVersion, names.length > 0),
    timing: lockTiming(timeScale, settings.expiryMS),
    close: () => closeWithin(client, CLOSE_GRACE_MS),
  }
}

export async function readConfigSnapshot(session: LocksSession, bounds: ReadBounds = {}): Promise<ConfigSnapshot> {
  const config = session.client.db('config')
  const [hello, locks, pings, mongos, shards] = await Promise.all([
    session.client.db('admin').command({hello: 1}, bounds),
    config.collection('locks').find({}, bounds).toArray(),
    config.collection('lockpings').find({}, bounds).toArray(),
    config.collection('mongos').find({}, bounds).toArray(),
    config.collection('shards').find({}, bounds).toArray(),
  ])
  const now = hello.localTime instanceof Date ? hello.localTime : new Date()
  return {now, locks, pings, mongos, shards}
}

const USER_DDL = new Set(['create', 'drop', 'dropDatabase', 'shardCollection', 'movePrimary', 'renameCollection', 'collMod', 'reshardCollection', 'refineCollectionShardKey', 'createDatabase', 'enableSharding'])

function nsOf(command: Document, db: unknown): string | null {
  const [name] = Object.keys(command)
  const v = command[name]
  if (typeof v === 'string' && v.length > 0) return v.includes('.') || typeof db !== 'string' ? v : `${db}.${v}`
  return typeof db === 'string' ? db : null
}

/** DDL operations (user commands and the internal _shardsvr* / _configsvr* coordinators) from $currentOp documents. */
export function ddlOpsFrom(docs: Document[]): DdlOpRow[] {
  const out: DdlOpRow[] = []
  for (const d of docs) {
    const command = d.command && typeof d.command === 'object' ? (d.command as Document) : undefined
    if (!command) continue
    const [name = ''] = Object.keys(command)
    const ddl = USER_DDL.has(name) || name.startsWith('_shardsvr') || name.startsWith('_configsvr') || d.desc === 'ShardingDDLCoordinator'
    if (!ddl) continue
    const micros = d.microsecs_running
    const runningMS = micros === undefined ? 0 : Math.round(Number(typeof micros === 'object' && micros !== null && 'toNumber' in micros ? (micros as {toNumber(): number}).toNumber() : micros) / 1000)
    out.push({
      shard: typeof d.shard === 'string' ? d.shard : null,
      host: typeof d.host === 'string' ? d.host : null,
      opid: String(d.opid ?? ''),
      command: name,
      ns: nsOf(command, command.$db),
      runningMS,
      waitingForLock: d.waitingForLock === true,
    })
  }
  return out.sort((a, b) => b.runningMS - a.runningMS)
}

/** serverStatus.locks entries that are DDL locks (DDLDatabase / DDLCollection, 7.1+). */
export function ddlLockEntries(locks: Document | undefined): Record<string, {acquireCount: number; acquireWaitCount: number; timeAcquiringMicros: number}> {
  const out: Record<string, {acquireCount: number; acquireWaitCount: number; timeAcquiringMicros: number}> = {}
  const sum = (v: unknown): number => {
    if (!v || typeof v !== 'object') return 0
    let n = 0
    for (const x of Object.values(v as Document)) n += typeof x === 'number' ? x : Number((x as {toNumber?: () => number})?.toNumber?.() ?? 0)
    return n
  }
  for (const [resource, entry] of Object.entries(locks ?? {})) {
    if (!/^DDL/.test(resource) || !entry || typeof entry !== 'object') continue
    const e = entry as Document
    out[resource] = {acquireCount: sum(e.acquireCount), acquireWaitCount: sum(e.acquireWaitCount), timeAcquiringMicros: sum(e.timeAcquiringMicros)}
  }
  return out
}

/** The 6.1+ replacement: DDL ops from $currentOp through the router, and each shard's serverStatus.locks DDL entries. */
export async function readInMemoryView(session: LocksSession, options: {serverStatus?: boolean} & ReadBounds = {}): Promise<InMemoryView> {
  const admin = session.client.db('admin')
  const bounds: ReadBounds = {signal: options.signal}
  // Db.aggregate's type omits `signal`, but its cursor honours it like every other cursor (driver 7).
  const aggregateOptions = {signal: bounds.signal} as Parameters<typeof admin.aggregate>[1]
  const ops = await admin.aggregate([{$currentOp: {allUsers: true, idleConnections: false}}], aggregateOptions).toArray()
  const shards = (await session.client.db('config').collection('shards').find({}, bounds).toArray()).map(parseShardDoc)
  // One round over every shard at once: each read needs its own direct connection (handshake included).
  const shardsToRead = options.serverStatus === false ? [] : shards.filter((shard) => shard.hosts[0] !== undefined)
  const serverStatusLocks: InMemoryView['serverStatusLocks'] = await Promise.all(
    shardsToRead.map(async (shard) => {
      const host = shard.hosts[0]!
      const client = createHostClient({uri: session.target.uri, appName: session.settings.appName, timeoutMs: session.settings.timeoutMs}, host)
      try {
        const status = await client.db('admin').command({serverStatus: 1, repl: 0, metrics: 0, opcounters: 0, connections: 0}, bounds)
        return {shard: shard.name, host, resources: ddlLockEntries(status.locks)}
      } catch (error) {
        const unavailable = toPoolToolError(error, {target: host, secrets: session.target.secrets}).message
        return {shard: shard.name, host, resources: {}, unavailable}
      } finally {
        await closeWithin(client, CLOSE_GRACE_MS)
      }
    }),
  )
  const ddlOps = ddlOpsFrom(ops)
  const lockTypes = serverStatusLocks.some((s) => Object.keys(s.resources).length > 0)
  const waiting = ddlOps.filter((o) => o.waitingForLock).length
  return {
    note:
      `${ddlOps.length} DDL operation(s) running, ${waiting} waiting for a lock; ` +
      (lockTypes ? 'serverStatus.locks has DDL lock entries' : 'serverStatus.locks has no DDLDatabase/DDLCollection entries (they appear from 7.1)'),
    ddlOps,
    serverStatusLocks,
  }
}
