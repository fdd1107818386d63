/**
 * What `pooltool locks list | pings | watch` print for humans (pure: results in, text out).
 *
 * A lock's _id, who, why and process are whatever wrote config.locks: the output layer (fit.ts)
 * escapes their control characters; here they are also kept to one line (terminalLine shows a
 * newline as `\x0a`), so a `why` cannot print what reads as an event line of ours.
 */

import type {LockObservation} from '../bench/lock-observer.js'
import {versionAtLeast} from '../locks/parse.js'
import type {NodeLocksEntry} from '../locks/types.js'
import type {InMemoryView, LockEvent, LockPollFailure, LockRow, LocksListResult, LocksPingsResult, LocksPoll, LocksWatchResult, LockVerdict, NodesPoll} from '../locks/types.js'
import {dateAndTime, LOCAL_TIME, type TimeDisplay, timeOfDay, zoneNote} from './time-of-day.js'
import {terminalLine} from './escape.js'
import {fitTable, fitText, type Layout, UNLIMITED} from './fit.js'
import {formatAgeMs} from './format.js'
import {nodeLockEpisodesSummaryText} from './node-lock-episodes.js'
import {formatMicros, nodeLocksText, opidText, resourceText} from './node-locks.js'
import {Redraw} from './redraw.js'

const VERDICT_TEXT: Record<LockVerdict, string> = {
  free: 'free',
  held: 'held',
  stale: 'STALE: can be overtaken',
  'no-ping': 'no ping: expiry counts only from a would-be acquirer\'s first look',
  balancer: 'balancer (3.4, permanent)',
}

/** The balancer lock is the 3.4 balancer's own on 3.4, and a leftover (by design) on 3.6+. */
function verdictText(verdict: LockVerdict, serverVersion: string): string {
  if (verdict === 'balancer' && versionAtLeast(serverVersion, 3, 6)) return 'balancer: left by 3.4, by design'
  return VERDICT_TEXT[verdict] ?? verdict
}

/** The `since` column: the age of `when`, said as what `when` is for this lock. */
export function sinceText(l: Pick<LockRow, 'sinceAgeMS' | 'whenMeans'>): string {
  if (l.sinceAgeMS === null) return '–'
  const age = formatAgeMs(l.sinceAgeMS)
  switch (l.whenMeans) {
    case 'last-taken':
      return `last taken ${age} ago`
    case 'config-primary':
      return `${age} ago (config primary's grab or step-up)`
    case 'balancer-step-up':
      return `config primary step-up ${age} ago`
    default:
      return `${age} ago`
  }
}

/**
 * What a list says under its table about ConfigServer holders (the config server's process id is the
 * fixed string "ConfigServer": whichever member is primary) and the balancer lock (a 3.4 config primary
 * takes it at step-up; 3.6+ neither takes nor frees it).
 */
function configServerLines(r: LocksListResult): string[] {
  const lines: string[] = []
  const locks = r.locks ?? []
  if (locks.some((l) => l.whenMeans === 'config-primary')) {
    lines.push(
      'ConfigServer is whichever config server member is primary: its locks\' `since` is when that primary took them — the ' +
        "operation's start, or the primary's step-up for a migration lock it re-took; stale or not follows the ConfigServer ping, not this age",
    )
  }
  if (locks.some((l) => l.verdict === 'balancer')) {
    lines.push(
      versionAtLeast(r.serverVersion, 3, 6)
        ? 'the balancer lock was taken by a 3.4 config primary at its step-up; 3.6+ neither takes nor frees it, so a cluster upgraded ' +
            'from 3.4 shows it held by ConfigServer for years: by design, not a finding (the manual says it may be deleted)'
        : 'the 3.4 balancer holds the balancer lock while its config primary runs: `since` is that primary\'s step-up',
    )
  }
  return lines
}

function header(r: {target: {uri: string}; serverVersion: string; message: string}): string {
  // The message may carry a server's names (a replica set's): one line, escaped.
  return `${r.target.uri} · MongoDB ${terminalLine(r.serverVersion)}\n${terminalLine(r.message)}`
}

/** The result's notes, one line each. */
function noteLines(notes: readonly string[]): string[] {
  return notes.map((note) => `note: ${note}`)
}

/** At most n characters as shown: escaped first, so an escaped control character counts its width. */
function truncate(s: string | null, n: number): string {
  if (s === null) return '–'
  const shown = terminalLine(s)
  return shown.length > n ? `${shown.slice(0, n - 1)}…` : shown
}

/** A server's string (lock name, process, who, why) kept to one line; absent: the fallback. */
const one = (s: string | null | undefined, fallback: string): string => (s === null || s === undefined ? fallback : terminalLine(s))

export function renderInMemory(view: InMemoryView, layout: Layout = UNLIMITED): string {
  const lines = [view.note]
  if (view.ddlOps.length > 0) {
    const columns = ['shard', 'opid', 'command', 'namespace', 'running', {head: 'waiting for lock', short: 'waiting'}]
    lines.push(fitTable(columns, view.ddlOps.map((op) => [op.shard ?? op.host ?? '–', op.opid, op.command, op.ns ?? '–', formatAgeMs(op.runningMS), op.waitingForLock ? 'yes' : 'no']), layout))
  }
  const withLocks = view.serverStatusLocks.filter((s) => Object.keys(s.resources ?? {}).length > 0)
  if (withLocks.length > 0) {
    const rows = withLocks.flatMap((s) => Object.entries(s.resources ?? {}).map(([resource, e]) => [s.shard, resource, e.acquireCount, e.acquireWaitCount, `${Math.round(e.timeAcquiringMicros / 1000)}ms`]))
    lines.push(fitTable(['shard', 'resource', 'acquired', 'waited', {head: 'time waiting', short: 'waiting'}], rows, layout))
  }
  for (const s of view.serverStatusLocks) if (s.resources === undefined) lines.push(`${s.shard} (${s.host}): DDL lock entries unknown (${s.unavailable ?? 'serverStatus not read'})`)
  return lines.join('\n')
}

/** How many rows a long list shows before it is summarised (--all shows every one). */
export const LIST_TOP_ROWS = 25

/** Which locks a summarised list shows first: those that need a look, then the longest held. */
const VERDICT_ATTENTION: Record<LockVerdict, number> = {stale: 0, 'no-ping': 1, held: 2, balancer: 3, free: 4}

/** "9,950 free, 40 held, 10 stale": every verdict present, in the order of attention. */
function verdictCounts(locks: readonly LockRow[]): string {
  const counts = new Map<LockVerdict, number>()
  for (const lock of locks) counts.set(lock.verdict, (counts.get(lock.verdict) ?? 0) + 1)
  return [...counts.entries()]
    .sort(([a], [b]) => VERDICT_ATTENTION[a] - VERDICT_ATTENTION[b])
    .map(([verdict, n]) => `${n.toLocaleString('en-US')} ${verdict}`)
    .join(', ')
}

export interface LocksListTextOptions {
  /** Every lock, however many (--all); else a long list shows the LIST_TOP_ROWS that need a look first. */
  all?: boolean
}

/** One node's title: where, what it is, when it was read, and whether lockInfo decided its chains. */
function nodeTitle(n: NodeLocksEntry): string {
  const what = [n.role, n.shard ? `shard ${terminalLine(n.shard)}` : null, n.setName && !n.shard ? `set ${terminalLine(n.setName)}` : null, n.version ? `MongoDB ${terminalLine(n.version)}` : null]
  return `── node ${terminalLine(n.host)} (${what.filter(Boolean).join(', ')})`
}

/**
 * Every node's locks: the blocking tree, waits and tickets (nodeLocksText), or "unknown" with the error
 * when the node could not be read: never "no contention" for a node nobody read.
 */
export function renderNodes(nodes: readonly NodeLocksEntry[], layout: Layout = UNLIMITED): string {
  const blocks: string[] = []
  for (const n of nodes) {
    const lines = [fitText(nodeTitle(n), layout)]
    if (!n.view) {
      lines.push(fitText(`locks unknown: not read (${n.error ? `${n.error.code}: ${terminalLine(n.error.message)}` : 'no reason given'})`, layout))
    } else {
      if (n.lockInfo !== 'read') lines.push(fitText(`lockInfo ${terminalLine(n.lockInfo)}: the chains below are inferred from $currentOp`, layout))
      lines.push(nodeLocksText({...n.view, node: null}, layout))
    }
    blocks.push(lines.join('\n'))
  }
  return blocks.join('\n\n')
}

/** The deployment's worst root blocker first, with how a DBA would end it there (a hint: pooltool never kills). */
export function rootBlockerText(r: Pick<LocksListResult, 'rootBlockers' | 'nodes'>, layout: Layout = UNLIMITED): string {
  const unknown = r.nodes.filter((n) => n.view === null).length
  const unread = unknown > 0 ? ` (${unknown} node(s) unknown: not read)` : ''
  const [first, ...rest] = r.rootBlockers
  // Not one node read (unreachable, refused, or a replay of a snapshot without them): unknown, never "nothing waits".
  if (!first && r.nodes.length > 0 && unknown === r.nodes.length) return fitText(`node locks unknown: none of the ${unknown} node(s) could be read (each listed with why)`, layout)
  if (!first) {
    const waiting = r.nodes.some((n) => (n.view?.blocking.unexplainedWaiters.length ?? 0) > 0)
    const holds = r.nodes.reduce((sum, n) => sum + (n.view?.blocking.holdsThatBlock.length ?? 0), 0)
    const said = waiting ? 'no root blocker found: operations wait with no visible blocker (see the nodes)' : 'no operation waits for a lock on the nodes read'
    const held = holds > 0 ? `; ${holds} operation(s) hold a lock that others will wait for (see the nodes)` : ''
    return fitText(`${said}${held}${unread}`, layout)
  }
  const running = first.runningMicros === null ? '' : `, running ${formatMicros(first.runningMicros)}`
  const lines = [
    `root blocker: opid ${opidText(first.opid)} on ${terminalLine(first.host)} (${first.role}) blocks ${first.waiterCount} operation(s)${running}`,
    // killOp runs on the node named; the other hints say where they run (an index build's dropIndexes: on the primary).
    `  hint: ${first.stopHint === first.killOpHint ? `${first.killOpHint} on ${terminalLine(first.host)}` : terminalLine(first.stopHint)} (pooltool never kills)`,
  ]
  if (rest.length > 0) lines.push(`  ${rest.length} more root blocker(s): see the nodes`)
  if (unread) lines.push(`  ${unread.slice(2, -1)}`)
  return fitText(lines.join('\n'), layout)
}

export function renderLocksList(r: LocksListResult, layout: Layout = UNLIMITED, options: LocksListTextOptions = {}): string {
  const lines = [header(r)]
  // Who blocks whom first, over the whole deployment: what a DBA looks at first.
  if (r.nodes) lines.push(rootBlockerText(r, layout))
  if (r.distributedLocks !== undefined && r.distributedLocks.startsWith('unknown')) lines.push(fitText(`distributed locks ${r.distributedLocks}`, layout))
  if (r.model === 'in-memory' && r.inMemory) lines.push(renderInMemory(r.inMemory, layout))
  if (r.locks !== undefined && (r.model !== 'in-memory' || r.locks.length > 0)) {
    if (r.locks.length === 0) lines.push('no locks match')
    else {
      const summarised = !options.all && r.locks.length > LIST_TOP_ROWS
      const shown = summarised
        ? [...r.locks].sort((a, b) => VERDICT_ATTENTION[a.verdict] - VERDICT_ATTENTION[b.verdict] || (b.sinceAgeMS ?? 0) - (a.sinceAgeMS ?? 0)).slice(0, LIST_TOP_ROWS)
        : r.locks
      if (summarised) lines.push(`${r.locks.length.toLocaleString('en-US')} locks: ${verdictCounts(r.locks)}; the ${LIST_TOP_ROWS} that need a look first (stale, no ping, held longest):`)
      const columns = ['lock', 'state', {head: 'holder', dropOrder: 1}, {head: 'who', dropOrder: 3}, {head: 'why', dropOrder: 4}, 'since', {head: 'holder ping', short: 'ping', dropOrder: 2}, 'verdict']
      const rows = shown.map((l) => [
        terminalLine(l.name),
        l.state,
        truncate(l.holder ?? l.process, 40),
        truncate(l.who, 40),
        truncate(l.why, 48),
        sinceText(l),
        l.holderLastPing ? `${formatAgeMs(l.holderPingAgeMS)} ago` : l.state === 'unlocked' ? '–' : 'none',
        verdictText(l.verdict, r.serverVersion),
      ])
      lines.push(fitTable(columns, rows, layout))
      if (summarised) lines.push(`… and ${(r.locks.length - LIST_TOP_ROWS).toLocaleString('en-US')} more: --all lists every lock, --state and --db narrow the list, --json has every field of every lock`)
      lines.push(...configServerLines(r))
      const stale = r.locks.filter((l) => l.verdict === 'stale').length
      if (stale > 0) lines.push(`${stale} stale lock(s): the holder has not pinged for ${formatAgeMs(r.expiryMS)} or more; the next DDL on them overtakes them once the config server has seen the ping stand still that long`)
    }
  }
  if (r.nodes && r.nodes.length > 0) lines.push('', renderNodes(r.nodes, layout), '')
  lines.push(...noteLines(r.notes))
  return lines.join('\n')
}

/** "a, b, c (+17 more)": a process can hold hundreds of locks. */
function holdsText(holds: readonly string[], shown = 3): string {
  if (holds.length === 0) return '–'
  return holds.length <= shown ? holds.join(', ') : `${holds.slice(0, shown).join(', ')} (+${holds.length - shown} more)`
}

export function renderLocksPings(r: LocksPingsResult, layout: Layout = UNLIMITED, options: LocksListTextOptions = {}): string {
  const lines = [header(r)]
  if (r.pings.length === 0) {
    lines.push(r.model === 'in-memory' ? 'no config.lockpings: nothing pings on this version' : 'config.lockpings is empty')
    lines.push(...noteLines(r.notes))
    return lines.join('\n')
  }
  const summarised = !options.all && r.pings.length > LIST_TOP_ROWS
  const dead = r.pings.filter((p) => !p.alive).length
  // Not alive first (a lock they hold goes stale), then those holding the most.
  const shown = summarised ? [...r.pings].sort((a, b) => Number(a.alive) - Number(b.alive) || b.holds.length - a.holds.length).slice(0, LIST_TOP_ROWS) : r.pings
  if (summarised) lines.push(`${r.pings.length.toLocaleString('en-US')} processes: ${(r.pings.length - dead).toLocaleString('en-US')} alive, ${dead.toLocaleString('en-US')} not; the ${LIST_TOP_ROWS} to look at first (not alive, holding the most):`)
  const rows = shown.map((p) => [terminalLine(p.process), p.role, p.ping ? `${formatAgeMs(p.ageMS)} ago` : '–', p.alive ? 'yes' : 'NO', holdsText(p.holds.map((name) => terminalLine(name)))])
  lines.push(fitTable(['process', 'role', 'last ping', 'alive', 'holds'], rows, layout))
  if (summarised) lines.push(`… and ${(r.pings.length - LIST_TOP_ROWS).toLocaleString('en-US')} more: --all lists every process, --json has each one's every lock`)
  lines.push(`alive = pinged within ${formatAgeMs(3 * r.pingIntervalMS)} (3 ping intervals)`)
  lines.push(...noteLines(r.notes))
  return lines.join('\n')
}

/** " after 12ms–512ms", " after ≤ 500ms (between polls)": a hold is a range, never the poll interval passed off as a figure. */
export function holdText(e: Pick<LockEvent, 'holdMS' | 'holdMinMS' | 'holdBetweenPolls'>): string {
  if (e.holdMS === undefined) return ''
  if (e.holdBetweenPolls) return ` after ≤ ${formatAgeMs(e.holdMS)} (between polls)`
  if (e.holdMinMS !== undefined && e.holdMinMS < e.holdMS) return ` after ${formatAgeMs(e.holdMinMS)}–${formatAgeMs(e.holdMS)}`
  return ` after ${formatAgeMs(e.holdMS)}`
}

/** One event as it happens; `serverVersion` words the balancer lock's verdict (3.4's own, or a 3.4 leftover). */
export function renderLockEvent(e: LockEvent, serverVersion = '', display: TimeDisplay = LOCAL_TIME): string {
  const time = timeOfDay(e.at, display, true)
  const hold = holdText(e)
  const name = terminalLine(e.name)
  const by = one(e.process, '?')
  switch (e.kind) {
    case 'held-at-start': {
      const since = e.since ? ` since ${dateAndTime(e.since, display)}${e.whenMeans === 'balancer-step-up' ? ' (config primary step-up)' : e.whenMeans === 'config-primary' ? " (config primary's grab or step-up)" : ''}` : ''
      return `${time} held      ${name} by ${by}${since} (${e.verdict ? verdictText(e.verdict, serverVersion) : 'running'}${e.why ? `; ${terminalLine(e.why)}` : ''})`
    }
    case 'stale':
      return `${time} stale     ${name}: ${by} has not pinged for the expiry: the next DDL on it can overtake it`
    case 'acquired':
      return `${time} acquired  ${name} by ${by} (${one(e.why, 'no reason')})`
    case 'released':
      return `${time} released  ${name} by ${by}${hold}`
    case 'overtaken':
      return `${time} overtaken ${name}: ${by} took it from ${one(e.previousProcess, '?')}${hold} (${one(e.why, 'no reason')})`
    case 'waiting':
      return `${time} waiting   ${name}: ${one(e.who, '?')} (${one(e.why, '')})`
  }
}

/** One failed poll, as it happens (stderr): the watch goes on. */
export function renderLockPollFailure(f: LockPollFailure, display: TimeDisplay = LOCAL_TIME): string {
  return `${timeOfDay(f.at, display, true)} poll ${f.poll} failed (${f.reason}): ${terminalLine(f.error)}; the watch goes on`
}

/** "3 failed: 2 timeout, 1 unreachable" or "" when every poll answered. */
function failedPollsText(r: LocksWatchResult): string {
  if (r.failedPolls === 0) return ''
  const parts = Object.entries(r.failedPollsByReason)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${n} ${reason}`)
  return ` (${r.failedPolls} failed: ${parts.join(', ')})`
}

/** " (+ 12 follow-up reads of the locks)": the reads between polls that pinned the ends of recent holds. */
function followUpsText(r: LocksWatchResult): string {
  const f = r.followUps
  if (!f || f.reads + f.failed === 0) return ''
  return ` (+ ${f.reads} follow-up read${f.reads === 1 ? '' : 's'} of the locks${f.failed > 0 ? `, ${f.failed} failed` : ''})`
}

/** "3 transition(s), 1 held at start": what the watch found there is not counted as something that happened. */
function transitionsText(r: LocksWatchResult): string {
  // No distributed locks (a standalone, a replica set): the episodes say what happened.
  if (r.events === undefined) return `${formatCountOf(r.nodeEpisodes?.episodesTotal ?? 0)} blocking episode(s)`
  const atStart = r.events.filter((e) => e.kind === 'held-at-start').length
  return `${r.events.length - atStart} transition(s)${atStart > 0 ? `, ${atStart} held at start` : ''}`
}

const formatCountOf = (n: number): string => n.toLocaleString('en-US')

/** Node reads that failed over the watch, per host: their locks were unknown those polls. */
function nodeFailuresText(r: LocksWatchResult): string[] {
  const failed = r.nodePolls?.failedReads ?? 0
  if (failed === 0) return []
  const byHost = Object.entries(r.nodePolls.failedReadsByHost).map(([host, n]) => `${terminalLine(host)} ${n}`)
  return [`node reads that failed (locks unknown those polls): ${failed} (${byHost.join(', ')})`]
}

export function renderLocksWatch(r: LocksWatchResult, layout: Layout = UNLIMITED): string {
  const lines = [
    `${r.polls} polls${failedPollsText(r)} every ${formatAgeMs(r.intervalMS)}${followUpsText(r)} over ${formatAgeMs(r.durationMS)}: ${transitionsText(r)}${r.interrupted ? ' (interrupted)' : ''}`,
  ]
  if (r.distributedLocks !== undefined && r.distributedLocks !== 'read') lines.push(`distributed locks ${terminalLine(r.distributedLocks)}`)
  if (r.nodeEpisodes) lines.push(nodeLockEpisodesSummaryText(r.nodeEpisodes, layout))
  lines.push(...nodeFailuresText(r))
  if (r.locks !== undefined && r.locks.length > 0) {
    // Each hold lies between a lower and an upper bound (its start to the last poll that saw it, and to the first
    // that did not): a percentile is shown as the range its two bounds give, never one figure the interval made.
    const columns = [
      'lock', {head: 'acquired', short: 'acq'}, {head: 'released', short: 'rel'}, {head: 'overtaken', short: 'overt'}, {head: 'hold p50', dropOrder: 2}, 'hold p99', {head: 'hold max', dropOrder: 1},
      {head: 'between polls', short: 'between'},
    ]
    const rows = r.locks.map((l) => {
      const between = l.betweenPolls.count > 0 ? `${l.betweenPolls.count} × ≤ ${formatAgeMs(l.betweenPolls.maxMS)}` : '–'
      const range = (key: 'p50' | 'p99' | 'max') => (l.holdMaxMS?.count ? boundsText(l.holdMinMS?.[key] ?? 0, l.holdMaxMS[key]) : '–')
      return [terminalLine(l.name), l.acquired, l.released, l.overtaken, range('p50'), range('p99'), range('max'), between]
    })
    lines.push(fitTable(columns, rows, layout))
    if (r.locks.some((l) => l.holdMaxMS?.count)) lines.push(HOLD_BOUNDS_LEGEND)
  }
  lines.push(...noteLines(r.notes))
  return lines.join('\n')
}

/** "12ms–480ms": a percentile of the lower bounds, then of the upper (one figure when they agree). */
function boundsText(lower: number, upper: number): string {
  return Math.round(lower) >= Math.round(upper) ? formatAgeMs(upper) : `${formatAgeMs(lower)}–${formatAgeMs(upper)}`
}

export const HOLD_BOUNDS_LEGEND =
  'hold p50/p99/max: the percentile of every hold\'s lower bound (its start to the last poll that saw it held; 0 when no poll saw it) – ' +
  'the same percentile of the upper bounds (to the first poll that saw it free, or the next holder\'s start): the holds\' own lies between'

/** One line for `bench --workload ddl` on a sharded cluster. */
export function renderLockObservation(o: LockObservation): string {
  const h = o.holdMS
  const holds = h.count > 0 ? `hold p50 ${formatAgeMs(h.p50)}, p99 ${formatAgeMs(h.p99)}, max ${formatAgeMs(h.max)} over ${h.count} release(s)` : 'no release seen'
  return `LockBusy ${o.lockBusy}, ConflictingOperationInProgress ${o.conflictingOperationInProgress}; ${o.acquisitions} acquisition(s) seen in ${o.model} (${o.polls} polls): ${holds}`
}

/** Events kept under a live view's table. */
const LIVE_EVENTS_SHOWN = 8

/**
 * `locks watch` on a terminal: the locks held now with their verdicts, redrawn in place each poll,
 * the latest events under them (failed polls among them). Off a terminal the events are lines.
 */
export class LocksLiveView {
  private readonly redraw = new Redraw()
  private readonly recent: string[] = []
  private eventCount = 0
  private last?: LocksPoll
  private nodesPoll?: NodesPoll

  constructor(
    private readonly header: string,
    private readonly serverVersion: string,
    private readonly display: TimeDisplay = LOCAL_TIME,
  ) {}

  poll(poll: LocksPoll): void {
    this.last = poll
  }

  /** The poll's node reads: one line per node under the distributed locks (or alone, where none apply). */
  nodes(poll: NodesPoll): void {
    this.nodesPoll = poll
  }

  event(line: string): void {
    this.eventCount += 1
    this.recent.push(line)
    if (this.recent.length > LIVE_EVENTS_SHOWN) this.recent.shift()
  }

  frame(layout: Layout = UNLIMITED): string {
    return this.redraw.frame(this.body(layout), layout)
  }

  private body(layout: Layout): string {
    const lines = [this.header]
    const poll = this.last
    if (!poll) {
      if (this.nodesPoll) lines.push(`poll ${this.nodesPoll.poll} · Ctrl-C for the summary`, ...liveNodeLines(this.nodesPoll.nodes))
      else lines.push('waiting for the first poll…')
      return [...lines, ...this.eventLines()].join('\n')
    }
    lines.push(`poll ${poll.poll} at ${timeOfDay(poll.at, this.display)} (${zoneNote(this.display, new Date(poll.at))}) · Ctrl-C for the summary`)
    if (poll.held === undefined) lines.push(`${poll.ddlRunning ?? 0} DDL operation(s) running`)
    else if (poll.held.length === 0) lines.push('no lock held')
    else {
      const shown = [...poll.held].sort((a, b) => VERDICT_ATTENTION[a.verdict] - VERDICT_ATTENTION[b.verdict] || (b.sinceAgeMS ?? 0) - (a.sinceAgeMS ?? 0)).slice(0, LIST_TOP_ROWS)
      const columns = ['lock', {head: 'holder', dropOrder: 2}, {head: 'why', dropOrder: 3}, 'since', {head: 'holder ping', short: 'ping', dropOrder: 1}, 'verdict']
      const rows = shown.map((l) => [
        terminalLine(l.name),
        truncate(l.holder ?? l.process, 40),
        truncate(l.why, 40),
        sinceText(l),
        l.holderLastPing ? `${formatAgeMs(l.holderPingAgeMS)} ago` : 'none',
        verdictText(l.verdict, this.serverVersion),
      ])
      lines.push(`${poll.held.length} held${poll.held.length > shown.length ? ` (the ${shown.length} to look at first)` : ''}:`, fitTable(columns, rows, layout))
    }
    if (this.nodesPoll) lines.push(...liveNodeLines(this.nodesPoll.nodes))
    return [...lines, ...this.eventLines()].join('\n')
  }

  private eventLines(): string[] {
    if (this.recent.length === 0) return []
    return [`events (${this.eventCount}${this.eventCount > this.recent.length ? `, latest ${this.recent.length}` : ''}):`, ...this.recent.map((line) => `  ${line}`)]
  }
}

/** One line per node for the live view: its root blocker and waiters now, or why it is unknown. */
export function liveNodeLines(nodes: readonly NodeLocksEntry[]): string[] {
  return nodes.map((n) => {
    const name = `${terminalLine(n.host)} (${n.role})`
    if (!n.view) return `${name}: unknown (${n.error ? terminalLine(n.error.message) : 'not read'})`
    const chains = n.view.blocking.chains
    const unexplained = n.view.blocking.unexplainedWaiters.length
    const hold = n.view.blocking.holdsThatBlock[0]
    const held = hold ? ` · opid ${opidText(hold.operation.opid)} holds ${hold.mode} on ${resourceText(hold.resource)}` : ''
    if (chains.length === 0 && unexplained === 0) return `${name}: no operation waits${held}`
    const worst = [...chains].sort((a, b) => b.waiterCount - a.waiterCount)[0]
    const root = worst ? `root blocker opid ${opidText(worst.root.operation.opid)} blocks ${worst.waiterCount}` : null
    const waiting = unexplained > 0 ? `${unexplained} waiting with no visible blocker` : null
    return `${name}: ${[root, waiting].filter(Boolean).join(' · ')}`
  })
}
