/**
 * A replica set's oplog: `local.oplog.rs`, a capped collection without `_id` index that gets one entry
 * per document written to the set's shared store (replication is instant, so every member has the same
 * oplog and the majority optime is the last one). What reads it: `rs.printReplicationInfo()` (collection
 * stats `maxSize`, first and last entry by `$natural`), `hello.lastWrite`, `replSetGetStatus` optimes.
 *
 * Entry shape (the manual's "Replica Set Oplog" and the oplog entry IDL, oplog_entry.idl):
 * `{op, ns, ui, o, o2?, ts: Timestamp, t: Long(term), v: Long(2), wall: Date}`, op `i` insert, `u`
 * update, `d` delete, `n` no-op. Not modelled: updates are logged in replacement form (full document
 * in `o`, `o2: {_id}`) instead of 5.0+'s `$v: 2` diffs; DDL (`op: 'c'`) and the periodic no-op writer are
 * not logged; the entry count is capped (OPLOG_KEPT_ENTRIES) although the collection reports the size
 * of a default oplog.
 */
import {Long, type Document, type Timestamp} from 'bson'
import type {Collection, DataStore, WriteRecorder} from '../storage/collection.js'
import {waitUnlessWoken} from '../wait-unless-woken.js'
import {clusterClock} from './optime.js'

/** The default oplog's lower bound (5% of free disk, at least 990 MB: the manual's "Oplog Size"). */
export const OPLOG_SIZE_BYTES = 990 * 1024 * 1024
/** How many entries the sim keeps in memory (a real oplog keeps what fits in its size). */
export const OPLOG_KEPT_ENTRIES = 10_000

export interface OpTime {
  ts: Timestamp
  t: Long
}

export class Oplog implements WriteRecorder {
  private lastEntry!: Document
  /** The kept entries in `ts` order (the collection's documents), for tailing cursors. */
  private readonly entries: Document[] = []
  /** Tailing getMores waiting for the next entry (awaitData). */
  private readonly waiters = new Set<() => void>()

  constructor(
    private readonly store: DataStore,
    private readonly term: () => number,
  ) {
    this.append({op: 'n', ns: '', o: {msg: 'initiating set'}})
  }

  /** The collection, created capped and index-less when missing (e.g. after a user dropped it). */
  private collection(): Collection {
    const coll = this.store.collection('local', 'oplog.rs', true, {capped: true, size: OPLOG_SIZE_BYTES})!
    if (coll.indexes.length > 0) coll.indexes.length = 0
    return coll
  }

  private append(entry: Document): void {
    const ts = clusterClock.tick()
    const doc: Document = {...entry, ts, t: Long.fromNumber(this.term()), v: Long.fromNumber(2), wall: new Date()}
    this.collection().append(ts.toString(), doc, OPLOG_KEPT_ENTRIES)
    this.lastEntry = doc
    this.entries.push(doc)
    if (this.entries.length > OPLOG_KEPT_ENTRIES) this.entries.splice(0, this.entries.length - OPLOG_KEPT_ENTRIES)
    if (this.waiters.size === 0) return
    const woken = [...this.waiters]
    this.waiters.clear()
    for (const wake of woken) wake()
  }

  /** Up to `max` entries after `ts` (all when `ts` is undefined), oldest first; costs only the entries returned. */
  entriesAfter(ts: Timestamp | undefined, max: number): Document[] {
    let from = this.entries.length
    while (from > 0 && (ts === undefined || (this.entries[from - 1]!.ts as Timestamp).greaterThan(ts))) from--
    return this.entries.slice(from, from + max)
  }

  /**
   * Resolves at the next entry or after `timeoutMs`, whichever comes first: an awaitData getMore's wait
   * (the sync source holds the fetcher's getMore until new oplog entries or its maxTimeMS).
   */
  waitForEntry(timeoutMs: number): Promise<void> {
    return waitUnlessWoken(timeoutMs, this.waiters, {unref: true})
  }

  record(op: 'i' | 'u' | 'd', coll: Collection, doc: Document): void {
    if (coll.db === 'local') return // the local database is not replicated
    const entry: Document = {op, ns: coll.ns, ui: coll.uuid}
    if (op === 'd') entry.o = {_id: doc._id}
    else entry.o = doc
    if (op === 'u') entry.o2 = {_id: doc._id}
    this.append(entry)
  }

  /** The last entry's optime and wall clock time. */
  last(): {opTime: OpTime; wall: Date} {
    return {opTime: {ts: this.lastEntry.ts, t: this.lastEntry.t}, wall: this.lastEntry.wall}
  }
}

/** Gives a replica set's store its oplog (once; every member shares the store). */
export function ensureOplog(store: DataStore, term: () => number): Oplog {
  const existing = oplogOf(store)
  if (existing) return existing
  const oplog = new Oplog(store, term)
  store.recorder = oplog
  return oplog
}

/** The oplog of a member's store, if it has one. */
export function oplogOf(store: DataStore): Oplog | undefined {
  return store.recorder instanceof Oplog ? store.recorder : undefined
}
