/** What `pooltool sim` prints: the URI first (credentials included — it is the user's own test cluster), then each process. */
import Table from 'cli-table3'

import type {SimClusterInfo, SimProcessInfo} from '../sim/types.js'

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

export function renderSimStarted(result: SimStartedResult): string {
  const table = new Table({head: ['host', 'role', 'set'], style: {head: [], border: []}})
  for (const p of result.processes) table.push([p.host, p.role, p.setName ?? ''])
  const lines = [
    result.uri,
    '',
    `embedded ${result.topology} cluster, behaving like MongoDB ${result.serverVersion} (profile ${result.versionProfile}); child pid ${result.pid}`,
    table.toString(),
  ]
  if (result.credentials) {
    lines.push(`user '${result.credentials.username}' (authSource ${result.credentials.authSource}) can log in with SCRAM-SHA-1 and SCRAM-SHA-256`)
  }
  lines.push('Ctrl-C to stop.')
  return lines.join('\n')
}
