/**
 * Which host `pooltool auth` measures, and what that host says about itself and
 * the URI's user, all read WITHOUT credentials: an authenticated read here would
 * warm the driver's PBKDF2 cache (the first driver connection of a mechanism
 * would then not pay its iteration count) and move the server's auth counters.
 *
 * - the host comes from the one discovery (src/probes/discovery.ts), run on the
 *   target with its credentials stripped: a replica set's primary, the
 *   standalone, or (sharded) the entry router, the one the URI names;
 * - then one hello on that host (with saslSupportedMechs for the URI's user) and
 *   buildInfo: wire version, server version, the user's mechanisms.
 */
import {closeWithin, CLOSE_GRACE_MS, createClient} from '../mongo/client.js'
import {driverChannel} from '../probes/driver-channel.js'
import {discoverCluster} from '../probes/discovery.js'
import {ServerReader} from '../probes/reader.js'
import {toNumber} from '../probes/server-status.js'
import {type ClusterHost, type ClusterTopology, connectAddress, type HostRole, refuseReplay, type TopologyKind} from '../probes/topology.js'
import {resolveTarget, type Target} from '../target.js'
import type {ScramCredentials} from '../wire/index.js'
import {hostUri, withoutCredentials} from './uri.js'

export interface MeasuredHost {
  /** "host:port": every measured connection goes here (the address the URI gave for the entry node). */
  host: string
  /** How the cluster names the host, when that is not `host` (a member reached through a port-forward). */
  clusterName?: string
  role: HostRole
  topology: TopologyKind
  maxWireVersion: number | null
  serverVersion: string
  /** hello saslSupportedMechs for the URI's user; undefined when the server did not say (unknown user, old server, no credentials). */
  userMechanisms?: string[]
  /** Why the host is not the obvious one (a replica set without a primary). */
  notes: string[]
}

export interface MeasuredHostInput {
  credentials?: ScramCredentials
  /** Options from an SRV record's TXT (mongodb+srv only), for the one-host URI. */
  txt?: URLSearchParams
  signal?: AbortSignal
}

/** The connection appName suffix of pooltool's own reads in an auth run (`pooltool-probe`). */
export const PROBE_PURPOSE = 'probe'

/**
 * The host auth measures in a discovered cluster: with `directConnection=true` the node the
 * URI reached (the user chose it, and through a port-forward the others may not be reachable);
 * else the replica set's primary (a member the URI names when there is none), the standalone,
 * or the router the URI names (for a sharded cluster entered through a shard or config
 * member: that member). `host` is the address to connect to, `clusterName` the cluster's name for it.
 */
export function chooseMeasuredHost(
  topology: ClusterTopology,
  seedHosts: readonly string[],
  options: {directConnection?: boolean} = {},
): {host: string; clusterName?: string; role: HostRole; notes: string[]} {
  const named = (role?: HostRole) => topology.hosts.find((h) => (seedHosts.includes(h.host) || h.entry) && (role === undefined || h.role === role))
  const first = (role: HostRole) => topology.hosts.find((h) => h.role === role)
  const notes: string[] = []
  let chosen: ClusterHost | undefined
  const entry = topology.hosts.find((h) => h.entry)
  if (options.directConnection && entry) {
    chosen = entry
  } else if (topology.kind === 'replset') {
    chosen = first('primary')
    if (!chosen) {
      chosen = named() ?? topology.hosts[0]
      const set = topology.setName ? `the replica set ${topology.setName}` : 'the replica set'
      if (chosen) notes.push(`${set} has no primary right now: measuring ${chosen.host} (${chosen.role})`)
    }
  } else if (topology.kind === 'sharded') {
    chosen = named('mongos') ?? named() ?? first('mongos')
  } else {
    chosen = topology.hosts[0]
  }
  if (!chosen) throw new Error(`discovery found no host to measure (${topology.kind}; ${topology.warnings.join('; ') || 'no warnings'})`)
  const address = connectAddress(chosen)
  return {host: address, ...(address === chosen.host ? {} : {clusterName: chosen.host}), role: chosen.role, notes}
}

export async function discoverMeasuredHost(target: Target, input: MeasuredHostInput): Promise<MeasuredHost> {
  // The same target without credentials, sharing appName, timeouts and the recorder.
  const anonymous = await resolveTarget({flagUri: withoutCredentials(target.uri), connection: target.connection, recorder: target.recorder})
  const topology = await discoverCluster(anonymous, {purpose: PROBE_PURPOSE, signal: input.signal})
  refuseReplay(topology, 'auth', 'auth opens and authenticates new connections')
  const {host, clusterName, role, notes} = chooseMeasuredHost(topology, target.seedHosts, {directConnection: target.directConnection})

  // A one-host URI of our own (not openReader): it turns an SRV URI into a plain one with the TXT options.
  const client = createClient({
    ...target.clientSettings(PROBE_PURPOSE),
    uri: hostUri(target.uri, host, {mechanism: 'none', txt: input.txt}),
    pool: {maxPoolSize: 1},
    extra: {serverMonitoringMode: 'poll'},
  })
  const reader = new ServerReader(driverChannel(client, host), target.recorder)
  const read = input.signal ? {signal: input.signal} : {}
  try {
    const credentials = input.credentials
    const hello = (await reader.hello({...read, ...(credentials ? {saslSupportedMechs: `${credentials.source}.${credentials.username}`} : {})})).value
    let serverVersion = 'unknown'
    try {
      serverVersion = String((await reader.buildInfo(read)).value.version ?? 'unknown')
    } catch {
      // Some deployments refuse buildInfo before auth: the version is only informative.
    }
    const userMechanisms = Array.isArray(hello.saslSupportedMechs) ? hello.saslSupportedMechs.map(String) : undefined
    return {host, ...(clusterName ? {clusterName} : {}), role, topology: topology.kind, maxWireVersion: toNumber(hello.maxWireVersion) ?? null, serverVersion, ...(userMechanisms ? {userMechanisms} : {}), notes}
  } finally {
    await closeWithin(client, CLOSE_GRACE_MS)
  }
}
