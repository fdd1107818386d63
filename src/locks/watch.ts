/**
 * `pooltool locks watch`: poll the locks from the start to the end of --duration and turn
 * successive snapshots into transitions (src/locks/transitions.ts) — held at the start (with
 * verdicts), acquired, released, overtaken, stale — printed as they happen, in time order,
 * and summarised per lock. On 6.1+ (in-memory model) the DDL operations of `$currentOp`
 * stand in for locks, keyed by namespace. On every topology it also polls the node locks
 * (src/locks/nodes.ts) and follows blocking episodes (src/locks/node/episodes.ts).
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {PoolToolError, stoppedError} from '../errors.js'
import {toPoolToolError} from '../mongo/errors.js'
import {discoverCluster} from '../probes/discovery.js'
import type {ClusterTopology} from '../probes/topology.js'
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import {LOCKS_PURPOSE} from './list.js'
import {NodeLockEpisodeTracker} from './node/episodes.js'
import {namespaceFilterNote} from './node/namespace-filter.js'
import type {NodeLockEpisodeEvent, NodeLockWaitRatesRecord} from './node/types.js'
import {type NodeSample, type NodeToRead, NodeReaders, nodesToRead, readDeadline, readNodes, TIMED_OUT} from './nodes.js'
import {filterLocks, toLockRows, type LockFilter} from './parse.js'
import {FOLLOW_UP_FIRST_MS, FOLLOW_UPS_PER_INTERVAL, FollowUpPlanner, sawTransition, youngDdlOpRunning, youngLockHeld} from './follow-up.js'
import {classifyPollFailure} from './poll-failure.js'
import {embeddedInMemoryHint, openLocksSession, readConfigLocksAt, readConfigSnapshot, readDdlOpsAt, sessionNotes, withinTimeout, type ConfigSnapshot, type LocksSession, type ReadBounds} from './read.js'
import {byTime, DdlOpTracker, LockTransitionTracker} from './transitions.js'
import {
  type DistributedLocksState,
  LOCK_POLL_FAILURE_REASONS,
  type LockEvent,
  type LockPollFailure,
  type LockPollFailureReason,
  type LocksPoll,
  type LocksTopology,
  type LocksWatchResult,
  type NodePollsSummary,
  type NodeReadFailure,
  type NodesPoll,
} from './types.js'

// Bench's lock observer and older callers import the trackers from here.
export {DdlOpTracker, LockTransitionTracker}

export interface LocksWatchConfig {
  /** Stop after this long (default: until the signal). */
  durationMS?: number
  intervalMS: number
  filter: LockFilter
  /** --lock-expiry: overrides the 15 min behind `stale`. */
  expiryMS?: number
}

/** What the watch says when it starts: the topology, what it polls, the version and the lock model (a sharded cluster). */
export interface WatchStartInfo {
  topology: LocksTopology
  distributedLocks: DistributedLocksState
  /** Absent where distributed locks do not apply. */
  model?: LocksWatchResult['model']
  serverVersion: string
  message: string
  expiryMS?: number
  /** The nodes whose locks are polled (a sharded cluster: the primaries found at the start). */
  nodes: string[]
}

export interface WatchHooks {
  signal: AbortSignal
  onEvent?(event: LockEvent): void
  onStart?(info: WatchStartInfo): void
  /** A poll got no snapshot; the watch goes on. */
  onPollFailed?(failure: LockPollFailure): void
  /**
   * After each answered poll: what is held now. config.locks: the locks not free (held, stale, no
   * ping, the balancer's); 6.1+: the DDL operations running (no lock documents to show).
   */
  onPoll?(poll: LocksPoll): void
  /** Each poll's node reads (views, or errors), for a live view. */
  onNodes?(poll: NodesPoll): void
  /** A blocking episode started, changed (peak waiters, a new root) or ended on a node. */
  onEpisode?(event: NodeLockEpisodeEvent): void
  /** One node's lock waits over the interval since its previous read. */
  onWaitRates?(record: NodeLockWaitRatesRecord): void
  /** A node could not be read this poll (its locks unknown, the watch goes on). */
  onNodeUnread?(failure: NodeReadFailure): void
  /** Every hook of one poll has run: a consumer that publishes whole polls (the metrics endpoint) publishes now. */
  onPollEnd?(end: PollEnd): void
}

/** The end of one poll: how long it took and whether its reads answered (this machine's clock). */
export interface PollEnd {
  poll: number
  /** When the poll started (ISO, this machine's clock). */
  startedAt: string
  durationMS: number
  /** The distributed locks answered (absent: not polled on this topology). */
  distributedOk?: boolean
  /** Node reads that answered, and that did not. */
  nodesRead: number
  nodesUnread: number
}


const noFailures = (): Record<LockPollFailureReason, number> =>
  Object.fromEntries(LOCK_POLL_FAILURE_REASONS.map((reason) => [reason, 0])) as Record<LockPollFailureReason, number>

/** Said in every watch's notes: how a hold's end is pinned between two polls (src/locks/follow-up.ts). */
export const FOLLOW_UPS_NOTE =
  'a poll that sees a hold begun in the last two intervals, or a transition, starts follow-up reads of the distributed locks until the next poll ' +
  `(${FOLLOW_UP_FIRST_MS} ms later, the delay doubling while nothing changes; at most ${FOLLOW_UPS_PER_INTERVAL} per interval on average, ` +
  'no node reads; counted in followUps): they pin the end of a short hold, and count as polls in the bounds above'
/** Said in every watch's notes: what a hold time is, per lock model. */
export const HOLD_TIMES_NOTE =
  "a hold starts at the lock's `when` (server clock) and ends between the last poll that saw it held and the first that saw it free " +
  "(or the next holder's `when`): both bounds are reported (holdMinMS, holdMaxMS), never the interval as a duration; " +
  'one taken and freed between two polls is at least 0 and at most its gap (counted apart too); ' +
  FOLLOW_UPS_NOTE
export const DDL_HOLD_TIMES_NOTE =
  "a hold starts at its DDL operation's start ($currentOp microsecs_running, server clock) and ends between the last poll that saw " +
  'the operation and the first that no longer did: both bounds are reported (holdMinMS, holdMaxMS); an operation that starts and ends between two polls is not seen; ' +
  FOLLOW_UPS_NOTE
/** --db/--ns narrowed the node locks: said once, with what stays whole. */
function filterNote(filter: LockFilter): string[] {
  const note = namespaceFilterNote(filter)
  return note === undefined ? [] : [note]
}

/** Said in every watch's notes: what an episode's duration is. */
export const EPISODES_NOTE =
  'a blocking episode runs from the first poll that saw operations wait on a node to the first that saw none: within one interval ' +
  'of the truth (durationMinMS–durationMaxMS bound it); waits that begin and end between two polls show only in the wait rates'

/** Said in the result's notes when a poll failed. */
export const FAILED_POLLS_NOTE = 'transitions during failed polls show at the next poll that answered: their hold times are accurate to that gap'

/** Node read failures kept with their errors in the summary (all are counted). */
const NODE_FAILURES_KEPT = 50

/** A node read's error code → the reason a failed poll is counted under (a standalone or replica set whose every node failed). */
function reasonOfNodeError(code: string, message: string): LockPollFailureReason {
  if (code === 'UNAUTHORIZED' || code === 'AUTH_FAILED') return 'unauthorized'
  if (code === 'UNREACHABLE' || code === 'NO_PRIMARY') return TIMED_OUT.test(message) ? 'timeout' : 'unreachable'
  return 'server-error'
}

/** Where the watch reads: the distributed-lock session (a sharded cluster) and the topology whose nodes it polls. */
interface WatchPlan {
  session?: LocksSession
  topology?: ClusterTopology
  distributedLocks: DistributedLocksState
  serverVersion: string
  message: string
  notes: string[]
}

/**
 * Opens what the watch reads. A mongos or config-server entry: the distributed-lock session, riding out restarts as
 * before, then the one discovery for the nodes (a discovery that fails then leaves the nodes out, said). Anything else
 * (a standalone, a replica set, a shard member: WRONG_TOPOLOGY for the session) is discovered, its nodes polled; a
 * shard member's distributed locks are read on its config server's primary.
 */
async function openWatch(target: Target, config: LocksWatchConfig, readers: NodeReaders, signal: AbortSignal, until: number, onFailedOpen: (failure: Omit<LockPollFailure, 'poll'>) => void): Promise<WatchPlan> {
  let session: LocksSession | undefined
  try {
    session = await openRidingRestarts(target, config, signal, until, onFailedOpen)
  } catch (error) {
    if (!(error instanceof PoolToolError && error.code === 'WRONG_TOPOLOGY')) throw error
  }
  if (session) {
    try {
      const topology = await withinTimeout(target, (bounds) => discoverCluster(target, {purpose: LOCKS_PURPOSE, ...bounds}))
      return {session, topology, distributedLocks: 'read', serverVersion: session.serverVersion, message: session.message, notes: topology.warnings.map((w) => `discovery: ${w}`)}
    } catch (error) {
      if (signal.aborted) throw error
      const failure = toPoolToolError(error, {target: target.redactedUri, secrets: target.secrets})
      return {session, distributedLocks: 'read', serverVersion: session.serverVersion, message: session.message, notes: [`node locks not polled: discovery failed (${failure.message})`]}
    }
  }
  const topology = await withinTimeout(target, (bounds) => discoverCluster(target, {purpose: LOCKS_PURPOSE, ...bounds}))
  const notes = topology.warnings.map((w) => `discovery: ${w}`)
  const version = await entryVersion(target, readers, topology)
  if (topology.kind !== 'sharded') {
    const where = topology.kind === 'standalone' ? 'a standalone' : `replica set '${topology.setName ?? '?'}'`
    const shardWithoutConfig = topology.warnings.some((w) => /part of a sharded cluster whose config server could not be read from here/.test(w))
    return {
      topology,
      distributedLocks: shardWithoutConfig ? "unknown: this shard member's config server could not be read from here (see the notes)" : `not applicable: ${where} takes no distributed locks (they live on a sharded cluster's config server)`,
      serverVersion: version,
      message: `${where}: blocking episodes and lock waits on its ${topology.hosts.length} data-bearing node(s)${shardWithoutConfig ? "; the cluster's distributed locks are unknown from here" : '; no distributed locks here'}`,
      notes,
    }
  }
  // A shard member: the distributed locks on the config server's primary, as list reads them.
  const configPrimary = (await nodesToRead(target, readers, topology, signal)).find((n): n is NodeToRead => !('view' in n) && n.role === 'config primary')
  const via = `the URI reached shard member ${topology.entry?.host ?? '?'}`
  if (!configPrimary) return {topology, distributedLocks: 'unknown: no primary of the config server could be read from this shard member', serverVersion: version, message: `sharded cluster (${via}): blocking episodes on the shard and config primaries`, notes}
  try {
    const opened = await openLocksSession(target, {expiryMS: config.expiryMS, address: configPrimary.address})
    return {session: opened, topology, distributedLocks: 'read', serverVersion: opened.serverVersion, message: opened.message, notes: [`${via}: the distributed locks are read on its config server's primary ${configPrimary.host}`, ...notes]}
  } catch (error) {
    if (signal.aborted) throw error
    const failure = toPoolToolError(error, {target: configPrimary.host, secrets: target.secrets})
    return {topology, distributedLocks: `unknown: the config server's primary ${configPrimary.host} could not be read: ${failure.message}`, serverVersion: version, message: `sharded cluster (${via}): blocking episodes on the shard and config primaries`, notes}
  }
}

/** The entry node's version (buildInfo), for the start line of a watch with no distributed-lock session; "unknown" when it does not answer. */
async function entryVersion(target: Target, readers: NodeReaders, topology: ClusterTopology): Promise<string> {
  const address = topology.entry?.address ?? topology.hosts[0]?.address ?? topology.hosts[0]?.host
  if (address === undefined) return 'unknown'
  try {
    const info = await withinTimeout(target, async (bounds) => (await readers.reader(address)).buildInfo(bounds))
    return typeof info.value.version === 'string' ? info.value.version : 'unknown'
  } catch {
    return 'unknown'
  }
}

/**
 * Polls from the start to the deadline (a last poll at the deadline itself, so the watch
 * covers the whole --duration), Ctrl-C or forever. A poll that fails (router or config
 * server gone, a stall, a lost privilege) is a marked round and the watch goes on, so
 * the summary is always produced. Each poll is bounded by one deadline, the target's
 * --timeout-ms, through the driver's per-operation AbortSignal (see ReadBounds): every read
 * of the poll shares it, so the last poll ends at most --timeout-ms after the deadline.
 *
 * Every poll also reads every node (src/locks/nodes.ts, within the poll's deadline: a node that
 * misses it is unknown for that poll, its error naming the bound) and hands the
 * views to the episode tracker (src/locks/node/episodes.ts), with the node's previous sample for
 * the wait rates. On a sharded cluster a node that cannot be read is no failed poll (the
 * distributed locks answered); where only nodes are polled, a poll none of them answered is one.
 */
export async function runLocksWatch(target: Target, config: LocksWatchConfig, hooks: WatchHooks): Promise<LocksWatchResult> {
  const pollTimeoutMS = target.connection.timeoutMs
  const started = Date.now()
  const until = config.durationMS === undefined ? Number.POSITIVE_INFINITY : started + config.durationMS
  const events: LockEvent[] = []
  const pollFailures: LockPollFailure[] = []
  const failedPollsByReason = noFailures()
  let polls = 0
  const markFailed = (failure: Omit<LockPollFailure, 'poll'>): void => {
    const marked: LockPollFailure = {at: failure.at, poll: polls, reason: failure.reason, error: failure.error}
    pollFailures.push(marked)
    failedPollsByReason[marked.reason] += 1
    hooks.onPollFailed?.(marked)
  }
  const readers = new NodeReaders(target, LOCKS_PURPOSE)
  let plan: WatchPlan
  try {
    plan = await openWatch(target, config, readers, hooks.signal, until, (failure) => {
      polls++
      markFailed(failure)
    })
  } catch (error) {
    await readers.close()
    throw error
  }
  const session = plan.session
  const locks = new LockTransitionTracker()
  const ddl = new DdlOpTracker()
  const episodes = new NodeLockEpisodeTracker()
  const nodePolls: NodePollsSummary = {hosts: [], failedReads: 0, failedReadsByHost: {}, latest: []}
  let previous = new Map<string, NodeSample>()
  const skewMS = session?.clockSkewMS ?? 0
  try {
    hooks.onStart?.({
      topology: plan.topology?.kind ?? 'sharded',
      distributedLocks: plan.distributedLocks,
      ...(session ? {model: session.model, expiryMS: session.timing.expiryMS} : {}),
      serverVersion: plan.serverVersion,
      message: plan.message,
      nodes: (plan.topology?.hosts ?? []).filter((h) => h.role !== 'mongos').map((h) => h.host),
    })
    const planner = new FollowUpPlanner(config.intervalMS, started)
    const followUps = {reads: 0, failed: 0}
    let lastSnapshot: ConfigSnapshot | undefined
    const emit = (read: DistributedRead): void => {
      for (const e of read.events) {
        events.push(e)
        hooks.onEvent?.(e)
      }
    }
    /**
     * Follow-up reads of the distributed locks after `first` (src/locks/follow-up.ts), while the nodes are read and
     * until the next poll is due (`stop`). A follow-up that fails ends the burst: the next poll reads again, and
     * reports a failure if there is one.
     */
    const followUp = async (first: DistributedRead, stop: AbortSignal): Promise<void> => {
      if (!session) return
      let read = first
      let delay: number | null = null
      for (;;) {
        const next = planner.next({young: read.young, changed: sawTransition(read.events)}, delay, Date.now())
        if (next === null) return
        // A stop (or the next poll) ends the wait early; no error here: the loop below checks the signals.
        await sleep(Math.max(0, next), undefined, {signal: AbortSignal.any([stop, hooks.signal])}).catch(() => {})
        if (stop.aborted || hooks.signal.aborted) return
        planner.spend(Date.now())
        const timeout = AbortSignal.timeout(pollTimeoutMS)
        try {
          // Cut short when the next poll is due, so a stalled follow-up never delays a poll (the watch still ends within --timeout-ms of --duration).
          read = await pollDistributed(session, config.filter, {signal: AbortSignal.any([hooks.signal, timeout, stop])}, {locks, ddl}, planner.youngWindowMS, lastSnapshot)
        } catch {
          if (!hooks.signal.aborted && !stop.aborted) followUps.failed++
          return
        }
        followUps.reads++
        emit(read)
        delay = next
      }
    }
    while (!hooks.signal.aborted) {
      const at = Date.now()
      polls++
      // One deadline for the whole poll: the distributed locks and every node (a shard's primary found by hello, then
      // read with what is left), so a poll ends within the pollTimeoutMS it reports, not one bound per phase.
      const deadline = readDeadline(pollTimeoutMS)
      const timeout = deadline.signal
      // The nodes are read while the distributed locks are read and followed up (their reads are slower: every node).
      const nodesRead = plan.topology ? readNodes(target, readers, plan.topology, {signal: hooks.signal, previous, filter: config.filter, deadline}).catch(() => undefined) : Promise.resolve(undefined)
      const distributed = session
        ? await pollDistributed(session, config.filter, {signal: AbortSignal.any([hooks.signal, timeout])}, {locks, ddl}, planner.youngWindowMS).then((r) => ({ok: r}), (error: unknown) => ({error, timedOut: timeout.aborted}))
        : undefined
      // Ctrl-C cancelled the reads: not a failure of the cluster, and not a poll that counts.
      if (hooks.signal.aborted) {
        await nodesRead
        polls--
        break
      }
      const stopFollowUps = new AbortController()
      let following: Promise<void> = Promise.resolve()
      if (distributed && 'ok' in distributed) {
        emit(distributed.ok)
        if (distributed.ok.snapshot) lastSnapshot = distributed.ok.snapshot
        hooks.onPoll?.({poll: polls, ...distributed.ok.poll})
        following = followUp(distributed.ok, stopFollowUps.signal)
      } else if (distributed) {
        const {reason, error: text} = classifyPollFailure(distributed.error, {target: target.redactedUri, secrets: target.secrets, timeoutMs: pollTimeoutMS, timedOut: distributed.timedOut})
        // No reply to take the server's clock from: this machine's, moved by the skew measured at the start, so
        // failures and events read on one clock.
        markFailed({at: new Date(at + skewMS).toISOString(), reason, error: text})
      }
      const nodes = await nodesRead
      if (hooks.signal.aborted) {
        stopFollowUps.abort()
        await following
        // Only nodes were read, and Ctrl-C cancelled them: not a poll that counts.
        if (!session) polls--
        break
      }
      if (nodes) {
        previous = nodes.samples
        nodePolls.hosts = [...new Set([...nodePolls.hosts, ...nodes.nodes.map((n) => n.host)])]
        hooks.onNodes?.({poll: polls, nodes: nodes.nodes})
        const samples = nodes.nodes.flatMap((n) => (n.view && n.readAt ? [{at: new Date(n.readAt), node: n.host, view: n.view}] : []))
        for (const observed of episodes.observePoll(samples)) {
          for (const e of observed.events) hooks.onEpisode?.(e)
          if (observed.rates) hooks.onWaitRates?.(observed.rates)
        }
        const unread = nodes.nodes.filter((n) => n.view === null)
        for (const n of unread) {
          const failure: NodeReadFailure = {at: new Date(at + skewMS).toISOString(), poll: polls, host: n.host, role: n.role, error: n.error ?? {code: 'UNKNOWN', message: 'not read'}}
          nodePolls.failedReads += 1
          nodePolls.failedReadsByHost[n.host] = (nodePolls.failedReadsByHost[n.host] ?? 0) + 1
          nodePolls.latest.push(failure)
          if (nodePolls.latest.length > NODE_FAILURES_KEPT) nodePolls.latest.shift()
          hooks.onNodeUnread?.(failure)
        }
        // Only nodes to read (no distributed locks): a poll where none answered saw nothing.
        if (!session && unread.length === nodes.nodes.length) {
          const first = unread[0]?.error
          const error = first ? `${unread[0]!.host}: ${first.message}` : 'no node to read'
          markFailed({at: new Date(at).toISOString(), reason: first ? reasonOfNodeError(first.code, first.message) : 'unreachable', error})
        }
      }
      const nodesUnread = nodes ? nodes.nodes.filter((n) => n.view === null).length : 0
      hooks.onPollEnd?.({
        poll: polls,
        startedAt: new Date(at).toISOString(),
        durationMS: Date.now() - at,
        ...(distributed ? {distributedOk: 'ok' in distributed} : {}),
        nodesRead: nodes ? nodes.nodes.length - nodesUnread : 0,
        nodesUnread,
      })
      // The poll that started at (or after) the deadline was the last; else the next one, the deadline at the latest.
      // A stop ends the wait early (it is no error here: the loop sees the signal).
      if (at < until) await sleep(Math.max(0, Math.min(at + config.intervalMS, until) - Date.now()), undefined, {signal: hooks.signal}).catch(() => {})
      stopFollowUps.abort()
      await following
      if (at >= until) break
    }
    const distributedNotes = session
      ? [...sessionNotes(session, config.expiryMS !== undefined), ...embeddedInMemoryHint(session, 'locks watch'), session.model === 'in-memory' ? DDL_HOLD_TIMES_NOTE : HOLD_TIMES_NOTE]
      : []
    return {
      target: targetSummary(target),
      topology: plan.topology?.kind ?? 'sharded',
      distributedLocks: plan.distributedLocks,
      ...(session
        ? {entry: session.entry, ...(session.clockSkewMS === undefined ? {} : {clockSkewMS: session.clockSkewMS}), model: session.model}
        : {}),
      serverVersion: plan.serverVersion,
      message: plan.message,
      startedAt: new Date(started).toISOString(),
      durationMS: Date.now() - started,
      intervalMS: config.intervalMS,
      polls,
      failedPolls: pollFailures.length,
      failedPollsByReason,
      pollFailures,
      pollTimeoutMS,
      // Each poll's events are in time order; after a failed poll, the next one's may reach back past what was printed.
      ...(session ? {events: byTime(events), locks: session.model === 'in-memory' ? ddl.summary() : locks.summary(), followUps} : {}),
      nodeEpisodes: episodes.summary(),
      nodePolls,
      notes: [...plan.notes, ...distributedNotes, ...(plan.topology ? [EPISODES_NOTE, ...filterNote(config.filter)] : []), ...(pollFailures.length > 0 ? [FAILED_POLLS_NOTE] : [])],
      interrupted: hooks.signal.aborted,
    }
  } finally {
    await Promise.all([session?.close().catch(() => undefined), readers.close()])
  }
}

/**
 * Opens the session, riding out a router that restarts or stalls while it opens, as the watch rides out one
 * that does so between polls. A target that never answered (a wrong port, a host that is down) fails at once,
 * as before: exit 4 with the driver's reason. Once it has answered (a monitor's hello, a handshake), a failure
 * to read the session's facts (hello, buildInfo, config's collections) is a failed poll, marked and retried
 * every --interval with a fresh client (a driver client whose first connection failed stays closed).
 * Ends with the last failure when --duration runs out first (no poll answered: the watch saw nothing, the
 * exit of the failure's class) or on Ctrl-C (exit 130).
 */
async function openRidingRestarts(
  target: Target,
  config: LocksWatchConfig,
  signal: AbortSignal,
  until: number,
  onFailedOpen: (failure: Omit<LockPollFailure, 'poll'>) => void,
): Promise<LocksSession> {
  const reached = {answered: false}
  const stopped = (failure: PoolToolError) =>
    stoppedError(signal, `stopped before the watch could read ${target.redactedUri} again: ${failure.message}`, 'the target answered at first and then went away; run the watch again once it is back')
  for (let attempt = 1; ; attempt++) {
    const at = Date.now()
    try {
      return await openLocksSession(target, {expiryMS: config.expiryMS, reached})
    } catch (error) {
      if (!reached.answered) throw error
      const failure = toPoolToolError(error, {target: target.redactedUri, secrets: target.secrets})
      // Not the cluster going away (a wrong topology, refused credentials, a bug): the open's own error, as before.
      if (failure.code !== 'UNREACHABLE') throw error
      if (signal.aborted) throw stopped(failure)
      onFailedOpen({at: new Date(at).toISOString(), reason: 'unreachable', error: failure.message})
      if (Date.now() >= until) {
        throw new PoolToolError(
          'UNREACHABLE',
          `${failure.message} (${target.redactedUri} answered at first, then not again within --duration: ${attempt} attempts to open the watch failed)`,
          failure.hint,
          {cause: error},
        )
      }
      await sleep(Math.max(0, Math.min(at + config.intervalMS, until) - Date.now()), undefined, {signal}).catch(() => {})
      if (signal.aborted) throw stopped(failure)
    }
  }
}

/** One read of the distributed locks: its transitions, what is held, whether a recent hold is (for follow-ups) and the snapshot read. */
interface DistributedRead {
  events: LockEvent[]
  poll: Omit<LocksPoll, 'poll'>
  young: boolean
  snapshot?: ConfigSnapshot
}

/**
 * One snapshot turned into transitions (the trackers keep the last successful snapshot across failed polls). With
 * `previous` (a follow-up read) only the lock documents are read again; the pings, routers and shards that judge
 * them are the regular poll's, at most an interval old (verdicts turn on minutes).
 */
async function pollDistributed(
  session: LocksSession,
  filter: LockFilter,
  bounds: ReadBounds,
  trackers: {locks: LockTransitionTracker; ddl: DdlOpTracker},
  youngWindowMS: number,
  previous?: ConfigSnapshot,
): Promise<DistributedRead> {
  if (session.model === 'in-memory') {
    const {now, ops} = await readDdlOpsAt(session.reader, bounds)
    const matching = ops.filter((o) => matches(o.ns, filter))
    return {events: trackers.ddl.observe(matching, now.getTime()), poll: {at: now.toISOString(), ddlRunning: matching.length}, young: youngDdlOpRunning(matching, youngWindowMS)}
  }
  const snap = previous ? await readConfigLocksAt(session.reader, previous, bounds) : await readConfigSnapshot(session.reader, bounds)
  const nowMs = snap.now.getTime()
  const rows = filterLocks(toLockRows({...snap, nowMs, timing: session.timing}), {db: filter.db, ns: filter.ns})
  return {events: trackers.locks.observe(rows, nowMs), poll: {at: snap.now.toISOString(), held: rows.filter((row) => row.verdict !== 'free')}, young: youngLockHeld(rows, nowMs, youngWindowMS), snapshot: snap}
}

function matches(ns: string | null, filter: LockFilter): boolean {
  if (!ns) return filter.db === undefined && filter.ns === undefined
  if (filter.ns !== undefined && ns !== filter.ns) return false
  if (filter.db !== undefined && ns !== filter.db && !ns.startsWith(`${filter.db}.`)) return false
  return true
}
