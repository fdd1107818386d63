/**
 * `conns watch --metrics-port`: the watch's rounds as Prometheus metrics.
 * Per host (labels cluster, host, role, set, shard): the server's connection
 * counters as serverStatus.connections sends them (a field this version does
 * not send is absent, never 0), the limit, the never-shrank verdict and the
 * outgoing pools per remote shard (connPoolStats). Cluster-wide: who holds
 * the connections (the top N holders, the rest summed as `other`), the
 * MongoClient count a client-per-request leak implies, and the poller's own
 * health. `observe` takes each completed round; `families` is what a scrape
 * between two rounds sees.
 */
import type {HostSample, RoundSample} from '../../conns/types.js'
import {FamilyBuilder, type Labels, type MetricFamily} from './families.js'
import {type LabelPrivacy, topAndOther} from './label-privacy.js'

export interface ConnsMetricsOptions {
  /** The `cluster` label of every series. */
  cluster: string
  /** Holders named in labels; the rest are summed as one `other` holder. */
  topHolders: number
  privacy: LabelPrivacy
}

export class ConnsMetrics {
  private last: RoundSample | undefined
  /** Unix seconds of each host's last answer (by host as discovered). */
  private readonly lastAnswer = new Map<string, number>()
  private lastRoundEndedAt: number | undefined

  constructor(private readonly options: ConnsMetricsOptions) {}

  observe(round: RoundSample): void {
    this.last = round
    const endedAt = (Date.parse(round.at) + round.roundMS) / 1000
    this.lastRoundEndedAt = endedAt
    for (const host of round.hosts) if (host.state === 'ok') this.lastAnswer.set(host.host, endedAt)
  }

  families(): MetricFamily[] {
    const out = new FamilyBuilder()
    const {cluster} = this.options
    const round = this.last
    out.counter('pooltool_conns_poll_rounds_total', 'Poll rounds completed by this watch.', {cluster}, round?.round ?? 0)
    if (!round) return out.build()
    out.gauge('pooltool_conns_poll_round_duration_seconds', 'How long the last poll round over every host took.', {cluster}, round.roundMS / 1000)
    out.gauge('pooltool_conns_poll_hosts', 'Hosts polled in the last round.', {cluster}, round.hosts.length)
    out.gauge('pooltool_conns_poll_hosts_unreachable', 'Hosts that did not answer (or refused serverStatus) in the last round.', {cluster}, round.hosts.filter((h) => h.state !== 'ok').length)
    out.gauge('pooltool_conns_poll_last_round_timestamp_seconds', 'When the last poll round ended (Unix time).', {cluster}, this.lastRoundEndedAt)
    for (const host of round.hosts) this.host(out, host)
    this.holders(out, round)
    return out.build()
  }

  private host(out: FamilyBuilder, host: HostSample): void {
    const labels = this.options.privacy.hostLabels(this.options.cluster, host)
    out.gauge('pooltool_host_up', '1 when the host answered serverStatus in the last round, else 0.', labels, host.state === 'ok' ? 1 : 0)
    out.gauge('pooltool_host_last_answer_timestamp_seconds', "When the host last answered (Unix time, end of that round).", labels, this.lastAnswer.get(host.host))
    if (host.state !== 'ok') return
    out.gauge('pooltool_connections_current', 'serverStatus.connections.current: incoming connections open now.', labels, host.current)
    out.gauge('pooltool_connections_available', 'serverStatus.connections.available: incoming connections the server would still accept.', labels, host.available)
    out.gauge('pooltool_connections_active', 'serverStatus.connections.active: connections with an operation in progress (4.0.7+).', labels, host.active)
    out.counter('pooltool_connections_created_total', 'serverStatus.connections.totalCreated: incoming connections created since the server started.', labels, host.totalCreated)
    out.counter('pooltool_connections_rejected_total', 'serverStatus.connections.rejected: connections refused since the server started (6.3+).', labels, host.rejected)
    out.gauge('pooltool_connections_limit', 'The most connections the server accepts now: current + available.', labels, host.maxIncoming)
    out.gauge('pooltool_connections_never_shrank', '1 when the pool grew, creation stopped for the idle window and the count stayed at its level.', labels, host.neverShrank === undefined ? undefined : host.neverShrank ? 1 : 0)
    for (const pool of host.pools?.shards ?? []) {
      // A shard's name, "config", or the host:port of a remote no shard claims (a replica set's members).
      const remote = /:\d+$/.test(pool.shard) ? this.options.privacy.host(pool.shard) : this.options.privacy.text(pool.shard)
      const poolLabels = {...labels, remote}
      for (const [state, value] of [['in_use', pool.inUse], ['available', pool.available], ['refreshing', pool.refreshing]] as const) {
        out.gauge('pooltool_pool_connections', 'Outgoing pool connections (connPoolStats) to a remote: a shard or the config server (summed over its hosts), else a host, by state.', {...poolLabels, state}, value)
      }
      out.counter('pooltool_pool_connections_created_total', 'Outgoing pool connections created to a remote (connPoolStats created): a shard, the config server, or a host.', poolLabels, pool.created)
    }
  }

  private holders(out: FamilyBuilder, round: RoundSample): void {
    const held = round.clusterHolders
    if (!held) return
    const {cluster, privacy, topHolders} = this.options
    out.gauge('pooltool_holders_hosts_read', 'Hosts whose holders ($currentOp) were read in the last round: holder sums cover these only.', {cluster}, held.hostsRead.length)
    out.gauge('pooltool_holders_hosts_unread', 'Hosts whose holders could not be read in the last round: their connections are unknown, not none.', {cluster}, held.hostsUnread.length)
    const rows: HolderRow[] = held.holders.map((h) => ({
      labels: {cluster, app_name: privacy.text(h.appName), client: privacy.client(h.client), driver: privacy.text(h.driver), kind: h.kind},
      count: h.count,
      impliedClients: h.impliedClients,
    }))
    for (const row of topAndOther(rows, topHolders, (rest) => otherHolders(cluster, rest))) {
      out.gauge('pooltool_holder_connections', 'Connections held over every host read, by holder (appName, client host, driver): the top holders by count, the rest summed as "other".', row.labels, row.count)
      out.gauge('pooltool_holder_implied_clients', 'MongoClient instances a holder implies: the most parked monitors it has on one host.', row.labels, row.impliedClients)
    }
    for (const kind of ['application', 'internal', 'pooltool'] as const) {
      out.gauge('pooltool_holder_connections_by_kind', 'Connections over every host read, by holder kind.', {cluster, kind}, held.totals[kind])
    }
    for (const verdict of round.verdicts ?? []) {
      if (verdict.kind !== 'client-per-request' || !verdict.holder) continue
      out.gauge('pooltool_client_per_request_leak', 'A holder judged to open a MongoClient per request: the MongoClient instances its monitors imply.', {
        cluster,
        app_name: privacy.text(verdict.holder.appName),
        client: privacy.client(verdict.holder.client),
        driver: privacy.text(verdict.holder.driver),
      }, verdict.impliedClients ?? 1)
    }
  }
}

interface HolderRow {
  labels: Labels
  count: number
  impliedClients?: number
}

/** The holders past the top N as one row: their connections summed; kind "mixed" when they differ. */
function otherHolders(cluster: string, rest: HolderRow[]): HolderRow {
  const kinds = new Set(rest.map((row) => row.labels.kind))
  return {
    labels: {cluster, app_name: 'other', client: 'other', driver: 'other', kind: kinds.size === 1 ? [...kinds][0]! : 'mixed'},
    count: rest.reduce((sum, row) => sum + row.count, 0),
  }
}
