/**
 * What the HTML reports of the watches draw (pure):
 * - conns watch: each host's `current` and created/s per round on the servers' clock, its connections
 *   stacked by holder, the alerts where they fired, the verdicts and advice the watch gave;
 * - locks watch: each lock's holds as bars on one time axis, from the events (a hold runs from the
 *   lock's `when` to its release; one still held at the end runs to the end; one taken and freed
 *   between two polls is only its bound, drawn apart);
 * - locks watch on a node (any topology): each blocking episode as a bar in its node's and
 *   resource's lane, from the first poll that saw it to the first that did not (still open at the
 *   end: striped, to the end), in the same LockTimeline shape, so the same renderer draws both.
 */
import type {ConnsAlert, ConnsWatchResult, Holder, RoundSample} from '../conns/types.js'
import type {NodeLockEpisode} from '../locks/node/types.js'
import type {LockEvent, LockModel, LocksWatchResult} from '../locks/types.js'
import {timeOfDay, type TimeDisplay} from '../reporters/time-of-day.js'
import {renderNeverShrank} from '../reporters/conns.js'
import {opidText} from '../reporters/node-locks.js'

/** One holder's connections on one host, round by round (null: the host's holders were not read that round). */
export interface HolderSeries {
  /** "checkout-svc@10.0.0.5 (nodejs)". */
  label: string
  /** pooltool's own polling connections. */
  own: boolean
  counts: Array<number | null>
}

export interface ConnsReportData {
  title: string
  sources: string[]
  /** Seconds from the first round. */
  tS: number[]
  /**
   * Each round on the servers' clock, ms since the epoch: the round's start (this machine's clock) plus the
   * median clock skew (serverStatus localTime) of the hosts that answered it. The charts' x axis.
   */
  clockMS: number[]
  /** The zone the page shows times of day in: this machine's (an IANA name) or UTC (--utc). */
  timeZone: string
  /** What the page says of its times: "UTC" or "Europe/Berlin, UTC+01:00". */
  zoneText: string
  hosts: Array<{
    host: string
    role: string
    current: Array<number | null>
    createdPerSec: Array<number | null>
    neverShrank: boolean
    /** An earlier host whose `current` is this one's, round for round: drawn dashed over it, and said. */
    sameAs?: string
    /** Who held its connections, round by round: the biggest holders (at their peak), the rest as one. */
    holders: HolderSeries[]
  }>
  /** `at`: time of day on the servers' clock, in the page's zone. */
  alerts: Array<{tS: number; at: string; host: string; rule: string; value: number}>
  /** What the watch concluded: its never-shrank lines, then any verdicts the result carries. */
  verdicts: string[]
  /** The advice the result carries (each a line). */
  advice: string[]
}

/** Holders drawn apart per host; the others are summed into one band. */
export const HOLDERS_SHOWN = 8

const holderLabel = (h: Holder): string => (h.own ? `pooltool conns (this watch)@${h.client}` : `${h.appName}@${h.client} (${h.driver})`)

/** The median of what is known (0 when nothing is). */
function median(values: readonly number[]): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** A verdict or an advice line, whatever its shape: a string, or an object's text, advice and evidence fields. */
function sentence(item: unknown): string {
  if (typeof item === 'string') return item
  if (item === null || typeof item !== 'object') return String(item)
  const o = item as Record<string, unknown>
  const first = (...keys: string[]) => keys.map((k) => o[k]).find((v) => typeof v === 'string' && v !== '') as string | undefined
  const text = first('text', 'verdict', 'message', 'summary', 'title', 'line')
  const advice = first('advice', 'fix')
  const evidence = first('evidence')
  const parts = [text, advice === text ? undefined : advice, evidence === undefined ? undefined : `evidence: ${evidence}`].filter((p) => p !== undefined)
  return parts.length > 0 ? parts.join(' — ') : JSON.stringify(item)
}

const sentences = (value: unknown): string[] => (Array.isArray(value) ? value.map(sentence) : [])

/** Each host's holders round by round: the HOLDERS_SHOWN biggest at their peak, the rest summed as "other holders". */
function holderSeries(samples: ReadonlyArray<RoundSample['hosts'][number] | undefined>): HolderSeries[] {
  const rounds = samples.map((s) => (s?.state === 'ok' && s.holders !== undefined ? new Map(s.holders.map((h) => [holderLabel(h), h])) : undefined))
  const peak = new Map<string, {own: boolean; max: number}>()
  for (const round of rounds) {
    for (const [label, h] of round ?? []) {
      const p = peak.get(label)
      peak.set(label, {own: h.own === true, max: Math.max(p?.max ?? 0, h.count)})
    }
  }
  const ranked = [...peak].sort((a, b) => b[1].max - a[1].max || a[0].localeCompare(b[0]))
  const shown = ranked.slice(0, HOLDERS_SHOWN)
  const rest = new Set(ranked.slice(HOLDERS_SHOWN).map(([label]) => label))
  const series: HolderSeries[] = shown.map(([label, p]) => ({label, own: p.own, counts: rounds.map((round) => (round === undefined ? null : (round.get(label)?.count ?? 0)))}))
  if (rest.size > 0) {
    series.push({
      label: `${rest.size} other holders`,
      own: false,
      counts: rounds.map((round) => (round === undefined ? null : [...round].filter(([label]) => rest.has(label)).reduce((sum, [, h]) => sum + h.count, 0))),
    })
  }
  return series
}

/** The zone said on the page: "UTC", or "Europe/Berlin, UTC+01:00" at `at`. */
function zoneText(timeZone: string, at: Date): string {
  if (timeZone === 'UTC') return 'UTC'
  const offset = new Intl.DateTimeFormat('en-US', {timeZone, timeZoneName: 'longOffset'}).formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT'
  return `${timeZone}, UTC${offset === 'GMT' ? '+00:00' : offset.slice(3)}`
}

/**
 * From the rounds the watch printed (collected as they came) and its summary. `display`: the watch's
 * clock for times of day (--utc or local); the page says which.
 */
export function connsReportData(result: ConnsWatchResult, rounds: readonly RoundSample[], display: TimeDisplay = {}): ConnsReportData {
  const start = rounds.length > 0 ? Date.parse(rounds[0]!.at) : Date.parse(result.startedAt)
  const seconds = (iso: string) => (Date.parse(iso) - start) / 1000
  // The servers' clock for each round: this machine's, moved by the skew the hosts answered with.
  const skews = rounds.map((round) => median(round.hosts.flatMap((h) => (h.state === 'ok' && typeof h.clockSkewMS === 'number' && Number.isFinite(h.clockSkewMS) ? [h.clockSkewMS] : []))))
  const clockMS = rounds.map((round, i) => Date.parse(round.at) + skews[i]!)
  const roundOf = new Map(rounds.map((round, i) => [round.round, i]))
  const timeZone = display.timeZone ?? new Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC'
  const hostNames = [...new Set(rounds.flatMap((round) => round.hosts.map((h) => h.host)))]
  const summaries = new Map(result.hosts.map((h) => [h.host, h]))
  const hosts: ConnsReportData['hosts'] = hostNames.map((host) => {
    const samples = rounds.map((round) => round.hosts.find((h) => h.host === host))
    const summary = summaries.get(host)
    return {
      host,
      role: summary?.role ?? samples.find((s) => s !== undefined)?.role ?? '',
      current: samples.map((s) => (s?.state === 'ok' && s.current !== undefined ? s.current : null)),
      createdPerSec: samples.map((s) => s?.totalCreatedRatePerSec ?? null),
      neverShrank: summary?.neverShrank === true,
      holders: holderSeries(samples),
    }
  })
  // A host drawn exactly over another would hide it: it is said, and drawn dashed on top.
  hosts.forEach((h, i) => {
    const twin = hosts.slice(0, i).find((other) => other.current.some((v) => v !== null) && other.current.every((v, r) => v === h.current[r]))
    if (twin) h.sameAs = twin.host
  })
  const extra = result as ConnsWatchResult & {verdicts?: unknown; advice?: unknown}
  const neverShrank = result.hosts.flatMap((h) => (h.neverShrank && h.neverShrankDetail ? [renderNeverShrank(h.host, h.neverShrankDetail)] : []))
  const alertClock = (alert: ConnsAlert) => {
    const i = roundOf.get(alert.round)
    const skew = i === undefined ? 0 : (rounds[i]!.hosts.find((h) => h.host === alert.host)?.clockSkewMS ?? skews[i]!)
    return new Date(Date.parse(alert.at) + skew).toISOString()
  }
  return {
    title: `pooltool conns watch · ${result.target.uri}`,
    sources: [
      `${result.rounds} rounds every ${result.intervalMS} ms from ${result.startedAt}; ${result.hosts.length} hosts`,
      `times of day on the servers' clock (each round: this machine's clock plus the hosts' median clock skew), ${zoneText(timeZone, new Date(clockMS[0] ?? start))}`,
    ],
    tS: rounds.map((round) => seconds(round.at)),
    clockMS,
    timeZone,
    zoneText: zoneText(timeZone, new Date(clockMS[0] ?? start)),
    hosts,
    alerts: result.alerts.map((alert) => ({tS: seconds(alert.at), at: timeOfDay(alertClock(alert), {timeZone}), host: alert.host, rule: alert.rule, value: alert.value})),
    verdicts: [...neverShrank, ...sentences(extra.verdicts)],
    advice: sentences(extra.advice),
  }
}

export interface LockHold {
  /** Seconds from the watch's start, on the server's clock. */
  fromS: number
  toS: number
  /** Still held when the watch ended. */
  open: boolean
  /** Taken and freed between two polls: only bounded. */
  betweenPolls: boolean
  holder: string
}

export interface LocksReportData extends LockTimeline {
  title: string
  sources: string[]
}

/** Each lock's holds on one time axis, from transitions in the order they happened. */
export interface LockTimeline {
  /** The time axis: seconds from the first event to the end. */
  endS: number
  locks: Array<{name: string; holds: LockHold[]}>
}

/** A hold not yet released: since when, and by whom. */
interface OpenHold {
  at: number
  holder: string
}

/**
 * Which of a lock's holds an event starts or ends. A config.locks lock has one holder at a time, so
 * the lock has one (the key is constant). On 6.1+ each DDL operation holds its namespace, and several
 * can at once (a coordinator and its participants on other shards): the operation (`who`,
 * host:opid) says which.
 */
const holdKey = (model: LockModel, e: LockEvent): string => (model === 'in-memory' ? `${e.who ?? ''}` : '')

/**
 * Holds per lock from lock events (locks watch's, or those bench's lock observer saw during a ddl
 * run), in the order the locks first appear; `durationMS`: how long the watching lasted.
 */
export function lockTimeline(unsorted: readonly LockEvent[], durationMS: number, model: LockModel): LockTimeline {
  const events = [...unsorted].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
  // The axis starts with the watch (its first event); a hold taken before is drawn from there.
  const firstAt = Math.min(...events.map((e) => Date.parse(e.at)))
  const start = Number.isFinite(firstAt) ? firstAt : 0
  const endAt = Math.max(start + durationMS, ...events.map((e) => Date.parse(e.at)))
  const s = (ms: number) => Math.max(0, (ms - start) / 1000)
  const byLock = new Map<string, {holds: LockHold[]; open: Map<string, OpenHold>}>()
  const lock = (name: string) => {
    let entry = byLock.get(name)
    if (!entry) byLock.set(name, (entry = {holds: [], open: new Map()}))
    return entry
  }
  const close = (entry: {holds: LockHold[]; open: Map<string, OpenHold>}, e: LockEvent) => {
    const at = Date.parse(e.at)
    const key = holdKey(model, e)
    const held = entry.open.get(key)
    if (e.holdBetweenPolls) entry.holds.push({fromS: s(at - (e.holdMS ?? 0)), toS: s(at), open: false, betweenPolls: true, holder: e.process ?? '?'})
    else if (held) entry.holds.push({fromS: s(held.at), toS: s(held.at + (e.holdMS ?? at - held.at)), open: false, betweenPolls: false, holder: held.holder})
    entry.open.delete(key)
  }
  for (const e of events) {
    const entry = lock(e.name)
    const at = Date.parse(e.at)
    switch (e.kind) {
      case 'held-at-start':
        entry.open.set(holdKey(model, e), {at: e.since ? Date.parse(e.since) : at, holder: e.process ?? '?'})
        break
      case 'acquired':
        entry.open.set(holdKey(model, e), {at, holder: e.process ?? '?'})
        break
      case 'released':
        close(entry, e)
        break
      case 'overtaken':
        close(entry, {...e, process: e.previousProcess ?? null})
        entry.open.set(holdKey(model, e), {at, holder: e.process ?? '?'})
        break
      case 'stale':
      case 'waiting':
        break
    }
  }
  for (const entry of byLock.values()) {
    for (const held of entry.open.values()) entry.holds.push({fromS: s(held.at), toS: s(endAt), open: true, betweenPolls: false, holder: held.holder})
  }
  return {endS: s(endAt), locks: [...byLock.entries()].map(([name, entry]) => ({name, holds: entry.holds}))}
}

/** The locks watch report: its holds per lock. */
export function locksReportData(result: LocksWatchResult): LocksReportData {
  const model = result.model === undefined ? result.topology : result.model
  // The distributed locks' holds (a sharded cluster), then the nodes' blocking episodes, each lane on one axis from
  // the watch's start (the episodes on their nodes' clocks).
  const distributed = result.events === undefined ? undefined : lockTimeline(result.events, result.durationMS, result.model ?? 'config.locks')
  const episodes = result.nodeEpisodes && result.nodeEpisodes.episodes.length > 0 ? nodeLockEpisodeTimeline(result.nodeEpisodes.episodes, {startAt: result.startedAt, endAt: new Date(Date.parse(result.startedAt) + result.durationMS).toISOString()}) : undefined
  return {
    title: `pooltool locks watch · ${result.target.uri}`,
    sources: [`${result.polls} polls every ${result.intervalMS} ms over ${(result.durationMS / 1000).toFixed(1)} s; MongoDB ${result.serverVersion} (${model})`],
    endS: Math.max(distributed?.endS ?? 0, episodes?.endS ?? 0, result.durationMS / 1000),
    locks: [...(distributed?.locks ?? []), ...(episodes?.locks ?? [])],
  }
}

/** The lane of an episode: its node and the resource its first waiters wait on (the root's own lock). */
function episodeLane(e: NodeLockEpisode): string {
  const r = e.resources[0]
  const resource = r === undefined ? 'resource unknown' : r.name === null ? r.type : `${r.type} ${r.name}`
  return `${e.node} · ${resource}`
}

/** "opid 4711 conn12 createIndexes test.orders · peak 2 waiters · 5.0 s (4.0–6.0 s)": what hovering a bar tells. */
function episodeHolder(e: NodeLockEpisode): string {
  const root = e.root
  const who = root === null ? 'no visible blocker' : ['opid', opidText(root.opid), root.desc, root.appName ? `app ${root.appName}` : null, root.commandName ?? root.op, root.ns].filter((p) => p !== null && p !== '').join(' ')
  const seconds = (ms: number) => (ms / 1000).toFixed(1)
  const length =
    e.endedAt === null
      ? `open, ${seconds(e.durationMS)} s so far`
      : e.durationMaxMS === null
        ? `${seconds(e.durationMS)} s (at least ${seconds(e.durationMinMS)} s; began before the watch)`
        : `${seconds(e.durationMS)} s (${seconds(e.durationMinMS)}–${seconds(e.durationMaxMS)} s)`
  const rootChanges = e.roots.length > 1 ? ` · ${e.roots.length} roots in turn` : ''
  return `${who} · peak ${e.peakWaiters.count} waiter${e.peakWaiters.count === 1 ? '' : 's'} · ${length}${rootChanges}`
}

/**
 * Blocking episodes as a LockTimeline: one lane per node and resource, one bar per episode. The axis
 * runs from `startAt` (the watch's first poll; default the first episode) to `endAt` (its last poll;
 * default the last time an episode was seen). Each node's times are its own clock: on one axis, nodes
 * whose clocks differ are off by that difference (a server's clock, not this machine's, dates the waits).
 */
export function nodeLockEpisodeTimeline(episodes: readonly NodeLockEpisode[], window: {startAt?: string; endAt?: string} = {}): LockTimeline {
  const sorted = [...episodes].sort((a, b) => a.id - b.id)
  const firstSeen = Math.min(...sorted.map((e) => Date.parse(e.firstSeenAt)))
  const start = window.startAt ? Date.parse(window.startAt) : Number.isFinite(firstSeen) ? firstSeen : 0
  const lastSeen = Math.max(start, ...sorted.map((e) => Date.parse(e.endedAt ?? e.lastSeenAt)))
  const end = window.endAt ? Math.max(Date.parse(window.endAt), start) : lastSeen
  const s = (ms: number) => Math.max(0, (ms - start) / 1000)
  const lanes = new Map<string, LockHold[]>()
  for (const e of sorted) {
    const name = episodeLane(e)
    const holds = lanes.get(name) ?? []
    lanes.set(name, holds)
    const open = e.endedAt === null
    // An open episode lasts, as far as anyone knows, to the end of the watch.
    holds.push({fromS: s(Date.parse(e.firstSeenAt)), toS: open ? s(end) : s(Date.parse(e.endedAt!)), open, betweenPolls: false, holder: episodeHolder(e)})
  }
  return {endS: s(end), locks: [...lanes].map(([name, holds]) => ({name, holds}))}
}
