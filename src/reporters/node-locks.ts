/**
 * What "node locks" prints for humans (pure: views in, text out): the who-blocks-whom tree, the
 * lock waits ranking and the tickets line.
 *
 * Every string an operation carries (desc, client, appName, driver, ns, msg, the command's name) is
 * what a client or the server sent: each is kept to one line with terminalLine, and every line goes
 * through fitText (which escapes again and wraps to the width). The command's values are never in
 * the view (src/locks/node/operations.ts keeps its name only), so they cannot be printed.
 */
import {sessionIdOf} from '../locks/node/operations.js'
import type {BlockingAnalysis, BlockingEdge, BlockingTreeNode, HoldThatBlocks, LockResource, LockWaitRates, LockWaitsView, NodeOperation, TicketPoolView, TicketsView} from '../locks/node/types.js'
import {terminalLine} from './escape.js'
import {fitTable, fitText, type Layout, UNLIMITED} from './fit.js'
import {formatAgeMs, formatCount, formatUs} from './format.js'

/** A microsecond duration: "850µs", "12.3ms" below a second, then "5.2s", "15m 5s", "2h 1m". */
export function formatMicros(us: number | null | undefined): string {
  if (us === null || us === undefined) return '–'
  return us < 1_000_000 ? formatUs(us) : formatAgeMs(us / 1000)
}

const one = (s: string | null | undefined): string | null => (s === null || s === undefined || s === '' ? null : terminalLine(s))
/** An opid as printed. An idle session's transaction has none ($currentOp idleSessions: no opid field): its session names it. */
export function opidText(opid: number | string): string {
  if (typeof opid === 'number') return String(opid)
  if (opid === '') return '(none)'
  const session = sessionIdOf(opid)
  return session === null ? terminalLine(opid) : `(none: session ${terminalLine(session)})`
}

/** An operation named inside a sentence, not after the word "opid": "11", "session <uuid>". */
function whoText(opid: number | string): string {
  const session = sessionIdOf(opid)
  return session === null ? opidText(opid) : `session ${terminalLine(session)}`
}

export function resourceText(r: LockResource): string {
  return r.name === null ? terminalLine(r.type) : `${terminalLine(r.type)} ${terminalLine(r.name)}`
}

/** Who the op is and what it does: desc, client, appName, driver, op, ns, command name, running time, progress. */
export function operationText(op: NodeOperation): string {
  const parts = [
    one(op.desc),
    one(op.client),
    op.appName ? `app ${terminalLine(op.appName)}` : null,
    op.driver ? `driver ${terminalLine(op.driver)}` : null,
    [one(op.op), one(op.ns), op.commandName && op.commandName !== op.op ? one(op.commandName) : null].filter(Boolean).join(' ') || null,
    op.runningMicros === null ? null : `running ${formatMicros(op.runningMicros)}`,
    op.shard ? `shard ${terminalLine(op.shard)}` : null,
  ]
  let text = parts.filter((p): p is string => p !== null && p !== '').join(' · ')
  if (op.msg) text += ` · ${terminalLine(op.msg)}`
  if (op.progress && op.progress.total > 0) text += ` (${Math.floor((100 * op.progress.done) / op.progress.total)}%)`
  return text
}

function edgeText(edge: BlockingEdge, waitingAtMostMicros: number | null): string {
  const waited = waitingAtMostMicros === null ? 'waits' : `waits ≤${formatMicros(waitingAtMostMicros)}`
  const how =
    edge.kind === 'holds'
      ? `${whoText(edge.blocker)} holds ${edge.blockerMode}`
      : `queued ahead: ${whoText(edge.blocker)}'s ${edge.blockerMode} request is before it`
  return `${waited} for ${edge.waiterMode} on ${resourceText(edge.resource)} (${how})`
}

/**
 * One entry of the tree: `first` before its first line, `rest` before its continuations, so a wrapped
 * line stays inside its branch (the tree's guides go on down the left). Escaped and wrapped by fitText.
 */
function placed(first: string, rest: string, content: string, layout: Layout): string[] {
  if (!Number.isFinite(layout.width)) return [first + fitText(content, layout)]
  const room = Math.max(20, layout.width - Math.max(first.length, rest.length + 2))
  const [head, ...tail] = fitText(content, {width: room}).split('\n')
  return [first + head!, ...tail.map((line) => `${rest}  ${line.trimStart()}`)]
}

function treeLines(node: BlockingTreeNode, prefix: string, last: boolean, lines: string[], layout: Layout): void {
  const branch = `${prefix}${last ? '└─ ' : '├─ '}`
  const under = `${prefix}${last ? '   ' : '│  '}`
  const guide = node.children.length > 0 ? `${under}│` : under
  lines.push(...placed(branch, guide, `opid ${opidText(node.operation.opid)} ${edgeText(node.edge!, node.waitingAtMostMicros)}`, layout))
  lines.push(...placed(guide === under ? under : `${under}│  `, guide, operationText(node.operation), layout))
  if (node.alsoBlockedBy.length > 0) lines.push(...placed(guide === under ? under : `${under}│  `, guide, `also blocked by ${node.alsoBlockedBy.map(whoText).join(', ')}`, layout))
  node.children.forEach((child, index) => treeLines(child, under, index === node.children.length - 1, lines, layout))
}

/** What does not block anyone yet but will: an fsyncLock's Global S, an exclusive hold on a collection. */
function holdsThatBlockText(holds: readonly HoldThatBlocks[], layout: Layout): string[] {
  return holds.flatMap((hold) => {
    const where = hold.resource.type === 'Global' ? 'on this node' : `on ${terminalLine(hold.resource.name ?? hold.resource.type)}`
    const what = hold.blocks === 'writes' ? `every write ${where} will wait` : `every operation ${where} will wait`
    return [
      ...placed('', '', `opid ${opidText(hold.operation.opid)} holds ${hold.mode} on ${resourceText(hold.resource)}: ${what} (nothing seen waiting for it)`, layout),
      ...placed('  ', '  ', operationText(hold.operation), layout),
      ...placed('  ', '  ', `hint: ${terminalLine(hold.stopHint)} (pooltool never kills)`, layout),
    ]
  })
}

/** The blocking tree: each root blocker first (with how a DBA would end it), its waiters indented under what blocks them. */
export function blockingTreeText(analysis: BlockingAnalysis, layout: Layout = UNLIMITED): string {
  if (analysis.chains.length === 0 && analysis.unexplainedWaiters.length === 0) {
    return [fitText(`no operation waits for a lock (${analysis.chainSourceText})`, layout), ...holdsThatBlockText(analysis.holdsThatBlock, layout)].join('\n')
  }
  const lines: string[] = [...placed('', '', `who blocks whom (${analysis.chainSourceText})`, layout)]
  for (const chain of analysis.chains) {
    const root = chain.root
    const guide = root.children.length > 0 ? '  │' : '  '
    const waiting = root.operation.waitingForLock ? ', itself waiting with no visible blocker' : ''
    lines.push(...placed('', '', `root blocker opid ${opidText(root.operation.opid)}: blocks ${chain.waiterCount} operation${chain.waiterCount === 1 ? '' : 's'}${waiting}`, layout))
    lines.push(...placed(`${guide} `.slice(0, 2), guide, operationText(root.operation), layout))
    const held = Object.entries(root.operation.locks).map(([type, mode]) => `${terminalLine(type)} ${terminalLine(mode)}`)
    if (held.length > 0) lines.push(...placed('  ', guide, `locks: ${held.join(', ')}`, layout))
    lines.push(...placed('  ', guide, `hint: ${terminalLine(chain.stopHint)} (pooltool never kills)`, layout))
    root.children.forEach((child, index) => treeLines(child, '  ', index === root.children.length - 1, lines, layout))
  }
  for (const w of analysis.unexplainedWaiters) {
    const on = w.resource ? ` for ${w.mode ?? '?'} on ${resourceText(w.resource)}` : ''
    const holders = w.compatibleHolders.length > 0 ? `; holding it in a compatible mode: ${w.compatibleHolders.map(whoText).join(', ')} (a conflicting request not listed may sit between)` : ''
    lines.push(...placed('', '', `opid ${opidText(w.operation.opid)} waits${on} with no visible blocker${holders}`, layout))
    lines.push(...placed('  ', '  ', operationText(w.operation), layout))
  }
  if (analysis.inferredEdgesNotInLockInfo > 0) lines.push(...placed('', '', `${analysis.inferredEdgesNotInLockInfo} edge(s) $currentOp suggested are not in lockInfo: left out`, layout))
  lines.push(...holdsThatBlockText(analysis.holdsThatBlock, layout))
  return lines.join('\n')
}

/** A share as a percentage a human reads: "3.1%", "0.25%", "<0.01%" (a billion acquisitions and 13 waits). */
export function shareText(share: number | null): string {
  if (share === null) return '–'
  const percent = share * 100
  if (percent === 0) return '0%'
  if (percent < 0.01) return '<0.01%'
  return `${percent < 10 ? percent.toFixed(2).replace(/\.?0+$/, '') : Math.round(percent)}%`
}

/** The waits ranking: resource and mode, most time waited first. */
export function lockWaitsText(view: LockWaitsView, layout: Layout = UNLIMITED, top = 10): string {
  const lines = [fitText(view.summary, layout)]
  if (view.state !== 'counted' || !view.anyWaited) return lines.join('\n')
  const waited = view.rows.filter((row) => row.acquireWaitCount > 0 || row.timeAcquiringMicros > 0)
  const shown = waited.slice(0, top)
  const columns = [
    'resource',
    'mode',
    {head: 'time waited', short: 'waited'},
    {head: 'waits', dropOrder: 1},
    {head: 'mean wait', short: 'mean'},
    {head: 'share waited', short: 'share', dropOrder: 2},
    {head: 'acquired', dropOrder: 3},
  ]
  const rows = shown.map((row) => [
    row.resource,
    row.modeName ? `${row.mode} (${row.modeName})` : row.mode,
    formatMicros(row.timeAcquiringMicros),
    formatCount(row.acquireWaitCount),
    formatMicros(row.meanWaitMicros),
    shareText(row.waitedShare),
    formatCount(row.acquireCount),
  ])
  lines.push(fitTable(columns, rows, layout))
  if (waited.length > shown.length) lines.push(fitText(`(${waited.length - shown.length} more that waited: --json has them)`, layout))
  const deadlocks = view.rows.filter((row) => (row.deadlockCount ?? 0) > 0)
  if (deadlocks.length > 0) lines.push(fitText(`deadlocks: ${deadlocks.map((row) => `${row.resource} ${row.mode} ${row.deadlockCount}`).join(', ')}`, layout))
  return lines.join('\n')
}

const VERDICT_TEXT: Record<TicketPoolView['verdict'], string> = {
  exhausted: 'EXHAUSTED',
  'all-in-use': 'all in use',
  throttled: 'all in use (dynamic sizing: not exhaustion)',
  queued: 'ops queued for a ticket',
  ok: 'ok',
  unknown: 'unknown',
}

function poolText(name: string, pool: TicketPoolView | null): string {
  if (!pool) return `${name} –`
  const queue = pool.queueLength === null ? '' : `, ${pool.queueLength} queued`
  return `${name} ${formatCount(pool.out)}/${formatCount(pool.totalTickets)} out, ${formatCount(pool.available)} available${queue}: ${VERDICT_TEXT[pool.verdict]}`
}

/** The tickets lines (read, write), the global lock queue beside it, and why the verdicts say what they say. */
export function ticketsText(view: TicketsView, layout: Layout = UNLIMITED): string {
  const lines: string[] = []
  if (view.source === 'none') lines.push(`tickets: ${view.explanation}`)
  else lines.push(`tickets (${view.source}):`, `  ${poolText('read', view.read)}`, `  ${poolText('write', view.write)}`)
  const q = view.currentQueue
  const a = view.activeClients
  if (q || a) {
    const trio = (t: {readers: number | null; writers: number | null} | null) => (t ? `${formatCount(t.readers)} readers, ${formatCount(t.writers)} writers` : '–')
    lines.push(`  global lock queue: ${trio(q)} · active: ${trio(a)}`)
  }
  if (view.source !== 'none') lines.push(`  ${view.explanation}`)
  return fitText(lines.join('\n'), layout)
}

/** Waits between two samples (a watch's interval), most time waited first. */
export function lockWaitRatesText(rates: LockWaitRates, layout: Layout = UNLIMITED, top = 10): string {
  const over = `over ${formatAgeMs(rates.intervalMS)}`
  if (rates.reset) return fitText(`lock waits ${over}: counters went down (the server restarted): no rates this interval`, layout)
  if (rates.rows.length === 0) return fitText(`no lock waited ${over}`, layout)
  const lines = [`lock waits ${over}:`]
  for (const row of rates.rows.slice(0, top)) {
    lines.push(`  ${terminalLine(row.resource)} ${terminalLine(row.mode)}: ${formatCount(row.acquireWaitDelta)} waits (${row.waitsPerSecond.toFixed(2)}/s), ${formatMicros(row.timeAcquiringMicrosDelta)} waited, mean ${formatMicros(row.meanWaitMicros)}`)
  }
  return fitText(lines.join('\n'), layout)
}

export interface NodeLocksTextInput {
  /** host:port of the node, or a label. */
  node?: string | null
  blocking?: BlockingAnalysis
  waits?: LockWaitsView
  tickets?: TicketsView
  rates?: LockWaitRates
}

/** All parts for one node (a NodeLocksView fits this input), blocking first: what a DBA looks at first. */
export function nodeLocksText(input: NodeLocksTextInput, layout: Layout = UNLIMITED): string {
  const parts: string[] = []
  if (input.node) parts.push(fitText(`node ${terminalLine(input.node)}`, layout))
  if (input.blocking) parts.push(blockingTreeText(input.blocking, layout))
  if (input.waits) parts.push(lockWaitsText(input.waits, layout))
  if (input.rates) parts.push(lockWaitRatesText(input.rates, layout))
  if (input.tickets) parts.push(ticketsText(input.tickets, layout))
  return parts.join('\n\n')
}
