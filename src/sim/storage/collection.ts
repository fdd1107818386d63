/** In-memory collections, databases and the data store that topologies share. */
import {Binary, ObjectId, UUID, calculateObjectSize, type Document} from 'bson'
import {CommandError} from '../errors.js'
import {compileFilter, idLookupKeys, type Predicate} from './matcher.js'
import {canonicalKey} from './values.js'
import {withIdFirst} from './update.js'

export interface IndexSpec {
  v: number
  key: Document
  name: string
  unique?: boolean
  [option: string]: unknown
}

export const ID_INDEX: IndexSpec = {v: 2, key: {_id: 1}, name: '_id_'}

/** Told of every document write in a store (a replica set's oplog, `repl/oplog.ts`). */
export interface WriteRecorder {
  record(op: 'i' | 'u' | 'd', coll: Collection, doc: Document): void
}

export class Collection {
  /** Documents by canonical _id; insertion order is the natural order. */
  readonly docs = new Map<string, Document>()
  readonly indexes: IndexSpec[] = [ID_INDEX]
  readonly uuid: Binary = new UUID().toBinary()
  readonly createdAt = new Date()

  constructor(
    readonly db: string,
    readonly name: string,
    readonly options: Document = {},
    private readonly store?: DataStore,
  ) {}

  get ns(): string {
    return `${this.db}.${this.name}`
  }

  get size(): number {
    return this.docs.size
  }

  duplicateKey(id: unknown): CommandError {
    return new CommandError(
      11000,
      `E11000 duplicate key error collection: ${this.ns} index: _id_ dup key: { _id: ${renderValue(id)} }`,
      {keyPattern: {_id: 1}, keyValue: {_id: id}},
    )
  }

  /** Inserts (adding an ObjectId _id when missing); returns the stored document. */
  insert(doc: Document): Document {
    let stored = doc
    if (stored._id === undefined) stored = {_id: new ObjectId(), ...stored}
    else stored = withIdFirst(stored)
    if (Array.isArray(stored._id)) throw new CommandError(2, "can't use an array for _id")
    const key = canonicalKey(stored._id)
    if (this.docs.has(key)) throw this.duplicateKey(stored._id)
    this.docs.set(key, stored)
    this.store?.recorder?.record('i', this, stored)
    return stored
  }

  /**
   * Stores a document under `key` without an `_id` and without telling the recorder (the oplog's own
   * entries), dropping the oldest ones beyond `keep` (a capped collection's natural-order trim).
   */
  append(key: string, doc: Document, keep: number): void {
    this.docs.set(key, doc)
    while (this.docs.size > keep) this.docs.delete(this.docs.keys().next().value as string)
  }

  get(id: unknown): Document | undefined {
    return this.docs.get(canonicalKey(id))
  }

  replace(oldDoc: Document, newDoc: Document): void {
    this.docs.set(canonicalKey(oldDoc._id), newDoc)
    this.store?.recorder?.record('u', this, newDoc)
  }

  remove(doc: Document): boolean {
    const removed = this.docs.delete(canonicalKey(doc._id))
    if (removed) this.store?.recorder?.record('d', this, doc)
    return removed
  }

  /** Matching documents in natural order; uses the _id map when the filter pins _id. */
  find(filter: Document | undefined | null, limit = 0, predicate: Predicate = compileFilter(filter)): Document[] {
    const out: Document[] = []
    const ids = idLookupKeys(filter)
    if (ids !== null) {
      const seen = new Set<string>()
      for (const id of ids) {
        const key = canonicalKey(id)
        if (seen.has(key)) continue
        seen.add(key)
        const doc = this.docs.get(key)
        if (doc && predicate(doc)) {
          out.push(doc)
          if (limit > 0 && out.length >= limit) break
        }
      }
      return out
    }
    for (const doc of this.docs.values()) {
      if (predicate(doc)) {
        out.push(doc)
        if (limit > 0 && out.length >= limit) break
      }
    }
    return out
  }

  dataSize(): number {
    let n = 0
    for (const doc of this.docs.values()) n += calculateObjectSize(doc)
    return n
  }
}

export class Database {
  readonly collections = new Map<string, Collection>()
  constructor(readonly name: string) {}
}

const INVALID_DB = /[/\\. "$*<>:|?]/

export function validateDbName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 63 || INVALID_DB.test(name)) {
    throw new CommandError(73, `Invalid database name: '${String(name)}'`)
  }
  return name
}

export function validateCollectionName(db: string, name: unknown): string {
  if (typeof name !== 'string') {
    throw new CommandError(73, `collection name has invalid type ${typeof name}`)
  }
  if (name.length === 0 || name.includes('$') || name.includes('\0')) {
    throw new CommandError(73, `Invalid namespace specified '${db}.${name}'`)
  }
  return name
}

/** Databases → collections → documents. Replica-set members share one store. */
export class DataStore {
  readonly databases = new Map<string, Database>()
  /** Set on a replica set's store: its oplog. */
  recorder?: WriteRecorder

  database(name: string, create: boolean): Database | undefined {
    let db = this.databases.get(name)
    if (!db && create) {
      validateDbName(name)
      db = new Database(name)
      this.databases.set(name, db)
    }
    return db
  }

  collection(db: string, name: string, create: boolean, options?: Document): Collection | undefined {
    const database = this.database(db, create)
    if (!database) return undefined
    let coll = database.collections.get(name)
    if (!coll && create) {
      validateCollectionName(db, name)
      coll = new Collection(db, name, options, this)
      database.collections.set(name, coll)
    }
    return coll
  }

  dropCollection(db: string, name: string): boolean {
    const database = this.databases.get(db)
    if (!database) return false
    const existed = database.collections.delete(name)
    if (database.collections.size === 0) this.databases.delete(db)
    return existed
  }

  dropDatabase(db: string): boolean {
    return this.databases.delete(db)
  }
}

/** Short mongod-style rendering of a value inside error messages. */
export function renderValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v)
  if (v instanceof ObjectId) return `ObjectId('${v.toHexString()}')`
  if (v instanceof Date) return `new Date(${v.getTime()})`
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'object') {
    try {
      return JSON.stringify(v)
    } catch {
      return String(v)
    }
  }
  return String(v)
}
