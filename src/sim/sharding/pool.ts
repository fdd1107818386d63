/**
 * The outbound connection pools a simulated mongos (or config server) really keeps, one
 * per (executor pool, host), in the shape `connPoolStats` reports:
 * inUse / available / leased / created / refreshing (/ refreshed and acquisitionWaitTimes
 * where the version has them). Defaults follow the ShardingTaskExecutorPool* parameters
 * (§3.3): minSize 1, maxConnecting 2, unlimited maxSize, idle connections refreshed after
 * RefreshRequirementMS (60 s), a host idle for HostTimeoutMS (5 min) loses all its
 * connections; both intervals are multiplied by the cluster's time scale.
 *
 * No `global` pool: connPoolStats also appends the DBClient `globalConnPool` (pool name "global", hosts with
 * inUse / available / created, the rest 0; src/mongo/client/connpool.cpp), but only hosts that created a
 * connection are listed (`updateStatsForHost`, src/mongo/executor/connection_pool_stats.cpp) and from 4.4 only
 * mongod code takes a `ScopedDbConnection` (replica-set secondaries' session refresh, the movePrimary cloner):
 * a router's `pools`, totals and `hosts` hold its NetworkInterfaceTL pools alone, at rest and under use.
 */
import type {Document} from 'bson'
import {Long} from 'bson'
import {type InternalCredentials, WireConnection} from './wire-client.js'

export const TASK_EXECUTOR_POOL = 'NetworkInterfaceTL-TaskExecutorPool-0'
export const SHARD_REGISTRY_POOL = 'NetworkInterfaceTL-ShardRegistry'

/**
 * The ShardingTaskExecutorPool* parameters as this process's pools use them; getParameter
 * reads and setParameter changes them (4.2+: runtime too). MaxSize: the 4.2+ IDL default (32767; the
 * docs say 2^64 − 1: no practical limit either way, and this pool never reaches it). MinSize is
 * reported, not kept warm: a host idle for HostTimeoutMS loses all its connections whatever MinSize says.
 */
export interface PoolSettings {
  minSize: number
  maxSize: number
  maxConnecting: number
  hostTimeoutMS: number
  refreshRequirementMS: number
  refreshTimeoutMS: number
}

export const DEFAULT_POOL_SETTINGS: Readonly<PoolSettings> = {minSize: 1, maxSize: 32_767, maxConnecting: 2, hostTimeoutMS: 300_000, refreshRequirementMS: 60_000, refreshTimeoutMS: 20_000}

/** Parameter name → setting. */
export const POOL_PARAMETERS: ReadonlyArray<readonly [string, keyof PoolSettings]> = [
  ['ShardingTaskExecutorPoolMinSize', 'minSize'],
  ['ShardingTaskExecutorPoolMaxSize', 'maxSize'],
  ['ShardingTaskExecutorPoolMaxConnecting', 'maxConnecting'],
  ['ShardingTaskExecutorPoolHostTimeoutMS', 'hostTimeoutMS'],
  ['ShardingTaskExecutorPoolRefreshRequirementMS', 'refreshRequirementMS'],
  ['ShardingTaskExecutorPoolRefreshTimeoutMS', 'refreshTimeoutMS'],
]

/** connPoolStats acquisitionWaitTimes buckets (6.3+): (-inf,0ms), [0,50ms) … [950ms,1000ms), [1000ms, inf). */
const WAIT_BUCKET_MS = 50
const WAIT_BUCKETS = 20

export interface HostPoolStats {
  inUse: number
  available: number
  leased: number
  created: number
  refreshing: number
  refreshed: number
  waitBuckets: number[]
}

class HostPool {
  readonly idle: WireConnection[] = []
  inUse = 0
  connecting = 0
  created = 0
  refreshing = 0
  refreshed = 0
  lastActive = Date.now()
  readonly waitBuckets = new Array<number>(WAIT_BUCKETS + 2).fill(0)
  private readonly waiters: Array<{resolve: (c: WireConnection) => void; reject: (e: Error) => void}> = []

  constructor(
    readonly host: string,
    private readonly owner: OutboundPools,
  ) {}

  private recordWait(ms: number): void {
    const i = ms < 0 ? 0 : Math.min(WAIT_BUCKETS + 1, 1 + Math.floor(ms / WAIT_BUCKET_MS))
    this.waitBuckets[i]++
  }

  async acquire(): Promise<WireConnection> {
    const started = Date.now()
    this.lastActive = started
    let conn: WireConnection | undefined
    while ((conn = this.idle.pop())) {
      if (!conn.closed) break
    }
    if (!conn) {
      if (this.connecting < this.owner.settings.maxConnecting) conn = await this.connectOne()
      else conn = await new Promise<WireConnection>((resolve, reject) => this.waiters.push({resolve, reject}))
    }
    this.inUse++
    this.recordWait(Date.now() - started)
    return conn
  }

  private async connectOne(): Promise<WireConnection> {
    this.connecting++
    try {
      const c = await WireConnection.open(this.host, this.owner.client, this.owner.credentials)
      this.created++
      return c
    } finally {
      this.connecting--
    }
  }

  release(conn: WireConnection): void {
    this.inUse--
    this.lastActive = Date.now()
    if (conn.closed || this.owner.closed) {
      conn.close()
      // A waiter queued behind maxConnecting gets a fresh connection instead.
      const w = this.waiters.shift()
      if (w) this.connectOne().then(w.resolve, w.reject)
      return
    }
    const w = this.waiters.shift()
    if (w) {
      w.resolve(conn)
      return
    }
    this.idle.push(conn)
  }

  /** Refreshes idle connections unused for the refresh requirement; drops everything for an idle host. */
  async maintain(now: number, scale: number): Promise<void> {
    if (this.inUse === 0 && this.connecting === 0 && now - this.lastActive > this.owner.settings.hostTimeoutMS * scale) {
      for (const c of this.idle.splice(0)) c.close()
      return
    }
    for (const c of [...this.idle]) {
      if (c.closed) {
        this.idle.splice(this.idle.indexOf(c), 1)
        continue
      }
      if (now - c.lastUsed < this.owner.settings.refreshRequirementMS * scale) continue
      this.idle.splice(this.idle.indexOf(c), 1)
      this.refreshing++
      try {
        await c.command('admin', {hello: 1})
        this.refreshed++
        this.idle.push(c)
      } catch {
        c.close()
      } finally {
        this.refreshing--
      }
    }
  }

  stats(): HostPoolStats {
    return {
      inUse: this.inUse,
      available: this.idle.filter((c) => !c.closed).length,
      leased: 0,
      created: this.created,
      refreshing: this.refreshing,
      refreshed: this.refreshed,
      waitBuckets: [...this.waitBuckets],
    }
  }

  close(): void {
    for (const c of this.idle.splice(0)) c.close()
    for (const w of this.waiters.splice(0)) w.reject(new Error('pool closed'))
  }
}

/** What connPoolStats shows, by version. */
export interface PoolStatsShape {
  refreshed: boolean
  acquisitionWaitTimes: boolean
  replicaSetMatchingStrategy: boolean
}

/** connPoolStats fields by version: `refreshed` 7.0+, acquisition wait histograms 6.3+, matching strategy 5.0+. */
export function connPoolStatsShape(versionArray: readonly number[]): PoolStatsShape {
  const atLeast = (major: number, minor: number) => versionArray[0] > major || (versionArray[0] === major && versionArray[1] >= minor)
  return {refreshed: atLeast(7, 0), acquisitionWaitTimes: atLeast(6, 3), replicaSetMatchingStrategy: atLeast(5, 0)}
}

/** All outbound pools of one process, by pool name then host. */
export class OutboundPools {
  closed = false
  readonly settings: PoolSettings = {...DEFAULT_POOL_SETTINGS}
  private readonly pools = new Map<string, Map<string, HostPool>>()
  private timer: NodeJS.Timeout | null = null

  constructor(
    /** The hello's `client` of every connection (internal/metadata.ts). */
    readonly client: Document,
    readonly credentials: InternalCredentials | undefined,
    private readonly scale: number,
  ) {}

  private hostPool(pool: string, host: string): HostPool {
    let byHost = this.pools.get(pool)
    if (!byHost) {
      byHost = new Map()
      this.pools.set(pool, byHost)
    }
    let hp = byHost.get(host)
    if (!hp) {
      hp = new HostPool(host, this)
      byHost.set(host, hp)
    }
    this.ensureTimer()
    return hp
  }

  private ensureTimer(): void {
    if (this.timer || this.closed) return
    const every = Math.max(50, (Math.min(DEFAULT_POOL_SETTINGS.refreshRequirementMS, DEFAULT_POOL_SETTINGS.hostTimeoutMS) * this.scale) / 4)
    this.timer = setInterval(() => {
      const now = Date.now()
      for (const byHost of this.pools.values()) for (const hp of byHost.values()) void hp.maintain(now, this.scale)
    }, every)
    this.timer.unref()
  }

  /** Runs one command on `host` over a connection leased from `pool`. Network failures become HostUnreachable (6). */
  async run(pool: string, host: string, db: string, body: Document): Promise<Document> {
    if (this.closed) throw new Error('pools closed')
    const hp = this.hostPool(pool, host)
    const conn = await hp.acquire()
    try {
      return await conn.command(db, body)
    } finally {
      hp.release(conn)
    }
  }

  /**
   * The connPoolStats document of this process; `clientConnections` is its live DBClientConnection count
   * (`numClientConnections`, `DBClientConnection::getNumConnections()`: a secondary's oplog fetcher).
   */
  toConnPoolStats(shape: PoolStatsShape, replicaSets: Document, clientConnections = 0): Document {
    const totals = {inUse: 0, available: 0, leased: 0, created: 0, refreshing: 0, refreshed: 0, waits: new Array<number>(WAIT_BUCKETS + 2).fill(0)}
    const pools: Document = {}
    const hosts: Document = {}
    const hostDoc = (s: HostPoolStats): Document => {
      const d: Document = {inUse: s.inUse, available: s.available, leased: s.leased, created: s.created, refreshing: s.refreshing}
      if (shape.refreshed) d.refreshed = s.refreshed
      if (shape.acquisitionWaitTimes) d.acquisitionWaitTimes = waitDoc(s.waitBuckets)
      return d
    }
    for (const [name, byHost] of this.pools) {
      const poolTotals = {inUse: 0, available: 0, leased: 0, created: 0, refreshing: 0, refreshed: 0, waits: new Array<number>(WAIT_BUCKETS + 2).fill(0)}
      const poolDoc: Document = {}
      for (const [host, hp] of byHost) {
        const s = hp.stats()
        if (s.created === 0) continue // mongod lists no host pool that never created a connection
        poolDoc[host] = hostDoc(s)
        for (const k of ['inUse', 'available', 'leased', 'created', 'refreshing', 'refreshed'] as const) {
          poolTotals[k] += s[k]
          totals[k] += s[k]
        }
        s.waitBuckets.forEach((n, i) => {
          poolTotals.waits[i] += n
          totals.waits[i] += n
        })
        const h = (hosts[host] ??= {inUse: 0, available: 0, leased: 0, created: 0, refreshing: 0, ...(shape.refreshed ? {refreshed: 0} : {})}) as Document
        for (const k of ['inUse', 'available', 'leased', 'created', 'refreshing'] as const) h[k] += s[k]
        if (shape.refreshed) h.refreshed += s.refreshed
      }
      if (Object.keys(poolDoc).length === 0) continue
      const head: Document = {
        poolInUse: poolTotals.inUse,
        poolAvailable: poolTotals.available,
        poolLeased: poolTotals.leased,
        poolCreated: poolTotals.created,
        poolRefreshing: poolTotals.refreshing,
      }
      if (shape.refreshed) head.poolRefreshed = poolTotals.refreshed
      if (shape.acquisitionWaitTimes) head.acquisitionWaitTimes = waitDoc(poolTotals.waits)
      pools[name] = {...head, ...poolDoc}
    }
    const doc: Document = {
      numClientConnections: clientConnections,
      numAScopedConnections: 0,
      totalInUse: totals.inUse,
      totalAvailable: totals.available,
      totalLeased: totals.leased,
      totalCreated: totals.created,
      totalRefreshing: totals.refreshing,
    }
    if (shape.refreshed) doc.totalRefreshed = totals.refreshed
    if (shape.replicaSetMatchingStrategy) doc.replicaSetMatchingStrategy = 'matchPrimaryNode'
    if (shape.acquisitionWaitTimes) doc.acquisitionWaitTimes = waitDoc(totals.waits)
    doc.pools = pools
    doc.hosts = hosts
    doc.replicaSets = replicaSets
    doc.ok = 1
    return doc
  }

  /** Its process went down: the idle connections die with it; the pools stay usable once it is back. */
  dropIdle(): void {
    for (const byHost of this.pools.values()) for (const hp of byHost.values()) for (const c of hp.idle.splice(0)) c.close()
  }

  close(): void {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    for (const byHost of this.pools.values()) for (const hp of byHost.values()) hp.close()
  }
}

function waitDoc(buckets: number[]): Document {
  const doc: Document = {'(-inf, 0ms)': {count: Long.fromNumber(buckets[0])}}
  let total = 0
  for (let i = 1; i <= WAIT_BUCKETS; i++) {
    doc[`[${(i - 1) * WAIT_BUCKET_MS}ms, ${i * WAIT_BUCKET_MS}ms)`] = {count: Long.fromNumber(buckets[i])}
    total += buckets[i]
  }
  doc[`[${WAIT_BUCKETS * WAIT_BUCKET_MS}ms, inf)`] = {count: Long.fromNumber(buckets[WAIT_BUCKETS + 1])}
  total += buckets[WAIT_BUCKETS + 1] + buckets[0]
  doc.totalCount = Long.fromNumber(total)
  return doc
}
