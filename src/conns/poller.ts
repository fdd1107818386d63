/**
 * One host, polled through the read layer over its own direct connection
 * (src/conns/host-reader.ts): `serverStatus` with the `connections` and `repl`
 * sections, plus `connPoolStats` on a mongos and the holders from `$currentOp`.
 *
 * A poll that has not answered by the round's deadline is reported as no
 * answer and keeps running; the next round waits for it instead of piling up
 * another one. Missing privileges for the optional reads (holders, pools) are
 * remembered and not asked again; a failing `serverStatus` makes the host
 * unreachable (or unauthorized) for that round only.
 */
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import type {ServerReader} from '../probes/reader.js'
import {type ConnectionsStatus, parseConnections} from '../probes/server-status.js'
import type {OpenReader} from '../target.js'
import {holdersCurrentOp, holdersFromGroups} from './holders.js'
import {parseConnPoolStats} from './pool-stats.js'
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
  private readonly reader: ServerReader
  private inflight?: Promise<PollAnswer>
  private holdersDenied?: string
  private poolsDenied?: string

  constructor(
    readonly entry: ClusterHost,
    private readonly connection: OpenReader,
    private readonly settings: PollerSettings,
    private readonly topology: readonly ClusterHost[],
  ) {
    this.reader = connection.reader
  }

  private describe(error: unknown) {
    return toPoolToolError(error, {target: this.entry.host, secrets: this.settings.secrets})
  }

  private async fetch(): Promise<PollAnswer> {
    let status: Document
    try {
      status = (await this.reader.serverStatus(['connections', 'repl'])).value
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
          const pools = parseConnPoolStats((await this.reader.connPoolStats()).value, this.topology)
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
          const groups = (await this.reader.currentOp(holdersCurrentOp(isMongos))).value
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
    await this.connection.close()
  }
}
