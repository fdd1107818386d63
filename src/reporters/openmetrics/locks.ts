/**
 * `locks watch --metrics-port`: the watch's polls as Prometheus metrics.
 * Per node (labels cluster, host, role, set, shard): lock waits and time
 * waited per resource and mode as serverStatus.locks counts them since the
 * server started (counters: `rate()` gives waits per second), the operations
 * waiting for a lock now, root blockers, and blocking episodes (started over
 * the watch, open now). A sharded cluster's distributed locks: locks by
 * verdict, the stale ones by name, holders whose ping is past the expiry, and
 * 6.1+'s running DDL operations. And the poller's own health. `observe*` take
 * one poll's pieces; `families` is what a scrape between two polls sees.
 */
import type {NodeLockEpisodeEvent} from '../../locks/node/types.js'
import type {LockVerdict, LocksPoll, NodeLocksEntry, NodesPoll} from '../../locks/types.js'
import type {PollEnd} from '../../locks/watch.js'
import {FamilyBuilder, type MetricFamily} from './families.js'
import type {LabelPrivacy} from './label-privacy.js'

export interface LocksMetricsOptions {
  cluster: string
  /** Stale and held distributed locks named in labels (longest held first); the rest counted only. */
  topLocks: number
  privacy: LabelPrivacy
}

const VERDICTS: readonly LockVerdict[] = ['held', 'stale', 'no-ping', 'balancer']

export class LocksMetrics {
  private distributed: LocksPoll | undefined
  private nodes: NodeLocksEntry[] = []
  private lastEnd: PollEnd | undefined
  private failedPolls = 0
  private lastSuccessAt: number | undefined
  /** Episodes started over the watch, and open now, per node. */
  private readonly episodesStarted = new Map<string, number>()
  private readonly openEpisodes = new Map<string, Set<number>>()

  constructor(private readonly options: LocksMetricsOptions) {}

  observePoll(poll: LocksPoll): void {
    this.distributed = poll
  }

  observeNodes(poll: NodesPoll): void {
    this.nodes = poll.nodes
  }

  observeEpisode(event: NodeLockEpisodeEvent): void {
    const open = this.openEpisodes.get(event.node) ?? new Set<number>()
    this.openEpisodes.set(event.node, open)
    if (event.kind === 'episode-start') {
      this.episodesStarted.set(event.node, (this.episodesStarted.get(event.node) ?? 0) + 1)
      open.add(event.episodeId)
    } else if (event.kind === 'episode-end') open.delete(event.episodeId)
  }

  observePollEnd(end: PollEnd): void {
    this.lastEnd = end
    const failed = end.distributedOk === false || (end.distributedOk === undefined && end.nodesRead === 0)
    if (failed) this.failedPolls += 1
    else this.lastSuccessAt = (Date.parse(end.startedAt) + end.durationMS) / 1000
  }

  families(): MetricFamily[] {
    const out = new FamilyBuilder()
    const {cluster} = this.options
    out.counter('pooltool_locks_polls_total', 'Polls completed by this watch.', {cluster}, this.lastEnd?.poll ?? 0)
    out.counter('pooltool_locks_polls_failed_total', 'Polls that read nothing (distributed locks unanswered, or no node answered).', {cluster}, this.failedPolls)
    if (!this.lastEnd) return out.build()
    out.gauge('pooltool_locks_poll_duration_seconds', 'How long the last poll took.', {cluster}, this.lastEnd.durationMS / 1000)
    out.gauge('pooltool_locks_poll_nodes_unreachable', 'Nodes whose locks could not be read in the last poll: unknown, not uncontended.', {cluster}, this.lastEnd.nodesUnread)
    out.gauge('pooltool_locks_poll_last_success_timestamp_seconds', 'When a poll last read something (Unix time).', {cluster}, this.lastSuccessAt)
    for (const node of this.nodes) this.node(out, node)
    this.distributedLocks(out)
    return out.build()
  }

  private node(out: FamilyBuilder, node: NodeLocksEntry): void {
    const labels = this.options.privacy.hostLabels(this.options.cluster, node)
    out.gauge('pooltool_locks_node_up', '1 when the node was read in the last poll, else 0 (its locks unknown).', labels, node.view ? 1 : 0)
    out.counter('pooltool_lock_episodes_started_total', 'Blocking episodes (operations waiting for a lock, with or without a visible blocker) that started during this watch.', labels, this.episodesStarted.get(node.host) ?? 0)
    out.gauge('pooltool_lock_episodes_open', 'Blocking episodes going on now.', labels, this.openEpisodes.get(node.host)?.size ?? 0)
    const view = node.view
    if (!view) return
    const operations = view.blocking.operations
    out.gauge('pooltool_lock_waiters', 'Operations waiting for a lock now ($currentOp waitingForLock).', labels, operations.filter((op) => op.waitingForLock).length)
    out.gauge('pooltool_lock_root_blockers', 'Root blockers now: operations that block others and wait for nobody.', labels, view.blocking.chains.length)
    out.gauge('pooltool_lock_blocked_operations', 'Operations blocked, directly or not, by a root blocker now.', labels, view.blocking.chains.reduce((sum, chain) => sum + chain.waiterCount, 0))
    if (view.waits.state !== 'counted') return
    for (const row of view.waits.rows) {
      const rowLabels = {...labels, resource: row.resource, mode: row.mode}
      out.counter('pooltool_lock_acquisitions_total', 'serverStatus.locks acquireCount since the server started, by resource and mode.', rowLabels, row.acquireCount)
      out.counter('pooltool_lock_waits_total', 'serverStatus.locks acquireWaitCount since the server started: acquisitions that had to wait, by resource and mode.', rowLabels, row.acquireWaitCount)
      out.counter('pooltool_lock_wait_seconds_total', 'serverStatus.locks timeAcquiringMicros since the server started, in seconds: time spent waiting, by resource and mode.', rowLabels, row.timeAcquiringMicros / 1e6)
    }
  }

  private distributedLocks(out: FamilyBuilder): void {
    const poll = this.distributed
    if (!poll) return
    const {cluster, privacy, topLocks} = this.options
    if (poll.ddlRunning !== undefined) out.gauge('pooltool_ddl_operations_running', '6.1+: DDL operations running now (they take the in-memory DDL lock; config.locks is no longer used).', {cluster}, poll.ddlRunning)
    const held = poll.held
    if (!held) return
    for (const verdict of VERDICTS) {
      out.gauge('pooltool_distributed_locks', 'config.locks documents not free now, by verdict: held (holder pinging), stale (holder ping past the expiry), no-ping, balancer.', {cluster, verdict}, held.filter((row) => row.verdict === verdict).length)
    }
    const staleHolders = new Set(held.filter((row) => row.verdict === 'stale' && row.process !== null).map((row) => row.process))
    out.gauge('pooltool_distributed_lock_holders_stale', 'Processes holding a lock whose config.lockpings ping is older than the lock expiry.', {cluster}, staleHolders.size)
    // Only the longest held are named: a label set that cannot grow with the cluster's namespaces.
    const named = [...held].sort((a, b) => (b.heldMS ?? 0) - (a.heldMS ?? 0)).slice(0, topLocks)
    for (const row of named) {
      const labels = {cluster, lock: privacy.text(row.name), verdict: row.verdict, holder: row.process === null ? '' : privacy.host(row.process.split(':').slice(0, 2).join(':'))}
      out.gauge('pooltool_distributed_lock_held_seconds', 'How long each held lock has been held, on the config server\'s clock (the longest held are named).', labels, row.heldMS === null ? undefined : row.heldMS / 1000)
      out.gauge('pooltool_distributed_lock_holder_ping_age_seconds', "Age of the holder's config.lockpings ping, on the config server's clock.", labels, row.holderPingAgeMS === null ? undefined : row.holderPingAgeMS / 1000)
    }
  }
}
