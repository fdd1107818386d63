/**
 * Reads for `pooltool locks` and bench's lock observer, all through the read layer
 * (src/probes/reader.ts): one reader over the target (a mongos) decides the lock model;
 * each snapshot then reads `config.locks`, `config.lockpings`, `config.mongos` and
 * `config.shards` beside a `hello` whose `localTime` is the clock every age is judged on —
 * or, on 6.1+, what replaced them: DDL operations from `$currentOp` through the router,
 * and `serverStatus.locks` on each shard the one discovery (src/probes/discovery.ts)
 * finds. Read only.
 */
import {PoolToolError} from '../errors.js'
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import {discoverCluster} from '../probes/discovery.js'
import type {ServerReader} from '../probes/reader.js'
import type {Target} from '../target.js'
import {ddlLockEntries, ddlOpsFrom} from './in-memory.js'
import {modelFor, modelMessage} from './model.js'
import {lockTiming} from './parse.js'
import type {DdlOpRow, InMemoryView, LockModel, LockTiming, ShardDdlLocks} from './types.js'

/**
 * Bounds one read with the driver's per-operation AbortSignal (the reader's
 * `ReadOptions.signal`): it cancels server selection, the checkout and the socket read,
 * and the driver closes that connection, so a stalled server cannot keep a pooled
 * connection busy for the next read. (Driver 7 ignores timeoutMS, and maxTimeMS only
 * bounds server-side work, which a stalled server never starts.) Callers combine Ctrl-C
 * with AbortSignal.timeout(--timeout-ms).
 */
export interface ReadBounds {
  signal?: AbortSignal
}

/** What the router says about the cluster's locks, read once per session. */
export interface RouterFacts {
  serverVersion: string
  model: LockModel
  message: string
  timing: LockTiming
  /** The embedded cluster's time scale (hostInfo `extra.timeScale`); 1 on a real server. */
  timeScale: number
}

export interface LocksSession extends RouterFacts {
  target: Target
  /** Over the whole deployment (every router the URI lists). */
  reader: ServerReader
  /** appName suffix of the session's connections (`locks`: bench's observer, `pooltool-locks`). */
  purpose?: string
  close(): Promise<void>
}

export interface OpenLocksOptions {
  purpose?: string
  /** Overrides the 15 min expiry (--lock-expiry; e.g. a cluster with a patched setDistLockTimeout). */
  expiryMS?: number
}

/** One snapshot of the config collections, and the router's clock when it was taken. */
export interface ConfigSnapshot {
  /** hello's `localTime` from the same round (the machine's clock only when the reply has none). */
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

/**
 * `read` with its reads bounded by the target's --timeout-ms (ReadBounds); running out of
 * it is UNREACHABLE (exit 4: the README's "cannot be reached within --timeout-ms"), not a
 * driver error nobody classified. For the one-shot reads (opening a session, list, pings).
 */
export async function withinTimeout<T>(target: Target, read: (bounds: ReadBounds) => Promise<T>): Promise<T> {
  const timeoutMs = target.connection.timeoutMs
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
export async function openLocksSession(target: Target, options: OpenLocksOptions = {}): Promise<LocksSession> {
  // A snapshot round reads hello and four config collections at once: two connections serve it, as before.
  const {reader, close} = target.openReader(undefined, options.purpose, {pool: {maxPoolSize: 2}})
  try {
    const facts = await withinTimeout(target, (bounds) => readRouterFacts(reader, target.redactedUri, options.expiryMS, bounds))
    return {target, reader, ...(options.purpose === undefined ? {} : {purpose: options.purpose}), ...facts, close}
  } catch (error) {
    await close()
    throw error
  }
}

/** What the router says about itself: mongos or not, version, lock model, the embedded cluster's time scale. */
export async function readRouterFacts(reader: ServerReader, targetName: string, expiryMS: number | undefined, bounds: ReadBounds = {}): Promise<RouterFacts> {
  const hello = await reader.hello(bounds)
  if (hello.value.msg !== 'isdbgrid') {
    throw new PoolToolError(
      'WRONG_TOPOLOGY',
      `locks need a sharded cluster: ${targetName} is ${topologyName(hello.value)}`,
      'distributed locks live on the config servers of a sharded cluster: point --uri at a mongos (mongodb://mongos-host:27017)',
    )
  }
  const [info, timeScale, lockCollections] = await Promise.all([
    reader.buildInfo(bounds),
    simulatedTimeScale(reader, bounds),
    reader.listCollections('config', {name: {$in: ['locks', 'lockpings']}}, bounds),
  ])
  const serverVersion = String(info.value.version ?? 'unknown')
  const model = modelFor(serverVersion)
  return {
    serverVersion,
    model,
    message: modelMessage(model, serverVersion, lockCollections.value.length > 0),
    timing: lockTiming(timeScale, expiryMS),
    timeScale,
  }
}

/** For a result's notes: the embedded cluster's shrunk intervals, which every age and verdict follows. */
export function timingNotes(session: RouterFacts, expiryGiven: boolean): string[] {
  if (session.timeScale === 1) return []
  const expiry = expiryGiven ? '' : `, expiry ${session.timing.expiryMS} ms`
  return [`the embedded cluster runs at time scale ${session.timeScale}: ping interval ${session.timing.pingIntervalMS} ms${expiry}`]
}

/** The embedded cluster says how much it shrinks its intervals (hostInfo `extra.timeScale`); a real server has no such field. */
async function simulatedTimeScale(reader: ServerReader, bounds: ReadBounds): Promise<number> {
  try {
    const scale = (await reader.hostInfo(bounds)).value.extra?.timeScale
    return typeof scale === 'number' && scale > 0 ? scale : 1
  } catch {
    // hostInfo needs clusterMonitor; the real-server default applies.
    return 1
  }
}

/** One round of the config collections, with hello in the same round for the router's clock. */
export async function readConfigSnapshot(reader: ServerReader, bounds: ReadBounds = {}): Promise<ConfigSnapshot> {
  const [hello, locks, pings, mongos, shards] = await Promise.all([
    reader.hello(bounds),
    reader.config('locks', {}, bounds),
    reader.config('lockpings', {}, bounds),
    reader.config('mongos', {}, bounds),
    reader.config('shards', {}, bounds),
  ])
  return {now: hello.serverTime ?? hello.receivedAt, locks: locks.value, pings: pings.value, mongos: mongos.value, shards: shards.value}
}

/** 6.1+: the DDL operations running in the cluster, from `$currentOp` through the router. */
export async function readDdlOps(reader: ServerReader, bounds: ReadBounds = {}): Promise<DdlOpRow[]> {
  const ops = await reader.currentOp({allUsers: true, idleConnections: false}, bounds)
  return ddlOpsFrom(ops.value)
}

/** The shards to read serverStatus.locks on: one host each (the first the cluster names), and what discovery could not read. */
interface ShardsToRead {
  shards: Array<{shard: string; host: string}>
  warnings: string[]
}

/** From the one discovery every command uses, so `locks` reads the shards `conns` and `bench` report. */
async function shardsToRead(session: LocksSession, bounds: ReadBounds): Promise<ShardsToRead> {
  const topology = await discoverCluster(session.target, {...(session.purpose === undefined ? {} : {purpose: session.purpose}), ...bounds})
  const firstHostOf = new Map<string, string>()
  for (const host of topology.hosts) if (host.role === 'shard' && host.shard !== undefined && !firstHostOf.has(host.shard)) firstHostOf.set(host.shard, host.host)
  return {shards: [...firstHostOf].map(([shard, host]) => ({shard, host})), warnings: topology.warnings.map((warning) => `discovery: ${warning}`)}
}

/** One shard's serverStatus.locks DDL entries over a direct connection; a failure is noted on the row, not thrown. */
async function readShardDdlLocks(session: LocksSession, shard: string, host: string, bounds: ReadBounds): Promise<ShardDdlLocks> {
  const {reader, close} = session.target.openReader(host, session.purpose)
  try {
    const status = await reader.serverStatus(['locks'], bounds)
    return {shard, host, resources: ddlLockEntries(status.value.locks as Document | undefined)}
  } catch (error) {
    const unavailable = toPoolToolError(error, {target: host, secrets: session.target.secrets}).message
    return {shard, host, resources: {}, unavailable}
  } finally {
    await close()
  }
}

/**
 * The 6.1+ replacement, for `locks list`: DDL ops from `$currentOp` through the router, and
 * each shard's serverStatus.locks DDL entries (one direct connection per shard, all at
 * once). `notes`: what finding the shards could not read.
 */
export async function readInMemoryView(session: LocksSession, bounds: ReadBounds = {}): Promise<{view: InMemoryView; notes: string[]}> {
  const [ddlOps, found] = await Promise.all([readDdlOps(session.reader, bounds), shardsToRead(session, bounds)])
  const serverStatusLocks = await Promise.all(found.shards.map(({shard, host}) => readShardDdlLocks(session, shard, host, bounds)))
  const lockTypes = serverStatusLocks.some((s) => Object.keys(s.resources).length > 0)
  const waiting = ddlOps.filter((o) => o.waitingForLock).length
  const view: InMemoryView = {
    note:
      `${ddlOps.length} DDL operation(s) running, ${waiting} waiting for a lock; ` +
      (lockTypes ? 'serverStatus.locks has DDL lock entries' : 'serverStatus.locks has no DDLDatabase/DDLCollection entries (they appear from 7.1)'),
    ddlOps,
    serverStatusLocks,
  }
  return {view, notes: found.warnings}
}
