/**
 * create / drop / dropDatabase / listDatabases / listCollections / listIndexes /
 * createIndexes / dropIndexes / collStats / dbStats / renameCollection.
 */
import {Long, type Document} from 'bson'
import {grants, visibleDatabases} from '../auth/roles.js'
import {CommandError} from '../errors.js'
import {ID_INDEX, type Collection, type IndexSpec} from '../storage/collection.js'
import {compileFilter} from '../storage/matcher.js'
import {deepEqual, isNumeric, isPlainObject, toNumber} from '../storage/values.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {collectionArg, dbAdminOn, nonNegative, optionalDoc, readOn, truthyFlag, writeOn} from './util.js'

function nsNotFound(ns: string): CommandError {
  return new CommandError(26, `ns does not exist: ${ns}`)
}

function create(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const existing = ctx.proc.data.collection(ctx.db, name, false)
  if (existing) throw new CommandError(48, `Collection ${ctx.db}.${name} already exists.`)
  const options: Document = {}
  for (const k of ['capped', 'size', 'max', 'validator', 'validationLevel', 'validationAction', 'collation', 'timeseries', 'expireAfterSeconds']) {
    if (ctx.cmd[k] !== undefined) options[k] = ctx.cmd[k]
  }
  ctx.proc.data.collection(ctx.db, name, true, options)
  return {ok: 1}
}

function drop(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const coll = ctx.proc.data.collection(ctx.db, name, false)
  if (!coll) {
    if (ctx.proc.profile.dropMissingCollectionOk) return {ok: 1}
    throw new CommandError(26, 'ns not found')
  }
  const nIndexesWas = coll.indexes.length
  ctx.proc.data.dropCollection(ctx.db, name)
  return {nIndexesWas, ns: coll.ns, ok: 1}
}

function dropDatabase(ctx: CommandContext): Document {
  ctx.proc.data.dropDatabase(ctx.db)
  return {dropped: ctx.db, ok: 1}
}

const EMPTY_DB_SIZE = 8192

function dbSize(colls: Iterable<Collection>): number {
  let size = 0
  for (const c of colls) size += 4096 + c.dataSize() + c.indexes.length * 4096
  return size
}

function listDatabases(ctx: CommandContext): Document {
  const {proc, cmd} = ctx
  const nameOnly = truthyFlag(cmd.nameOnly)
  const filter = compileFilter(optionalDoc(cmd, 'filter'))
  const entries: Document[] = []
  const names = new Set<string>(['admin', 'config', 'local', ...proc.data.databases.keys()])
  let visible: Set<string> | null = null
  if (proc.authEnabled && cmd.authorizedDatabases !== false) {
    const roles = ctx.conn.users.flatMap((u) => proc.users.get(u.db, u.user)?.roles ?? [])
    visible = grants(roles, {kind: 'clusterMonitor'}) ? null : visibleDatabases(roles)
  }
  let total = 0
  for (const name of [...names].sort()) {
    if (visible && !visible.has(name)) continue
    const db = proc.data.databases.get(name)
    const sizeOnDisk = db ? dbSize(db.collections.values()) : name === 'local' ? 73728 : name === 'admin' ? 40960 + proc.users.size * 4096 : 12288
    const doc: Document = nameOnly ? {name} : {name, sizeOnDisk: Long.fromNumber(sizeOnDisk), empty: !db && name !== 'admin' && name !== 'local' && name !== 'config' ? true : false}
    if (!filter(doc)) continue
    total += sizeOnDisk
    entries.push(doc)
  }
  return nameOnly ? {databases: entries, ok: 1} : {databases: entries, totalSize: total, totalSizeMb: Math.round(total / 1048576), ok: 1}
}

function collectionInfo(c: Collection, nameOnly: boolean): Document {
  if (nameOnly) return {name: c.name, type: 'collection'}
  return {
    name: c.name,
    type: 'collection',
    options: c.options,
    info: {readOnly: false, uuid: c.uuid},
    idIndex: {v: 2, key: {_id: 1}, name: '_id_'},
  }
}

function listCollections(ctx: CommandContext): Document {
  const nameOnly = truthyFlag(ctx.cmd.nameOnly)
  const filter = compileFilter(optionalDoc(ctx.cmd, 'filter'))
  const db = ctx.proc.data.database(ctx.db, false)
  const docs: Document[] = []
  for (const c of db ? db.collections.values() : []) {
    const info = collectionInfo(c, false)
    if (filter(info)) docs.push(nameOnly ? collectionInfo(c, true) : info)
  }
  const batchSize = isPlainObject(ctx.cmd.cursor) ? nonNegative(ctx.cmd.cursor, 'batchSize') : undefined
  return ctx.proc.cursors.open(`${ctx.db}.$cmd.listCollections`, docs, batchSize, false, ctx.conn.id)
}

function listIndexes(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const coll = ctx.proc.data.collection(ctx.db, name, false)
  if (!coll) throw nsNotFound(`${ctx.db}.${name}`)
  const batchSize = isPlainObject(ctx.cmd.cursor) ? nonNegative(ctx.cmd.cursor, 'batchSize') : undefined
  return ctx.proc.cursors.open(`${ctx.db}.${name}`, coll.indexes.map((i) => ({...i})), batchSize, false, ctx.conn.id)
}

function defaultIndexName(key: Document): string {
  return Object.entries(key)
    .map(([k, v]) => `${k}_${String(v)}`)
    .join('_')
}

function createIndexes(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const specs = ctx.cmd.indexes
  if (!Array.isArray(specs) || specs.length === 0) throw new CommandError(2, 'Must specify at least one index to create')
  const existed = ctx.proc.data.collection(ctx.db, name, false)
  const coll = existed ?? ctx.proc.data.collection(ctx.db, name, true)!
  const before = coll.indexes.length
  for (const raw of specs) {
    if (!isPlainObject(raw) || !isPlainObject(raw.key) || Object.keys(raw.key).length === 0) {
      throw new CommandError(9, "The 'key' field must be a non-empty object")
    }
    const spec: IndexSpec = {v: 2, ...raw, key: raw.key, name: typeof raw.name === 'string' ? raw.name : defaultIndexName(raw.key)}
    const sameName = coll.indexes.find((i) => i.name === spec.name)
    const sameKey = coll.indexes.find((i) => deepEqual(i.key, spec.key))
    if (sameName) {
      if (!deepEqual(sameName.key, spec.key)) {
        throw new CommandError(86, `An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(sameName)}`)
      }
      continue
    }
    if (sameKey) {
      throw new CommandError(85, `Index already exists with a different name: ${sameKey.name}`)
    }
    coll.indexes.push(spec)
  }
  const reply: Document = {numIndexesBefore: before, numIndexesAfter: coll.indexes.length, createdCollectionAutomatically: !existed}
  if (before === coll.indexes.length) reply.note = 'all indexes already exist'
  reply.ok = 1
  return reply
}

function dropIndexes(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const coll = ctx.proc.data.collection(ctx.db, name, false)
  if (!coll) throw nsNotFound(`${ctx.db}.${name}`)
  const nIndexesWas = coll.indexes.length
  const target = ctx.cmd.index
  const remove = (i: IndexSpec) => {
    if (i.name === ID_INDEX.name) throw new CommandError(72, 'cannot drop _id index')
    coll.indexes.splice(coll.indexes.indexOf(i), 1)
  }
  if (target === '*') {
    coll.indexes.splice(1)
  } else {
    const names: unknown[] = Array.isArray(target) ? target : [target]
    for (const t of names) {
      const found = typeof t === 'string' ? coll.indexes.find((i) => i.name === t) : coll.indexes.find((i) => deepEqual(i.key, t))
      if (!found) {
        throw new CommandError(27, typeof t === 'string' ? `index not found with name [${t}]` : `can't find index with key: ${JSON.stringify(t)}`)
      }
      remove(found)
    }
  }
  return {nIndexesWas, ok: 1}
}

/**
 * A collection's storage figures (collStats, `$collStats.storageStats`): the data size of the stored
 * documents plus a 4 KB file per collection and index, divided by `scale` as mongod does.
 */
export function storageStatsOf(coll: Collection, scale = 1): Document {
  const size = coll.dataSize()
  const indexSizes: Document = {}
  for (const i of coll.indexes) indexSizes[i.name] = Math.floor((4096 + coll.size * 16) / scale)
  const totalIndexSize = Object.values(indexSizes).reduce((a: number, b) => a + (b as number), 0)
  const storageSize = Math.floor((4096 + size) / scale)
  return {
    size: Math.floor(size / scale),
    count: coll.size,
    avgObjSize: coll.size ? Math.round(size / coll.size) : 0,
    storageSize,
    freeStorageSize: 0,
    capped: coll.options.capped === true,
    // A capped collection says its bounds (mongosh's rs.printReplicationInfo reads the oplog's maxSize).
    ...(coll.options.capped === true ? {max: isNumeric(coll.options.max) ? toNumber(coll.options.max) : 0, maxSize: Math.floor((isNumeric(coll.options.size) ? toNumber(coll.options.size) : 0) / scale)} : {}),
    nindexes: coll.indexes.length,
    indexBuilds: [],
    totalIndexSize,
    totalSize: storageSize + totalIndexSize,
    indexSizes,
    scaleFactor: scale,
  }
}

function collStats(ctx: CommandContext): Document {
  const name = collectionArg(ctx)
  const coll = ctx.proc.data.collection(ctx.db, name, false)
  if (!coll) throw nsNotFound(`${ctx.db}.${name}`)
  const s = storageStatsOf(coll)
  return {
    ns: coll.ns,
    size: s.size,
    count: s.count,
    avgObjSize: s.avgObjSize,
    storageSize: s.storageSize,
    nindexes: s.nindexes,
    indexSizes: s.indexSizes,
    totalIndexSize: s.totalIndexSize,
    totalSize: s.totalSize,
    capped: s.capped,
    ...(s.maxSize !== undefined ? {max: s.max, maxSize: s.maxSize} : {}),
    ok: 1,
  }
}

function dbStats(ctx: CommandContext): Document {
  const db = ctx.proc.data.database(ctx.db, false)
  let objects = 0
  let dataSize = 0
  let indexes = 0
  const colls = db ? [...db.collections.values()] : []
  for (const c of colls) {
    objects += c.size
    dataSize += c.dataSize()
    indexes += c.indexes.length
  }
  return {
    db: ctx.db,
    collections: colls.length,
    views: 0,
    objects,
    avgObjSize: objects ? dataSize / objects : 0,
    dataSize,
    storageSize: dataSize + colls.length * 4096,
    indexes,
    indexSize: indexes * 4096,
    totalSize: dataSize + colls.length * 4096 + indexes * 4096,
    scaleFactor: 1,
    fsUsedSize: 0,
    fsTotalSize: 0,
    ok: 1,
  }
}

function renameCollection(ctx: CommandContext): Document {
  const from = ctx.cmd.renameCollection
  const to = ctx.cmd.to
  if (typeof from !== 'string' || typeof to !== 'string') throw new CommandError(2, 'renameCollection needs source and target namespaces')
  const [fromDb, ...fromRest] = from.split('.')
  const [toDb, ...toRest] = to.split('.')
  const src = ctx.proc.data.collection(fromDb, fromRest.join('.'), false)
  if (!src) throw new CommandError(26, 'source namespace does not exist')
  if (ctx.proc.data.collection(toDb, toRest.join('.'), false)) {
    if (!truthyFlag(ctx.cmd.dropTarget)) throw new CommandError(48, 'target namespace exists')
    ctx.proc.data.dropCollection(toDb, toRest.join('.'))
  }
  const dst = ctx.proc.data.collection(toDb, toRest.join('.'), true, src.options)!
  for (const d of src.docs.values()) dst.insert(d)
  dst.indexes.splice(0, dst.indexes.length, ...src.indexes)
  ctx.proc.data.dropCollection(fromDb, fromRest.join('.'))
  return {ok: 1}
}

// list_databases.cpp, list_collections.cpp, list_indexes.cpp, collection/db stats (dbcommands.cpp): kOptIn on a secondary.
export const ddlCommands: CommandSpec[] = [
  {name: 'create', handler: create, authz: writeOn, write: true, lock: 'dbExclusive'},
  {name: 'drop', handler: drop, authz: writeOn, write: true, lock: 'dbExclusive'},
  {name: 'dropDatabase', handler: dropDatabase, authz: dbAdminOn, write: true, lock: 'dbExclusive'},
  {name: 'createIndexes', handler: createIndexes, authz: writeOn, write: true, lock: 'write'},
  {name: 'dropIndexes', aliases: ['deleteIndexes'], handler: dropIndexes, authz: writeOn, write: true, lock: 'write'},
  {name: 'renameCollection', handler: renameCollection, authz: (ctx) => ({kind: 'dbAdmin', db: String(ctx.cmd.renameCollection).split('.')[0]}), write: true, lock: 'dbExclusive'},
  {name: 'listDatabases', handler: listDatabases, secondaryAllowed: 'optIn', lock: 'global'},
  {name: 'listCollections', handler: listCollections, secondaryAllowed: 'optIn', authz: readOn, lock: 'read'},
  {name: 'listIndexes', handler: listIndexes, secondaryAllowed: 'optIn', authz: readOn, lock: 'read'},
  {name: 'collStats', handler: collStats, secondaryAllowed: 'optIn', authz: readOn, lock: 'read'},
  {name: 'dbStats', handler: dbStats, secondaryAllowed: 'optIn', authz: readOn, lock: 'read'},
]
