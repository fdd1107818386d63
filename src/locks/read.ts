/**
 * Reads for `pooltool locks` and bench's lock observer, all through the read layer
 * (src/probes/reader.ts): one reader over the target decides the lock model. The target
 * is a mongos, or a config-server member (hello `configsvr`), where the config collections
 * live, read directly. Each snapshot then reads `config.locks`, `config.lockpings`,
 * `config.mongos` and `config.shards` beside a `hello` whose `localTime` is the clock every
 * age is judged on — or, on 6.1+, what replaced them: DDL operations from `$currentOp` on the
 * entry, and `serverStatus.locks` on each shard the one discovery (src/probes/discovery.ts)
 * finds. A shard member is refused, naming the config server from its `serverStatus.sharding`,
 * unless the caller opens the session on that config server (`address`: list and watch do); a
 * replica set or standalone has no distributed locks at all (pings refuses it; list and watch
 * read the node locks there, src/locks/nodes.ts). Read only.
 */
import {setMaxListeners} from 'node:events'

import {PoolToolError} from '../errors.js'
import type {Document} from '../mongo/driver.js'
import {errorClass, toPoolToolError} from '../mongo/errors.js'
import {clockSkewMS, clockSkewNote} from '../probes/server-clock-skew.js'
import {type ClusterTopology, discoverCluster, parseHostString} from '../probes/discovery.js'
import type {ServerReader} from '../probes/reader.js'
import {parseShardingStatus, toNumber} from '../probes/server-status.js'
import {connectAddress, replayNote, replayOf} from '../probes/topology.js'
import type {Target} from '../target.js'
import {ddlLockEntries, ddlOpsFrom} from './in-memory.js'
import {modelFor, modelMessage} from './model.js'
import {lockTiming, versionAtLeast} from './parse.js'
import type {DdlOpRow, InMemoryView, LockModel, LocksEntry, LockTiming, ShardDdlLocks} from './types.js'

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

/** What the entry (a mongos or a config-server member) says about the cluster's locks, read once per session. */
export interface RouterFacts {
  serverVersion: string
  model: LockModel
  message: string
  timing: LockTiming
  /** The embedded cluster's time scale (hostInfo `extra.timeScale`); 1 on a real server. */
  timeScale: number
  entry: LocksEntry
  /** The entry's clock minus this machine's, from the session's hello (absent when the reply had no clock). */
  clockSkewMS?: number
  /** Said once in every result: where the locks are read, a config-server secondary's lag, a clock skew above 5 s. */
  entryNotes: string[]
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
  /** Set when the target answered this attempt at all, even if the session then failed to open (the watch rides that out). */
  reached?: {answered: boolean}
  /**
   * Read on this host (a config-server member) over a direct connection instead of the URI's deployment:
   * list and watch entered through a shard member read the distributed locks on its config server.
   */
  address?: string
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

/** A mongos, a config-server member (hello `configsvr: 2`), or neither. */
export function locksEntryOf(hello: Document): LocksEntry | undefined {
  if (hello.msg === 'isdbgrid') return 'mongos'
  if (hello.configsvr !== undefined && (toNumber(hello.configsvr) ?? 0) !== 0) return 'config-server'
  return undefined
}

/**
 * Not a place that holds the locks: WRONG_TOPOLOGY. A shard member says where its config server is
 * (`serverStatus.sharding.configsvrConnectionString`, documented for sharded mongods), so the message names it;
 * when that cannot be read (a privilege, a plain replica set) the message is the plain one.
 */
async function wrongTopology(reader: ServerReader, targetName: string, hello: Document, bounds: ReadBounds): Promise<PoolToolError> {
  const status = await reader.serverStatus(['sharding'], bounds).catch(() => undefined)
  const configString = status ? parseShardingStatus(status.value)?.configsvrConnectionString : undefined
  if (configString) {
    const config = parseHostString(configString)
    const first = config.hosts[0]
    return new PoolToolError(
      'WRONG_TOPOLOGY',
      `locks need a mongos or a config server: ${targetName} is ${topologyName(hello)} of a sharded cluster whose config server is ${configString}`,
      // 3.4 – 6.0 keep config.locks / config.lockpings there; from 6.1 the locks are in memory on the shards, and a mongos shows every shard's DDL operations.
      `point --uri at a mongos, or at the config server${first ? `: mongodb://${first}/?directConnection=true` : ''} (config.locks and config.lockpings live there)`,
    )
  }
  // Only `locks pings` (and bench's observer, which goes on without it) gets here on a replica set or standalone: list and watch
  // read the node locks there instead.
  return new PoolToolError(
    'WRONG_TOPOLOGY',
    `config.lockpings cannot exist here: ${targetName} is ${topologyName(hello)}, and config.lockpings is a collection of a sharded cluster's config server, ` +
      'pinged by the mongos, shard and config processes that take distributed locks (none are taken outside a sharded cluster)',
    "`pooltool locks list` and `locks watch` show this deployment's node locks (who blocks whom); for distributed locks point --uri at a mongos (mongodb://mongos-host:27017)",
  )
}

/**
 * `read` with its reads bounded by the target's --timeout-ms (ReadBounds); running out of
 * it is UNREACHABLE (exit 4: the README's "cannot be reached within --timeout-ms"), not a
 * driver error nobody classified. For the one-shot reads (opening a session, list, pings).
 */
export async function withinTimeout<T>(target: Target, read: (bounds: ReadBounds) => Promise<T>): Promise<T> {
  const timeoutMs = target.connection.timeoutMs
  const timeout = AbortSignal.timeout(timeoutMs)
  // One bound over many reads at once (discovery's config reads on every config member, a cursor each): each read adds
  // a listener, by design, not a leak.
  setMaxListeners(0, timeout)
  try {
    return await read({signal: timeout})
  } catch (error) {
    // A host that refused or closed every connection till the bound ran out failed (the read layer gives its last
    // failure, src/probes/driver-channel.ts): said as it is, not as a stall.
    if (!timeout.aborted || error instanceof PoolToolError || errorClass(error) === 'network') throw error
    throw new PoolToolError(
      'UNREACHABLE',
      `${target.redactedUri} did not answer within ${timeoutMs} ms (--timeout-ms)`,
      'the router (or the config server behind it) is stalled or overloaded; raise --timeout-ms for slow links',
      {cause: error},
    )
  }
}

/**
 * Opens the session on the distributed locks; a replica set or standalone is WRONG_TOPOLOGY (exit 7), and so is a shard
 * member unless `address` names its config server. Bounded by --timeout-ms.
 */
export async function openLocksSession(target: Target, options: OpenLocksOptions = {}): Promise<LocksSession> {
  // A snapshot round reads hello and four config collections at once: two connections serve it, as before.
  const {reader, close, answered} = target.openReader(options.address, options.purpose, {pool: {maxPoolSize: 2}})
  try {
    const facts = await withinTimeout(target, (bounds) => readRouterFacts(reader, target.redactedUri, options.expiryMS, bounds))
    return {target, reader, ...(options.purpose === undefined ? {} : {purpose: options.purpose}), ...facts, close}
  } catch (error) {
    if (options.reached && answered()) options.reached.answered = true
    await close()
    throw error
  }
}

/** What the entry says about itself: mongos, config server or neither, version, lock model, the embedded cluster's time scale, its clock. */
export async function readRouterFacts(reader: ServerReader, targetName: string, expiryMS: number | undefined, bounds: ReadBounds = {}): Promise<RouterFacts> {
  const hello = await reader.hello(bounds)
  const entry = locksEntryOf(hello.value)
  if (!entry) throw await wrongTopology(reader, targetName, hello.value, bounds)
  const [info, timeScale, lockCollections] = await Promise.all([
    reader.buildInfo(bounds),
    simulatedTimeScale(reader, bounds),
    reader.listCollections('config', {name: {$in: ['locks', 'lockpings']}}, bounds),
  ])
  const serverVersion = String(info.value.version ?? 'unknown')
  const model = modelFor(serverVersion)
  const me = typeof hello.value.me === 'string' ? hello.value.me : reader.host
  const entryNotes = entry === 'config-server' ? configServerEntryNotes(hello.value, me, model) : []
  const skew = clockSkewMS(hello)
  const replay = replayOf(hello.value)
  const skewNote = replay ? replayNote(replay) : clockSkewNote(me, skew)
  if (skewNote) entryNotes.push(skewNote)
  return {
    serverVersion,
    model,
    message: modelMessage(model, serverVersion, lockCollections.value.length > 0),
    timing: lockTiming(timeScale, expiryMS),
    timeScale,
    entry,
    ...(skew === undefined ? {} : {clockSkewMS: skew}),
    entryNotes,
  }
}

/** Where a config-server entry read, and what that covers for the lock model (6.1+ dropped config.locks / config.lockpings). */
function configServerEntryNotes(hello: Document, me: string, model: LockModel): string[] {
  const set = typeof hello.setName === 'string' ? ` (set '${hello.setName}')` : ''
  const there = model === 'in-memory' ? 'config.mongos and config.shards live there (config.locks / config.lockpings are gone from 6.1)' : 'config.locks, config.lockpings, config.mongos and config.shards live there'
  const notes = [`read directly on config server member ${me}${set}: ${there}`]
  if (hello.secondary === true) notes.push(`${me} is a secondary: what it shows can lag its primary by the replication delay`)
  return notes
}

/** Every result's notes about the session: where it read, the clock, the embedded cluster's time scale. */
export function sessionNotes(session: RouterFacts, expiryGiven: boolean): string[] {
  return [...session.entryNotes, ...timingNotes(session, expiryGiven)]
}

/**
 * The embedded cluster started for a locks command behaves like 7.0 by default, where nothing is
 * persisted: the note says which command shows locks in config.locks (`command`: "locks list").
 */
export function embeddedInMemoryHint(session: {target: {source: string}; model: string; serverVersion: string}, command: string): string[] {
  if (session.target.source !== 'embedded' || session.model !== 'in-memory') return []
  return [`the embedded cluster behaves like MongoDB ${session.serverVersion}, where distributed locks live in memory; to see locks persisted in config.locks and config.lockpings: pooltool ${command} --sim-profile 4.4 --sim-scenario dead-lock-holder`]
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

/** One round of the config collections, with hello in the same round for the entry's clock. */
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

/**
 * A follow-up read (src/locks/follow-up.ts): the lock documents again, with the entry's clock from a hello in the
 * same round; the pings, routers and shards are `previous`'s (a regular poll's), so a follow-up costs two reads.
 */
export async function readConfigLocksAt(reader: ServerReader, previous: ConfigSnapshot, bounds: ReadBounds = {}): Promise<ConfigSnapshot> {
  const [hello, locks] = await Promise.all([reader.hello(bounds), reader.config('locks', {}, bounds)])
  return {...previous, now: hello.serverTime ?? hello.receivedAt, locks: locks.value}
}

/** 6.1+: the DDL operations running in the cluster, from `$currentOp` through the router (on a config-server member: its own). */
export async function readDdlOps(reader: ServerReader, bounds: ReadBounds = {}): Promise<DdlOpRow[]> {
  const ops = await reader.currentOp({allUsers: true, idleConnections: false}, bounds)
  return ddlOpsFrom(ops.value)
}

/** The same, with the entry's clock from a hello in the same round (a watch stamps events on it). */
export async function readDdlOpsAt(reader: ServerReader, bounds: ReadBounds = {}): Promise<{now: Date; ops: DdlOpRow[]}> {
  const [hello, ops] = await Promise.all([reader.hello(bounds), readDdlOps(reader, bounds)])
  return {now: hello.serverTime ?? hello.receivedAt, ops}
}

/** The shards to read serverStatus.locks on: one host each (the first the cluster names), and what discovery could not read. */
interface ShardsToRead {
  /** `host` as the cluster names it, `address` where pooltool connects (the user's address for the entry node). */
  shards: Array<{shard: string; host: string; address: string}>
  warnings: string[]
}

/** From the one discovery every command uses, so `locks` reads the shards `conns` and `bench` report. */
async function shardsToRead(session: LocksSession, bounds: ReadBounds, discovered?: ClusterTopology): Promise<ShardsToRead> {
  // list has discovered once already (for the node locks): the same hosts, not a second discovery.
  const topology = discovered ?? (await discoverCluster(session.target, {...(session.purpose === undefined ? {} : {purpose: session.purpose}), ...bounds}))
  const firstHostOf = new Map<string, {host: string; address: string}>()
  for (const host of topology.hosts) {
    if (host.role === 'shard' && host.shard !== undefined && !firstHostOf.has(host.shard)) firstHostOf.set(host.shard, {host: host.host, address: connectAddress(host)})
  }
  return {shards: [...firstHostOf].map(([shard, where]) => ({shard, ...where})), warnings: topology.warnings.map((warning) => `discovery: ${warning}`)}
}

/** One shard's serverStatus.locks DDL entries over a direct connection; a failure is noted on the row (resources unknown), not thrown. */
async function readShardDdlLocks(session: LocksSession, shard: string, host: string, address: string, bounds: ReadBounds): Promise<ShardDdlLocks> {
  const {reader, close} = session.target.openReader(address, session.purpose)
  try {
    const status = await reader.serverStatus(['locks'], bounds)
    return {shard, host, resources: ddlLockEntries(status.value.locks as Document | undefined)}
  } catch (error) {
    const unavailable = toPoolToolError(error, {target: host, secrets: session.target.secrets}).message
    return {shard, host, unavailable}
  } finally {
    await close()
  }
}

/** The DDL operations half of the in-memory note: how many, and over what. */
function ddlOpsNote(entry: LocksEntry, ops: readonly DdlOpRow[]): string {
  const waiting = ops.filter((o) => o.waitingForLock).length
  if (entry === 'mongos') return `${ops.length} DDL operation(s) running, ${waiting} waiting for a lock`
  return (
    `${ops.length} DDL operation(s) on this config server member, ${waiting} waiting for a lock ` +
    "($currentOp on a config-server member shows only its own operations; the shards' DDL coordinators show through a mongos)"
  )
}

/** The serverStatus.locks half: what was read on how many shards; unread shards stay unknown, never "none". */
export function ddlLocksNote(serverVersion: string, statuses: readonly ShardDdlLocks[]): string {
  const found = statuses.length
  const read = statuses.filter((s) => s.resources !== undefined)
  if (found === 0) return 'serverStatus.locks: no shard found to read (see the notes)'
  if (read.length === 0) return `serverStatus.locks DDL entries unknown: none of the ${found} shard(s) answered serverStatus`
  const over = read.length === found ? `all ${found} shard(s) read` : `${read.length} of ${found} shard(s) read, ${found - read.length} unknown`
  if (read.some((s) => Object.keys(s.resources!).length > 0)) return `serverStatus.locks has DDL lock entries (${over})`
  const since = versionAtLeast(serverVersion, 7, 1) ? '' : '; they appear from 7.1'
  return `serverStatus.locks has no DDLDatabase/DDLCollection entries on the shards read (${over}${since})`
}

/**
 * The 6.1+ replacement, for `locks list`: DDL ops from `$currentOp` on the entry (through a
 * router: the whole cluster's; on a config-server member: its own), and each shard's
 * serverStatus.locks DDL entries (one direct connection per shard, all at once; the shards
 * from discovery). `notes`: what finding the shards could not read.
 */
export async function readInMemoryView(session: LocksSession, bounds: ReadBounds = {}, topology?: ClusterTopology): Promise<{view: InMemoryView; notes: string[]}> {
  const [ddlOps, found] = await Promise.all([readDdlOps(session.reader, bounds), shardsToRead(session, bounds, topology)])
  const serverStatusLocks = await Promise.all(found.shards.map(({shard, host, address}) => readShardDdlLocks(session, shard, host, address, bounds)))
  const view: InMemoryView = {
    note: `${ddlOpsNote(session.entry, ddlOps)}; ${ddlLocksNote(session.serverVersion, serverStatusLocks)}`,
    ddlOpsFrom: session.entry === 'mongos' ? 'router' : 'config-server',
    ddlOps,
    shardsFound: serverStatusLocks.length,
    shardsRead: serverStatusLocks.filter((s) => s.resources !== undefined).length,
    serverStatusLocks,
  }
  return {view, notes: found.warnings}
}
