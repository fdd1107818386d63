/**
 * Every host of the cluster behind an entry point, with its role.
 *
 * - standalone: the entry host;
 * - replica set: `hello` hosts + passives (role primary / secondary);
 * - mongos (`hello.msg === "isdbgrid"`):
 *   - routers: the seed routers plus `config.mongos` (one document per router
 *     that ever pinged; routers whose `ping` is older than 10 minutes are
 *     listed as stale, not polled);
 *   - shards: `listShards` (`{_id, host: "rs0/h1:p,h2:p"}`), falling back to
 *     `config.shards`, which holds the same documents;
 *   - config server: `serverStatus.sharding.configsvrConnectionString`
 *     ("cfg/h1:p,…", documented for mongos and sharded mongods), falling back
 *     to `getShardMap`'s `map.config`, then to the one replica set of
 *     `connPoolStats.replicaSets` that is not a shard (the router monitors the
 *     config server's set like the shards');
 * - a shard member or config-server member as entry point: the config server
 *   (from its own `serverStatus.sharding`, or itself when `hello.configsvr` is
 *   set) is read directly: `config.shards` and `config.mongos` give the rest.
 *
 * Every read goes through the read layer (ServerReader), so a recorder sees
 * discovery too. Every command (conns, bench, locks, auth) discovers with
 * `discoverCluster`, so they all report the same hosts for the same cluster.
 * Router staleness is judged on the server's clock (the entry point's `hello`
 * `localTime`), not this machine's.
 *
 * The assembly is pure (`assembleShardedTopology`) so it can be tested on
 * documents shaped as the manual shows them.
 */
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import type {Target} from '../target.js'
import type {ReadOptions, Reading, ServerReader} from './reader.js'
import {parseShardingStatus, toNumber} from './server-status.js'
import {type ClusterHost, type ClusterTopology, topologyFromHello} from './topology.js'

export type {ClusterHost, ClusterTopology}

/** A router whose config.mongos ping is older than this is not polled (mongos pings every 30 s). */
export const STALE_ROUTER_MS = 10 * 60 * 1000

export interface HostList {
  setName?: string
  hosts: string[]
}

/** "rs0/h1:27017,h2:27017" → {setName: "rs0", hosts}; "h1:27017" → {hosts: ["h1:27017"]}. */
export function parseHostString(text: string): HostList {
  const trimmed = text.trim()
  const slash = trimmed.indexOf('/')
  const setName = slash > 0 ? trimmed.slice(0, slash) : undefined
  const hosts = (slash >= 0 ? trimmed.slice(slash + 1) : trimmed)
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0)
  return setName === undefined ? {hosts} : {setName, hosts}
}

export interface ShardEntry {
  id: string
  setName?: string
  hosts: string[]
  /** `state: 1` once the shard is aware it is a shard; `draining: true` while removed. */
  draining?: boolean
}

/** `listShards.shards` or `config.shards` documents: `{_id, host, state?, draining?, tags?}`. */
export function shardsFromDocuments(docs: readonly Document[]): ShardEntry[] {
  const out: ShardEntry[] = []
  for (const doc of docs) {
    if (typeof doc?._id !== 'string' || typeof doc.host !== 'string') continue
    const list = parseHostString(doc.host)
    const entry: ShardEntry = {id: doc._id, hosts: list.hosts}
    if (list.setName !== undefined) entry.setName = list.setName
    if (doc.draining === true) entry.draining = true
    out.push(entry)
  }
  return out
}

const asDate = (value: unknown): Date | undefined => {
  if (value instanceof Date) return value
  if (typeof value === 'string' || typeof value === 'number') {
    const d = new Date(value)
    return Number.isNaN(d.getTime()) ? undefined : d
  }
  return undefined
}

/** `config.mongos` documents `{_id: "host:port", ping: Date, up, waiting, mongoVersion}` → live and stale routers. */
export function routersFromConfigMongos(
  docs: readonly Document[],
  nowMs: number,
  staleMs = STALE_ROUTER_MS,
): {live: string[]; stale: Array<{host: string; lastPing?: string}>} {
  const live: string[] = []
  const stale: Array<{host: string; lastPing?: string}> = []
  for (const doc of docs) {
    if (typeof doc?._id !== 'string') continue
    const ping = asDate(doc.ping)
    if (ping && nowMs - ping.getTime() <= staleMs) live.push(doc._id)
    else stale.push(ping ? {host: doc._id, lastPing: ping.toISOString()} : {host: doc._id})
  }
  return {live, stale}
}

/** The config server's connection string from `getShardMap` (`map.config`, 4.4+ shape). */
export function configStringFromShardMap(doc: Document | undefined): string | undefined {
  const map = doc?.map as Document | undefined
  const config = map?.config
  return typeof config === 'string' && config.length > 0 ? config : undefined
}

export interface ShardedFacts {
  /** Routers named by the entry point (URI seeds that are mongos). */
  seedRouters: readonly string[]
  configMongos?: readonly Document[]
  shards?: readonly Document[]
  /** "cfg/h1:p,…" */
  configString?: string
  sources?: string[]
  warnings?: string[]
  nowMs: number
  staleMs?: number
}

/** Routers, then each shard's members, then the config server's members; every host once. */
export function assembleShardedTopology(facts: ShardedFacts): ClusterTopology {
  const hosts: ClusterHost[] = []
  const seen = new Set<string>()
  const add = (entry: ClusterHost) => {
    if (seen.has(entry.host)) return
    seen.add(entry.host)
    hosts.push(entry)
  }
  const warnings = [...(facts.warnings ?? [])]
  for (const host of facts.seedRouters) add({host, role: 'mongos'})
  const routers = routersFromConfigMongos(facts.configMongos ?? [], facts.nowMs, facts.staleMs)
  for (const host of routers.live) add({host, role: 'mongos'})
  const staleRouters = routers.stale.filter((r) => !seen.has(r.host))
  for (const shard of shardsFromDocuments(facts.shards ?? [])) {
    for (const host of shard.hosts) add({host, role: 'shard', shard: shard.id, ...(shard.setName === undefined ? {} : {setName: shard.setName})})
  }
  if (facts.configString) {
    const config = parseHostString(facts.configString)
    for (const host of config.hosts) add({host, role: 'config', ...(config.setName === undefined ? {} : {setName: config.setName})})
  } else {
    warnings.push('config server not found (serverStatus.sharding, getShardMap and connPoolStats named none): not polled')
  }
  if (facts.shards === undefined) warnings.push('shards not listed (listShards and config.shards unreadable): not polled')
  return {kind: 'sharded', hosts, sources: [...(facts.sources ?? [])], warnings, staleRouters}
}

/**
 * Last resort for the config server: `connPoolStats.replicaSets` lists every
 * replica set the router monitors, the config server's included; the one set
 * that is not a shard is it.
 */
export function configStringFromConnPoolStats(doc: Document | undefined, shardSetNames: ReadonlySet<string>): string | undefined {
  const sets = doc?.replicaSets as Document | undefined
  if (!sets || typeof sets !== 'object') return undefined
  const candidates = Object.entries(sets).filter(([name]) => !shardSetNames.has(name))
  if (candidates.length !== 1) return undefined
  const [name, info] = candidates[0]!
  const hosts = ((info as Document | undefined)?.hosts as Document[] | undefined)?.map((h) => h?.addr).filter((a): a is string => typeof a === 'string') ?? []
  return hosts.length > 0 ? `${name}/${hosts.join(',')}` : undefined
}

/** What discovery needs besides the entry point: how to name a failure, where reads are bounded. */
interface DiscoveryContext {
  read: ReadOptions
  describeError: (error: unknown) => string
  signal?: AbortSignal
}

/** A read that may fail: its value, or one line saying why not. */
async function attempt<T>(source: string, sources: string[], context: DiscoveryContext, read: () => Promise<T | undefined>): Promise<{value?: T; error?: string}> {
  context.signal?.throwIfAborted()
  try {
    const value = await read()
    if (value !== undefined) sources.push(source)
    return {value}
  } catch (error) {
    context.signal?.throwIfAborted()
    return {error: `${source}: ${context.describeError(error)}`}
  }
}

/** Sharded cluster seen through a mongos. */
async function discoverThroughMongos(reader: ServerReader, context: DiscoveryContext, seedRouters: readonly string[], nowMs: number): Promise<ClusterTopology> {
  const sources = ['hello']
  const warnings: string[] = []
  const {read} = context
  const routers = await attempt('config.mongos', sources, context, async () => (await reader.config('mongos', {}, read)).value)
  if (routers.error) warnings.push(`other routers not listed (${routers.error}); polling the seed routers only`)
  let shards = await attempt('listShards', sources, context, async () => (await reader.listShards(read)).value.shards as Document[])
  if (shards.value === undefined) {
    const fallback = await attempt('config.shards', sources, context, async () => (await reader.config('shards', {}, read)).value)
    if (fallback.value === undefined) warnings.push(`shards not listed (${[shards.error, fallback.error].filter(Boolean).join('; ')})`)
    shards = fallback
  }
  const shardSets = new Set(shardsFromDocuments(shards.value ?? []).map((s) => s.setName).filter((n): n is string => n !== undefined))
  const tried: string[] = []
  let configString: string | undefined
  for (const [source, find] of [
    ['serverStatus.sharding', async () => parseShardingStatus((await reader.serverStatus(['sharding'], read)).value)?.configsvrConnectionString],
    ['getShardMap', async () => configStringFromShardMap((await reader.getShardMap(read)).value)],
    ['connPoolStats.replicaSets', async () => configStringFromConnPoolStats((await reader.connPoolStats(read)).value, shardSets)],
  ] as const) {
    const found = await attempt(source, sources, context, find)
    if (found.error) tried.push(found.error)
    if (found.value) {
      configString = found.value
      break
    }
  }
  const topology = assembleShardedTopology({seedRouters, configMongos: routers.value, shards: shards.value ?? [], configString, sources, warnings, nowMs})
  if (!configString && tried.length > 0) topology.warnings.push(`(${tried.join('; ')})`)
  return topology
}

/** Sharded cluster seen from a shard or config-server member: read config.* on the config server directly. */
async function discoverThroughConfigServer(
  target: Target,
  purpose: string | undefined,
  configString: string,
  context: DiscoveryContext,
  entrySources: string[],
  nowMs: number,
): Promise<ClusterTopology | undefined> {
  const config = parseHostString(configString)
  const sources = [...entrySources]
  const warnings: string[] = []
  for (const host of config.hosts) {
    context.signal?.throwIfAborted()
    const {reader, close} = target.openReader(host, purpose)
    try {
      const shards = (await reader.config('shards', {}, context.read)).value
      sources.push('config.shards')
      const configMongos = await attempt('config.mongos', sources, context, async () => (await reader.config('mongos', {}, context.read)).value)
      if (configMongos.error) warnings.push(`other routers not listed (${configMongos.error})`)
      return assembleShardedTopology({seedRouters: [], configMongos: configMongos.value, shards, configString, sources, warnings, nowMs})
    } catch (error) {
      context.signal?.throwIfAborted()
      warnings.push(`config server ${host}: ${context.describeError(error)}`)
    } finally {
      await close()
    }
  }
  return undefined
}

/** The config server of a replica-set member that belongs to a sharded cluster ("cfg/h1:p,…"), if it does. */
async function configServerOf(reader: ServerReader, hello: Document, read: ReadOptions): Promise<string | undefined> {
  if (hello.configsvr !== undefined && toNumber(hello.configsvr) !== 0) {
    return `${String(hello.setName)}/${[...((hello.hosts as string[]) ?? []), ...((hello.passives as string[]) ?? [])].join(',')}`
  }
  const status = await reader.serverStatus(['sharding'], read).catch(() => undefined)
  return status ? parseShardingStatus(status.value)?.configsvrConnectionString : undefined
}

/** Now on the server's clock when the reply carries it (router pings are written on the servers' clocks). */
const serverNowMs = (reading: Reading<Document>): number => (reading.serverTime ?? reading.receivedAt).getTime()

export interface DiscoveryOptions {
  /** Suffix of the discovery connections' appName (`conns` → `pooltool-conns`), so they show as the command's own. */
  purpose?: string
  /** Stops discovery between (and during) reads: it rejects with the signal's reason. */
  signal?: AbortSignal
}

/**
 * Every host of the cluster behind the target's entry point, with its role.
 * Throws the driver's error when the entry point cannot be reached (commands
 * map it to exit code 4); whatever else cannot be read is a warning.
 */
export async function discoverCluster(target: Target, options: DiscoveryOptions = {}): Promise<ClusterTopology> {
  const context: DiscoveryContext = {
    read: options.signal ? {signal: options.signal} : {},
    describeError: (error) => toPoolToolError(error, {target: target.redactedUri, secrets: target.secrets}).message,
    signal: options.signal,
  }
  options.signal?.throwIfAborted()
  const {reader, close} = target.openReader(undefined, options.purpose)
  try {
    const hello = await reader.hello(context.read)
    const nowMs = serverNowMs(hello)
    const entry = topologyFromHello(hello.value, target.seedHosts)
    if (entry.kind === 'sharded') return await discoverThroughMongos(reader, context, target.seedHosts, nowMs)
    if (entry.kind === 'replset') {
      // A shard or config-server member: the whole cluster is one config-server read away.
      const configString = await configServerOf(reader, hello.value, context.read)
      if (configString) {
        const sharded = await discoverThroughConfigServer(target, options.purpose, configString, context, ['hello', 'serverStatus.sharding'], nowMs)
        if (sharded) return sharded
      }
      return {kind: 'replset', hosts: entry.hosts.map((h) => ({...h, setName: entry.setName})), setName: entry.setName, sources: ['hello'], warnings: [], staleRouters: []}
    }
    // A standalone: name it as the URI does (hello.me is absent on standalones).
    return {kind: 'standalone', hosts: entry.hosts, sources: ['hello'], warnings: [], staleRouters: []}
  } finally {
    await close()
  }
}
