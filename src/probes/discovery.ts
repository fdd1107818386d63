/**
 * Every host of the cluster behind an entry point, with its role.
 *
 * - standalone: the entry host;
 * - replica set: `hello` hosts + passives (role primary / secondary, passives
 *   marked `passive`) + arbiters (role `arbiter`); hidden members are in none of
 *   hello's lists: `replSetGetConfig` (clusterMonitor) adds them (role secondary,
 *   marked `hidden`); without it they are not seen (`hiddenMembersVisible: false`;
 *   a hidden entry node is kept, marked `hidden`);
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
import type {OpenReader, OpenReaderOptions} from './host-connection.js'
import type {ReadOptions, Reading, ServerReader} from './reader.js'
import {parseShardingStatus, toNumber} from './server-status.js'
import {type ClusterHost, type ClusterTopology, connectAddress, type HostEntry, type HostRole, replayOf, topologyFromHello} from './topology.js'

/**
 * What discovery needs of a target (src/target.ts's Target has it all): the hosts the URI names, the
 * connect timeout, readers to open, and what an error message may show (the redacted URI, never the
 * secrets).
 */
export interface DiscoveryTarget {
  readonly uri: string
  readonly redactedUri: string
  readonly seedHosts: readonly string[]
  readonly secrets: readonly string[]
  readonly connection: {readonly timeoutMs: number}
  openReader(host?: string, purpose?: string, options?: OpenReaderOptions): OpenReader
}

export type {ClusterHost, ClusterTopology}

/** A router whose config.mongos ping is older than this is not polled (mongos pings every 30 s). */
export const STALE_ROUTER_MS = 10 * 60 * 1000

export interface HostList {
  setName?: string
  hosts: string[]
  /** Parts that are not host[:port] (a typo in config.shards, a name with a space): warned about, never polled. */
  invalid?: string[]
}

/** host[:port] as a connection string takes it (a name, IPv4 or [IPv6], port 0-65535). */
export function isHostPort(text: string): boolean {
  if (text.length === 0 || /[\s/@?#,]/.test(text)) return false
  try {
    const url = new URL(`mongodb://${text}`)
    return url.hostname.length > 0
  } catch {
    return false
  }
}

/** "rs0/h1:27017,h2:27017" → {setName: "rs0", hosts}; "h1:27017" → {hosts: ["h1:27017"]}. */
export function parseHostString(text: string): HostList {
  const trimmed = text.trim()
  const slash = trimmed.indexOf('/')
  const setName = slash > 0 ? trimmed.slice(0, slash) : undefined
  const parts = (slash >= 0 ? trimmed.slice(slash + 1) : trimmed)
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0)
  const hosts = parts.filter(isHostPort)
  const invalid = parts.filter((h) => !isHostPort(h))
  return {...(setName === undefined ? {} : {setName}), hosts, ...(invalid.length > 0 ? {invalid} : {})}
}

export interface ShardEntry {
  id: string
  setName?: string
  hosts: string[]
  /** `state: 1` once the shard is aware it is a shard; `draining: true` while removed. */
  draining?: boolean
  /** Zone tags (`tags: ["NYC"]`, sh.addShardTag / sh.addShardToZone). */
  tags?: string[]
  /** Host parts that do not parse: warned about, not polled. */
  invalid?: string[]
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
    if (Array.isArray(doc.tags) && doc.tags.length > 0) entry.tags = doc.tags.map(String)
    if (list.invalid) entry.invalid = list.invalid
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
): {live: string[]; stale: Array<{host: string; lastPing?: string; mongoVersion?: string}>; mongoVersions: Record<string, string>} {
  const live: string[] = []
  const stale: Array<{host: string; lastPing?: string; mongoVersion?: string}> = []
  const mongoVersions: Record<string, string> = {}
  for (const doc of docs) {
    if (typeof doc?._id !== 'string') continue
    const version = typeof doc.mongoVersion === 'string' ? doc.mongoVersion : undefined
    if (version !== undefined) mongoVersions[doc._id] = version
    const ping = asDate(doc.ping)
    if (ping && nowMs - ping.getTime() <= staleMs) live.push(doc._id)
    else stale.push({host: doc._id, ...(ping ? {lastPing: ping.toISOString()} : {}), ...(version === undefined ? {} : {mongoVersion: version})})
  }
  return {live, stale, mongoVersions}
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
  /** The node the URI reached, as the cluster names it and as the user addressed it (listed first, once). */
  entry?: ClusterHost
  configMongos?: readonly Document[]
  shards?: readonly Document[]
  /** "cfg/h1:p,…" */
  configString?: string
  sources?: string[]
  warnings?: string[]
  nowMs: number
  staleMs?: number
}

/** One warning per host string that is not host[:port]: the rest of the cluster is still polled. */
function invalidHostWarnings(where: string, invalid: readonly string[] | undefined): string[] {
  return (invalid ?? []).map((part) => `${where} names '${part}', which is not host:port: not polled`)
}

/** The entry node, then routers, then each shard's members, then the config server's members; every host once. */
export function assembleShardedTopology(facts: ShardedFacts): ClusterTopology {
  const hosts: ClusterHost[] = []
  const seen = new Set<string>()
  const add = (entry: ClusterHost) => {
    const existing = hosts.find((h) => h.host === entry.host)
    if (existing) {
      // The entry node comes first with its address; what the cluster's lists know of it (its role as a
      // shard or config member, shard id, tags, version) is kept.
      if (existing.entry) existing.role = entry.role
      for (const key of ['setName', 'shard', 'tags', 'mongoVersion'] as const) if (existing[key] === undefined && entry[key] !== undefined) Object.assign(existing, {[key]: entry[key]})
      return
    }
    seen.add(entry.host)
    hosts.push(entry)
  }
  const warnings = [...(facts.warnings ?? [])]
  if (facts.entry) add({...facts.entry})
  const routers = routersFromConfigMongos(facts.configMongos ?? [], facts.nowMs, facts.staleMs)
  const routerEntry = (host: string): ClusterHost => {
    const mongoVersion = routers.mongoVersions[host]
    return {host, role: 'mongos', ...(mongoVersion === undefined ? {} : {mongoVersion})}
  }
  for (const host of facts.seedRouters) add(routerEntry(host))
  for (const host of routers.live) add(routerEntry(host))
  const staleRouters = routers.stale.filter((r) => !seen.has(r.host))
  for (const shard of shardsFromDocuments(facts.shards ?? [])) {
    warnings.push(...invalidHostWarnings(`shard ${shard.id}`, shard.invalid))
    for (const host of shard.hosts) {
      add({host, role: 'shard', shard: shard.id, ...(shard.setName === undefined ? {} : {setName: shard.setName}), ...(shard.tags ? {tags: shard.tags} : {})})
    }
  }
  if (facts.configString) {
    const config = parseHostString(facts.configString)
    warnings.push(...invalidHostWarnings('the config server string', config.invalid))
    for (const host of config.hosts) add({host, role: 'config', ...(config.setName === undefined ? {} : {setName: config.setName})})
  } else {
    warnings.push('config server not found (serverStatus.sharding, getShardMap and connPoolStats named none): not polled')
  }
  if (facts.shards === undefined) warnings.push('shards not listed (listShards and config.shards unreadable): not polled')
  const topology: ClusterTopology = {kind: 'sharded', hosts, sources: [...(facts.sources ?? [])], warnings, staleRouters}
  if (facts.configMongos !== undefined) topology.configMongosCount = facts.configMongos.length
  if (facts.entry) topology.entry = {host: facts.entry.host, address: connectAddress(facts.entry), role: hosts.find((h) => h.entry)?.role ?? facts.entry.role}
  return topology
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

/** Sharded cluster seen through a mongos: config.mongos, listShards and the config server's string, read at once. */
async function discoverThroughMongos(reader: ServerReader, context: DiscoveryContext, entry: EntryNode): Promise<ClusterTopology> {
  const sources = ['hello']
  const warnings: string[] = []
  const {read} = context
  const [routers, listed] = await Promise.all([
    attempt('config.mongos', sources, context, async () => (await reader.config('mongos', {}, read)).value),
    attempt('listShards', sources, context, async () => (await reader.listShards(read)).value.shards as Document[]),
  ])
  if (routers.error) warnings.push(`other routers not listed (${routers.error}); polling the seed routers only`)
  let shards = listed
  if (shards.value === undefined) {
    const fallback = await attempt('config.shards', sources, context, async () => (await reader.config('shards', {}, read)).value)
    if (fallback.value === undefined) warnings.push(`shards not listed (${[shards.error, fallback.error].filter(Boolean).join('; ')})`)
    shards = fallback
  }
  const shardSets = new Set(shardsFromDocuments(shards.value ?? []).map((s) => s.setName).filter((n): n is string => n !== undefined))
  const tried: string[] = []
  let configString = entry.status ? parseShardingStatus(entry.status.value)?.configsvrConnectionString : undefined
  if (configString) sources.push('serverStatus.sharding')
  else if (!entry.status) tried.push('serverStatus.sharding: unreadable')
  for (const [source, find] of [
    ['getShardMap', async () => configStringFromShardMap((await reader.getShardMap(read)).value)],
    ['connPoolStats.replicaSets', async () => configStringFromConnPoolStats((await reader.connPoolStats(read)).value, shardSets)],
  ] as const) {
    if (configString) break
    const found = await attempt(source, sources, context, find)
    if (found.error) tried.push(found.error)
    if (found.value) configString = found.value
  }
  const topology = assembleShardedTopology({
    seedRouters: entry.host ? [] : entry.seedHosts,
    ...(entry.host ? {entry: entry.host} : {}),
    configMongos: routers.value,
    shards: shards.value ?? [],
    configString,
    sources,
    warnings,
    nowMs: entry.nowMs,
  })
  if (!configString && tried.length > 0) topology.warnings.push(`(${tried.join('; ')})`)
  return topology
}

/** How long discovery waits for one config-server member a shard member names (they are tried at once; the first to answer is read). */
export const CONFIG_MEMBER_TIMEOUT_MS = 3000

/** config.shards and config.mongos from one config-server member, with what was read and what was not. */
async function readConfigCollections(reader: ServerReader, context: DiscoveryContext) {
  const sources: string[] = []
  const warnings: string[] = []
  const [shards, configMongos] = await Promise.all([
    reader.config('shards', {}, context.read),
    attempt('config.mongos', sources, context, async () => (await reader.config('mongos', {}, context.read)).value),
  ])
  sources.unshift('config.shards')
  if (configMongos.error) warnings.push(`other routers not listed (${configMongos.error})`)
  return {shards: shards.value, configMongos: configMongos.value, sources, warnings}
}

/**
 * Sharded cluster seen from a config-server member (read config.* on it, over the entry's own
 * connection) or a shard member (read config.* on the config-server members it names, all at
 * once with a short timeout each: through a tunnel they may not be reachable at all).
 */
async function discoverThroughConfigServer(
  target: DiscoveryTarget,
  purpose: string | undefined,
  configString: string,
  context: DiscoveryContext,
  entry: EntryNode,
  entryReader: ServerReader | undefined,
): Promise<{topology?: ClusterTopology; warnings: string[]}> {
  const entrySources = ['hello', ...(entry.status ? ['serverStatus.sharding'] : [])]
  const assemble = (read: Awaited<ReturnType<typeof readConfigCollections>>) =>
    assembleShardedTopology({
      seedRouters: [],
      ...(entry.host ? {entry: entry.host} : {}),
      shards: read.shards,
      ...(read.configMongos ? {configMongos: read.configMongos} : {}),
      configString,
      sources: [...entrySources, ...read.sources],
      warnings: read.warnings,
      nowMs: entry.nowMs,
    })
  if (entryReader) {
    try {
      return {topology: assemble(await readConfigCollections(entryReader, context)), warnings: []}
    } catch (error) {
      context.signal?.throwIfAborted()
      return {warnings: [`config.shards on this config server: ${context.describeError(error)}`]}
    }
  }
  const members = parseHostString(configString).hosts
  const timeoutMs = Math.min(target.connection.timeoutMs, CONFIG_MEMBER_TIMEOUT_MS)
  const opened = members.map((host) => ({host, ...target.openReader(host, purpose, {timeoutMs})}))
  const failures: string[] = []
  try {
    const first = await Promise.any(
      opened.map(({host, reader}) =>
        readConfigCollections(reader, context).catch((error: unknown) => {
          failures.push(`config server ${host}: ${context.describeError(error)}`)
          throw error
        }),
      ),
    ).catch(() => undefined)
    context.signal?.throwIfAborted()
    return first ? {topology: assemble(first), warnings: []} : {warnings: [...failures]}
  } finally {
    await Promise.all(opened.map(({close}) => close()))
  }
}

/** The config server of a replica-set member that belongs to a sharded cluster ("cfg/h1:p,…"), if it does. */
function configServerOf(hello: Document, status: Reading<Document> | undefined): string | undefined {
  if (isConfigServerMember(hello)) {
    return `${String(hello.setName)}/${[...((hello.hosts as string[]) ?? []), ...((hello.passives as string[]) ?? [])].join(',')}`
  }
  return status ? parseShardingStatus(status.value)?.configsvrConnectionString : undefined
}

/** hello `configsvr` (2 on a CSRS member) marks a config-server member. */
export function isConfigServerMember(hello: Document): boolean {
  return hello.configsvr !== undefined && toNumber(hello.configsvr) !== 0
}

/** Now on the server's clock when the reply carries it (router pings are written on the servers' clocks). */
const serverNowMs = (reading: Reading<Document>): number => (reading.serverTime ?? reading.receivedAt).getTime()

export interface DiscoveryOptions {
  /** Suffix of the discovery connections' appName (`conns` → `pooltool-conns`), so they show as the command's own. */
  purpose?: string
  /** Stops discovery between (and during) reads: it rejects with the signal's reason. */
  signal?: AbortSignal
  /** false (`--no-discover`): the URI's hosts only, with the roles the entry's hello gives them. */
  discover?: boolean
}

/** What the entry point said about itself, read once. */
interface EntryNode {
  seedHosts: readonly string[]
  /** The node the URI reached, when the URI names one host: polled through that address. */
  host?: ClusterHost
  /** serverStatus with `sharding` (the top-level `host` comes with it); absent when it could not be read. */
  status?: Reading<Document>
  nowMs: number
}

/**
 * The address the URI reaches its entry node through: its one seed. An SRV name is no host, and
 * with several seeds the driver picks one; in both cases the cluster's own names are used.
 */
function entryAddressOf(target: DiscoveryTarget): string | undefined {
  if (target.seedHosts.length !== 1 || /^mongodb\+srv:/i.test(target.uri)) return undefined
  return target.seedHosts[0]
}

/** How the cluster names the entry node: hello `me` (replica-set members), else serverStatus `host` (mongos, standalone). */
function entryNameOf(hello: Document, status: Reading<Document> | undefined): string | undefined {
  if (typeof hello.me === 'string' && hello.me.length > 0) return hello.me
  const host = status?.value.host
  return typeof host === 'string' && isHostPort(host) ? host : undefined
}

function entryRoleOf(hello: Document, kind: ClusterTopology['kind']): HostRole {
  if (kind === 'sharded') return 'mongos'
  if (kind === 'standalone') return 'standalone'
  if (isConfigServerMember(hello)) return 'config'
  if (hello.arbiterOnly === true) return 'arbiter'
  return hello.isWritablePrimary === true || hello.ismaster === true ? 'primary' : 'secondary'
}

/**
 * The hidden members of a replica set from `replSetGetConfig` (`config.members[]`: `{host, hidden, arbiterOnly,
 * priority}`): role secondary (a hidden member has priority 0: never primary), marked hidden and passive.
 * Undefined when the reply has no member list.
 */
export function hiddenMembersOf(reply: Document): HostEntry[] | undefined {
  const members = (reply.config as Document | undefined)?.members
  if (!Array.isArray(members)) return undefined
  return members
    .filter((m: Document) => m?.hidden === true && typeof m.host === 'string' && m.arbiterOnly !== true)
    .map((m: Document) => ({host: m.host as string, role: 'secondary' as const, hidden: true as const, passive: true as const}))
}

/** What a replica-set member says of itself: priority 0 (`passive`), `hidden`. */
function entryFlagsOf(hello: Document): Pick<ClusterHost, 'passive' | 'hidden'> {
  return {...(hello.passive === true ? {passive: true as const} : {}), ...(hello.hidden === true ? {hidden: true as const} : {})}
}

/** Puts the entry node first in a replica set's member list, with its address (and adds it when hello's hosts omit it, e.g. hidden). */
function withEntryFirst(hosts: ClusterHost[], entry: ClusterHost | undefined): ClusterHost[] {
  if (!entry) return hosts
  const rest = hosts.filter((h) => h.host !== entry.host)
  const listed = hosts.find((h) => h.host === entry.host)
  return [{...listed, ...entry, role: listed?.role ?? entry.role}, ...rest]
}

/** `--no-discover`: the URI's hosts, the entry named as the cluster names it. */
function seedsOnly(target: DiscoveryTarget, hello: Document, kind: ClusterTopology['kind'], entry: ClusterHost | undefined): ClusterTopology {
  const arbiters = new Set(Array.isArray(hello.arbiters) ? hello.arbiters : [])
  const roleOf = (host: string): HostRole =>
    kind === 'replset' ? (arbiters.has(host) ? 'arbiter' : host === hello.primary ? 'primary' : 'secondary') : kind === 'sharded' ? 'mongos' : 'standalone'
  const hosts = entry ? [entry] : target.seedHosts.map((host) => ({host, role: roleOf(host)}))
  const topology: ClusterTopology = {kind, hosts, sources: ['hello'], warnings: ["--no-discover: polling the URI's hosts only"], staleRouters: []}
  if (typeof hello.setName === 'string') topology.setName = hello.setName
  if (entry) topology.entry = {host: entry.host, address: connectAddress(entry), role: entry.role}
  return topology
}

/**
 * Every host of the cluster behind the target's entry point, with its role.
 *
 * The entry node is authoritative: a URI naming one host (a port-forward, SSH tunnel, NAT,
 * Docker, Kubernetes) reaches the cluster through an address its members do not know; the
 * entry keeps that address (`ClusterHost.address`) beside the name the cluster gives it, and
 * members that cannot be reached from here are the pollers' business, not discovery's.
 *
 * Throws the driver's error when the entry point cannot be reached (commands map it to exit
 * code 4); whatever else cannot be read is a warning.
 */
export async function discoverCluster(target: DiscoveryTarget, options: DiscoveryOptions = {}): Promise<ClusterTopology> {
  const {topology, hello} = await discoverFromEntry(target, options)
  const replay = replayOf(hello)
  if (replay) topology.replayOf = replay
  return topology
}

async function discoverFromEntry(target: DiscoveryTarget, options: DiscoveryOptions): Promise<{topology: ClusterTopology; hello: Document}> {
  const context: DiscoveryContext = {
    read: options.signal ? {signal: options.signal} : {},
    describeError: (error) => toPoolToolError(error, {target: target.redactedUri, secrets: target.secrets}).message,
    signal: options.signal,
  }
  options.signal?.throwIfAborted()
  const {reader, close} = target.openReader(undefined, options.purpose)
  try {
    const [hello, status] = await Promise.all([
      reader.hello(context.read),
      // serverStatus needs clusterMonitor; without it the entry keeps the URI's name and shards find no config server.
      reader.serverStatus(['sharding'], context.read).catch((error: unknown) => {
        options.signal?.throwIfAborted()
        void error
        return undefined
      }),
    ])
    const kind = topologyFromHello(hello.value, target.seedHosts).kind
    const address = entryAddressOf(target)
    const name = address === undefined ? undefined : (entryNameOf(hello.value, status) ?? address)
    const entryHost: ClusterHost | undefined =
      address === undefined || name === undefined
        ? undefined
        : {
            host: name,
            ...(name === address ? {} : {address}),
            entry: true,
            role: entryRoleOf(hello.value, kind),
            ...(typeof hello.value.setName === 'string' ? {setName: hello.value.setName, ...entryFlagsOf(hello.value)} : {}),
          }
    const entry: EntryNode = {seedHosts: target.seedHosts, ...(entryHost ? {host: entryHost} : {}), ...(status ? {status} : {}), nowMs: serverNowMs(hello)}
    if (options.discover === false) return {topology: seedsOnly(target, hello.value, kind, entryHost), hello: hello.value}
    if (kind === 'sharded') return {topology: await discoverThroughMongos(reader, context, entry), hello: hello.value}
    if (kind === 'replset') {
      const configWarnings: string[] = []
      // A shard or config-server member: the whole cluster is one config-server read away.
      const configString = configServerOf(hello.value, status)
      if (configString) {
        const sharded = await discoverThroughConfigServer(target, options.purpose, configString, context, entry, isConfigServerMember(hello.value) ? reader : undefined)
        if (sharded.topology) return {topology: sharded.topology, hello: hello.value}
        configWarnings.push(`part of a sharded cluster whose config server could not be read from here; showing this replica set only`, ...sharded.warnings)
      }
      const members = topologyFromHello(hello.value, target.seedHosts)
      const sources = ['hello']
      // hello lists no hidden member: replSetGetConfig (clusterMonitor) does; without it they stay unseen, and say so.
      const config = await attempt('replSetGetConfig', sources, context, async () => hiddenMembersOf((await reader.replSetGetConfig(context.read)).value))
      const listed = [...members.hosts, ...(config.value ?? []).filter((m) => !members.hosts.some((h) => h.host === m.host))]
      const hosts = withEntryFirst(
        listed.map((h) => ({...h, setName: members.setName!})),
        entryHost,
      )
      const topology: ClusterTopology = {kind: 'replset', hosts, setName: members.setName!, sources, warnings: configWarnings, staleRouters: [], hiddenMembersVisible: config.value !== undefined}
      if (entryHost) topology.entry = {host: entryHost.host, address: connectAddress(entryHost), role: hosts[0]!.role}
      return {topology, hello: hello.value}
    }
    // A standalone: named as it names itself (serverStatus.host), reached through the URI's address.
    const hosts = entryHost ? [entryHost] : topologyFromHello(hello.value, target.seedHosts).hosts
    const topology: ClusterTopology = {kind: 'standalone', hosts, sources: ['hello'], warnings: [], staleRouters: []}
    if (entryHost) topology.entry = {host: entryHost.host, address: connectAddress(entryHost), role: 'standalone'}
    return {topology, hello: hello.value}
  } finally {
    await close()
  }
}
