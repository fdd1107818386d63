/**
 * Open cursors of one simulated process (getMore / killCursors), with an idle timeout. A tailable
 * cursor (the oplog fetcher's on `local.oplog.rs`) stays open when it has returned everything and
 * reads what was appended since on each getMore; with awaitData the getMore waits for new entries
 * up to its `maxTimeMS` (1 s without one, the server's default awaitData timeout) before answering
 * an empty batch (src/mongo/db/commands/getmore_cmd.cpp, `waitForInserts`).
 */
import {Long, calculateObjectSize, type Document} from 'bson'
import {CommandError} from '../errors.js'

export const DEFAULT_BATCH_SIZE = 101
const MAX_BATCH_BYTES = 16 * 1024 * 1024

export interface ServerCursor {
  id: number
  ns: string
  docs: Document[]
  pos: number
  lastUsed: number
  /** connection that opened it (for currentOp idleCursors and ownership) */
  connectionId: number
  tail?: TailSource
}

/** What a tailable cursor reads: the documents after those it returned, and a wait for more. */
export interface TailSource {
  /** Up to `max` documents appended after the last one returned (and marks them returned). */
  next(max: number): Document[]
  /** awaitData: resolves when more may be there or after `timeoutMs`; absent: not awaitData. */
  wait?(timeoutMs: number): Promise<void>
}

/** getMore's awaitData wait when the request has no maxTimeMS (getmore_cmd.cpp: 1 second). */
export const DEFAULT_AWAIT_DATA_MS = 1000

export interface CursorReply {
  [key: string]: unknown
  cursor: {firstBatch?: Document[]; nextBatch?: Document[]; id: Long; ns: string}
  ok: 1
}

export class CursorManager {
  private readonly cursors = new Map<number, ServerCursor>()
  private sweeper: NodeJS.Timeout | null = null

  constructor(private readonly idleTimeoutMs: number) {}

  get openCount(): number {
    return this.cursors.size
  }

  private newId(): number {
    for (;;) {
      const id = Math.floor(Math.random() * 2 ** 52) + 1
      if (!this.cursors.has(id)) return id
    }
  }

  /** Takes a batch; returns the batch and whether documents remain. */
  private static batch(docs: Document[], pos: number, batchSize: number | undefined): Document[] {
    if (batchSize !== undefined && batchSize > 0) return docs.slice(pos, pos + batchSize)
    // No explicit size: everything up to ~16 MB.
    let bytes = 0
    let end = pos
    while (end < docs.length) {
      bytes += calculateObjectSize(docs[end])
      if (bytes > MAX_BATCH_BYTES && end > pos) break
      end++
    }
    return docs.slice(pos, end)
  }

  /** Builds the first reply of a find/aggregate/list*, opening a cursor when results remain. */
  open(ns: string, docs: Document[], batchSize: number | undefined, singleBatch: boolean, connectionId: number): CursorReply {
    const size = batchSize === undefined ? DEFAULT_BATCH_SIZE : batchSize
    const first = size === 0 ? [] : CursorManager.batch(docs, 0, size)
    let id = 0
    if (!singleBatch && first.length < docs.length) {
      id = this.newId()
      this.cursors.set(id, {id, ns, docs, pos: first.length, lastUsed: Date.now(), connectionId})
      this.ensureSweeper()
    }
    return {cursor: {firstBatch: first, id: Long.fromNumber(id), ns}, ok: 1}
  }

  /** Opens a tailable cursor after its first batch: it stays open however much it returned. */
  openTailable(ns: string, firstBatch: Document[], tail: TailSource, connectionId: number): CursorReply {
    const id = this.newId()
    this.cursors.set(id, {id, ns, docs: [], pos: 0, lastUsed: Date.now(), connectionId, tail})
    this.ensureSweeper()
    return {cursor: {firstBatch, id: Long.fromNumber(id), ns}, ok: 1}
  }

  private owned(id: number, ns: string): ServerCursor {
    const cursor = this.cursors.get(id)
    if (!cursor) throw new CommandError(43, `cursor id ${id} not found`)
    if (cursor.ns !== ns) {
      throw new CommandError(13, `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`)
    }
    return cursor
  }

  /** A tailable cursor's getMore: what was appended since, waiting up to `maxTimeMS` for it with awaitData. */
  async getMoreTailable(id: number, ns: string, batchSize: number | undefined, maxTimeMS: number | undefined): Promise<CursorReply> {
    const cursor = this.owned(id, ns)
    const tail = cursor.tail!
    const max = batchSize !== undefined && batchSize > 0 ? batchSize : Number.MAX_SAFE_INTEGER
    let batch = tail.next(max)
    if (batch.length === 0 && tail.wait) {
      await tail.wait(maxTimeMS ?? DEFAULT_AWAIT_DATA_MS)
      batch = tail.next(max)
    }
    cursor.lastUsed = Date.now()
    // killed (killCursors, restart) while it waited: the cursor is gone, as on the server
    const alive = this.cursors.get(id) === cursor
    return {cursor: {nextBatch: batch, id: Long.fromNumber(alive ? id : 0), ns}, ok: 1}
  }

  isTailable(id: number): boolean {
    return this.cursors.get(id)?.tail !== undefined
  }

  getMore(id: number, ns: string, batchSize: number | undefined): CursorReply {
    const cursor = this.owned(id, ns)
    const batch = CursorManager.batch(cursor.docs, cursor.pos, batchSize)
    cursor.pos += batch.length
    cursor.lastUsed = Date.now()
    let outId = id
    if (cursor.pos >= cursor.docs.length) {
      this.cursors.delete(id)
      outId = 0
    }
    return {cursor: {nextBatch: batch, id: Long.fromNumber(outId), ns}, ok: 1}
  }

  kill(id: number): boolean {
    return this.cursors.delete(id)
  }

  clear(): void {
    this.cursors.clear()
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = null
  }

  private ensureSweeper(): void {
    if (this.sweeper) return
    const every = Math.max(1000, Math.min(60_000, this.idleTimeoutMs / 4))
    this.sweeper = setInterval(() => {
      const cutoff = Date.now() - this.idleTimeoutMs
      for (const [id, c] of this.cursors) if (c.lastUsed < cutoff) this.cursors.delete(id)
      if (this.cursors.size === 0 && this.sweeper) {
        clearInterval(this.sweeper)
        this.sweeper = null
      }
    }, every)
    this.sweeper.unref()
  }
}
