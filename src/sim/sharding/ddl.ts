/**
 * Sharded DDL: who coordinates it, which locks it takes (database, then namespace) with
 * which `why`, and the internal commands that carry it:
 *
 * | profile | coordinator | internal commands | why |
 * | 4.4 | config server (`ConfigServer` dist locks) | `_configsvrCreateCollection` … | createCollection, dropCollection, dropDatabase, enableSharding, shardCollection, movePrimary, createDatabase |
 * | 6.0 | the database's primary shard (dist locks under the shard name; config server for createDatabase) | `_shardsvrCreateCollection` … | DDL coordinator type names: createCollection, dropCollection, dropDatabase, movePrimary; createDatabase |
 * | 7.0 | same as 6.0, in-memory DDL locks | same | same |
 *
 * Data stays on the database's primary shard (no chunk splitting), so a coordinator's data
 * work is one command on that shard: run locally when the coordinator is that shard,
 * otherwise over the coordinator's own pool.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {Binary, MaxKey, MinKey, ObjectId, Timestamp, UUID, type Document} from 'bson'
import {mongodCommands} from '../commands/index.js'
import type {CommandContext, CommandSpec} from '../commands/registry.js'
import {clusterAdmin} from '../commands/util.js'
import {CommandError, errorDocument} from '../errors.js'
import {isPlainObject} from '../storage/values.js'
import {DDL_LOCK_WAIT_MS} from './ddl-lock.js'
import type {ProcessRuntime, ShardEntry, ShardedCluster} from './state.js'
import {ShardedCluster as Cluster} from './state.js'

export type DdlKind = 'createDatabase' | 'create' | 'drop' | 'dropDatabase' | 'enableSharding' | 'shardCollection' | 'movePrimary'

/** The `why` written to config.locks (or the in-memory reason), per lock model. */
export function whyFor(model: ShardedCluster['lockModel'], kind: DdlKind): string {
  if (model === 'dist-4.4') {
    return {
      createDatabase: 'createDatabase',
      create: 'createCollection',
      drop: 'dropCollection',
      dropDatabase: 'dropDatabase',
      enableSharding: 'enableSharding',
      shardCollection: 'shardCollection',
      movePrimary: 'movePrimary',
    }[kind]
  }
  return {
    createDatabase: 'createDatabase',
    create: 'createCollection',
    drop: 'dropCollection',
    dropDatabase: 'dropDatabase',
    enableSharding: 'createDatabase',
    shardCollection: 'createCollection',
    movePrimary: 'movePrimary',
  }[kind]
}

/** Internal command name for each DDL, by who coordinates it. */
export function internalCommand(model: ShardedCluster['lockModel'], kind: DdlKind): {name: string; on: 'config' | 'primaryShard'} {
  if (kind === 'createDatabase' || (kind === 'enableSharding' && model !== 'dist-4.4')) return {name: '_configsvrCreateDatabase', on: 'config'}
  if (model === 'dist-4.4') {
    const names: Record<DdlKind, string> = {
      createDatabase: '_configsvrCreateDatabase',
      create: '_configsvrCreateCollection',
      drop: '_configsvrDropCollection',
      dropDatabase: '_configsvrDropDatabase',
      enableSharding: '_configsvrEnableSharding',
      shardCollection: '_configsvrShardCollection',
      movePrimary: '_configsvrMovePrimary',
    }
    return {name: names[kind], on: 'config'}
  }
  const names: Record<DdlKind, string> = {
    createDatabase: '_configsvrCreateDatabase',
    enableSharding: '_configsvrCreateDatabase',
    create: '_shardsvrCreateCollection',
    shardCollection: '_shardsvrCreateCollection',
    drop: '_shardsvrDropCollection',
    dropDatabase: '_shardsvrDropDatabase',
    movePrimary: '_shardsvrMovePrimary',
  }
  return {name: names[kind], on: 'primaryShard'}
}

export function replyError(reply: Document): CommandError {
  return new CommandError(typeof reply.code === 'number' ? reply.code : 1, String(reply.errmsg ?? 'command failed'))
}

/** Runs a mongod command on this process's own data (a coordinator acting on its own shard). */
export async function runLocal(ctx: CommandContext, db: string, cmd: Document): Promise<Document> {
  const name = Object.keys(cmd)[0]
  const spec = mongodCommands().lookup(name)
  if (!spec) return new CommandError(59, `no such command: '${name}'`).toDocument()
  if (spec.lock === 'dbExclusive') ctx.proc.locks.databaseExclusive()
  else if (spec.lock === 'read') ctx.proc.locks.read()
  try {
    return await spec.handler({...ctx, cmd, db, name, spec})
  } catch (e) {
    return errorDocument(e)
  }
}

function splitNs(ns: unknown): {db: string; coll: string} {
  if (typeof ns !== 'string' || !ns.includes('.')) throw new CommandError(73, `Invalid namespace specified '${String(ns)}'`)
  const i = ns.indexOf('.')
  return {db: ns.slice(0, i), coll: ns.slice(i + 1)}
}

interface DdlRequest {
  kind: DdlKind
  db: string
  coll?: string
  args: Document
}

class Coordinator {
  constructor(
    readonly cluster: ShardedCluster,
    readonly rt: ProcessRuntime,
    readonly ctx: CommandContext,
  ) {}

  private get who(): string {
    const id = this.rt.dist?.processId ?? this.rt.shardName ?? 'config'
    return `${id}:conn${this.ctx.conn.id}`
  }

  /** Database then namespace locks, released in reverse order. */
  async withLocks<T>(resources: Array<{name: string; why: string}>, work: () => Promise<T>): Promise<T> {
    const releases: Array<() => unknown> = []
    const {cluster, rt} = this
    try {
      for (const r of resources) {
        if (cluster.lockModel === 'dist-4.4') {
          const l = await rt.dist!.lock(r.name, r.why, this.who)
          releases.push(() => l.unlock())
        } else if (cluster.lockModel === 'dist-6.0') {
          releases.push(await rt.ddl!.lock(r.name, r.why, rt.dist!.waitLimitMs, this.ctx.conn.op ?? undefined))
          const l = await rt.dist!.lock(r.name, r.why, this.who)
          releases.push(() => l.unlock())
        } else {
          releases.push(await rt.ddl!.lock(r.name, r.why, DDL_LOCK_WAIT_MS * cluster.scale, this.ctx.conn.op ?? undefined))
        }
      }
      return await work()
    } finally {
      for (const release of releases.reverse()) await release()
    }
  }

  /** One command on a shard: locally when the coordinator is that shard. */
  async exec(shard: ShardEntry, db: string, cmd: Document): Promise<Document> {
    if (shard.proc === this.ctx.proc) {
      // The participant's local (majority) write costs this shard's service time, locks held.
      await sleep(this.ctx.proc.faults.latencyMs)
      return runLocal(this.ctx, db, cmd)
    }
    return this.cluster.toShard(this.rt, shard, db, cmd)
  }

  private primary(db: string): ShardEntry {
    const s = this.cluster.primaryShardOf(db)
    if (!s) throw new CommandError(26, `database ${db} not found`)
    return s
  }

  async run(req: DdlRequest): Promise<Document> {
    const {cluster} = this
    const why = whyFor(cluster.lockModel, req.kind)
    const ns = req.coll === undefined ? undefined : `${req.db}.${req.coll}`
    const resources = [{name: req.db, why}, ...(ns ? [{name: ns, why}] : [])]
    if (req.kind === 'dropDatabase' && cluster.lockModel === 'dist-4.4') {
      // _configsvrDropDatabase also takes each sharded collection's lock (why "dropCollection").
      for (const c of cluster.configCollection('collections').docs.values()) {
        if (typeof c._id === 'string' && c._id.startsWith(`${req.db}.`)) resources.push({name: c._id, why: 'dropCollection'})
      }
    }
    return this.withLocks(resources, async () => {
      const reply = await this.work(req, ns)
      // A shard coordinator commits the catalog change on the config server (a majority write), locks still held.
      if (this.rt.kind === 'shard') await sleep(cluster.configProc.faults.latencyMs)
      return reply
    })
  }

  private async work(req: DdlRequest, ns: string | undefined): Promise<Document> {
    const {cluster} = this
    const {db, coll, args} = req
    switch (req.kind) {
      case 'createDatabase':
      case 'enableSharding': {
        let entry = cluster.databaseEntry(db)
        if (!entry) {
          const primary = typeof args.primaryShard === 'string' ? cluster.shard(args.primaryShard).name : cluster.leastLoadedShard().name
          entry = cluster.insertDatabaseEntry(db, primary)
        }
        if (req.kind === 'enableSharding' && cluster.profile.name === '4.4' && entry.partitioned !== true) {
          cluster.configCollection('databases').replace(entry, {...entry, partitioned: true})
        }
        return {ok: 1}
      }
      case 'create':
        return this.exec(this.primary(db), db, {create: coll!, ...(isPlainObject(args.options) ? args.options : {})})
      case 'drop': {
        const reply = await this.exec(this.primary(db), db, {drop: coll!})
        this.forgetCollection(ns!)
        return reply
      }
      case 'dropDatabase': {
        const primary = cluster.primaryShardOf(db)
        if (!primary) return {info: 'database does not exist', ok: 1}
        await this.exec(primary, db, {dropDatabase: 1})
        for (const c of [...cluster.configCollection('collections').docs.values()]) {
          if (typeof c._id === 'string' && c._id.startsWith(`${db}.`)) this.forgetCollection(c._id)
        }
        const entry = cluster.databaseEntry(db)
        if (entry) cluster.configCollection('databases').remove(entry)
        return {dropped: db, ok: 1}
      }
      case 'shardCollection':
        return this.shardCollection(db, coll!, ns!, args)
      case 'movePrimary':
        return this.movePrimary(db, args)
    }
  }

  private forgetCollection(ns: string): void {
    const collections = this.cluster.configCollection('collections')
    const entry = collections.get(ns)
    if (entry) collections.remove(entry)
    const chunks = this.cluster.configCollection('chunks')
    for (const c of [...chunks.docs.values()]) if (c.ns === ns || (entry && c.uuid instanceof Binary && entry.uuid instanceof Binary && c.uuid.toString('hex') === entry.uuid.toString('hex'))) chunks.remove(c)
  }

  private async shardCollection(db: string, coll: string, ns: string, args: Document): Promise<Document> {
    const {cluster} = this
    const key = isPlainObject(args.key) ? args.key : isPlainObject(args.shardKey) ? args.shardKey : undefined
    if (!key || Object.keys(key).length === 0) throw new CommandError(2, 'shardCollection requires a key')
    const existing = cluster.collectionEntry(ns)
    if (existing) {
      if (JSON.stringify(existing.key) === JSON.stringify(key)) return {collectionsharded: ns, ok: 1}
      throw new CommandError(23, `sharding already enabled for collection ${ns} with options ${JSON.stringify({key: existing.key})}`)
    }
    const primary = this.primary(db)
    const created = await this.exec(primary, db, {create: coll})
    if (created.ok !== 1 && created.code !== 48) return created
    if (!(Object.keys(key).length === 1 && key._id !== undefined)) {
      const idx = await this.exec(primary, db, {createIndexes: coll, indexes: [{key, name: Object.entries(key).map(([k, v]) => `${k}_${String(v)}`).join('_')}]})
      if (idx.ok !== 1) return idx
    }
    const uuid = new UUID().toBinary()
    const epoch = new ObjectId()
    const entry: Document = {_id: ns, lastmodEpoch: epoch, lastmod: new Date(), key, unique: args.unique === true, uuid}
    if (cluster.profile.name === '4.4') entry.dropped = false
    else entry.timestamp = new Timestamp({t: Math.floor(Date.now() / 1000), i: 1})
    cluster.configCollection('collections').insert(entry)
    const min: Document = {}
    const max: Document = {}
    for (const k of Object.keys(key)) {
      min[k] = new MinKey()
      max[k] = new MaxKey()
    }
    const chunk: Document = {_id: new ObjectId(), min, max, shard: primary.name, lastmod: new Timestamp({t: 1, i: 0}), history: []}
    if (cluster.profile.name === '4.4') {
      chunk.ns = ns
      chunk.lastmodEpoch = epoch
    } else chunk.uuid = uuid
    cluster.configCollection('chunks').insert(chunk)
    return {collectionsharded: ns, collectionUUID: uuid, ok: 1}
  }

  private async movePrimary(db: string, args: Document): Promise<Document> {
    const {cluster} = this
    const to = typeof args.to === 'string' ? args.to : ''
    const target = cluster.shards.find((s) => s.name === to || s.proc.hostPort === to || cluster.shardHostString(s) === to)
    if (!target) throw new CommandError(70, `Could not find recipient shard ${to}`)
    const from = this.primary(db)
    if (from === target) return {ok: 1, info: 'it is already the primary'}
    const listed = await this.exec(from, db, {listCollections: 1, cursor: {batchSize: 10_000}})
    const colls = ((listed.cursor?.firstBatch ?? []) as Document[]).map((c) => String(c.name))
    for (const name of colls) {
      if (cluster.collectionEntry(`${db}.${name}`)) continue // sharded: its chunk stays where it is
      const found = await this.exec(from, db, {find: name, batchSize: 1_000_000})
      const docs = (found.cursor?.firstBatch ?? []) as Document[]
      const created = await this.exec(target, db, {create: name})
      if (created.ok !== 1 && created.code !== 48) return created
      if (docs.length > 0) await this.exec(target, db, {insert: name, documents: docs, ordered: false})
      const indexes = await this.exec(from, db, {listIndexes: name, cursor: {batchSize: 10_000}})
      const specs = ((indexes.cursor?.firstBatch ?? []) as Document[]).filter((i) => i.name !== '_id_').map(({v: _v, ...rest}) => rest)
      if (specs.length > 0) await this.exec(target, db, {createIndexes: name, indexes: specs})
      await this.exec(from, db, {drop: name})
    }
    const entry = cluster.databaseEntry(db)!
    cluster.configCollection('databases').replace(entry, {...entry, primary: target.name})
    return {ok: 1}
  }
}

/** Parses an internal DDL command into a request: `{<name>: db | ns, …args}`. */
function requestOf(kind: DdlKind, cmd: Document, name: string): DdlRequest {
  const target = cmd[name]
  switch (kind) {
    case 'createDatabase':
    case 'enableSharding':
    case 'dropDatabase':
    case 'movePrimary':
      if (typeof target !== 'string' || target.length === 0) throw new CommandError(73, `Invalid database name '${String(target)}'`)
      return {kind, db: target, args: cmd}
    default: {
      const {db, coll} = splitNs(target)
      return {kind, db, coll, args: cmd}
    }
  }
}

function internalSpec(name: string, kindOf: (cmd: Document) => DdlKind): CommandSpec {
  return {
    name,
    authz: clusterAdmin,
    currentOpType: 'command',
    handler: async (ctx) => {
      const {cluster, rt} = Cluster.of(ctx.proc)
      const kind = kindOf(ctx.cmd)
      return new Coordinator(cluster, rt, ctx).run(requestOf(kind, ctx.cmd, name))
    },
  }
}

/** Commands the config server runs for mongos (4.4: all DDL; 6.0/7.0: createDatabase). */
export const configServerDdlCommands: CommandSpec[] = [
  internalSpec('_configsvrCreateDatabase', () => 'createDatabase'),
  internalSpec('_configsvrEnableSharding', () => 'enableSharding'),
  internalSpec('_configsvrCreateCollection', () => 'create'),
  internalSpec('_configsvrDropCollection', () => 'drop'),
  internalSpec('_configsvrDropDatabase', () => 'dropDatabase'),
  internalSpec('_configsvrShardCollection', () => 'shardCollection'),
  internalSpec('_configsvrMovePrimary', () => 'movePrimary'),
]

/** Commands a primary shard coordinates (6.0 / 7.0). */
export const shardDdlCommands: CommandSpec[] = [
  internalSpec('_shardsvrCreateCollection', (cmd) => (isPlainObject(cmd.shardKey) ? 'shardCollection' : 'create')),
  internalSpec('_shardsvrDropCollection', () => 'drop'),
  internalSpec('_shardsvrDropDatabase', () => 'dropDatabase'),
  internalSpec('_shardsvrMovePrimary', () => 'movePrimary'),
]
