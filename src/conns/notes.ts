/**
 * The `notes` of a conns result (src/result.ts): what discovery could not
 * read, and what some hosts could not be asked, one sentence per reason
 * (hosts sharing a reason are named together, so a 20-host cluster without
 * the `inprog` privilege gives one line, not twenty).
 */
import type {ClusterTopology, HostState} from './types.js'

export interface HostNoteFacts {
  host: string
  state: HostState
  holdersUnavailable?: string
  poolsUnavailable?: string
}

function grouped(hosts: readonly HostNoteFacts[], reasonOf: (h: HostNoteFacts) => string | undefined, say: (hosts: string, reason: string) => string): string[] {
  const byReason = new Map<string, string[]>()
  for (const h of hosts) {
    const reason = reasonOf(h)
    if (reason !== undefined) byReason.set(reason, [...(byReason.get(reason) ?? []), h.host])
  }
  return [...byReason].map(([reason, names]) => say(names.join(', '), reason))
}

export function connsNotes(topology: Pick<ClusterTopology, 'warnings'>, hosts: readonly HostNoteFacts[]): string[] {
  return [
    ...topology.warnings.map((w) => `discovery: ${w}`),
    ...grouped(hosts, (h) => (h.state === 'ok' ? undefined : h.state), (names, state) => `${state} at the end: ${names}`),
    ...grouped(hosts, (h) => h.holdersUnavailable, (names, reason) => `holders not read on ${names}: ${reason}`),
    ...grouped(hosts, (h) => h.poolsUnavailable, (names, reason) => `mongos pools not read on ${names}: ${reason}`),
  ]
}
