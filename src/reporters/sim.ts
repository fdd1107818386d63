/** What `pooltool sim` prints: the URI first (credentials included — it is the user's own test cluster), then each process. */
import type {FiredFault, FiredScenario, SimClusterInfo, SimFault, SimProcessInfo} from '../sim/index.js'
import {fitTable, type Layout, UNLIMITED} from './fit.js'

export interface SimStartedResult {
  uri: string
  topology: SimClusterInfo['topology']
  versionProfile: SimClusterInfo['versionProfile']
  serverVersion: string
  ports: number[]
  processes: SimProcessInfo[]
  credentials?: SimClusterInfo['credentials']
  pid: number
}

export function toSimStartedResult(info: SimClusterInfo): SimStartedResult {
  return {
    uri: info.uri,
    topology: info.topology,
    versionProfile: info.versionProfile,
    serverVersion: info.serverVersion,
    ports: info.processes.map((p) => p.port),
    processes: info.processes,
    credentials: info.credentials,
    pid: info.pid,
  }
}

/** A set member's state (which shard or config member is primary); hidden members say so. */
function memberStateText(p: SimProcessInfo): string {
  const state = p.memberState ?? (p.role === 'primary' || p.role === 'secondary' ? p.role : '')
  return p.hidden ? `${state} (hidden)` : state
}

export function renderSimStarted(result: SimStartedResult, layout: Layout = UNLIMITED): string {
  const rows = result.processes.map((p) => [p.advertisedAs ? `${p.host} (as ${p.advertisedAs})` : p.host, p.role, p.setName ?? '', memberStateText(p)])
  const lines = [
    result.uri,
    '',
    `embedded ${result.topology} cluster, behaving like MongoDB ${result.serverVersion} (profile ${result.versionProfile}); child pid ${result.pid}`,
    fitTable(['host', 'role', 'set', 'state'], rows, layout),
  ]
  if (result.credentials) {
    lines.push(`user '${result.credentials.username}' (authSource ${result.credentials.authSource}) can log in with SCRAM-SHA-1 and SCRAM-SHA-256`)
  }
  lines.push('Ctrl-C to stop.')
  return lines.join('\n')
}

/** `--ndjson`: the started document as the stream's first line. */
export function ndjsonStarted(result: SimStartedResult): string {
  return JSON.stringify({type: 'started', ...result})
}

/** `--ndjson`: one line per fired fault, `{type: "fault", at, atMS, fault: {kind, …}, ok, error?}`. */
export function ndjsonFaultFired(event: FiredFault): string {
  return JSON.stringify({type: 'fault', ...event})
}

/** `--ndjson`: one line per scenario set up, `{type: "scenario", at, scenario, summary, facts}`. */
export function ndjsonScenarioFired(event: FiredScenario): string {
  return JSON.stringify({type: 'scenario', ...event})
}

/** The stderr line for a scenario, e.g. `pooltool sim: scenario dead-lock-holder fired: shard02's primary … took …`. */
export function renderScenarioFired(event: FiredScenario): string {
  return `pooltool sim: scenario ${event.scenario} fired: ${event.summary}`
}

function whatFaultDoes(fault: SimFault): string {
  switch (fault.kind) {
    case 'latency':
      return `latency ${fault.ms} ms per operation from now on`
    case 'setup-cost':
      return `setup cost ${fault.ms} ms per new connection from now on`
    case 'max-connections':
      return `connection limit ${fault.max} from now on`
    case 'stall':
      return `stall: every reply held for ${fault.ms} ms`
    case 'drop-connections':
      return 'drop-connections: every client socket closed'
    case 'restart':
      return `restart: down for ${fault.downMS} ms, then listening again on the same ports`
    case 'lock-hold':
      return `lock-hold: an index build holds ${fault.ns}'s collection lock in mode ${fault.mode} for ${fault.ms} ms`
    case 'recover':
      return 'recover: restarted processes listen again, stalls end'
  }
}

/** The stderr line for a fired fault, e.g. `pooltool sim: fault @5s fired: stall: every reply held for 1000 ms`. */
export function renderFaultFired(event: FiredFault): string {
  const where = event.fault.hosts && event.fault.hosts.length > 0 ? ` on ${event.fault.hosts.join(',')}` : ''
  const when = `fault @${event.atMS / 1000}s`
  return event.ok
    ? `pooltool sim: ${when} fired: ${whatFaultDoes(event.fault)}${where}`
    : `pooltool sim: ${when} failed: ${whatFaultDoes(event.fault)}${where}: ${event.error ?? 'unknown error'}`
}

/** What `pooltool sim --replay FILE` prints: the URI to point pooltool at, then where each captured host is served. */
export interface ReplayStartedResult {
  uri: string
  replay: string
  capturedAt: string
  /** Captured name → the listener serving it. */
  hosts: Record<string, string>
  /** What the replay says once, at its start: how its clocks run (REPLAY_CLOCK_NOTE). */
  notes: string[]
}

/** Said once when a replay starts: the served clocks move on, the ages and verdicts do not. */
export const REPLAY_CLOCK_NOTE =
  "clocks are frozen at capture: every time a replayed server reports (hello and serverStatus localTime, config.lockpings and config.mongos pings, " +
  "lock `when`s) is the capture's plus the time since the replay began, so ages and verdicts stay as captured however long the replay runs"

export function toReplayStartedResult(info: {uri: string; file: string; capturedAt: Date; hosts: Record<string, string>}): ReplayStartedResult {
  return {uri: info.uri, replay: info.file, capturedAt: info.capturedAt.toISOString(), hosts: info.hosts, notes: [REPLAY_CLOCK_NOTE]}
}

export function renderReplayStarted(result: ReplayStartedResult, layout: Layout = UNLIMITED): string {
  return [
    result.uri,
    '',
    `replaying ${result.replay}, captured ${result.capturedAt}: captured documents only, read only, no authentication`,
    fitTable(['captured host', 'served at'], Object.entries(result.hosts), layout),
    ...result.notes.map((note) => `note: ${note}`),
    'Ctrl-C to stop.',
  ].join('\n')
}
