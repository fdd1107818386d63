/**
 * What `locks watch` prints of blocking episodes on a node (pure: events in, lines out): one line
 * per event for the plain watch and the live view's latest events, one per interval's lock waits,
 * and the summary's per-node totals.
 *
 * Each event is ONE line that fits the width: a line of a stream must not wrap into what reads as
 * the next event. What is cut when it does not fit, in order: the root's detail (desc, app, command,
 * namespace, resource), then the node's name, then the line's end. Every string a server or client
 * sent (desc, appName, ns, command name, resource names, the node label) is kept to one line with
 * terminalLine, so an appName cannot carry a newline that prints a fake event, or an escape code.
 */
import stringWidth from 'string-width'

import {modeName} from '../locks/node/modes.js'
import type {NodeLockEpisodeEvent, NodeLockEpisodeResource, NodeLockEpisodeRoot, NodeLockEpisodesSummary, NodeLockWaitRatesRecord} from '../locks/node/types.js'
import {LOCAL_TIME, type TimeDisplay, timeOfDay} from './time-of-day.js'
import {terminalLine} from './escape.js'
import {fitTable, fitText, type Layout, UNLIMITED} from './fit.js'
import {formatAgeMs, formatCount} from './format.js'
import {formatMicros, opidText} from './node-locks.js'

/**
 * A part of a line. `cut` set: it may be cut (with "…") down to `cut.minWidth` when the line is too
 * wide, parts with the lower `cut.rank` first.
 */
interface LinePart {
  text: string
  cut?: {rank: number; minWidth: number; whole?: boolean}
  /** Shown as " (text)", and not at all once cut to nothing: a cut never leaves a parenthesis open. */
  parenthesised?: boolean
}

const shown = (p: LinePart): string => (p.parenthesised ? (p.text === '' ? '' : ` (${p.text})`) : p.text)

/** Cut first: the root's detail, the resources of a rates line. */
const DETAIL = {rank: 0, minWidth: 0}
/** Dropped whole, first: what another line says too (an end's peak: the start and PEAK lines; "already at the first poll": the end's "began before the watch"). */
const ALSO_SAID = {rank: 0, minWidth: 0, whole: true}
/** Cut next: the node's name, never below what still tells nodes apart in most deployments. */
const NODE = {rank: 1, minWidth: 12}

/** `text` cut to at most `width` columns, "…" marking the cut. */
function cutTo(text: string, width: number): string {
  if (stringWidth(text) <= width) return text
  if (width <= 0) return ''
  let out = ''
  for (const char of text) {
    if (stringWidth(out + char) > width - 1) break
    out += char
  }
  return `${out}…`
}

/** The parts joined in their order, cut (lowest rank first) until the line fits `width`; last resort, the line's end is cut. */
function fitParts(parts: LinePart[], width: number): string {
  const line = () => parts.map(shown).join('')
  if (!Number.isFinite(width)) return line()
  const cuttable = parts.filter((p) => p.cut !== undefined).sort((a, b) => a.cut!.rank - b.cut!.rank)
  for (const part of cuttable) {
    const excess = stringWidth(line()) - width
    if (excess <= 0) break
    const room = Math.max(part.cut!.minWidth, stringWidth(part.text) - excess)
    // A parenthesis of a word or two is noise: below that, the detail goes whole.
    part.text = part.cut!.whole || (part.parenthesised && room < 6) ? '' : cutTo(part.text, room)
  }
  return cutTo(line(), width)
}

const one = (s: string | null | undefined): string | null => (s === null || s === undefined || s === '' ? null : terminalLine(s))
const waitersText = (n: number): string => `${n} waiter${n === 1 ? '' : 's'}`

/**
 * "Collection test.orders X" (the mode the root itself holds or wants there; the modes blockers had,
 * when the root's own is not known) or "Global IX wanted" (what waiters with no visible blocker want).
 */
function resourceText(r: NodeLockEpisodeResource | undefined, root: NodeLockEpisodeRoot | null): string | null {
  if (!r) return null
  const name = r.name === null ? terminalLine(r.type) : `${terminalLine(r.type)} ${terminalLine(r.name)}`
  if (root === null) return r.waiterModes.length === 0 ? name : `${name} ${r.waiterModes.join('/')} wanted`
  const own = modeName(root.locks[r.type])
  const modes = own === null ? r.blockerModes : [own]
  return modes.length === 0 ? name : `${name} ${modes.join('/')}`
}

/** "conn12 app orders-api createIndexes test.orders 45%": who the root is and what it does (never the command's values). */
function rootDetail(root: NodeLockEpisodeRoot): string {
  const what = one(root.commandName) ?? one(root.op)
  const progress = root.progress && root.progress.total > 0 ? `${Math.floor((100 * root.progress.done) / root.progress.total)}%` : null
  const app = root.appName ? `app ${terminalLine(root.appName)}` : null
  return [one(root.desc), app, what, one(root.ns), progress].filter((p): p is string => p !== null).join(' ')
}

/** The parts after the node that name the episode's root: "opid 4711 (detail, resource)" or "no visible blocker". */
function rootParts(root: NodeLockEpisodeRoot | null, resources: readonly NodeLockEpisodeResource[], waiters: number): LinePart[] {
  if (root === null) {
    const wanted = resourceText(resources[0], null)
    return [{text: `no visible blocker: ${waitersText(waiters)} wait${waiters === 1 ? 's' : ''}`}, ...(wanted ? [{text: wanted, cut: DETAIL, parenthesised: true}] : [])]
  }
  const detail = [rootDetail(root), resourceText(resources[0], root)].filter((p) => p !== null && p !== '').join(', ')
  return [
    {text: `opid ${opidText(root.opid)}`},
    {text: detail, cut: DETAIL, parenthesised: true},
    {text: ` blocks ${waitersText(waiters)}${root.waiting ? ', itself waiting' : ''}`},
  ]
}

const LABEL_WIDTH = 9

/** One event, one line: "12:00:03 BLOCKING  rs0/host:27017 opid 4711 (conn12 createIndexes test.orders, Collection test.orders X) blocks 2 waiters". */
export function nodeLockEpisodeEventText(event: NodeLockEpisodeEvent, layout: Layout = UNLIMITED, display: TimeDisplay = LOCAL_TIME): string {
  const head = (label: string): LinePart[] => [{text: `${timeOfDay(event.at, display)} ${label.padEnd(LABEL_WIDTH)} `}, {text: terminalLine(event.node), cut: NODE}, {text: ' '}]
  switch (event.kind) {
    case 'episode-start': {
      const parts = [...head('BLOCKING'), ...rootParts(event.root, event.resources, event.waiters)]
      if (event.inProgressAtFirstPoll) parts.push({text: ' (already at the first poll)', cut: ALSO_SAID})
      return fitParts(parts, layout.width)
    }
    case 'episode-update': {
      const rootChanged = event.reasons.includes('root-changed')
      const parts = [...head(rootChanged ? 'NEW ROOT' : 'PEAK'), ...rootParts(event.root, event.resources, event.waiters)]
      if (rootChanged) parts.push({text: ` (was ${event.previousRoot ? opidText(event.previousRoot.opid) : 'unseen'})`})
      return fitParts(parts, layout.width)
    }
    case 'episode-end': {
      const who = event.root === null ? 'no visible blocker' : `opid ${opidText(event.root.opid)}`
      const bounds =
        event.durationMaxMS === null
          ? `at least ${formatAgeMs(event.durationMinMS)}; began before the watch`
          : `${formatAgeMs(event.durationMinMS)}–${formatAgeMs(event.durationMaxMS)}`
      const merged = event.mergedInto === null ? '' : `; its waiters joined episode ${event.mergedInto}`
      const parts = [
        ...head('UNBLOCKED'),
        {text: `${who} after ${formatAgeMs(event.durationMS)} (${bounds})`},
        {text: `, peak ${waitersText(event.peakWaiters.count)}`, cut: ALSO_SAID},
        {text: merged},
      ]
      return fitParts(parts, layout.width)
    }
  }
}

/**
 * One interval's lock waits on a node, one line ("12:00:04 WAITS     node Collection W 3 (1.2s), Global w 1 (5ms)
 * over 1.0s"); null when nothing waited (a plain watch prints no line for a quiet interval).
 */
export function nodeLockWaitRatesText(record: NodeLockWaitRatesRecord, layout: Layout = UNLIMITED, display: TimeDisplay = LOCAL_TIME): string | null {
  const head: LinePart[] = [{text: `${timeOfDay(record.at, display)} ${'WAITS'.padEnd(LABEL_WIDTH)} `}, {text: terminalLine(record.node), cut: NODE}, {text: ' '}]
  if (record.reset) return fitParts([...head, {text: 'counters went down (the server restarted): no rates this interval'}], layout.width)
  if (record.rows.length === 0) return null
  const rows = record.rows.map((row) => `${terminalLine(row.resource)} ${terminalLine(row.mode)} ${formatCount(row.waits)} (${formatMicros(row.waitedMicros)})`).join(', ')
  return fitParts([...head, {text: rows, cut: DETAIL}, {text: ` over ${formatAgeMs(record.intervalMS)}`}], layout.width)
}

/** The watch's end: episodes per node, and the lock waits summed over it. */
export function nodeLockEpisodesSummaryText(summary: NodeLockEpisodesSummary, layout: Layout = UNLIMITED, top = 10): string {
  const open = summary.nodes.reduce((n, node) => n + node.openEpisodes, 0)
  const lines = [
    fitText(
      `blocking episodes: ${formatCount(summary.episodesTotal)} on ${summary.nodes.length} node${summary.nodes.length === 1 ? '' : 's'}` +
        (open > 0 ? ` (${open} still open)` : '') +
        (summary.episodesNotKept > 0 ? `; ${formatCount(summary.episodesNotKept)} beyond the first ${formatCount(summary.maxEpisodesKept)} are counted, not listed in --json` : ''),
      layout,
    ),
  ]
  if (summary.nodes.length > 0) {
    const columns = ['node', {head: 'episodes', short: 'eps'}, {head: 'open', dropOrder: 1}, {head: 'blocked time', short: 'blocked'}, {head: 'worst episode', short: 'worst'}]
    const rows = summary.nodes.map((n) => [
      terminalLine(n.node),
      formatCount(n.episodes),
      formatCount(n.openEpisodes),
      formatAgeMs(n.blockedMS),
      n.worstEpisode ? `${formatAgeMs(n.worstEpisode.durationMS)}${n.worstEpisode.open ? '+' : ''} (opid ${n.worstEpisode.rootOpid === null ? 'unseen' : opidText(n.worstEpisode.rootOpid)})` : '–',
    ])
    lines.push(fitTable(columns, rows, layout))
  }
  if (summary.waitRates.length > 0) {
    const shown = summary.waitRates.slice(0, top)
    lines.push(fitText('lock waits over the watch, most time waited first:', layout))
    const columns = ['node', 'resource', 'mode', 'waits', {head: 'time waited', short: 'waited'}, {head: 'mean wait', short: 'mean', dropOrder: 2}, {head: 'waits/s', dropOrder: 1}]
    const rows = shown.map((r) => [terminalLine(r.node), terminalLine(r.resource), terminalLine(r.mode), formatCount(r.waits), formatMicros(r.waitedMicros), formatMicros(r.meanWaitMicros), r.waitsPerSecond.toFixed(2)])
    lines.push(fitTable(columns, rows, layout))
    if (summary.waitRates.length > shown.length) lines.push(fitText(`(${summary.waitRates.length - shown.length} more: --json has them)`, layout))
  } else {
    lines.push(fitText('no lock waited during the watch (or no interval gave rates)', layout))
  }
  return lines.join('\n')
}
