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
 * The assembly is pure (`assembleShardedTopology`) so it can be tested on
 * documents shaped as the manual shows them.
 */
import {createClient, createHostClient, type MongoClient} from '../mongo/client.js'
import type {Document} from '../mongo/driver.js'
import {parseShardingStatus, toNumber} from '../probes/server-status.js'
import {topologyFromHello} from '../probes/topology.js'
import type {ClusterHost, ClusterTopology} from './types.js'

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

export interface DiscoverySettings {
  uri: string
  appName: string
  timeoutMs: number
  seedHosts: readonly string[]
  /** For the one-line reasons in warnings. */
  describeError: (error: unknown) => string
  now?: () => number
}

const SERVER_STATUS_SHARDING_ONLY = {
  serverStatus: 1,
  asserts: 0, connections: 0, extra_info: 0, globalLock: 0, locks: 0, logicalSessionRecordCache: 0, mem: 0, metrics: 0, network: 0,
  opLatencies: 0, opcounters: 0, opcountersRepl: 0, repl: 0, security: 0, storageEngine: 0, tcmalloc: 0, transactions: 0,
  wiredTiger: 0, flowControl: 0, electionMetrics: 0, twoPhaseCommitCoordinator: 0, catalogStats: 0, indexBuilds: 0,
}

async function tryRead<T>(facts: {sources: string[]; warnings: string[]}, source: string, read: () => Promise<T>, describe: (e: unknown) => string): Promise<T | undefined> {
  try {
    const value = await read()
    facts.sources.push(source)
    return value
  } catch (error) {
    facts.warnings.push(`${source} unreadable: ${describe(error)}`)
    return undefined
  }
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

/** Sharded cluster seen through a mongos. */
async function discoverThroughMongos(client: MongoClient, settings: DiscoverySettings, seedRouters: readonly string[]): Promise<ClusterTopology> {
  const sources = ['hello']
  const warnings: string[] = []
  const admin = client.db('admin')
  const config = client.db('config')
  const attempt = async <T>(source: string, read: () => Promise<T | undefined>): Promise<{value?: T; error?: string}> => {
    try {
      const value = await read()
      if (value !== undefined) sources.push(source)
      return {value}
    } catch (error) {
      return {error: `${source}: ${settings.describeError(error)}`}
    }
  }
  const routers = await attempt('config.mongos', () => config.collection('mongos').find({}).toArray())
  if (routers.error) warnings.push(`other routers not listed (${routers.error}); polling the seed routers only`)
  let shards = await attempt('listShards', async () => (await admin.command({listShards: 1})).shards as Document[])
  if (shards.value === undefined) {
    const fallback = await attempt('config.shards', () => config.collection('shards').find({}).toArray())
    if (fallback.value === undefined) warnings.push(`shards not listed (${[shards.error, fallback.error].filter(Boolean).join('; ')})`)
    shards = fallback
  }
  const shardSets = new Set(shardsFromDocuments(shards.value ?? []).map((s) => s.setName).filter((n): n is string => n !== undefined))
  const tried: string[] = []
  let configString: string | undefined
  for (const [source, read] of [
    ['serverStatus.sharding', async () => parseShardingStatus(await admin.command(SERVER_STATUS_SHARDING_ONLY))?.configsvrConnectionString],
    ['getShardMap', async () => configStringFromShardMap(await admin.command({getShardMap: 1}))],
    ['connPoolStats.replicaSets', async () => configStringFromConnPoolStats(await admin.command({connPoolStats: 1}), shardSets)],
  ] as const) {
    const found = await attempt(source, read)
    if (found.error) tried.push(found.error)
    if (found.value) {
      configString = found.value
      break
    }
  }
  const topology = assembleShardedTopology({seedRouters, configMongos: routers.value, shards: shards.value ?? [], configString, sources, warnings, nowMs: (settings.now ?? Date.now)()})
  if (!configString && tried.length > 0) topology.warnings.push(`(${tried.join('; ')})`)
  return topology
}

/** Sharded cluster seen from a shard or config-server member: read config.* on the config server directly. */
async function discoverThroughConfigServer(configString: string, settings: DiscoverySettings, entrySources: string[]): Promise<ClusterTopology | undefined> {
  const config = parseHostString(configString)
  const log = {sources: [...entrySources], warnings: [] as string[]}
  for (const host of config.hosts) {
    const client = createHostClient({uri: settings.uri, appName: settings.appName, timeoutMs: settings.timeoutMs, extra: {serverMonitoringMode: 'poll'}}, host)
    try {
      const db = client.db('config')
      const shards = await db.collection('shards').find({}).toArray()
      log.sources.push('config.shards')
      const configMongos = await tryRead(log, 'config.mongos', () => db.collection('mongos').find({}).toArray(), settings.describeError)
      return assembleShardedTopology({seedRouters: [], configMongos, shards, configString, sources: log.sources, warnings: log.warnings, nowMs: (settings.now ?? Date.now)()})
    } catch (error) {
      log.warnings.push(`config server ${host}: ${settings.describeError(error)}`)
    } finally {
      await client.close().catch(() => undefined)
    }
  }
  return undefined
}

/**
 * Discover the cluster from the entry point. Throws the driver's error when
 * the entry point cannot be reached (the command maps it to exit code 4).
 */
export async function discoverTopology(settings: DiscoverySettings): Promise<ClusterTopology> {
  const client = createClient({uri: settings.uri, appName: settings.appName, timeoutMs: settings.timeoutMs, pool: {maxPoolSize: 1}})
  try {
    await client.connect()
    const admin = client.db('admin')
    const hello = await admin.command({hello: 1}, {readPreference: 'primaryPreferred'})
    const entry = topologyFromHello(hello, settings.seedHosts)
    if (entry.kind === 'sharded') return await discoverThroughMongos(client, settings, settings.seedHosts)
    if (entry.kind === 'replset') {
      // A shard or config-server member: the whole cluster is one config-server read away.
      let configString: string | undefined
      if (hello.configsvr !== undefined && toNumber(hello.configsvr) !== 0) {
        configString = `${String(hello.setName)}/${[...((hello.hosts as string[]) ?? []), ...((hello.passives as string[]) ?? [])].join(',')}`
      } else {
        const status = await admin.command(SERVER_STATUS_SHARDING_ONLY, {readPreference: 'primaryPreferred'}).catch(() => undefined)
        configString = status ? parseShardingStatus(status)?.configsvrConnectionString : undefined
      }
      if (configString) {
        const sharded = await discoverThroughConfigServer(configString, settings, ['hello', 'serverStatus.sharding'])
        if (sharded) return sharded
      }
      return {kind: 'replset', hosts: entry.hosts.map((h) => ({...h, setName: entry.setName})), setName: entry.setName, sources: ['hello'], warnings: [], staleRouters: []}
    }
    // A standalone: name it as the URI does (hello.me is absent on standalones).
    return {kind: 'standalone', hosts: entry.hosts, sources: ['hello'], warnings: [], staleRouters: []}
  } finally {
    await client.close().catch(() => undefined)
  }
}
