/**
 * `pooltool conns watch` and `conns list`: discover every host from the entry
 * point, poll each over its own connection at a fixed interval, and report
 * samples, alerts and the summary through hooks. Never prints.
 *
 * Rounds start at fixed times (start + k × interval); a round that overruns
 * its slot is followed at once by the next. Each host has the round's deadline
 * (the interval, at least 500 ms; in the first round, which also opens and
 * authenticates every connection, the per-host timeout plus 500 ms, as `conns
 * list` gives its one round) to answer; a host that does not is shown as
 * unreachable for that round and the watch goes on — it comes back as soon as
 * it answers again (a failed host gets a fresh connection every round). The
 * entry node is polled through the address the user gave; two names that
 * answer as one process are polled once (src/conns/same-process.ts). The
 * watch stops after `durationMS` (a last round at the end), after `count`
 * rounds, or when `signal` aborts (Ctrl-C).
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {CONNS_DEFAULTS} from '../defaults.js'
import {stoppedError} from '../errors.js'
import {clockSkewNote} from '../probes/server-clock-skew.js'
import {discoverCluster} from '../probes/discovery.js'
import {connectAddress} from '../probes/topology.js'
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import {AlertEvaluator, type AlertRule} from './alerts.js'
import {CONNS_PURPOSE, connsAppName, resolvedHostReader} from './host-reader.js'
import {connsNotes, routerVersions} from './notes.js'
import {clientLeakVerdicts, clusterHolders} from './cluster-holders.js'
import {heldBy, heldByCluster, neverShrankVerdict} from './never-shrank-advice.js'
import {HostPoller, type PollAnswer} from './poller.js'
import {SameProcess} from './same-process.js'
import {HostTracker} from './summary.js'
import type {ClusterTopology, ConnsAlert, ConnsListResult, ConnsTopologySummary, ConnsWatchResult, HostSample, NeverShrankDetail, RoundSample} from './types.js'

export const MIN_INTERVAL_MS = CONNS_DEFAULTS.minIntervalMS
export const DEFAULT_INTERVAL_MS = CONNS_DEFAULTS.intervalMS
export const DEFAULT_IDLE_WINDOW_MS = CONNS_DEFAULTS.idleWindowMS

export interface WatchOptions {
  intervalMS: number
  durationMS?: number
  /** Poll rounds to run. */
  count?: number
  idleWindowMS: number
  alerts: readonly AlertRule[]
  /** Read holders ($currentOp) every round. */
  holders: boolean
  /** false: poll the URI's hosts only (`--no-discover`). */
  discover?: boolean
}

export interface WatchHooks {
  signal?: AbortSignal
  onTopology?(topology: ClusterTopology): void
  onRound?(round: RoundSample): void
  onAlert?(alert: ConnsAlert): void
  /** A host's pool reached the never-shrank verdict. */
  onNeverShrank?(host: string, detail: NeverShrankDetail): void
  /** A host's clock is off by more than a few seconds (once per host). */
  onClockSkew?(host: string, note: string): void
}

function topologySummary(t: ClusterTopology): ConnsTopologySummary {
  const versions = routerVersions(t)
  return {
    kind: t.kind,
    ...(t.setName === undefined ? {} : {setName: t.setName}),
    sources: t.sources,
    warnings: t.warnings,
    staleRouters: t.staleRouters,
    ...(t.configMongosCount === undefined ? {} : {configMongosCount: t.configMongosCount}),
    ...(t.entry === undefined ? {} : {entry: t.entry}),
    ...(versions === undefined ? {} : {routerVersions: versions}),
    ...(t.replayOf === undefined ? {} : {replayOf: t.replayOf}),
    ...(t.hiddenMembersVisible === undefined ? {} : {hiddenMembersVisible: t.hiddenMembersVisible}),
  }
}

function discover(target: Target, options: {discover?: boolean; signal?: AbortSignal}): Promise<ClusterTopology> {
  return discoverCluster(target, {purpose: CONNS_PURPOSE, ...(options.discover === false ? {discover: false} : {}), ...(options.signal ? {signal: options.signal} : {})})
}

/** Resolves when the signal aborts (never without one); the listener goes with `settled`. */
function abortedOrSettled(signal: AbortSignal | undefined, settled: Promise<unknown>): Promise<unknown> {
  if (!signal) return settled
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done)
      resolve(undefined)
    }
    signal.addEventListener('abort', done, {once: true})
    void settled.finally(done)
  })
}

/**
 * One poller per discovered host, each connecting to the address it is reached at (the user's for the entry
 * node); `hostTimeoutMs` bounds connecting to each (the target's timeout bounds discovery).
 */
function openPollers(target: Target, topology: ClusterTopology, hostTimeoutMs: number, holders: boolean): HostPoller[] {
  const pollerSettings = {appName: connsAppName(target), holders, secrets: target.secrets}
  return topology.hosts.map((entry) => new HostPoller(entry, resolvedHostReader(target, connectAddress(entry), hostTimeoutMs), pollerSettings, topology.hosts))
}

/**
 * The pollers still going, and the merges of names that answered as one process: the alias's poller stops
 * (its close runs on; the end of the run waits for it), the kept row lists the alias.
 */
class Rows {
  readonly active: Set<number>
  private readonly identity = new SameProcess()

  constructor(
    private readonly pollers: readonly HostPoller[],
    private readonly trackers: readonly HostTracker[],
  ) {
    this.active = new Set(pollers.map((_, i) => i))
  }

  /** Merge this round's answers by process; the retired pollers start closing. */
  dedupe(answers: ReadonlyMap<number, PollAnswer>): void {
    const seen = [...answers].flatMap(([index, a]) => (a.ok && a.processKey !== undefined ? [{index, processKey: a.processKey, entry: this.pollers[index]!.entry.entry === true}] : []))
    for (const {kept, alias} of this.identity.merge(seen)) {
      if (!this.active.has(alias)) continue
      this.active.delete(alias)
      const retired = this.trackers[alias]!
      for (const name of [retired.entry.host, ...retired.aliasNames()]) this.trackers[kept]!.addAlias(name)
      void this.pollers[alias]!.close()
    }
  }
}

/**
 * Who holds a host's connections when it is found never to shrink; when the cluster's own pools do,
 * the pool parameters of the first router polled (one getParameter, once per finding).
 */
async function explainNeverShrank(tracker: HostTracker, sample: HostSample, pollers: readonly HostPoller[], rows: Rows, deadlineMS: number): Promise<void> {
  const held = heldBy(sample.holders)
  if (!heldByCluster(held)) {
    tracker.explainNeverShrank(held === undefined ? {} : {heldBy: held})
    return
  }
  const router = [...rows.active].map((i) => pollers[i]!).find((poller) => poller.entry.role === 'mongos')
  if (!router) {
    tracker.explainNeverShrank({heldBy: held})
    return
  }
  // Bounded like a poll: a router that stalls now must not hold the watch.
  const read = await router.readPoolParameters(deadlineMS)
  tracker.explainNeverShrank({heldBy: held, routerPools: {router: router.entry.host, ...read}})
}

/**
 * How long a round waits for each host. The first round opens and authenticates a connection to every host
 * (SCRAM's rounds, the driver's handshake) before it reads: on a loaded client that alone can take longer
 * than an interval, and a host must not be shown unreachable for our own set-up. So it gets the per-host
 * timeout, the bound the driver's own connect and selection already have; later rounds read over an open
 * connection and get the interval.
 */
export function roundDeadlineMs(intervalMS: number, round: {first: boolean; hostTimeoutMs: number}): number {
  const interval = Math.max(intervalMS, 500)
  return round.first ? Math.max(interval, round.hostTimeoutMs + 500) : interval
}

export async function runConnsWatch(target: Target, options: WatchOptions, hooks: WatchHooks = {}): Promise<ConnsWatchResult> {
  const topology = await discover(target, options)
  hooks.onTopology?.(topology)
  const hostTimeoutMs = Math.min(target.connection.timeoutMs, Math.max(1000, 2 * options.intervalMS))
  const deadlineMS = roundDeadlineMs(options.intervalMS, {first: false, hostTimeoutMs})
  const pollers = openPollers(target, topology, hostTimeoutMs, options.holders)
  const trackers = topology.hosts.map((entry) => new HostTracker(entry, options.idleWindowMS))
  const rows = new Rows(pollers, trackers)
  const skewReported = new Set<string>()
  const evaluator = new AlertEvaluator(options.alerts)
  const alerts: ConnsAlert[] = []
  const alertCounts: Record<string, number> = Object.fromEntries(options.alerts.map((rule) => [rule.expression, 0]))
  const startedAt = new Date()
  const start = performance.now()
  let rounds = 0
  let roundMSMax: number | undefined
  let roundMSSum = 0
  try {
    for (;;) {
      if (hooks.signal?.aborted) break
      const roundStart = performance.now()
      const at = new Date().toISOString()
      const polled = [...rows.active]
      const roundDeadline = roundDeadlineMs(options.intervalMS, {first: rounds === 0, hostTimeoutMs})
      const replies = await Promise.all(polled.map((i) => pollers[i]!.poll(roundDeadline)))
      const byIndex = new Map(polled.map((i, k) => [i, replies[k]!]))
      rows.dedupe(byIndex)
      const roundMS = Math.round(performance.now() - roundStart)
      rounds += 1
      roundMSMax = Math.max(roundMSMax ?? roundMS, roundMS)
      roundMSSum += roundMS
      const hosts: HostSample[] = []
      for (const [i, answer] of byIndex) {
        if (!rows.active.has(i)) continue
        const tracker = trackers[i]!
        const {sample, inputs, neverShrankStarted} = tracker.record(answer)
        hosts.push(sample)
        const skew = skewReported.has(sample.host) || topology.replayOf ? undefined : clockSkewNote(sample.host, sample.clockSkewMS)
        if (skew) {
          skewReported.add(sample.host)
          hooks.onClockSkew?.(sample.host, skew)
        }
        for (const alert of evaluator.evaluate(sample.host, inputs, at, rounds)) {
          alerts.push(alert)
          alertCounts[alert.rule] = (alertCounts[alert.rule] ?? 0) + 1
          tracker.countAlert()
          hooks.onAlert?.(alert)
        }
        if (neverShrankStarted) {
          await explainNeverShrank(tracker, sample, pollers, rows, deadlineMS)
          const detail = tracker.summary().neverShrankDetail
          if (detail) hooks.onNeverShrank?.(sample.host, detail)
        }
      }
      const roundHolders = options.holders ? clusterHolders(hosts) : undefined
      hooks.onRound?.({
        round: rounds,
        at,
        elapsedMS: Math.round(roundStart - start),
        roundMS,
        hosts,
        ...(roundHolders ? {clusterHolders: roundHolders, verdicts: clientLeakVerdicts(roundHolders)} : {}),
      })
      if (options.count !== undefined && rounds >= options.count) break
      const nextAt = start + rounds * options.intervalMS
      // Rounds that overrun their slot (a host that stops answering takes the round deadline) must not push the end:
      // the watch stops at --duration by the clock, not after a count of slots.
      if (options.durationMS !== undefined && (nextAt - start > options.durationMS || performance.now() - start >= options.durationMS)) break
      // Until the next round, or less: a stop ends the wait (and is seen at the top of the loop), it is no error here.
      await sleep(Math.max(0, nextAt - performance.now()), undefined, {signal: hooks.signal}).catch(() => {})
    }
  } finally {
    await Promise.all(pollers.map((p) => p.close()))
  }
  const hosts = trackers.filter((_, i) => rows.active.has(i)).map((t) => t.summary())
  const cluster = options.holders ? clusterHolders(hosts) : undefined
  const verdicts = [
    ...(cluster ? clientLeakVerdicts(cluster) : []),
    ...hosts.flatMap((h) => (h.neverShrankDetail ? [neverShrankVerdict(h.host, h.neverShrankDetail)] : [])),
  ]
  return {
    target: targetSummary(target),
    topology: topologySummary(topology),
    intervalMS: options.intervalMS,
    idleWindowMS: options.idleWindowMS,
    startedAt: startedAt.toISOString(),
    durationMS: Math.round(performance.now() - start),
    rounds,
    roundMS: {max: roundMSMax, mean: rounds > 0 ? Math.round((roundMSSum / rounds) * 10) / 10 : undefined},
    hosts,
    alerts,
    alertCounts,
    ...(cluster ? {clusterHolders: cluster} : {}),
    verdicts,
    notes: connsNotes(topology, hosts),
    interrupted: hooks.signal?.aborted === true,
  }
}

/** No host answered (every one unreachable): `conns list` exits 4, the class of an entry point that cannot be reached. */
export function noHostAnswered(result: Pick<ConnsListResult, 'hosts'>): boolean {
  return result.hosts.length > 0 && result.hosts.every((h) => h.state === 'unreachable')
}

/**
 * `conns list`: one round over every host (no rates: they need two polls). Ctrl-C (`signal`) stops it
 * at once, also while a host stalls: during discovery there is nothing to report (an INTERRUPTED
 * error with the stop's exit code); during the round, the hosts that answered are reported, the
 * others named in a note, and their reads abandoned (each client's close is bounded).
 */
export async function runConnsList(target: Target, options: {holders: boolean; discover?: boolean; signal?: AbortSignal}): Promise<ConnsListResult> {
  const {signal} = options
  let topology: ClusterTopology
  try {
    topology = await discover(target, options)
  } catch (error) {
    if (signal?.aborted) throw stoppedError(signal, `stopped while discovering ${target.redactedUri}: no host was read`, 'nothing was measured; run it again (a host that stalls is given up after --timeout-ms)')
    throw error
  }
  // One round, bounded by the user's --timeout-ms (not a shorter cut of our own): a slow link or a loaded
  // client still gets its figures; a name that does not resolve fails at once (the poller looks it up first).
  const hostTimeoutMs = target.connection.timeoutMs
  const pollers = openPollers(target, topology, hostTimeoutMs, options.holders)
  const trackers = topology.hosts.map((entry) => new HostTracker(entry, Number.POSITIVE_INFINITY))
  const rows = new Rows(pollers, trackers)
  const at = new Date().toISOString()
  const start = performance.now()
  try {
    const replies: Array<PollAnswer | undefined> = pollers.map(() => undefined)
    const round = Promise.all(pollers.map((p, i) => p.poll(hostTimeoutMs + 500).then((answer) => (replies[i] = answer))))
    await abortedOrSettled(signal, round)
    const interrupted = signal?.aborted === true && replies.some((answer) => answer === undefined)
    const answered = new Map(replies.flatMap((answer, i) => (answer === undefined ? [] : [[i, answer] as const])))
    rows.dedupe(answered)
    const roundMS = Math.round(performance.now() - start)
    const hosts = [...answered].flatMap(([i, answer]) => {
      if (!rows.active.has(i)) return []
      const {sample} = trackers[i]!.record(answer)
      delete sample.neverShrank
      return [sample]
    })
    const unread = topology.hosts.filter((_, i) => replies[i] === undefined).map((host) => host.host)
    const notes = connsNotes(topology, hosts)
    if (interrupted) notes.push(`stopped before ${unread.length} of ${topology.hosts.length} hosts answered (not listed): ${unread.join(', ')}`)
    const cluster = options.holders ? clusterHolders(hosts) : undefined
    const verdicts = cluster ? clientLeakVerdicts(cluster) : []
    return {target: targetSummary(target), topology: topologySummary(topology), at, roundMS, hosts, ...(cluster ? {clusterHolders: cluster} : {}), verdicts, notes, interrupted}
  } finally {
    await Promise.all(pollers.map((p) => p.close()))
  }
}
