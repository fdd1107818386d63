/**
 * One host, polled over its own direct connection (a pool of one, reused every
 * round; monitoring in `poll` mode so pooltool adds two connections per host,
 * not three): `serverStatus` reduced to `connections` and `repl`, plus
 * `connPoolStats` on a mongos and the holders from `$currentOp`.
 *
 * A poll that has not answered by the round's deadline is reported as no
 * answer and keeps running; the next round waits for it instead of piling up
 * another one. Missing privileges for the optional reads (holders, pools) are
 * remembered and not asked again; a failing `serverStatus` makes the host
 * unreachable (or unauthorized) for that round only.
 */
import {CLOSE_GRACE_MS, closeWithin} from '../mongo/client.js'
import {createHostClient, type MongoClient} from '../mongo/client.js'
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import {type ConnectionsStatus, parseConnections} from '../probes/server-status.js'
import {groupHolders, holdersPipeline} from './holders.js'
import {parseConnPoolStats} from './pool-stats.js'
import type {ClusterHost, ConnPoolStatsSummary, Holder, HostSample} from './types.js'

/** serverStatus with only what we read: everything heavy switched off (unknown names are ignored by the server). */
export const SERVER_STATUS_CONNECTIONS: Document = {
  serverStatus: 1,
  asserts: 0, extra_info: 0, globalLock: 0, locks: 0, logicalSessionRecordCache: 0, mem: 0, metrics: 0, network: 0,
  opLatencies: 0, opcounters: 0, opcountersRepl: 0, security: 0, storageEngine: 0, tcmalloc: 0, transactions: 0,
  wiredTiger: 0, flowControl: 0, electionMetrics: 0, twoPhaseCommitCoordinator: 0, catalogStats: 0, indexBuilds: 0,
  sharding: 0, shardingStatistics: 0, oplogTruncation: 0, health: 0, tenantMigrations: 0, queryAnalyzers: 0, batchedDeletes: 0,
}

export interface PollerSettings {
  uri: string
  /** appName of the polling connections (so holders can mark them as ours). */
  appName: string
  /** serverSelectionTimeoutMS / connectTimeoutMS of the host clients. */
  hostTimeoutMs: number
  holders: boolean
  secrets: readonly string[]
}

export type PollAnswer =
  | {
      ok: true
      /** performance.now() when serverStatus answered. */
      atMS: number
      connections?: ConnectionsStatus
      memberState?: HostSample['memberState']
      pools?: ConnPoolStatsSummary
      poolsUnavailable?: string
      holders?: Holder[]
      holdersUnavailable?: string
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
  private readonly client: MongoClient
  private inflight?: Promise<PollAnswer>
  private holdersDenied?: string
  private poolsDenied?: string

  constructor(
    readonly entry: ClusterHost,
    private readonly settings: PollerSettings,
    private readonly topology: readonly ClusterHost[],
  ) {
    this.client = createHostClient(
      {uri: settings.uri, appName: settings.appName, timeoutMs: settings.hostTimeoutMs, extra: {serverMonitoringMode: 'poll'}},
      entry.host,
    )
  }

  private describe(error: unknown) {
    return toPoolToolError(error, {target: this.entry.host, secrets: this.settings.secrets})
  }

  private async fetch(): Promise<PollAnswer> {
    const admin = this.client.db('admin')
    let status: Document
    try {
      status = await admin.command(SERVER_STATUS_CONNECTIONS)
    } catch (error) {
      const failure = this.describe(error)
      return {ok: false, state: DENIED.has(failure.code) ? 'unauthorized' : 'unreachable', error: failure.message}
    }
    const answer: PollAnswer = {ok: true, atMS: performance.now()}
    const connections = parseConnections(status)
    if (connections) answer.connections = connections
    const memberState = memberStateOf(status)
    if (memberState) answer.memberState = memberState
    const isMongos = this.entry.role === 'mongos'
    if (isMongos) {
      if (this.poolsDenied) answer.poolsUnavailable = this.poolsDenied
      else {
        try {
          const pools = parseConnPoolStats(await admin.command({connPoolStats: 1}), this.topology)
          if (pools) answer.pools = pools
        } catch (error) {
          const failure = this.describe(error)
          if (DENIED.has(failure.code)) this.poolsDenied = failure.message
          answer.poolsUnavailable = failure.message
        }
      }
    }
    if (this.settings.holders) {
      if (this.holdersDenied) answer.holdersUnavailable = this.holdersDenied
      else {
        try {
          const docs = await admin.aggregate(holdersPipeline(isMongos)).toArray()
          answer.holders = groupHolders(docs, this.settings.appName)
        } catch (error) {
          const failure = this.describe(error)
          if (DENIED.has(failure.code) || failure.code === 'SERVER_ERROR') this.holdersDenied = failure.message
          answer.holdersUnavailable = failure.message
        }
      }
    }
    return answer
  }

  /** The answer, or "no answer within deadlineMS" (the poll keeps going and is picked up by the next round). */
  async poll(deadlineMS: number): Promise<PollAnswer> {
    this.inflight ??= this.fetch().finally(() => {
      this.inflight = undefined
    })
    const inflight = this.inflight
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<PollAnswer>((resolve) => {
      timer = setTimeout(() => resolve({ok: false, state: 'unreachable', error: `no answer within ${deadlineMS} ms`}), deadlineMS)
    })
    try {
      return await Promise.race([inflight, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Bounded: against a stalled host the driver's close waits for the stall (its endSessions and monitor). */
  async close(): Promise<void> {
    await closeWithin(this.client, CLOSE_GRACE_MS)
  }
}
