/**
 * The connections a cluster's own processes hold to each other at rest, with the traffic that
 * keeps them alive, on shared timers (one per interval for the whole cluster, not one per
 * connection):
 * - Replication heartbeats: every member sends `replSetHeartbeat` to every other member of its
 *   set every `heartbeatIntervalMillis` (2 s, the replica set config default) over its ReplNetwork
 *   executor (`makeNetworkInterface("ReplNetwork")` in src/mongo/db/mongod_main.cpp), so each
 *   member holds one pooled connection per peer in `NetworkInterfaceTL-ReplNetwork` (reported by
 *   connPoolStats through `ReplicationCoordinator::appendConnectionStats`) and accepts one from
 *   each peer.
 * - Oplog fetching: each secondary keeps one DBClientConnection (`MongoDB Internal Client`,
 *   application `OplogFetcher`, src/mongo/db/repl/oplog_fetcher.cpp) to its sync source, the
 *   primary at rest. Not pooled: connPoolStats does not list it. On it the fetcher runs a tailable
 *   awaitData find on `local.oplog.rs` from its last fetched entry, then one getMore after another,
 *   each held by the primary until new entries arrive or its `maxTimeMS` (the awaitData timeout)
 *   passes, so the primary's `$currentOp` shows one active `getmore` per syncing secondary.
 * - Replica set monitoring: a process that monitors a set (routers: every shard and the config
 *   server; shard members: the config server; config members: every shard) runs the streamable
 *   monitor of 4.4+ (src/mongo/client/streamable_replica_set_monitor.cpp,
 *   server_discovery_monitor.cpp, server_ping_monitor.cpp): per member host one connection
 *   streaming awaitable hellos (`maxAwaitTimeMS` = heartbeat frequency, 10 s) and one measuring
 *   round trips with a plain hello every 10 s (the stream is one exhaust hello, as the server's). Its executor `ReplicaSetMonitor-TaskExecutor` is
 *   not one connPoolStats reports, so these show only on the monitored side.
 * Every connection says hello with the client metadata of internal/metadata.ts and authenticates
 * with the cluster's internal credentials when auth is on. Intervals are multiplied by the time scale, at most
 * shrunk 10 times (MIN_TRAFFIC_SCALE).
 */
import {Long, type Document, type Timestamp} from 'bson'
import type {SimProcess} from '../process.js'
import {oplogOf, type OpTime} from '../repl/oplog.js'
import {heartbeatRequest} from '../repl/heartbeat.js'
import type {OutboundPools} from '../sharding/pool.js'
import {type InternalCredentials, WireConnection} from '../sharding/wire-client.js'
import {internalClientMetadata, networkInterfaceMetadata, OPLOG_FETCHER_APP} from './metadata.js'

export const REPL_NETWORK_POOL = 'NetworkInterfaceTL-ReplNetwork'
/** `heartbeatIntervalMillis` default of a replica set config. */
export const HEARTBEAT_INTERVAL_MS = 2_000
/** `heartbeatIntervalMS` of the replica set monitor (the server's `kDefaultHeartbeatFrequency`, 10 s). */
export const MONITOR_INTERVAL_MS = 10_000

/**
 * The fetcher's awaitData timeout: half the election timeout (`calculateAwaitDataTimeout` in
 * oplog_fetcher.cpp, 4.4 – 7.0: electionTimeoutMillis 10 s / 2, at most maximumAwaitDataTimeoutMS 30 s).
 */
export const OPLOG_AWAIT_DATA_MS = 5_000
/** The initial find's maxTimeMS (`oplogInitialFindMaxSeconds`, 60). */
const OPLOG_INITIAL_FIND_MS = 60_000
/** `bgSyncOplogFetcherBatchSize`: the fetcher's find and getMore batchSize (16 MB / 12 bytes). */
const OPLOG_FETCHER_BATCH_SIZE = 13_981_010

/**
 * The most the time scale shrinks the internal traffic's intervals: 0.1 (heartbeats every 200 ms, monitor checks every
 * second, oplog getMores held 500 ms). Below it the traffic costs a core and buys nothing: a time scale of 0.01 is there
 * to bring the lock ping (30 s) and expiry (15 min) within a test's or a demo's reach, and what pooltool reads of the
 * internal traffic is that its connections are held and labelled, not how often they speak. At 0.01 an idle 1-router,
 * 2-shard, 1-config cluster (heartbeats every 20 ms) took 1.30 CPU-s in 3 s, against 0.02 at time scale 1 (2026-11-28).
 */
const MIN_TRAFFIC_SCALE = 0.1

/** Monitored hosts (two connections each) a start waits for; beyond, they open in the background. */
const MONITORS_AWAITED_AT_START = 500

export interface InternalTrafficOptions {
  version: string
  credentials: InternalCredentials | undefined
  timeScale: number
  /** The outbound pools of a process: heartbeats lease from its ReplNetwork pool (its connPoolStats). */
  poolsOf(proc: SimProcess): OutboundPools
}

/** A connection that comes back after its peer restarts: reopened on the next tick. */
class Held {
  conn: WireConnection | null = null
  private opening = false
  busy = false

  constructor(
    readonly from: SimProcess,
    readonly to: SimProcess,
    private readonly client: Document,
    private readonly credentials: InternalCredentials | undefined,
  ) {}

  get live(): boolean {
    return this.conn !== null && !this.conn.closed
  }

  /** Opens when both ends are up and it is not open; failures wait for the next tick. */
  async ensure(): Promise<boolean> {
    if (this.live) return true
    if (this.opening || !this.from.running || !this.to.running) return false
    this.opening = true
    try {
      this.conn = await WireConnection.open(this.to.hostPort, this.client, this.credentials, 5_000)
      if (!this.from.running) this.close()
      return this.live
    } catch {
      this.conn = null
      return false
    } finally {
      this.opening = false
    }
  }

  close(): void {
    this.conn?.close()
    this.conn = null
  }
}

/** The DBClientConnections (oplog fetchers) a process holds: connPoolStats `numClientConnections`. */
const clientConnections = new WeakMap<SimProcess, Held[]>()

export function clientConnectionCount(proc: SimProcess): number {
  return (clientConnections.get(proc) ?? []).filter((h) => h.live).length
}

/** One monitored host: the streaming connection and the round-trip one. */
interface MonitorLink {
  stream: Held
  ping: Held
  topologyVersion?: Document
}

export class InternalTraffic {
  private readonly sets: SimProcess[][] = []
  private readonly fetchers: Held[] = []
  private readonly monitors: MonitorLink[] = []
  private readonly heartbeatsInFlight = new Set<string>()
  /** Every process that holds internal connections. */
  private readonly processes = new Set<SimProcess>()
  /** topologyVersion.processId of each process at the last tick: a new one means it restarted. */
  private readonly instances = new Map<SimProcess, string>()
  private readonly timers: NodeJS.Timeout[] = []
  private stopped = false

  constructor(private readonly options: InternalTrafficOptions) {}

  private get tl(): Document {
    return networkInterfaceMetadata(this.options.version)
  }

  /** Members heartbeat each other; secondaries fetch from the primary. */
  addReplicaSet(members: SimProcess[]): void {
    this.sets.push(members)
    for (const m of members) this.processes.add(m)
    const primary = members.find((m) => m.isPrimaryMember)
    if (!primary) return
    const fetcher = internalClientMetadata(this.options.version, OPLOG_FETCHER_APP)
    for (const m of members) {
      if (!m.isSecondaryMember) continue
      const held = new Held(m, primary, fetcher, this.options.credentials)
      this.fetchers.push(held)
      clientConnections.set(m, [...(clientConnections.get(m) ?? []), held])
    }
  }

  /** `from` runs a replica set monitor of the set `members` (hidden members are in no hello list, so unmonitored). */
  addMonitor(from: SimProcess, members: SimProcess[]): void {
    this.processes.add(from)
    for (const to of members) {
      if (to === from || to.member?.hidden) continue
      this.monitors.push({stream: new Held(from, to, this.tl, this.options.credentials), ping: new Held(from, to, this.tl, this.options.credentials)})
    }
  }

  /** An interval of the internal traffic, shrunk by the time scale, but never by more than MIN_TRAFFIC_SCALE. */
  private interval(ms: number): number {
    return Math.max(20, ms * Math.max(this.options.timeScale, MIN_TRAFFIC_SCALE))
  }

  /**
   * Opens every connection (the first heartbeat round, oplog fetchers, monitor checks), then starts the
   * shared timers. A cluster with more than MONITORS_AWAITED_AT_START monitored hosts opens its monitors
   * in the background (real monitors connect asynchronously too), so a 200-process cluster still starts
   * well within the host's 15 s start timeout; a small one is complete when start() resolves.
   */
  async start(): Promise<void> {
    const monitors = () => Promise.all(this.monitors.map((l) => this.checkMonitor(l)))
    const small = this.monitors.length <= MONITORS_AWAITED_AT_START
    await Promise.all([this.heartbeatRound(), ...this.fetchers.map((f) => this.keepFetching(f)), ...(small ? [monitors()] : [])])
    // Opened after the sets' own connections, so they do not queue behind thousands of monitor handshakes.
    if (!small) void monitors()
    const every = (ms: number, f: () => void) => {
      const t = setInterval(f, this.interval(ms))
      t.unref()
      this.timers.push(t)
    }
    every(HEARTBEAT_INTERVAL_MS, () => {
      this.dropConnectionsOfRestartedProcesses()
      void this.heartbeatRound()
      for (const f of this.fetchers) void this.keepFetching(f)
    })
    every(MONITOR_INTERVAL_MS, () => {
      for (const l of this.monitors) void this.checkMonitor(l)
    })
  }

  /**
   * A process that is down or came back since the last tick (stop / restart fault: a new
   * topologyVersion.processId) holds none of its old connections: its outbound ones close, so its peers
   * see them go and new ones arrive once it is back, as after a real restart.
   */
  private dropConnectionsOfRestartedProcesses(): void {
    const gone = new Set<SimProcess>()
    const check = (p: SimProcess) => {
      const instance = p.topologyVersion.processId.toHexString()
      const seen = this.instances.get(p)
      this.instances.set(p, instance)
      if (!p.running || (seen !== undefined && seen !== instance)) gone.add(p)
    }
    this.processes.forEach(check)
    if (gone.size === 0) return
    for (const p of gone) if (this.sets.some((members) => members.includes(p))) this.options.poolsOf(p).dropIdle()
    for (const f of this.fetchers) if (gone.has(f.from)) f.close()
    for (const l of this.monitors) {
      if (!gone.has(l.stream.from)) continue
      l.stream.close()
      l.ping.close()
    }
  }

  /** One heartbeat from every running member to every other running member of its set (skipping one still in flight). */
  private async heartbeatRound(): Promise<void> {
    const sends: Promise<void>[] = []
    for (const members of this.sets) {
      for (const from of members) {
        if (!from.running) continue
        for (const to of members) {
          if (to === from || !to.running) continue
          const key = `${from.hostPort}>${to.hostPort}`
          if (this.heartbeatsInFlight.has(key)) continue
          this.heartbeatsInFlight.add(key)
          sends.push(
            this.options
              .poolsOf(from)
              .run(REPL_NETWORK_POOL, to.hostPort, 'admin', heartbeatRequest(from))
              .then(
                () => undefined,
                () => undefined,
              )
              .finally(() => this.heartbeatsInFlight.delete(key)),
          )
        }
      }
    }
    await Promise.all(sends)
  }

  /** (Re)opens a fetcher's connection and, once open, keeps its tailing loop running (not awaited past the open). */
  private async keepFetching(f: Held): Promise<void> {
    if ((await f.ensure()) && !f.busy && !this.stopped) void this.fetch(f)
  }

  /**
   * The oplog fetcher (oplog_fetcher.cpp, 4.4+): a tailable awaitData find on the sync source's
   * `local.oplog.rs` from the last fetched optime, then getMores whose `maxTimeMS` is the awaitData
   * timeout (scaled), each answered when the primary writes or at that timeout. A real fetcher streams the
   * getMores as one exhaust cursor; here each is a request of its own (the same operation on the primary).
   * A failure ends the loop; the next 2 s tick reopens the connection if needed and starts again.
   */
  private async fetch(f: Held): Promise<void> {
    const oplog = oplogOf(f.from.data)
    const conn = f.conn
    if (!oplog || !conn) return
    f.busy = true
    try {
      const term = Long.fromNumber(f.from.replSet?.term ?? 1)
      let last: OpTime = oplog.last().opTime
      const found = await conn.command('local', {
        find: 'oplog.rs',
        filter: {ts: {$gte: last.ts}},
        tailable: true,
        awaitData: true,
        maxTimeMS: OPLOG_INITIAL_FIND_MS,
        batchSize: OPLOG_FETCHER_BATCH_SIZE,
        term,
        readConcern: {level: 'local', afterClusterTime: last.ts},
      })
      if (found.ok !== 1) return
      let cursor = found.cursor as Document
      last = lastOpTime(cursor.firstBatch as Document[] | undefined) ?? last
      const maxTimeMS = Math.max(1, Math.round(this.interval(OPLOG_AWAIT_DATA_MS)))
      while (!this.stopped && f.live && !isZeroId(cursor.id)) {
        const more = await conn.command('local', {
          getMore: cursor.id,
          collection: 'oplog.rs',
          batchSize: OPLOG_FETCHER_BATCH_SIZE,
          maxTimeMS,
          term,
          lastKnownCommittedOpTime: {ts: last.ts, t: last.t},
        })
        if (more.ok !== 1) return
        cursor = more.cursor as Document
        last = lastOpTime(cursor.nextBatch as Document[] | undefined) ?? last
      }
    } catch {
      // the connection failed: the next tick reopens it
    } finally {
      f.busy = false
    }
  }

  /** The monitor's 10 s check: (re)opens both connections, pings, and keeps a streaming hello waiting. */
  private async checkMonitor(l: MonitorLink): Promise<void> {
    if (this.stopped) return
    if ((await l.ping.ensure()) && !l.ping.busy) {
      l.ping.busy = true
      l.ping.conn!.command('admin', {hello: 1}).then(
        () => (l.ping.busy = false),
        () => (l.ping.busy = false),
      )
    }
    if ((await l.stream.ensure()) && !l.stream.busy) void this.stream(l)
  }

  /**
   * The server discovery monitor's stream: a hello for the topologyVersion, then one exhaust awaitable hello
   * (`maxAwaitTimeMS` 10 s) the server answers on every topology change or period, with moreToCome, until the
   * connection closes (server_discovery_monitor.cpp: `scheduleExhaustRemoteCommandOnAny`). The accepting side
   * counts it in `serverStatus.connections.exhaustHello` and `awaitingTopologyChanges`.
   */
  private async stream(l: MonitorLink): Promise<void> {
    l.stream.busy = true
    try {
      const conn = l.stream.conn!
      if (!l.topologyVersion) l.topologyVersion = (await conn.command('admin', {hello: 1})).topologyVersion as Document | undefined
      if (this.stopped || !l.stream.live || !l.topologyVersion) return
      const maxAwaitTimeMS = Math.round(this.interval(MONITOR_INTERVAL_MS))
      await conn.exhaust('admin', {hello: 1, topologyVersion: l.topologyVersion, maxAwaitTimeMS}, (reply) => {
        l.topologyVersion = reply.topologyVersion as Document | undefined
      })
    } catch {
      // The connection failed: the next check opens a new one and starts from a plain hello.
    } finally {
      l.topologyVersion = undefined
      l.stream.busy = false
    }
  }

  stop(): void {
    this.stopped = true
    for (const t of this.timers) clearInterval(t)
    for (const f of this.fetchers) f.close()
    for (const l of this.monitors) {
      l.stream.close()
      l.ping.close()
    }
  }
}

/** The optime of a batch's last entry (absent for an empty batch). */
function lastOpTime(batch: Document[] | undefined): OpTime | undefined {
  const e = batch?.at(-1)
  return e ? {ts: e.ts as Timestamp, t: e.t as Long} : undefined
}

function isZeroId(id: unknown): boolean {
  return id === 0 || (id instanceof Long && id.isZero())
}
