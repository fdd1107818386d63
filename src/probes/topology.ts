/**
 * What the target is, from one `hello` on the entry point: a standalone, a
 * replica set (members from `hosts`, `passives` and `arbiters`, each with its
 * role; hidden members are in none of hello's lists, so only a hidden entry
 * node is known, from its own `hidden: true`) or a mongos (msg "isdbgrid");
 * and the shape of a whole discovered cluster (src/probes/discovery.ts).
 */
import {PoolToolError} from '../errors.js'
import type {Document} from '../mongo/driver.js'
import type {ReadOptions, ServerReader} from './reader.js'

export type TopologyKind = 'standalone' | 'replset' | 'sharded'
export type HostRole = 'mongos' | 'shard' | 'config' | 'primary' | 'secondary' | 'arbiter' | 'standalone'

/** How a replica-set member is listed beyond its role: priority 0 (`hello.passives`), or hidden (`hello.hidden` of the member itself). */
export interface MemberFlags {
  /** In `hello.passives`: priority 0, never primary. */
  passive?: true
  /** The member says `hidden: true` of itself (hidden members appear in no hello list). */
  hidden?: true
}

export interface HostEntry extends MemberFlags {
  host: string
  role: HostRole
}

export interface EntryTopology {
  kind: TopologyKind
  /** The hosts the entry point leads to: replica-set members, or the seed routers of a sharded cluster. */
  hosts: HostEntry[]
  setName?: string
}

/** One host of a discovered cluster, with its role. */
export interface ClusterHost extends MemberFlags {
  /** "host:port" as the cluster names it. */
  host: string
  role: HostRole
  /** Replica set the host belongs to (replica-set, shard and config-server members). */
  setName?: string
  /** Shard id (`listShards` `_id`) for shard members. */
  shard?: string
  /**
   * Where pooltool connects to reach this host when that is not `host`: the entry node,
   * reached through the address the user gave (a port-forward, SSH tunnel, NAT, Docker),
   * while the cluster names it by a name that may not resolve from here.
   */
  address?: string
  /** The node the URI reached (polled through `address`, always). */
  entry?: true
  /** Shard zone tags (`config.shards` / `listShards` `tags`). */
  tags?: string[]
  /** Routers: the `mongoVersion` the router last wrote to `config.mongos`. */
  mongoVersion?: string
}

/** The address to open a connection to for `host`: the user's address for the entry node, else the cluster's name. */
export function connectAddress(host: ClusterHost): string {
  return host.address ?? host.host
}

/** Every host of the cluster behind an entry point (discoverCluster's answer). */
export interface ClusterTopology {
  kind: TopologyKind
  hosts: ClusterHost[]
  /** The replica set name of a replset target. */
  setName?: string
  /** Where each part of the topology came from, e.g. `hello`, `config.mongos`, `listShards`. */
  sources: string[]
  /** What discovery could not read (a privilege, a stale router …); commands go on without it. */
  warnings: string[]
  /** Routers in `config.mongos` whose last ping is older than the staleness bound: listed, not polled. */
  staleRouters: Array<{host: string; lastPing?: string; mongoVersion?: string}>
  /**
   * Documents in `config.mongos` (every router that ever pinged), when it was read:
   * 0 says the cluster has no router record at all (a finding); absent means unread.
   */
  configMongosCount?: number
  /** The node the URI reached, as the cluster names it (hello `me`, serverStatus `host`) and as the user addressed it. */
  entry?: {host: string; address: string; role: HostRole}
  /** The target is `pooltool sim --replay` serving a snapshot taken at this time (its hello says `pooltoolReplay`). */
  replayOf?: {capturedAt: string}
  /** A replica set: true when replSetGetConfig listed its hidden members, false when it could not be read (hello lists none). */
  hiddenMembersVisible?: boolean
}

/** What a replay's hello says about itself (src/replay/dispatch.ts adds it to every hello). */
export function replayOf(hello: Document): {capturedAt: string} | undefined {
  const marker = hello.pooltoolReplay as Document | undefined
  if (!marker || typeof marker !== 'object') return undefined
  const at = marker.capturedAt
  return {capturedAt: at instanceof Date ? at.toISOString() : String(at ?? 'unknown')}
}

/**
 * The note a command adds when it read a replay: ages and verdicts are as at capture time (the
 * replay's clock starts at the capture's), so the replay's skew against this machine is no finding.
 */
export function replayNote(replay: {capturedAt: string}): string {
  return `read from a replay of a snapshot captured at ${replay.capturedAt} (pooltool sim --replay): ages and verdicts are as at capture time`
}

/** bench and auth need a live server: a replay serves the captured reads only. */
export function refuseReplay(topology: ClusterTopology, command: string, what: string): void {
  if (!topology.replayOf) return
  throw new PoolToolError(
    'WRONG_TOPOLOGY',
    `${command} needs a live cluster: the target is a replay of a snapshot captured at ${topology.replayOf.capturedAt}, which serves the captured reads only`,
    `${what}; point --uri at the live cluster (conns and locks run against a replay)`,
  )
}

export function topologyFromHello(hello: Document, seedHosts: readonly string[]): EntryTopology {
  if (hello.msg === 'isdbgrid') {
    return {kind: 'sharded', hosts: seedHosts.map((host) => ({host, role: 'mongos'}))}
  }
  if (typeof hello.setName === 'string') {
    const list = (name: string) => ((hello[name] as unknown[] | undefined) ?? []).filter((h): h is string => typeof h === 'string')
    const primary = hello.primary as string | undefined
    const seen = new Set<string>()
    const hosts: HostEntry[] = []
    const add = (entry: HostEntry) => {
      if (seen.has(entry.host)) return
      seen.add(entry.host)
      hosts.push(entry)
    }
    for (const host of list('hosts')) add({host, role: host === primary ? 'primary' : 'secondary'})
    for (const host of list('passives')) add({host, role: host === primary ? 'primary' : 'secondary', passive: true})
    for (const host of list('arbiters')) add({host, role: 'arbiter'})
    return {kind: 'replset', setName: hello.setName, hosts}
  }
  return {kind: 'standalone', hosts: seedHosts.slice(0, 1).map((host) => ({host, role: 'standalone'}))}
}

export async function readEntryTopology(reader: ServerReader, seedHosts: readonly string[], options?: ReadOptions): Promise<EntryTopology> {
  const hello = await reader.hello(options)
  return topologyFromHello(hello.value, seedHosts)
}

export async function readServerVersion(reader: ServerReader, options?: ReadOptions): Promise<string> {
  const info = await reader.buildInfo(options)
  return String(info.value.version ?? 'unknown')
}
