/** What `pooltool snapshot` says about a capture: where it went, each host's reads, what could not be read. */
import type {NodeLocksCapture} from '../snapshot/format.js'
import type {SnapshotSummary} from '../snapshot/summary.js'
import {fitTable, fitText, type Layout, UNLIMITED} from './fit.js'

/** One word or two for the table: the details (the server's words) are in the notes and the --json. */
function nodeLocksCell(n: NodeLocksCapture | undefined): string {
  if (n === undefined) return '-'
  const word = (state: string) => state.replace(/:.*$/, '')
  if (n.currentOp !== 'captured' || n.serverStatus !== 'captured') return `unknown (${word(n.currentOp === 'captured' ? n.serverStatus : n.currentOp)})`
  return n.lockInfo === 'captured' ? 'captured' : `captured, lockInfo ${word(n.lockInfo)}`
}

export function renderSnapshotSummary(summary: SnapshotSummary, layout: Layout = UNLIMITED): string {
  const rows = summary.hosts.map((h) => [h.address === undefined ? h.host : `${h.host} (via ${h.address})`, h.role, h.reads, h.errors, nodeLocksCell(h.nodeLocks)])
  const where = summary.file === undefined ? 'snapshot written to stdout' : `snapshot written to ${summary.file}`
  const lines = [`${where}: ${summary.hosts.length} host(s) captured at ${summary.capturedAt}${summary.redactedHosts ? ', host names redacted' : ''}`, fitTable(['host', 'role', 'reads', 'errors', 'node locks'], rows, layout)]
  if (summary.hosts.some((h) => h.nodeLocks === undefined)) lines.push(fitText('node locks "-": not read there (a router, or a member locks list does not read)', layout))
  if (summary.views.length > 0) lines.push(`command results kept: ${summary.views.join(', ')}`)
  for (const u of summary.unreachable) lines.push(`not reachable from here: ${u.host}: ${u.error}`)
  // Notes quote servers (a refusal's words): fitted, and terminal-safe with it.
  for (const note of summary.notes) lines.push(fitText(`note: ${note}`, layout))
  if (summary.file !== undefined) lines.push(`replay it offline: pooltool sim --replay ${summary.file}`)
  return lines.join('\n')
}
