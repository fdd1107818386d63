/**
 * The `notes` of a conns result (src/result.ts): what discovery could not
 * read, what the topology itself says (an empty `config.mongos`, routers of
 * mixed versions), and what some hosts could not be asked, one sentence per
 * reason (hosts sharing a reason are named together, so a 20-host cluster
 * without the `inprog` privilege gives one line, not twenty). A server clock
 * off by more than a few seconds is said once per host.
 */
import {clockSkewNote} from '../probes/server-clock-skew.js'
import type {CounterDefect} from './counter-defects.js'
import type {ClusterTopology, HostState} from './types.js'

export interface HostNoteFacts {
  host: string
  state: HostState
  /** false: never answered since the start. */
  reachedFromHere?: boolean
  aliases?: string[]
  clockSkewMS?: number
  holdersUnavailable?: string
  poolsUnavailable?: string
  counterDefects?: CounterDefect[]
}

function grouped(hosts: readonly HostNoteFacts[], reasonOf: (h: HostNoteFacts) => string | undefined, say: (hosts: string, reason: string) => string): string[] {
  const byReason = new Map<string, string[]>()
  for (const h of hosts) {
    const reason = reasonOf(h)
    if (reason !== undefined) byReason.set(reason, [...(byReason.get(reason) ?? []), h.host])
  }
  return [...byReason].map(([reason, names]) => say(names.join(', '), reason))
}

/** Routers by the version they wrote to config.mongos (live routers: the ones polled). */
export function routerVersions(topology: Partial<Pick<ClusterTopology, 'hosts'>>): Record<string, string[]> | undefined {
  const out: Record<string, string[]> = {}
  for (const h of topology.hosts ?? []) if (h.role === 'mongos' && h.mongoVersion !== undefined) (out[h.mongoVersion] ??= []).push(h.host)
  return Object.keys(out).length > 0 ? out : undefined
}

/** What the topology itself tells a DBA. */
type TopologyFacts = Pick<ClusterTopology, 'warnings'> & Partial<Pick<ClusterTopology, 'hosts' | 'configMongosCount' | 'replayOf'>>


export function topologyFindings(topology: Partial<Pick<ClusterTopology, 'hosts' | 'configMongosCount'>>): string[] {
  const findings: string[] = []
  if (topology.configMongosCount === 0) {
    findings.push('config.mongos is empty: no router has registered with this cluster (every running mongos writes its document there every 30 s)')
  }
  const versions = routerVersions(topology)
  if (versions && Object.keys(versions).length > 1) {
    const mix = Object.entries(versions)
      .sort(([a], [b]) => a.localeCompare(b, undefined, {numeric: true}))
      .map(([version, hosts]) => `${version} (${hosts.join(', ')})`)
      .join('; ')
    findings.push(`routers run mixed versions: ${mix}`)
  }
  return findings
}

export function connsNotes(topology: TopologyFacts, hosts: readonly HostNoteFacts[]): string[] {
  const neverReached = (h: HostNoteFacts) => h.state === 'unreachable' && h.reachedFromHere === false
  // A replay answers with the clocks as captured: their distance from this machine's is the snapshot's age, not a skew.
  const replay = topology.replayOf
  return [
    ...(replay ? [`a replay of a snapshot captured at ${replay.capturedAt}: figures and server clocks are as captured`] : []),
    ...topology.warnings.map((w) => `discovery: ${w}`),
    ...topologyFindings(topology),
    ...hosts.filter((h) => h.aliases && h.aliases.length > 0).map((h) => `${h.host} is also named ${h.aliases!.join(', ')} (same serverStatus.host): polled once`),
    ...grouped(hosts, (h) => (neverReached(h) ? 'unreachable' : undefined), (names) => `not reachable from here (never answered): ${names}`),
    ...grouped(hosts, (h) => (h.state === 'ok' || neverReached(h) ? undefined : h.state), (names, state) => `${state} at the end: ${names}`),
    ...(replay ? [] : hosts.map((h) => clockSkewNote(h.host, h.clockSkewMS)).filter((n): n is string => n !== undefined)),
    ...grouped(hosts, (h) => h.holdersUnavailable, (names, reason) => `holders not read on ${names}: ${reason}`),
    ...grouped(hosts, (h) => h.poolsUnavailable, (names, reason) => `pools (connPoolStats) not available on ${names}: ${reason}`),
    ...hosts.flatMap((h) => (h.counterDefects ?? []).map((d) => `${h.host}: ${d.cause}`)),
  ]
}
