/**
 * The command table of a simulated mongos: mongod's table with the routed commands
 * overridden. CRUD goes to the database's primary shard (creating the database through
 * the config server on first write), the `config` database to the config server, DDL to
 * its coordinator (config server on 4.4, primary shard on 6.0/7.0), `$currentOp` to every
 * shard; `listShards`, `connPoolStats`, `enableSharding`, `shardCollection`, `movePrimary`.
 * All of it over this router's own outbound pools.
 */
import {Long, Timestamp, type Document} from 'bson'
import {mongodCommands} from '../commands/index.js'
import type {CommandContext, CommandSpec} from '../commands/registry.js'
import {clusterAdmin, clusterMonitor, truthyFlag} from '../commands/util.js'
import {CommandError} from '../errors.js'
import {clientConnectionCount} from '../internal/traffic.js'
import {runPipeline} from '../storage/aggregate.js'
import {isNumeric, isPlainObject, toNumber, valuesEqual} from '../storage/values.js'
import {SHARDED_DATA_DISTRIBUTION, shardedDataDistribution} from './data-distribution.js'
import {type DdlKind, internalCommand, replyError, runLocal} from './ddl.js'
import {type ProcessRuntime, type ShardEntry, ShardedCluster, shardingStatusOf} from './state.js'

/** The command without `$`-fields (the wire client adds `$db`). */
function forwardable(cmd: Document): Document {
  const out: Document = {}
  for (const [k, v] of Object.entries(cmd)) if (k[0] !== '$') out[k] = v
  return out
}

async function ensureDatabase(cluster: ShardedCluster, rt: ProcessRuntime, db: string): Promise<ShardEntry> {
  const existing = cluster.primaryShardOf(db)
  if (existing) return existing
  const reply = await cluster.toConfig(rt, 'admin', {_configsvrCreateDatabase: db, writeConcern: {w: 'majority'}})
  if (reply.ok !== 1) throw replyError(reply)
  return cluster.primaryShardOf(db)!
}

/** Routes by database: config → config server; known database → its primary shard; unknown → empty local answer (or create it). */
async function route(ctx: CommandContext, create: boolean, db = ctx.db): Promise<Document> {
  const {cluster, rt} = ShardedCluster.of(ctx.proc)
  if (db === 'config') return cluster.toConfig(rt, 'config', forwardable(ctx.cmd))
  const shard = create ? await ensureDatabase(cluster, rt, db) : cluster.primaryShardOf(db)
  if (!shard) return runLocal(ctx, ctx.db, ctx.cmd) // nothing there yet: mongod's answer on an empty store
  return cluster.toShard(rt, shard, ctx.db, forwardable(ctx.cmd))
}

const ROUTED_OPCOUNTER: Record<string, CommandSpec['opCounter']> = {insert: 'insert', update: 'update', delete: 'delete', find: 'query'}

const routed = (name: string, create: boolean): CommandSpec => {
  const base = mongodCommands().lookup(name)!
  return {...base, lock: undefined, opCounter: ROUTED_OPCOUNTER[name] ?? base.opCounter, handler: (ctx) => route(ctx, create)}
}

/** DDL through its coordinator. */
async function ddl(ctx: CommandContext, kind: DdlKind, target: string, db: string, args: Document): Promise<Document> {
  const {cluster, rt} = ShardedCluster.of(ctx.proc)
  if (db === 'config' || db === 'admin' || db === 'local') {
    if (kind === 'create' || kind === 'drop') return route(ctx, false, db)
    throw new CommandError(20, `can't ${kind} the ${db} database`)
  }
  const how = internalCommand(cluster.lockModel, kind)
  const body = {[how.name]: target, ...args, writeConcern: {w: 'majority'}}
  let reply: Document
  if (how.on === 'config') {
    if (kind === 'create' || kind === 'shardCollection') await ensureDatabase(cluster, rt, db)
    reply = await cluster.toConfig(rt, 'admin', body)
  } else {
    if (kind === 'drop' || kind === 'dropDatabase') {
      const primary = cluster.primaryShardOf(db)
      if (!primary) {
        if (kind === 'dropDatabase') return {info: 'database does not exist', ok: 1}
        return runLocal(ctx, ctx.db, ctx.cmd) // mongod's answer for a namespace that does not exist
      }
      reply = await cluster.toShard(rt, primary, 'admin', body)
    } else {
      reply = await cluster.toShard(rt, await ensureDatabase(cluster, rt, db), 'admin', body)
    }
  }
  return reply
}

function nsArg(ctx: CommandContext): {db: string; coll: string; ns: string} {
  const ns = ctx.cmd[ctx.name]
  if (typeof ns !== 'string' || !ns.includes('.')) throw new CommandError(73, `Invalid namespace specified '${String(ns)}'`)
  const i = ns.indexOf('.')
  return {db: ns.slice(0, i), coll: ns.slice(i + 1), ns}
}

function collName(ctx: CommandContext): string {
  const v = ctx.cmd[ctx.name]
  if (typeof v !== 'string' || v.length === 0) throw new CommandError(73, `Invalid namespace specified '${ctx.db}.${String(v)}'`)
  return v
}

async function create(ctx: CommandContext): Promise<Document> {
  const coll = collName(ctx)
  const {create: _c, ...options} = forwardable(ctx.cmd)
  const {cluster} = ShardedCluster.of(ctx.proc)
  const reply = await ddl(ctx, 'create', `${ctx.db}.${coll}`, ctx.db, {options})
  if (reply.ok === 1 && cluster.lockModel !== 'dist-4.4') return {ok: 1}
  return reply
}

const drop = (ctx: CommandContext) => ddl(ctx, 'drop', `${ctx.db}.${collName(ctx)}`, ctx.db, {})
const dropDatabase = (ctx: CommandContext) => ddl(ctx, 'dropDatabase', ctx.db, ctx.db, {})

function dbArg(ctx: CommandContext): string {
  const db = ctx.cmd[ctx.name]
  if (typeof db !== 'string' || db.length === 0 || db.includes('.')) throw new CommandError(73, `invalid db name specified: ${String(db)}`)
  return db
}

async function enableSharding(ctx: CommandContext): Promise<Document> {
  const db = dbArg(ctx)
  const args: Document = {}
  if (typeof ctx.cmd.primaryShard === 'string') args.primaryShard = ctx.cmd.primaryShard
  const reply = await ddl(ctx, 'enableSharding', db, db, args)
  return reply.ok === 1 ? {ok: 1} : reply
}

async function shardCollection(ctx: CommandContext): Promise<Document> {
  const {db, ns} = nsArg(ctx)
  const {cluster} = ShardedCluster.of(ctx.proc)
  if (!isPlainObject(ctx.cmd.key)) throw new CommandError(40414, "BSON field 'shardCollection.key' is missing but a required field")
  const args = cluster.lockModel === 'dist-4.4' ? {key: ctx.cmd.key, unique: ctx.cmd.unique === true} : {shardKey: ctx.cmd.key, unique: ctx.cmd.unique === true}
  return ddl(ctx, 'shardCollection', ns, db, args)
}

async function movePrimary(ctx: CommandContext): Promise<Document> {
  const db = dbArg(ctx)
  if (typeof ctx.cmd.to !== 'string') throw new CommandError(40414, "BSON field 'movePrimary.to' is missing but a required field")
  const {cluster} = ShardedCluster.of(ctx.proc)
  if (!cluster.databaseEntry(db)) throw new CommandError(26, `Database ${db} not found`)
  return ddl(ctx, 'movePrimary', db, db, {to: ctx.cmd.to})
}

async function listShards(ctx: CommandContext): Promise<Document> {
  const {cluster, rt} = ShardedCluster.of(ctx.proc)
  const reply = await cluster.toConfig(rt, 'config', {find: 'shards', filter: {}, batchSize: 10_000})
  if (reply.ok !== 1) return reply
  return {shards: reply.cursor.firstBatch, ok: 1}
}

function connPoolStats(ctx: CommandContext): Document {
  const {cluster, rt} = ShardedCluster.of(ctx.proc)
  return rt.pools.toConnPoolStats(cluster.connPoolStatsShape(), cluster.replicaSetsDoc(), clientConnectionCount(ctx.proc))
}

async function listDatabases(ctx: CommandContext): Promise<Document> {
  const {cluster, rt} = ShardedCluster.of(ctx.proc)
  const nameOnly = truthyFlag(ctx.cmd.nameOnly)
  const sizes = new Map<string, number>()
  const add = (docs: Document[]) => {
    for (const d of docs) {
      if (d.name === 'local') continue
      sizes.set(d.name, (sizes.get(d.name) ?? 0) + (isNumeric(d.sizeOnDisk) ? toNumber(d.sizeOnDisk) : 0))
    }
  }
  for (const s of cluster.shards) {
    const r = await cluster.toShard(rt, s, 'admin', {listDatabases: 1})
    if (r.ok === 1) add(r.databases)
  }
  const c = await cluster.toConfig(rt, 'admin', {listDatabases: 1})
  if (c.ok === 1) add((c.databases as Document[]).filter((d) => d.name === 'config' || d.name === 'admin'))
  const databases = [...sizes].sort(([a], [b]) => a.localeCompare(b)).map(([name, sizeOnDisk]) => (nameOnly ? {name} : {name, sizeOnDisk, empty: sizeOnDisk === 0}))
  const totalSize = [...sizes.values()].reduce((a, b) => a + b, 0)
  return nameOnly ? {databases, ok: 1} : {databases, totalSize, totalSizeMb: Math.round(totalSize / 1048576), ok: 1}
}

/**
 * One shard's $currentOp document as the shard shapes it for a router (document_source_current_op.cpp):
 * `shard` first, `opid` as "shard:opid", and `client` renamed `client_s` — the address is the router's
 * connection, not the application's.
 */
function fromShard(shard: string, d: Document): Document {
  const out: Document = {shard}
  for (const [k, v] of Object.entries(d)) {
    if (k === 'client') out.client_s = v
    else if (k === 'opid') out.opid = `${shard}:${String(v ?? '')}`
    else out[k] = v
  }
  return out
}

/** $currentOp / currentOp across the shards (each document tagged with its shard, opid "shard:opid"). */
async function shardOps(ctx: CommandContext, stage: Document): Promise<Document[]> {
  const {cluster, rt} = ShardedCluster.of(ctx.proc)
  const out: Document[] = []
  await Promise.all(
    cluster.shards.map(async (s) => {
      const r = await cluster.toShard(rt, s, 'admin', {aggregate: 1, pipeline: [{$currentOp: {...stage, localOps: false}}], cursor: {batchSize: 100_000}})
      if (r.ok !== 1) return
      for (const d of r.cursor.firstBatch as Document[]) out.push(fromShard(s.name, d))
    }),
  )
  return out
}

async function aggregate(ctx: CommandContext): Promise<Document> {
  const pipeline = ctx.cmd.pipeline
  const first = Array.isArray(pipeline) && isPlainObject(pipeline[0]) ? pipeline[0] : undefined
  if (first && '$currentOp' in first) {
    const stage = isPlainObject(first.$currentOp) ? first.$currentOp : {}
    if (truthyFlag(stage.localOps)) return runLocal(ctx, ctx.db, ctx.cmd)
    if (ctx.db !== 'admin' || ctx.cmd.aggregate !== 1) throw new CommandError(73, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
    const docs = runPipeline(await shardOps(ctx, stage), pipeline.slice(1))
    return ctx.proc.cursors.open('admin.$cmd.aggregate', docs, undefined, false, ctx.conn.id)
  }
  if (first && SHARDED_DATA_DISTRIBUTION in first) {
    const {cluster, rt} = ShardedCluster.of(ctx.proc)
    const docs = runPipeline(await shardedDataDistribution(cluster, rt, ctx.db, ctx.cmd, first[SHARDED_DATA_DISTRIBUTION]), pipeline.slice(1))
    return ctx.proc.cursors.open('admin.$cmd.aggregate', docs, undefined, false, ctx.conn.id)
  }
  return route(ctx, false)
}

async function currentOp(ctx: CommandContext): Promise<Document> {
  const all = ctx.cmd.$all === true
  const inprog = await shardOps(ctx, {allUsers: ctx.cmd.$ownOps !== true, idleConnections: all, idleSessions: all})
  return {inprog, ok: 1}
}

/** Cursors opened on the router itself ($currentOp, empty answers) first, then the shard's. */
async function getMoreOrKill(ctx: CommandContext): Promise<Document> {
  if (ctx.proc.cursors.openCount > 0) {
    const local = await runLocal(ctx, ctx.db, ctx.cmd)
    const found = ctx.name === 'getMore' ? local.ok === 1 : Array.isArray(local.cursorsKilled) && local.cursorsKilled.length > 0
    if (found) return local
  }
  return route(ctx, false)
}

async function renameCollection(ctx: CommandContext): Promise<Document> {
  const from = String(ctx.cmd.renameCollection ?? '')
  const db = from.split('.')[0]
  return route(ctx, false, db)
}

/** The balancer's round interval (`kBalanceRoundDefaultInterval`, 10 s, src/mongo/db/s/balancer/balancer.cpp). */
const BALANCER_ROUND_MS = 10_000

/**
 * balancerStatus as the manual shows it: `mode` ('full' unless config.settings says the balancer is
 * stopped or sets a mode), `inBalancerRound`, `numBalancerRounds` (int64: one per 10 s round since the
 * config server started; the sim never migrates, so no round is ever in progress). Answered by the router
 * from the catalog it shares with the config server instead of forwarding `_configsvrBalancerStatus`.
 */
function balancerStatus(ctx: CommandContext): Document {
  const {cluster} = ShardedCluster.of(ctx.proc)
  const settings = cluster.configData.collection('config', 'settings', false)?.get('balancer')
  const mode = typeof settings?.mode === 'string' ? settings.mode : settings?.stopped === true ? 'off' : 'full'
  const since = Date.now() - cluster.runtime(cluster.configProc).startedAt
  const rounds = Math.floor(since / (BALANCER_ROUND_MS * cluster.scale))
  return {mode, inBalancerRound: false, numBalancerRounds: Long.fromNumber(rounds), ok: 1}
}

/** The hosts of a "<set>/<h1>,<h2>" connection string. */
function hostsOf(connString: string): string[] {
  const slash = connString.indexOf('/')
  return (slash >= 0 ? connString.slice(slash + 1) : connString).split(',').filter((h) => h.length > 0)
}

/**
 * getShardMap (ShardRegistry::toBSON, src/mongo/s/client/shard_registry.cpp): `map` shard id → connection
 * string (the config server under `config`), `hosts` each member → its shard id, `connStrings` each
 * connection string → its shard id.
 */
function getShardMap(ctx: CommandContext): Document {
  const {cluster} = ShardedCluster.of(ctx.proc)
  const map: Document = {}
  const hosts: Document = {}
  const connStrings: Document = {}
  const add = (id: string, cs: string) => {
    map[id] = cs
    for (const h of hostsOf(cs)) hosts[h] = id
    connStrings[cs] = id
  }
  for (const s of cluster.shards) add(s.name, cluster.shardHostString(s))
  const config = shardingStatusOf(ctx.proc)?.configsvrConnectionString
  if (typeof config === 'string') add('config', config)
  return {map, hosts, connStrings, ok: 1}
}

/**
 * getShardVersion on a router (cluster_get_shard_version_cmd.cpp): admin only; a database name gives its
 * primary shard and database version, a sharded collection its collection version (a Timestamp of the
 * highest chunk version), epoch and, from 5.0, timestamp; an unsharded collection is NamespaceNotSharded.
 */
function getShardVersion(ctx: CommandContext): Document {
  if (ctx.db !== 'admin') throw new CommandError(13, 'getShardVersion may only be run against the admin database.')
  const ns = ctx.cmd[ctx.name]
  if (typeof ns !== 'string') throw new CommandError(2, `namespace has invalid type ${typeof ns}`)
  const {cluster} = ShardedCluster.of(ctx.proc)
  const dot = ns.indexOf('.')
  const db = dot < 0 ? ns : ns.slice(0, dot)
  if (dot < 0) {
    const entry = cluster.databaseEntry(db)
    if (!entry) throw new CommandError(26, `Database ${db} not found`)
    return {primaryShard: entry.primary, version: entry.version, ok: 1}
  }
  const coll = cluster.collectionEntry(ns)
  if (!coll || coll.dropped === true) throw new CommandError(118, `Collection ${ns} is not sharded.`)
  const chunks = cluster.configData.collection('config', 'chunks', false)
  let version = new Timestamp({t: 0, i: 0})
  for (const c of chunks?.docs.values() ?? []) {
    const mine = c.ns === ns || (c.uuid !== undefined && coll.uuid !== undefined && valuesEqual(c.uuid, coll.uuid))
    if (mine && c.lastmod instanceof Timestamp && c.lastmod.greaterThan(version)) version = c.lastmod
  }
  const reply: Document = {version, versionEpoch: coll.lastmodEpoch}
  if (coll.timestamp !== undefined) reply.versionTimestamp = coll.timestamp
  reply.ok = 1
  return reply
}

/**
 * replSetGetStatus on a router is a stub that fails without a code (cluster_repl_set_get_status_cmd.cpp,
 * an errmsg command): `{info: 'mongos', ok: 0, errmsg: 'replSetGetStatus is not supported through mongos'}`.
 */
function replSetGetStatus(): Document {
  return {info: 'mongos', ok: 0, errmsg: 'replSetGetStatus is not supported through mongos'}
}

/**
 * killOp on a router (cluster_kill_op.cpp): a number kills one of the router's own operations; a string
 * "<shard>:<opid>", the form `currentOp` reports through a router, is sent to that shard as `{killOp, op}`
 * and answered `{shard, shardid: <opid>}` whatever the shard said.
 */
async function killOp(ctx: CommandContext): Promise<Document> {
  const op = ctx.cmd.op
  if (typeof op !== 'string') return runLocal(ctx, ctx.db, ctx.cmd)
  const sep = op.indexOf(':')
  if (op.length < 3 || sep <= 0 || sep === op.length - 1) {
    throw new CommandError(28625, `The op argument to killOp must be of the format shardid:opid but found "${op}"`)
  }
  const {cluster, rt} = ShardedCluster.of(ctx.proc)
  const shard = cluster.shards.find((s) => s.name === op.slice(0, sep))
  if (!shard) throw new CommandError(70, `Shard ${op.slice(0, sep)} not found`)
  const digits = op.slice(sep + 1)
  if (!/^-?\d+$/.test(digits)) throw new CommandError(9, `Did not consume whole string.`)
  const opid = Number(digits)
  await cluster.toShard(rt, shard, 'admin', {killOp: 1, op: opid})
  return {shard: shard.name, shardid: opid, ok: 1}
}

function isdbgrid(ctx: CommandContext): Document {
  return {isdbgrid: 1, hostname: ctx.proc.hostPort, ok: 1}
}

let table: ReturnType<typeof mongodCommands> | null = null

export function mongosCommands() {
  if (table) return table
  const t = mongodCommands().clone()
  for (const name of ['insert', 'update', 'delete', 'findAndModify', 'createIndexes']) t.override(routed(name, true))
  for (const name of ['find', 'count', 'distinct', 'listIndexes', 'collStats', 'dbStats', 'listCollections', 'dropIndexes']) t.override(routed(name, false))
  const base = (n: string) => mongodCommands().lookup(n)!
  t.override({...base('getMore'), lock: undefined, handler: getMoreOrKill})
  t.override({...base('killCursors'), lock: undefined, handler: getMoreOrKill})
  t.override({...base('aggregate'), handler: aggregate})
  t.override({...base('currentOp'), handler: currentOp})
  t.override({...base('create'), lock: undefined, handler: create})
  t.override({...base('drop'), lock: undefined, handler: drop})
  t.override({...base('dropDatabase'), lock: undefined, handler: dropDatabase})
  t.override({...base('renameCollection'), lock: undefined, handler: renameCollection})
  t.override({...base('listDatabases'), lock: undefined, handler: listDatabases})
  t.override({name: 'connPoolStats', handler: connPoolStats, authz: clusterMonitor})
  t.override({name: 'listShards', handler: listShards, authz: clusterMonitor})
  t.override({name: 'enableSharding', aliases: ['enablesharding'], handler: enableSharding, authz: clusterAdmin})
  t.override({name: 'shardCollection', aliases: ['shardcollection'], handler: shardCollection, authz: clusterAdmin})
  t.override({name: 'movePrimary', aliases: ['moveprimary'], handler: movePrimary, authz: clusterAdmin})
  t.override({name: 'isdbgrid', handler: isdbgrid, noAuth: true})
  t.override({name: 'balancerStatus', handler: balancerStatus, authz: clusterMonitor})
  t.override({name: 'getShardMap', handler: getShardMap, authz: clusterMonitor})
  t.override({name: 'getShardVersion', aliases: ['getshardversion'], handler: getShardVersion, authz: clusterMonitor})
  t.override({...base('replSetGetStatus'), handler: replSetGetStatus, authz: undefined})
  t.override({...base('killOp'), handler: killOp})
  // mongod-only: a router has no such command (CommandNotFound), as src/mongo/s/commands registers none.
  t.remove('replSetGetConfig')
  // lock_info.cpp registers lockInfo forShard() only: a router answers CommandNotFound.
  t.remove('lockInfo')
  t.override({name: 'flushRouterConfig', aliases: ['flushrouterconfig'], handler: () => ({flushed: true, ok: 1}), authz: clusterAdmin})
  table = t
  return t
}

/** connPoolStats of a shard or the config server: its own outbound pools. */
export const shardConnPoolStats: CommandSpec = {name: 'connPoolStats', handler: connPoolStats, authz: clusterMonitor}
