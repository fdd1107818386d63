/**
 * Blocking episodes over a watch (pure: samples in, events and a summary out; no I/O, no clock).
 *
 * The watch reads each node every poll and hands the tracker one `NodeLocksSample` per node
 * (`nodeLocksView(...)` of that poll, and the node's time). The tracker keeps state across polls:
 *
 * - An EPISODE on a node starts at the first poll where operations wait: behind a visible root
 *   blocker (one episode per chain of blocking.ts), or with no visible blocker at all. The latter
 *   opens an episode too, with `root: null`: "writes waiting" is what a DBA must see even when the
 *   holder is invisible (a system thread, an internal lock request $currentOp does not list, a
 *   partial listing); leaving it out would hide exactly the cases that are hardest to explain.
 *   All of a node's waiters with no visible blocker form one such episode.
 * - It ENDS at the first poll where none of its operations waits any more.
 * - Identity across polls: the root blocker's opid on the node; failing that, an operation the
 *   episode had (root or waiter) in the new poll's chain. So when the root changes while waiters
 *   remain (the classic index build: a long read holds IS, the build queues for X, reads queue
 *   behind the build; the read ends, the build takes X, the reads still wait, now behind it) it is
 *   the SAME episode with a root change (an `episode-update`, the roots listed in order): the
 *   waiters never stopped waiting, and starting a new episode would report a shorter blocking than
 *   the one they lived through. A chain with a new root and none of the old operations is a new
 *   episode (the old one ended at that poll). An unseen root (null) later seen is a root change too.
 * - Two open episodes whose operations meet in one chain: the chain continues the one with its
 *   root (else the earliest); the other ends, `mergedInto` naming the one its waiters joined.
 *
 * Durations (the issue's "right within one poll interval"): an episode began between the node's
 * previous poll and the first poll that saw it, and ended between the last poll that saw it and the
 * first that did not. `durationMS` is first-seen to first-unseen, within one interval of the truth;
 * `durationMinMS` (last seen − first seen) and `durationMaxMS` (first unseen − previous poll) bound
 * it. One under way at the node's first poll began before the watch: no upper bound then.
 *
 * Times are each node's own (serverStatus.localTime, or the poll's time): durations never mix two
 * nodes' clocks. A node missing from a poll (a failed read) is no news: nothing ends until a sample
 * of that node shows nobody waiting, and the bounds then span the gap, as they must.
 */
import {stopAdvice} from './blocking.js'
import type {
  BlockingAnalysis,
  BlockingEdge,
  LockModeName,
  LockResource,
  NodeLockEpisode,
  NodeLockEpisodeEvent,
  NodeLockEpisodeNodeTotals,
  NodeLockEpisodeObservation,
  NodeLockEpisodeResource,
  NodeLockEpisodeRoot,
  NodeLockEpisodesSummary,
  NodeLockEpisodeUpdateReason,
  NodeLockWaitRatesRecord,
  NodeLockWaitRateTotal,
  NodeLocksSample,
  NodeOperation,
} from './types.js'

/** Episodes listed in a summary at most; beyond, they are counted (and in the totals) but not listed, so a week-long watch stays a readable file. */
export const MAX_EPISODES_KEPT = 10_000

/** The key of "no visible blocker" on a node: its waiters form one episode whatever they wait on. */
const UNSEEN_ROOT = '\u0000unseen'

/** Operations waiting on a node at one poll, under one root (or under none that could be seen). */
interface WaitingGroup {
  rootKey: string
  root: NodeOperation | null
  waiters: Array<{op: NodeOperation; atMostMicros: number | null}>
  /** Root and waiters: how the group is recognised at the next poll. */
  opids: Set<string>
  resources: NodeLockEpisodeResource[]
  /** lockInfo's lists decided at least one of its edges. */
  lockInfo: boolean
}

const opidKey = (opid: number | string): string => String(opid)
const iso = (ms: number): string => new Date(ms).toISOString()
const intersects = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => [...a].some((key) => b.has(key))
const fromLockInfo = (edge: BlockingEdge): boolean => edge.evidence !== 'inferred-from-currentOp'

function addMode(list: LockModeName[], mode: LockModeName | null): void {
  if (mode !== null && !list.includes(mode)) list.push(mode)
}

/** Adds a resource (or modes to one already listed), in the order first seen. */
function addResource(list: NodeLockEpisodeResource[], resource: LockResource, blockerMode: LockModeName | null, waiterMode: LockModeName | null): void {
  let entry = list.find((r) => r.type === resource.type && r.name === resource.name)
  if (!entry) list.push((entry = {type: resource.type, name: resource.name, blockerModes: [], waiterModes: []}))
  addMode(entry.blockerModes, blockerMode)
  addMode(entry.waiterModes, waiterMode)
}

function mergeResources(into: NodeLockEpisodeResource[], from: readonly NodeLockEpisodeResource[]): void {
  for (const r of from) {
    for (const mode of r.blockerModes) addResource(into, {node: null, type: r.type, name: r.name}, mode, null)
    for (const mode of r.waiterModes) addResource(into, {node: null, type: r.type, name: r.name}, null, mode)
    if (r.blockerModes.length === 0 && r.waiterModes.length === 0) addResource(into, {node: null, type: r.type, name: r.name}, null, null)
  }
}

/** Who the root is, copied (never the command's values: the view does not hold them). */
export function episodeRootOf(op: NodeOperation): NodeLockEpisodeRoot {
  return {
    opid: op.opid,
    desc: op.desc,
    client: op.client,
    appName: op.appName,
    driver: op.driver,
    op: op.op,
    ns: op.ns,
    commandName: op.commandName,
    msg: op.msg,
    progress: op.progress ? {...op.progress} : null,
    runningMicros: op.runningMicros,
    locks: {...op.locks},
    waiting: op.waitingForLock,
    ...stopAdvice(op),
  }
}

/**
 * The waiting on a node at one poll, as groups: one per blocking chain (root first, its waiters in
 * tree order, so the root's own resource comes first), and one for the waiters with no visible blocker.
 */
function waitingGroupsOf(blocking: BlockingAnalysis): WaitingGroup[] {
  const groups: WaitingGroup[] = []
  for (const chain of blocking.chains) {
    const root = chain.root.operation
    const group: WaitingGroup = {rootKey: opidKey(root.opid), root, waiters: [], opids: new Set([opidKey(root.opid)]), resources: [], lockInfo: false}
    // Breadth first: the root's direct waiters (what it holds) before those queued behind them.
    const queue = [...chain.root.children]
    while (queue.length > 0) {
      const node = queue.shift()!
      group.waiters.push({op: node.operation, atMostMicros: node.waitingAtMostMicros})
      group.opids.add(opidKey(node.operation.opid))
      if (node.edge) {
        addResource(group.resources, node.edge.resource, node.edge.blockerMode, node.edge.waiterMode)
        if (fromLockInfo(node.edge)) group.lockInfo = true
      }
      queue.push(...node.children)
    }
    if (group.waiters.length > 0) groups.push(group)
  }
  if (blocking.unexplainedWaiters.length > 0) {
    const group: WaitingGroup = {rootKey: UNSEEN_ROOT, root: null, waiters: [], opids: new Set(), resources: [], lockInfo: false}
    for (const w of blocking.unexplainedWaiters) {
      group.waiters.push({op: w.operation, atMostMicros: w.operation.runningMicros})
      group.opids.add(opidKey(w.operation.opid))
      if (w.resource) addResource(group.resources, w.resource, null, w.mode)
    }
    groups.push(group)
  }
  return groups
}

/** An open episode and what the tracker needs to follow it. */
interface Tracked {
  episode: NodeLockEpisode
  rootKey: string
  opids: Set<string>
  firstSeenMS: number
  lastSeenMS: number
  previousPollMS: number | null
  /** Each waiter's first and last poll seen waiting in this episode. */
  waiterSpans: Map<string, {firstMS: number; lastMS: number; desc: string | null; opid: number | string}>
}

/** What the tracker keeps per node. */
interface NodeState {
  lastPollMS: number | null
  polls: number
  open: Tracked[]
  episodes: number
  /** When the node's current blocked stretch began (null: nobody waits). */
  blockedSinceMS: number | null
  blockedMS: number
  worstClosed: NodeLockEpisodeNodeTotals['worstEpisode']
  rateIntervalMS: number
  resetIntervals: number
}

export interface NodeLockEpisodeTrackerOptions {
  /** Episodes listed in the summary at most (default MAX_EPISODES_KEPT). */
  maxEpisodesKept?: number
}

/**
 * Follows blocking episodes over a watch. `observe` each node's sample of each poll (in time order per
 * node); `summary()` whenever the watch wants its JSON (open episodes are given as open).
 */
export class NodeLockEpisodeTracker {
  private readonly nodes = new Map<string, NodeState>()
  private readonly kept: NodeLockEpisode[] = []
  private notKept = 0
  private nextId = 1
  private readonly maxKept: number
  private readonly rateTotals = new Map<string, {node: string; resource: string; mode: string; waits: number; waitedMicros: number}>()

  constructor(options: NodeLockEpisodeTrackerOptions = {}) {
    this.maxKept = Math.max(0, options.maxEpisodesKept ?? MAX_EPISODES_KEPT)
  }

  /** Every node's sample of one poll: their events in the order given, and the rates records that came. */
  observePoll(samples: readonly NodeLocksSample[]): NodeLockEpisodeObservation[] {
    return samples.map((sample) => this.observe(sample))
  }

  /** One node at one poll: the episodes it starts, changes and ends, and the interval's wait rates. */
  observe(sample: NodeLocksSample): NodeLockEpisodeObservation {
    const atMS = sample.at.getTime()
    const state = this.state(sample.node)
    const groups = waitingGroupsOf(sample.view.blocking)

    // Which open episode each group continues: by root first (over all groups), then by a shared operation.
    const claimed = new Map<Tracked, WaitingGroup>()
    const unmatched = new Set(groups)
    for (const group of groups) {
      const same = state.open.find((t) => !claimed.has(t) && t.rootKey === group.rootKey)
      if (same) {
        claimed.set(same, group)
        unmatched.delete(group)
      }
    }
    for (const group of groups) {
      if (!unmatched.has(group)) continue
      const sharing = state.open.find((t) => !claimed.has(t) && intersects(t.opids, group.opids))
      if (sharing) {
        claimed.set(sharing, group)
        unmatched.delete(group)
      }
    }

    const events: NodeLockEpisodeEvent[] = []
    for (const tracked of state.open) {
      if (claimed.has(tracked)) continue
      const joined = [...claimed].find(([, group]) => intersects(tracked.opids, group.opids))
      events.push(this.end(state, tracked, atMS, joined ? joined[0].episode.id : null))
    }
    state.open = state.open.filter((t) => claimed.has(t))
    for (const [tracked, group] of claimed) {
      const update = this.continueEpisode(tracked, group, atMS)
      if (update) events.push(update)
    }
    for (const group of groups) if (unmatched.has(group)) events.push(this.start(state, sample.node, group, atMS))

    // The node's blocked time: overlapping episodes counted once.
    if (groups.length > 0 && state.blockedSinceMS === null) state.blockedSinceMS = atMS
    if (groups.length === 0 && state.blockedSinceMS !== null) {
      state.blockedMS += Math.max(0, atMS - state.blockedSinceMS)
      state.blockedSinceMS = null
    }
    state.lastPollMS = atMS
    state.polls += 1
    return {events, rates: this.rates(state, sample, atMS)}
  }

  /** Episodes open now (copies), oldest first. */
  openEpisodes(): NodeLockEpisode[] {
    return [...this.nodes.values()].flatMap((s) => s.open.map((t) => structuredClone(t.episode))).sort((a, b) => a.id - b.id)
  }

  /** The --json: episodes (capped), per node totals, wait rates summed per node, resource and mode. */
  summary(): NodeLockEpisodesSummary {
    const nodes: NodeLockEpisodeNodeTotals[] = [...this.nodes].map(([node, s]) => {
      let worst = s.worstClosed
      for (const t of s.open) {
        if (!worst || t.episode.durationMS > worst.durationMS) worst = {id: t.episode.id, durationMS: t.episode.durationMS, rootOpid: t.episode.root?.opid ?? null, open: true}
      }
      const stillBlocked = s.blockedSinceMS !== null && s.lastPollMS !== null ? Math.max(0, s.lastPollMS - s.blockedSinceMS) : 0
      return {
        node,
        polls: s.polls,
        episodes: s.episodes,
        openEpisodes: s.open.length,
        blockedMS: s.blockedMS + stillBlocked,
        worstEpisode: worst ? {...worst} : null,
        rateIntervalMS: s.rateIntervalMS,
        resetIntervals: s.resetIntervals,
      }
    })
    const waitRates: NodeLockWaitRateTotal[] = [...this.rateTotals.values()]
      .map((t) => {
        const seconds = (this.nodes.get(t.node)?.rateIntervalMS ?? 0) / 1000
        return {
          ...t,
          waitsPerSecond: seconds > 0 ? t.waits / seconds : 0,
          waitMicrosPerSecond: seconds > 0 ? t.waitedMicros / seconds : 0,
          meanWaitMicros: t.waits > 0 ? t.waitedMicros / t.waits : null,
        }
      })
      .sort((a, b) => b.waitedMicros - a.waitedMicros || b.waits - a.waits || a.node.localeCompare(b.node) || a.resource.localeCompare(b.resource) || a.mode.localeCompare(b.mode))
    return {
      episodes: structuredClone(this.kept),
      episodesTotal: this.kept.length + this.notKept,
      episodesNotKept: this.notKept,
      maxEpisodesKept: this.maxKept,
      nodes,
      waitRates,
    }
  }

  private state(node: string): NodeState {
    let state = this.nodes.get(node)
    if (!state) {
      state = {lastPollMS: null, polls: 0, open: [], episodes: 0, blockedSinceMS: null, blockedMS: 0, worstClosed: null, rateIntervalMS: 0, resetIntervals: 0}
      this.nodes.set(node, state)
    }
    return state
  }

  private start(state: NodeState, node: string, group: WaitingGroup, atMS: number): NodeLockEpisodeEvent {
    const at = iso(atMS)
    const root = group.root ? episodeRootOf(group.root) : null
    const episode: NodeLockEpisode = {
      id: this.nextId++,
      node,
      firstSeenAt: at,
      previousPollAt: state.lastPollMS === null ? null : iso(state.lastPollMS),
      inProgressAtFirstPoll: state.lastPollMS === null,
      lastSeenAt: at,
      endedAt: null,
      durationMS: 0,
      durationMinMS: 0,
      durationMaxMS: null,
      root,
      roots: [{root, firstSeenAt: at, lastSeenAt: at}],
      peakWaiters: {count: group.waiters.length, at},
      resources: [],
      longestWait: null,
      longestSeenWaiting: null,
      polls: 0,
      lockInfoPolls: 0,
      confirmedByLockInfo: false,
      mergedInto: null,
    }
    const tracked: Tracked = {episode, rootKey: group.rootKey, opids: group.opids, firstSeenMS: atMS, lastSeenMS: atMS, previousPollMS: state.lastPollMS, waiterSpans: new Map()}
    this.record(tracked, group, atMS)
    state.open.push(tracked)
    state.episodes += 1
    if (this.kept.length < this.maxKept) this.kept.push(episode)
    else this.notKept += 1
    return {
      kind: 'episode-start',
      at,
      node,
      episodeId: episode.id,
      root: structuredClone(root),
      waiters: group.waiters.length,
      resources: structuredClone(group.resources),
      previousPollAt: episode.previousPollAt,
      inProgressAtFirstPoll: episode.inProgressAtFirstPoll,
      confirmedByLockInfo: group.lockInfo,
    }
  }

  /** The episode seen again: its root, peak, resources and waits; an event only when the peak or the root changed. */
  private continueEpisode(tracked: Tracked, group: WaitingGroup, atMS: number): NodeLockEpisodeEvent | null {
    const episode = tracked.episode
    const at = iso(atMS)
    const reasons: NodeLockEpisodeUpdateReason[] = []
    const previousRoot = episode.root
    const root = group.root ? episodeRootOf(group.root) : null
    if (group.rootKey !== tracked.rootKey) {
      reasons.push('root-changed')
      episode.roots.push({root, firstSeenAt: at, lastSeenAt: at})
    } else {
      // Same root: its latest state (progress, msg, running time) replaces the older one.
      const span = episode.roots[episode.roots.length - 1]!
      span.root = root
      span.lastSeenAt = at
    }
    // The last blocker that could be seen: when a root lets go, its waiters often show for one poll
    // with no visible blocker before they run, and that moment must not erase who blocked them
    // (roots[] keeps every change, the unseen one included).
    episode.root = root ?? previousRoot
    if (group.waiters.length > episode.peakWaiters.count) {
      reasons.push('peak-waiters')
      episode.peakWaiters = {count: group.waiters.length, at}
    }
    tracked.rootKey = group.rootKey
    tracked.opids = group.opids
    tracked.lastSeenMS = atMS
    episode.lastSeenAt = at
    episode.durationMS = episode.durationMinMS = Math.max(0, atMS - tracked.firstSeenMS)
    this.record(tracked, group, atMS)
    if (reasons.length === 0) return null
    return {
      kind: 'episode-update',
      at,
      node: episode.node,
      episodeId: episode.id,
      root: structuredClone(root),
      reasons,
      waiters: group.waiters.length,
      resources: structuredClone(group.resources),
      ...(reasons.includes('root-changed') ? {previousRoot: structuredClone(previousRoot)} : {}),
    }
  }

  /** What every poll that sees the episode adds: resources, waits, lockInfo's word. */
  private record(tracked: Tracked, group: WaitingGroup, atMS: number): void {
    const episode = tracked.episode
    const at = iso(atMS)
    episode.polls += 1
    if (group.lockInfo) episode.lockInfoPolls += 1
    episode.confirmedByLockInfo = episode.lockInfoPolls > 0
    mergeResources(episode.resources, group.resources)
    for (const {op, atMostMicros} of group.waiters) {
      if (atMostMicros !== null && (episode.longestWait === null || atMostMicros > episode.longestWait.atMostMicros)) {
        episode.longestWait = {opid: op.opid, desc: op.desc, atMostMicros, at}
      }
      const key = opidKey(op.opid)
      const span = tracked.waiterSpans.get(key)
      if (span) span.lastMS = atMS
      else tracked.waiterSpans.set(key, {firstMS: atMS, lastMS: atMS, desc: op.desc, opid: op.opid})
    }
    // A waiter no longer seen has stopped waiting here: only the spans of the waiters present can grow.
    for (const span of tracked.waiterSpans.values()) {
      const atLeastMS = span.lastMS - span.firstMS
      if (episode.longestSeenWaiting === null || atLeastMS > episode.longestSeenWaiting.atLeastMS) {
        episode.longestSeenWaiting = {opid: span.opid, desc: span.desc, atLeastMS}
      }
    }
  }

  private end(state: NodeState, tracked: Tracked, atMS: number, mergedInto: number | null): NodeLockEpisodeEvent {
    const episode = tracked.episode
    episode.endedAt = iso(atMS)
    episode.durationMS = Math.max(0, atMS - tracked.firstSeenMS)
    episode.durationMinMS = Math.max(0, tracked.lastSeenMS - tracked.firstSeenMS)
    episode.durationMaxMS = tracked.previousPollMS === null ? null : Math.max(0, atMS - tracked.previousPollMS)
    episode.mergedInto = mergedInto
    if (!state.worstClosed || episode.durationMS > state.worstClosed.durationMS) {
      state.worstClosed = {id: episode.id, durationMS: episode.durationMS, rootOpid: episode.root?.opid ?? null, open: false}
    }
    return {
      kind: 'episode-end',
      at: episode.endedAt,
      node: episode.node,
      episodeId: episode.id,
      root: structuredClone(episode.root),
      firstSeenAt: episode.firstSeenAt,
      lastSeenAt: episode.lastSeenAt,
      durationMS: episode.durationMS,
      durationMinMS: episode.durationMinMS,
      durationMaxMS: episode.durationMaxMS,
      peakWaiters: {...episode.peakWaiters},
      resources: structuredClone(episode.resources),
      confirmedByLockInfo: episode.confirmedByLockInfo,
      mergedInto,
    }
  }

  /** The view's waits since the node's previous sample, compact, and added to the watch's totals. */
  private rates(state: NodeState, sample: NodeLocksSample, atMS: number): NodeLockWaitRatesRecord | null {
    const rates = sample.view.rates
    if (!rates) return null
    if (rates.reset) state.resetIntervals += 1
    else state.rateIntervalMS += rates.intervalMS
    const rows = rates.rows.map((row) => ({
      resource: row.resource,
      mode: row.mode,
      waits: row.acquireWaitDelta,
      waitedMicros: row.timeAcquiringMicrosDelta,
      waitsPerSecond: row.waitsPerSecond,
      waitMicrosPerSecond: row.waitMicrosPerSecond,
    }))
    for (const row of rows) {
      const key = `${sample.node}\u0000${row.resource}\u0000${row.mode}`
      let total = this.rateTotals.get(key)
      if (!total) this.rateTotals.set(key, (total = {node: sample.node, resource: row.resource, mode: row.mode, waits: 0, waitedMicros: 0}))
      total.waits += row.waits
      total.waitedMicros += row.waitedMicros
    }
    return {kind: 'lock-wait-rates', at: iso(atMS), node: sample.node, intervalMS: rates.intervalMS, reset: rates.reset, rows}
  }
}
