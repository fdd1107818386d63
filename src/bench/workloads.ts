/**
 * The operations `bench` drives. Each workload seeds its namespace (pooltool's
 * own database) and hands out one operation at a time; operations only touch
 * that namespace, except `ping`, which runs on admin and writes nothing.
 */
import type {Collection, Db} from '../mongo/driver.js'
import {createKeyPicker} from './key-dist.js'
import type {BenchConfig, MixableOp, WorkloadKind} from './types.js'
import {seededRandom} from '../metrics/seeded-random.js'

/**
 * What an operation runs against, built once per client: creating Collection
 * objects on the hot path would be overhead the bare driver loop does not have.
 */
export interface Handles {
  db: Db
  collection: Collection<SeedDocument>
  /** --read-namespace of a workload file. */
  read?: Collection
}

export function handlesFor(db: Db, config: BenchConfig): Handles {
  const read = config.workloadFile?.readNamespace
  return {
    db,
    collection: db.collection<SeedDocument>(config.collection),
    ...(read ? {read: db.client.db(read.db).collection(read.collection)} : {}),
  }
}

export type Operation = (handles: Handles) => Promise<unknown>

export interface Workload {
  /** Create and fill the run's collection; stops between batches when `signal` aborts. */
  seed(db: Db, signal?: AbortSignal): Promise<void>
  /**
   * The name of the next operation to run (a mixed workload draws one of its
   * mix; others always name themselves), so latency is also kept per name.
   * Called on the hot path: keep it cheap.
   */
  pick(): string
  /** The operation for a name `pick` gave. */
  operation(name: string): Operation
}

/** Cheap non-cryptographic PRNG (mulberry32): reproducible runs, no Math.random contention. */
export function createRandom(seed = 0x5eed): () => number {
  return seededRandom(seed)
}

function payloadOf(sizeBytes: number): string {
  return 'x'.repeat(Math.max(0, sizeBytes))
}

const SEED_BATCH = 1000

/** Seeded documents have small integer ids, so find/update can pick one at random. */
export interface SeedDocument {
  _id: number
  n: number
  payload: string
}

/** The seeded ids this process inserts: all of them, or a segment's slice (together the segments seed each once). */
function seedRange(config: BenchConfig): [from: number, to: number] {
  const segment = config.segment
  if (!segment) return [0, config.seedDocs]
  const edge = (i: number) => Math.floor((i * config.seedDocs) / segment.count)
  return [edge(segment.index), edge(segment.index + 1)]
}

const DUPLICATE_KEY = 11000

async function seedById(db: Db, config: BenchConfig, signal?: AbortSignal): Promise<void> {
  const collection = db.collection<SeedDocument>(config.collection)
  const payload = payloadOf(config.docSizeBytes)
  const [from, to] = seedRange(config)
  for (let start = from; start < to; start += SEED_BATCH) {
    // A stop during seeding: no batch may land after cleanup dropped the collection.
    if (signal?.aborted) return
    const batch = []
    for (let id = start; id < Math.min(to, start + SEED_BATCH); id++) batch.push({_id: id, n: 0, payload})
    try {
      await collection.insertMany(batch, {ordered: false})
    } catch (error) {
      // A segment started again (a Job's retry) finds its slice seeded by its first attempt.
      const code = (error as {code?: number}).code
      if (!config.segment || code !== DUPLICATE_KEY) throw error
    }
  }
}

/** Whether a workload reads or updates seeded documents by id: the ones it seeds, and --key-dist shapes (a file's {{seededId}}). */
export function picksKeys(workload: WorkloadKind, mix: BenchConfig['mix']): boolean {
  return workload === 'find' || workload === 'update' || workload === 'file' || (workload === 'mixed' && ((mix.find ?? 0) > 0 || (mix.update ?? 0) > 0))
}

/** --timeout-side server: maxTimeMS on every operation (the client side is the clients' timeoutMS, set in run-bench). */
function serverTimeLimit(config: BenchConfig): {maxTimeMS?: number} {
  return config.opTimeout?.side === 'server' ? {maxTimeMS: config.opTimeout.ms} : {}
}

function operationsFor(config: BenchConfig, random: () => number): Record<MixableOp, Operation> {
  const payload = payloadOf(config.docSizeBytes)
  const pickId = createKeyPicker(config.keyDist, config.seedDocs, random)
  const limit = serverTimeLimit(config)
  // db.command sends its document as it is: the limit goes into it.
  const ping = {ping: 1, ...limit}
  return {
    // ping runs on pooltool's own database: same round trip as on admin, no admin privileges needed.
    ping: ({db}) => db.command(ping),
    find: ({collection}) => collection.findOne({_id: pickId()}, limit),
    // Inserted documents get driver-generated ObjectIds, so they never collide with the seeded integer ids.
    insert: ({collection}) => collection.insertOne({payload, n: 0} as unknown as SeedDocument, limit),
    update: ({collection}) => collection.updateOne({_id: pickId()}, {$inc: {n: 1}}, limit),
  }
}

/** A weighted draw over named entries, e.g. a mix of find=80,insert=20, or a workload file's operations. */
function weightedPick<Name extends string>(entries: ReadonlyArray<readonly [Name, number]>, random: () => number): () => Name {
  const cumulative: Array<[number, Name]> = []
  let total = 0
  for (const [name, weight] of entries) {
    total += weight
    cumulative.push([total, name])
  }
  return () => {
    const draw = random() * total
    for (const [bound, name] of cumulative) if (draw < bound) return name
    return cumulative[cumulative.length - 1]![1]
  }
}

/**
 * DDL churn in pooltool's own database: create and drop collections and
 * indexes over a small set of names, so concurrent workers collide on the same
 * database and namespace locks (LockBusy / ConflictingOperationInProgress on a
 * sharded cluster). "Already exists" / "not found" answers are part of the
 * churn, not errors.
 */
const DDL_COLLECTIONS = 4
const ddlCollectionsOf = (config: BenchConfig): string[] => Array.from({length: DDL_COLLECTIONS}, (_, i) => `${config.collection}_ddl${i}`)

/** Every collection the workload may create: what bench's marker lists and its cleanup drops. */
export function collectionsOf(config: BenchConfig): string[] {
  return config.workload === 'ddl' ? [config.collection, ...ddlCollectionsOf(config)] : [config.collection]
}

function ddlOperation(config: BenchConfig, random: () => number): () => Operation {
  const names = ddlCollectionsOf(config)
  const limit = serverTimeLimit(config)
  const ignorable = new Set([26 /* NamespaceNotFound */, 48 /* NamespaceExists */, 27 /* IndexNotFound */])
  const tolerate = async (work: Promise<unknown>): Promise<unknown> => {
    try {
      return await work
    } catch (error) {
      if (ignorable.has((error as {code?: number}).code ?? -1)) return undefined
      throw error
    }
  }
  return () => {
    const name = names[Math.floor(random() * names.length)]!
    const kind = Math.floor(random() * 4)
    switch (kind) {
      case 0:
        return ({db}) => tolerate(db.createCollection(name, limit))
      case 1:
        return ({db}) => tolerate(db.collection(name).drop(limit))
      case 2:
        return ({db}) => tolerate(db.collection(name).createIndex({n: 1}, {name: 'n_1', ...limit}))
      default:
        return ({db}) => tolerate(db.collection(name).dropIndex('n_1', limit))
    }
  }
}

/** --workload-file: its operations by weight, each filling its templates from the workload's PRNG and --key-dist. */
function fileWorkload(config: BenchConfig, random: () => number, seed: Workload['seed']): Workload {
  const file = config.workloadFile!
  const ctx = {random, seededId: createKeyPicker(config.keyDist, config.seedDocs, random)}
  const limit = serverTimeLimit(config)
  const byName = new Map<string, Operation>(
    file.operations.map((op) => [
      op.name,
      // The file's documents have their own shape, not the seeded one.
      (handles: Handles) => op.run({own: handles.collection as unknown as Collection, read: handles.read, runCommand: (command) => handles.db.command(command), limit}, ctx),
    ]),
  )
  return {seed, pick: weightedPick(file.operations.map((op) => [op.name, op.weight] as const), random), operation: (name) => byName.get(name)!}
}

export function createWorkload(config: BenchConfig, random = createRandom()): Workload {
  const ops = operationsFor(config, random)
  const needsSeed = picksKeys(config.workload, config.mix)
  const seed = async (db: Db, signal?: AbortSignal): Promise<void> => {
    if (needsSeed) await seedById(db, config, signal)
    else if (config.workload !== 'ping') await db.createCollection(config.collection)
  }
  switch (config.workload) {
    case 'file':
      return fileWorkload(config, random, seed)
    case 'mixed': {
      const mix = Object.entries(config.mix).filter(([, weight]) => (weight ?? 0) > 0) as Array<[MixableOp, number]>
      return {seed, pick: weightedPick(mix, random), operation: (name) => ops[name as MixableOp]}
    }
    case 'ddl': {
      // One name: the DDL kinds churn together and their latencies are the workload's.
      const next = ddlOperation(config, random)
      return {seed, pick: () => 'ddl', operation: () => next()}
    }
    default: {
      const name = config.workload
      const op = ops[name]
      return {seed, pick: () => name, operation: () => op}
    }
  }
}
