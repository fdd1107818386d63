/**
 * The shared state of a simulated sharded cluster: the config server, the shards, the
 * routers, and per process its outbound pools and lock managers. Command handlers find it
 * from their process with `ShardedCluster.of(proc)`.
 *
 * Lock model by version profile (config.locks up to 6.0, the in-memory DDLLockManager from 6.1):
 * - 4.4 `dist-4.4`: every process runs a dist lock pinger (`host:port:epoch:random`, the
 *   config server `ConfigServer`); DDL is coordinated and locked by the config server.
 * - 5.0 and 6.0 `dist-6.0`: shards (process = shard name) and the config server (`config`) ping;
 *   DDL is coordinated and locked by the database's primary shard; mongos takes no locks
 *   (SERVER-53227 moved the dist lock off mongos in 5.0; facts file §1.2).
 * - 7.0 and 8.0 `ddl-memory`: no config.locks / config.lockpings at all; in-memory DDL locks on the
 *   coordinator (primary shard; the config server for createDatabase). 8.0 (7.1+) also counts them in
 *   serverStatus.locks as DDLDatabase / DDLCollection (ddlLockStatsOf).
 */
import {Long, ObjectId, Timestamp, UUID, type Document} from 'bson'
import {CommandError} from '../errors.js'
import {intParameter} from '../parameters.js'
import type {SimProcess} from '../process.js'
import type {VersionProfile} from '../profile.js'
import type {DataStore} from '../storage/collection.js'
import type {SimOptions} from '../types.js'
import {DdlLockManager, ddlLockTimeoutMessage} from './ddl-lock.js'
import {CONFIG_SERVER_PROCESS_ID, CONFIG_SHARD_ID, DistLockManager, PING_INTERVAL_MS, ensureLockCollections, generateProcessId} from './dist-lock.js'
import {networkInterfaceMetadata} from '../internal/metadata.js'
import {connPoolStatsShape, OutboundPools, POOL_PARAMETERS, SHARD_REGISTRY_POOL, TASK_EXECUTOR_POOL} from './pool.js'
import type {InternalCredentials} from './wire-client.js'

export type LockModel = 'dist-4.4' | 'dist-6.0' | 'ddl-memory'
export type ShardedRole = 'mongos' | 'shard' | 'config'

export const CONFIG_REPL_SET = 'configRepl'
/** ShardingUptimeReporter: config.mongos is refreshed every 10 s. */
export const MONGOS_REPORT_INTERVAL_MS = 10_000

export interface ShardEntry {
  name: string
  /** The shard's primary: where routers and coordinators send its work. */
  proc: SimProcess
  /** Every member of the shard's replica set, the primary included. */
  members: SimProcess[]
}

export interface ProcessRuntime {
  kind: ShardedRole
  proc: SimProcess
  shardName?: string
  pools: OutboundPools
  dist?: DistLockManager
  ddl?: DdlLockManager
  /** topologyVersion.processId last seen: a new one means the process restarted. */
  seenInstance: string
  startedAt: number
}

const byProcess = new WeakMap<SimProcess, {cluster: ShardedCluster; rt: ProcessRuntime}>()

/**
 * `serverStatus.sharding` of a router or shard member, as the manual documents it: where the config
 * server is (`configsvrConnectionString`), the config optime last seen, the chunk size (128 MB from 6.0,
 * 64 MB before). Undefined outside a sharded cluster and on the config server itself.
 */
export function shardingStatusOf(proc: SimProcess): Document | undefined {
  const found = byProcess.get(proc)
  if (!found || found.rt.kind === 'config') return undefined
  const config = found.cluster.configProc
  if (!config) return undefined
  const term = config.replSet?.term ?? 1
  return {
    configsvrConnectionString: found.cluster.configConnectionString(),
    lastSeenConfigServerOpTime: {ts: Timestamp.fromBits(0, Math.floor(Date.now() / 1000)), t: Long.fromNumber(term)},
    maxChunkSizeInBytes: Long.fromNumber(proc.profile.maxWireVersion >= 17 ? 128 * 1024 * 1024 : 64 * 1024 * 1024),
  }
}

/**
 * The DDL lock counters of a process that coordinates DDL (a shard or config member), for
 * serverStatus.locks on profiles whose DDL locks go through the lock manager (7.1+: DDLDatabase /
 * DDLCollection); undefined elsewhere.
 */
export function ddlLockStatsOf(proc: SimProcess): DdlLockManager['stats'] | undefined {
  const found = byProcess.get(proc)
  if (!found || !found.cluster.profile.ddlLockTypes) return undefined
  return found.rt.ddl?.stats
}

/** The shard a member belongs to (undefined outside a shard). */
export function shardNameOf(proc: SimProcess): string | undefined {
  const found = byProcess.get(proc)
  return found?.rt.kind === 'shard' ? found.rt.shardName : undefined
}

function visibleHosts(members: SimProcess[]): string[] {
  return members.filter((m) => !m.member?.hidden).map((m) => m.hostPort)
}

export function lockModelFor(profile: VersionProfile): LockModel {
  if (profile.name === '4.4') return 'dist-4.4'
  // 5.0 and 6.0 write config.locks from the shards; 6.1 made every DDL lock local (SERVER-65891).
  if (profile.name === '5.0' || profile.name === '6.0') return 'dist-6.0'
  return 'ddl-memory'
}

export class ShardedCluster {
  readonly lockModel: LockModel
  /** The config server's primary (catalog writes, ShardRegistry traffic). */
  configProc!: SimProcess
  readonly configMembers: SimProcess[] = []
  readonly shards: ShardEntry[] = []
  readonly mongos: SimProcess[] = []
  readonly runtimes: ProcessRuntime[] = []
  readonly clusterId = new ObjectId()
  private timers: NodeJS.Timeout[] = []
  private stopped = false

  constructor(
    readonly options: SimOptions,
    readonly profile: VersionProfile,
    readonly configData: DataStore,
    private readonly credentials: InternalCredentials | undefined,
  ) {
    this.lockModel = lockModelFor(profile)
  }

  static of(proc: SimProcess): {cluster: ShardedCluster; rt: ProcessRuntime} {
    const found = byProcess.get(proc)
    if (!found) throw new CommandError(59, 'no such command: only available in a sharded cluster')
    return found
  }

  get scale(): number {
    return this.options.timeScale
  }

  /** Registers a process; lock managers are created in `started()` once ports are known. */
  register(kind: ShardedRole, proc: SimProcess, shardName?: string): ProcessRuntime {
    const rt: ProcessRuntime = {
      kind,
      proc,
      shardName,
      pools: new OutboundPools(networkInterfaceMetadata(this.profile.version), this.credentials, this.scale),
      seenInstance: proc.topologyVersion.processId.toHexString(),
      startedAt: Date.now(),
    }
    this.runtimes.push(rt)
    byProcess.set(proc, {cluster: this, rt})
    // Every process of a sharded cluster has the sharding task executor's pool parameters.
    for (const [name, setting] of POOL_PARAMETERS) proc.parameters.define(name, intParameter(name, () => rt.pools.settings[setting], (n) => (rt.pools.settings[setting] = n), setting === 'maxSize' ? 1 : 0))
    if (kind === 'config') {
      this.configMembers.push(proc)
      if (proc.isPrimaryMember || this.configProc === undefined) this.configProc = proc
    } else if (kind === 'shard') {
      const entry = this.shards.find((s) => s.name === shardName)
      if (!entry) this.shards.push({name: shardName!, proc, members: [proc]})
      else {
        entry.members.push(proc)
        if (proc.isPrimaryMember) entry.proc = proc
      }
    } else this.mongos.push(proc)
    return rt
  }

  runtime(proc: SimProcess): ProcessRuntime {
    return byProcess.get(proc)!.rt
  }

  shard(name: string): ShardEntry {
    const s = this.shards.find((x) => x.name === name)
    if (!s) throw new CommandError(70, `Shard ${name} not found`)
    return s
  }

  /** `shardN/h1,h2,h3`: the set's connection string as config.shards and listShards carry it (hidden members left out, as the replica set monitor sees them). */
  shardHostString(s: ShardEntry): string {
    return `${s.name}/${visibleHosts(s.members).join(',')}`
  }

  /** `configRepl/h1,h2,h3`, as serverStatus.sharding and getShardMap show the config server. */
  configConnectionString(): string {
    return `${CONFIG_REPL_SET}/${visibleHosts(this.configMembers).join(',')}`
  }

  // ---------------------------------------------------------------- catalog (config server data)

  configCollection(name: string) {
    return this.configData.collection('config', name, true)!
  }

  databaseEntry(db: string): Document | undefined {
    return this.configData.collection('config', 'databases', false)?.get(db)
  }

  /** The shard that owns a database's unsharded collections. */
  primaryShardOf(db: string): ShardEntry | undefined {
    const entry = this.databaseEntry(db)
    return entry ? this.shards.find((s) => s.name === entry.primary) : undefined
  }

  collectionEntry(ns: string): Document | undefined {
    return this.configData.collection('config', 'collections', false)?.get(ns)
  }

  /** The shard with the fewest databases (how mongos picks a new database's primary). */
  leastLoadedShard(): ShardEntry {
    const counts = new Map(this.shards.map((s) => [s.name, 0]))
    for (const d of this.configCollection('databases').docs.values()) counts.set(String(d.primary), (counts.get(String(d.primary)) ?? 0) + 1)
    return [...this.shards].sort((a, b) => counts.get(a.name)! - counts.get(b.name)!)[0]
  }

  insertDatabaseEntry(db: string, primary: string): Document {
    const doc: Document = {_id: db, primary}
    if (this.profile.name === '4.4') {
      doc.partitioned = false
      doc.version = {uuid: new UUID(), lastMod: 1}
    } else {
      doc.version = {uuid: new UUID(), timestamp: new Timestamp({t: Math.floor(Date.now() / 1000), i: 1}), lastMod: 1}
    }
    this.configCollection('databases').insert(doc)
    return doc
  }

  // ---------------------------------------------------------------- start / stop

  seedCatalog(): void {
    this.configCollection('version').insert({_id: 1, minCompatibleVersion: 5, currentVersion: 6, clusterId: this.clusterId})
    for (const s of this.shards) {
      const doc: Document = {_id: s.name, host: this.shardHostString(s), state: 1}
      if (this.profile.name !== '4.4') doc.topologyTime = new Timestamp({t: Math.floor(Date.now() / 1000), i: 1})
      this.configCollection('shards').insert(doc)
    }
    this.configCollection('mongos')
    // A fresh cluster holds no lock: the 3.4 balancer's permanent lock comes with --scenario upgraded-from-3.4.
    if (this.lockModel !== 'ddl-memory') ensureLockCollections(this.configData)
  }

  /**
   * 4.4: every mongos and every shard member runs a dist lock pinger (sharding initialisation starts
   * it on each node), the config server one ('ConfigServer', pinging from its primary); 6.0: shard
   * and config primaries only (the lock manager is a step-up task there).
   */
  private newDistLock(rt: ProcessRuntime): DistLockManager | undefined {
    if (rt.kind === 'config' && !rt.proc.isPrimaryMember) return undefined
    if (this.lockModel === 'dist-6.0' && rt.kind === 'shard' && !rt.proc.isPrimaryMember) return undefined
    const env = {
      configData: this.configData,
      writeCostMs: () => this.configProc.faults.latencyMs,
      configElectionId: () => this.configProc.replSet!.electionId,
      timeScale: this.scale,
    }
    if (this.lockModel === 'dist-4.4') {
      const id = rt.kind === 'config' ? CONFIG_SERVER_PROCESS_ID : generateProcessId(rt.proc.hostPort)
      return new DistLockManager(env, '4.4', id, rt.kind)
    }
    if (this.lockModel === 'dist-6.0' && rt.kind !== 'mongos') {
      const id = rt.kind === 'config' ? CONFIG_SHARD_ID : rt.shardName!
      return new DistLockManager(env, '6.0', id, rt.kind, rt.proc.replSet?.term ?? 1)
    }
    return undefined
  }

  private newDdlLocks(rt: ProcessRuntime): DdlLockManager | undefined {
    if (rt.kind === 'mongos' || this.lockModel === 'dist-4.4') return undefined
    if (this.lockModel === 'dist-6.0') return new DdlLockManager((resource) => `timed out waiting for ${resource}`)
    return new DdlLockManager(ddlLockTimeoutMessage)
  }

  /** Every listener is up: lock managers, pingers, the config.mongos reporter, restart watch. */
  async started(): Promise<void> {
    this.seedCatalog()
    for (const rt of this.runtimes) {
      rt.dist = this.newDistLock(rt)
      rt.dist?.startPinger()
      rt.ddl = this.newDdlLocks(rt)
    }
    await Promise.all(this.mongos.map((m) => this.reportMongos(m).catch(() => undefined)))
    const every = (ms: number, f: () => void) => {
      const t = setInterval(f, Math.max(20, ms * this.scale))
      t.unref()
      this.timers.push(t)
    }
    every(MONGOS_REPORT_INTERVAL_MS, () => {
      for (const m of this.mongos) if (m.running) void this.reportMongos(m).catch(() => undefined)
    })
    every(PING_INTERVAL_MS / 3, () => this.checkRestarts())
  }

  /** ShardingUptimeReporter: upsert config.mongos {_id: "host:port", ping, up, mongoVersion …} over the ShardRegistry pool. */
  async reportMongos(m: SimProcess): Promise<void> {
    const rt = this.runtime(m)
    const up = Math.floor((Date.now() - rt.startedAt) / 1000)
    await rt.pools.run(SHARD_REGISTRY_POOL, this.configProc.hostPort, 'config', {
      update: 'mongos',
      updates: [
        {
          q: {_id: m.hostPort},
          u: {$set: {ping: new Date(), up: Long.fromNumber(up), waiting: true, mongoVersion: this.profile.version, advisoryHostFQDNs: []}},
          upsert: true,
        },
      ],
      writeConcern: {w: 'majority'},
    })
  }

  /**
   * A process that stopped stops pinging; one that came back (new topologyVersion.processId)
   * is a new instance: 4.4 gets a new dist-lock process id (its old locks and ping document
   * stay behind), 6.0 keeps the shard name with a new term (recovery frees its old locks),
   * 7.0 lost its in-memory locks.
   */
  checkRestarts(): void {
    if (this.stopped) return
    for (const rt of this.runtimes) {
      const instance = rt.proc.topologyVersion.processId.toHexString()
      if (instance === rt.seenInstance) {
        if (!rt.proc.running) rt.dist?.stopPinger(false)
        continue
      }
      if (!rt.proc.running) continue
      rt.seenInstance = instance
      rt.startedAt = Date.now()
      if (this.lockModel === 'dist-4.4') {
        rt.dist?.crash()
        rt.dist = this.newDistLock(rt)
        rt.dist?.startPinger()
      } else if (this.lockModel === 'dist-6.0' && rt.dist) {
        rt.dist.stopPinger(false)
        if (rt.proc.replSet) rt.proc.replSet.term++
        rt.dist.term = rt.proc.replSet?.term ?? rt.dist.term + 1
        rt.dist.startPinger()
        rt.ddl?.reset()
      } else {
        rt.ddl?.reset()
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const t of this.timers) clearInterval(t)
    for (const rt of this.runtimes) {
      rt.dist?.stopPinger(true)
      rt.pools.close()
    }
  }

  // ---------------------------------------------------------------- internal traffic

  /** mongos/config → a shard over the task executor pool; a network failure is HostUnreachable. */
  async toShard(from: ProcessRuntime, shard: ShardEntry, db: string, cmd: Document): Promise<Document> {
    return this.send(from, TASK_EXECUTOR_POOL, shard.proc.hostPort, db, cmd)
  }

  /** mongos/shard → the config server over the ShardRegistry pool. */
  async toConfig(from: ProcessRuntime, db: string, cmd: Document): Promise<Document> {
    return this.send(from, SHARD_REGISTRY_POOL, this.configProc.hostPort, db, cmd)
  }

  private async send(from: ProcessRuntime, pool: string, host: string, db: string, cmd: Document): Promise<Document> {
    try {
      return await from.pools.run(pool, host, db, cmd)
    } catch (e) {
      if (e instanceof CommandError) throw e
      throw new CommandError(6, `Couldn't get a connection within the time limit to ${host}: ${e instanceof Error ? e.message : String(e)}`)
    }
  }

  /** connPoolStats.replicaSets: what this process knows of each shard and the config server. */
  replicaSetsDoc(): Document {
    const member = (p: SimProcess) => ({
      addr: p.hostPort,
      ok: p.running,
      ismaster: p.isPrimaryMember,
      hidden: p.member?.hidden ?? false,
      secondary: p.isSecondaryMember,
      pingTimeMillis: 0,
    })
    const doc: Document = {}
    for (const s of this.shards) doc[s.name] = {hosts: s.members.map(member)}
    doc[CONFIG_REPL_SET] = {hosts: this.configMembers.map(member)}
    return doc
  }

  connPoolStatsShape() {
    return connPoolStatsShape(this.profile.versionArray)
  }
}
