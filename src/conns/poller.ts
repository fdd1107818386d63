/**
 * One host, polled through the read layer over its own direct connection
 * (src/conns/host-reader.ts): `serverStatus` with the `connections`, `repl`,
 * `globalLock` and `locks` sections, `connPoolStats` (every node: routers, shard,
 * config and replica-set members all keep outgoing pools), the holders from
 * `$currentOp`, and once per host what its connection limit is made of
 * (`getCmdLineOpts`, `hostInfo`: startup settings, read at the first answer).
 *
 * A poll that has not answered by the round's deadline is reported as no
 * answer and keeps running; the next round waits for it instead of piling up
 * another one. Missing privileges for the optional reads (holders, pools) are
 * remembered and not asked again; a failing `serverStatus` makes the host
 * unreachable (or unauthorized) for that round only.
 *
 * The poller holds an opener, not a connection: after a failed `serverStatus`
 * the connection is let go and the next round opens a fresh one. A driver
 * client whose first connection failed stays closed ("Topology is closed"),
 * which would hide the real error (ECONNREFUSED, ENOTFOUND …) and keep a host
 * that comes up mid-watch unreachable for good.
 */
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import {clockSkewMS} from '../probes/server-clock-skew.js'
import {HostConnection, type ReaderOpener} from '../probes/host-connection.js'
import type {ServerReader} from '../probes/reader.js'
import {type ConnectionsStatus, type GlobalLockStatus, type LockWaitTotals, parseConnections, parseGlobalLock, parseLockWaits, toNumber} from '../probes/server-status.js'
import {holdersCurrentOp, holdersFromGroups} from './holders.js'
import type {LimitRead} from './incoming-limit.js'
import {ROUTER_POOL_PARAMETERS} from './never-shrank-advice.js'
import {parseConnPoolStats} from './pool-stats.js'
import {processKey} from './same-process.js'
import type {ClusterHost, ConnPoolStatsSummary, Holder, HostSample} from './types.js'

export interface PollerSettings {
  /** appName of the polling connections (so holders can mark them as ours). */
  appName: string
  holders: boolean
  secrets: readonly string[]
}

export type PollAnswer =
  | {
      ok: true
      /** performance.now() when serverStatus answered. */
      atMS: number
      /** `serverStatus.host` and `pid`: who answered (two addresses of one process give the same; src/conns/same-process.ts). */
      processKey?: string
      /** Server clock minus this machine's, from serverStatus `localTime`. */
      clockSkewMS?: number
      connections?: ConnectionsStatus
      globalLock?: GlobalLockStatus
      lockWaits?: LockWaitTotals
      memberState?: HostSample['memberState']
      pools?: ConnPoolStatsSummary
      poolsUnavailable?: string
      holders?: Holder[]
      holdersUnavailable?: string
      /** serverStatus.uptime, seconds. */
      uptimeSec?: number
      /** getCmdLineOpts and hostInfo as read (once per host), for the limit's explanation. */
      limitReads?: {cmdLineOpts: LimitRead; hostInfo: LimitRead}
    }
  | {ok: false; state: 'unreachable' | 'unauthorized'; error: string}

function memberStateOf(status: Document): HostSample['memberState'] {
  const repl = status.repl as Document | undefined
  if (!repl || typeof repl !== 'object' || repl.setName === undefined) return undefined
  if (repl.isWritablePrimary === true || repl.ismaster === true) return 'primary'
  if (repl.secondary === true) return 'secondary'
  return 'other'
}

const DENIED = new Set(['UNAUTHORIZED', 'AUTH_FAILED'])

export class HostPoller {
  private readonly connection: HostConnection
  private inflight?: Promise<PollAnswer>
  private holdersDenied?: string
  private poolsDenied?: string
  /** getCmdLineOpts / hostInfo: kept once answered or refused (startup settings); read again after any other failure. */
  private cmdLineOpts?: LimitRead
  private hostInfo?: LimitRead
  /** Why the last finished poll failed: a retry still under way at the deadline is reported with it. */
  private lastFailure?: string

  constructor(
    readonly entry: ClusterHost,
    open: ReaderOpener,
    private readonly settings: PollerSettings,
    private readonly topology: readonly ClusterHost[],
  ) {
    this.connection = new HostConnection(open)
  }

  private describe(error: unknown) {
    return toPoolToolError(error, {target: this.entry.host, secrets: this.settings.secrets})
  }

  private async fetch(): Promise<PollAnswer> {
    let status: Document
    let skew: number | undefined
    let reader: ServerReader
    try {
      reader = await this.connection.reader()
      const reading = await reader.serverStatus(['connections', 'repl', 'globalLock', 'locks'])
      status = reading.value
      skew = clockSkewMS(reading)
    } catch (error) {
      const failure = this.describe(error)
      const denied = DENIED.has(failure.code)
      if (!denied) this.connection.failed()
      return {ok: false, state: denied ? 'unauthorized' : 'unreachable', error: failure.message}
    }
    const answer: PollAnswer = {ok: true, atMS: performance.now()}
    const key = processKey(typeof status.host === 'string' && status.host !== '' ? status.host : undefined, toNumber(status.pid))
    if (key !== undefined) answer.processKey = key
    if (skew !== undefined) answer.clockSkewMS = skew
    const connections = parseConnections(status)
    if (connections) answer.connections = connections
    const uptime = toNumber(status.uptime)
    if (uptime !== undefined && uptime > 0) answer.uptimeSec = uptime
    const globalLock = parseGlobalLock(status)
    if (globalLock) answer.globalLock = globalLock
    const lockWaits = parseLockWaits(status)
    if (lockWaits) answer.lockWaits = lockWaits
    const memberState = memberStateOf(status)
    if (memberState) answer.memberState = memberState
    const isMongos = this.entry.role === 'mongos'
    // Every node that answers connPoolStats: a router's pools to the shards, a member's ReplNetwork and sharding pools.
    if (this.poolsDenied) answer.poolsUnavailable = this.poolsDenied
    else {
      try {
        const pools = parseConnPoolStats((await reader.connPoolStats()).value, this.topology)
        if (pools) answer.pools = pools
      } catch (error) {
        const failure = this.describe(error)
        if (DENIED.has(failure.code) || failure.code === 'SERVER_ERROR') this.poolsDenied = failure.message
        answer.poolsUnavailable = failure.message
      }
    }
    answer.limitReads = await this.readLimits(reader)
    if (this.settings.holders) {
      if (this.holdersDenied) answer.holdersUnavailable = this.holdersDenied
      else {
        try {
          const groups = (await reader.currentOp(holdersCurrentOp(isMongos))).value
          answer.holders = holdersFromGroups(groups, this.settings.appName)
        } catch (error) {
          const failure = this.describe(error)
          if (DENIED.has(failure.code) || failure.code === 'SERVER_ERROR') this.holdersDenied = failure.message
          answer.holdersUnavailable = failure.message
        }
      }
    }
    return answer
  }

  /** One startup read, kept when it answered or was refused (a refusal does not change between rounds). */
  private async limitRead(cached: LimitRead | undefined, run: () => Promise<Document>, keep: (read: LimitRead) => void): Promise<LimitRead> {
    if (cached) return cached
    try {
      const read = {reply: await run()}
      keep(read)
      return read
    } catch (error) {
      const failure = this.describe(error)
      const read = {unavailable: failure.message}
      if (DENIED.has(failure.code) || failure.code === 'SERVER_ERROR') keep(read)
      return read
    }
  }

  private async readLimits(reader: ServerReader): Promise<{cmdLineOpts: LimitRead; hostInfo: LimitRead}> {
    const [cmdLineOpts, hostInfo] = await Promise.all([
      this.limitRead(this.cmdLineOpts, async () => (await reader.getCmdLineOpts()).value, (read) => (this.cmdLineOpts = read)),
      this.limitRead(this.hostInfo, async () => (await reader.hostInfo()).value, (read) => (this.hostInfo = read)),
    ])
    return {cmdLineOpts, hostInfo}
  }

  /** The answer, or "no answer within deadlineMS" (the poll keeps going and is picked up by the next round). */
  async poll(deadlineMS: number): Promise<PollAnswer> {
    this.inflight ??= this.fetch()
      .then((answer) => {
        this.lastFailure = answer.ok ? undefined : answer.error
        return answer
      })
      .finally(() => {
        this.inflight = undefined
      })
    const inflight = this.inflight
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<PollAnswer>((resolve) => {
      // A host that failed and is being tried again keeps its real error (connection refused, name not found …).
      const error = this.lastFailure ?? `no answer within ${deadlineMS} ms`
      timer = setTimeout(() => resolve({ok: false, state: 'unreachable', error}), deadlineMS)
    })
    try {
      return await Promise.race([inflight, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Bounded: against a stalled host the driver's close waits for the stall (its endSessions and monitor). */
  /** A router's ShardingTaskExecutorPool* parameters (getParameter, within `deadlineMS`), or why they could not be read. */
  async readPoolParameters(deadlineMS: number): Promise<{parameters: Record<string, number>} | {unavailable: string}> {
    try {
      const signal = AbortSignal.timeout(deadlineMS)
      const reader = await this.connection.reader()
      const {value} = await reader.getParameter(ROUTER_POOL_PARAMETERS, {signal})
      const parameters = Object.fromEntries(ROUTER_POOL_PARAMETERS.flatMap((name) => (typeof value[name] === 'number' || typeof value[name] === 'bigint' ? [[name, Number(value[name])]] : [])))
      return {parameters}
    } catch (error) {
      return {unavailable: this.describe(error).message}
    }
  }

  async close(): Promise<void> {
    await this.connection.close()
  }
}
