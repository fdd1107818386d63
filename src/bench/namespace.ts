/**
 * bench's owned namespace: the only place bench ever writes, and the only
 * things it ever drops.
 *
 * The database (`--db`, default `pooltool_bench`) counts as pooltool's when it
 * holds the marker collection `pooltool_runs`. bench refuses, before any
 * write, a database that holds collections but no marker, the system
 * databases, and names MongoDB would reject.
 *
 * Every run registers itself there with a marker document (tool, run id, host,
 * pid, start, heartbeat, the collections it may create) and works only in
 * collections named after its run id (`bench_<runId>` …). So two runs on one
 * cluster share the database and never touch each other's data; that keeps a
 * least-privilege user (readWrite on this one database) able to run bench,
 * which a fresh database per run would not.
 *
 * The segments of one distributed run (`--segment`, `--run-id`) share the run's collections: each
 * registers its own marker (`<runId>-s<index>`, same runId), and the one that finishes last (no
 * other segment of the run still heartbeating) drops them; a dead segment's marker is reclaimed
 * without its collections while another segment of the run is alive.
 *
 * Cleanup drops only the collections the run's own marker lists, then its
 * marker, then the marker collection when no other run is left in it (the
 * database then disappears; dropDatabase is never used: it would take other
 * runs' collections with it and needs dbAdmin). A run that dies without
 * cleaning up stops its heartbeat; a later run reclaims its collections once
 * the heartbeat is older than RECLAIM_AFTER_MS on the server's clock. `--keep`
 * marks the run as kept: it is never reclaimed, and the report says how to
 * drop it.
 */
import {hostname} from 'node:os'
import {randomBytes} from 'node:crypto'

import {PoolToolError} from '../errors.js'
import type {Collection, Db} from '../mongo/driver.js'

export const MARKER_COLLECTION = 'pooltool_runs'
export const SYSTEM_DATABASES: readonly string[] = ['admin', 'local', 'config']
/** How often a running bench refreshes its marker's heartbeat (server clock: $currentDate). */
export const HEARTBEAT_INTERVAL_MS = 10_000
/** A marker whose heartbeat is this old belongs to a run that died: six missed heartbeats. */
export const RECLAIM_AFTER_MS = 60_000

const NAMESPACE_NOT_FOUND = 26
/** MongoDB's limit on database names (bytes), and the characters it rejects on any platform. */
const MAX_DB_NAME_BYTES = 63
const INVALID_DB_NAME_CHARS = /[/\\. "$*<>:|?\0]/

const RUN_ID = /^[0-9a-f]{8}$/

/** A short id that names this run's collections: `bench_<runId>`, `bench_<runId>_ddl0` … */
export function newRunId(): string {
  return randomBytes(4).toString('hex')
}

/** What a run writes into its marker document. */
export interface RunMarker {
  _id: string
  tool: 'pooltool'
  command: 'bench'
  runId: string
  host: string
  pid: number
  startedAt: Date
  heartbeatAt: Date
  /** Every collection this run may create; cleanup drops exactly these. */
  collections: string[]
  keep: boolean
  /** Present for one segment of a distributed run. */
  segment?: {index: number; count: number}
}

/** A dead run's leftovers that this run dropped. */
export interface ReclaimedRun {
  runId: string
  host: string
  pid: number
  heartbeatAgeMS: number
  collections: string[]
}

/** How cleanup ended: what was dropped, or what stays behind and why. */
export interface NamespaceRelease {
  dropped: string[]
  leftBehind: string[]
  /** The database itself is gone (no other run was using it). */
  databaseDropped: boolean
  reason?: string
}

/** Refuse names that are not pooltool's to write to, before anything connects. */
export function checkBenchDatabaseName(name: string): void {
  const hint = 'leave --db out to use pooltool_bench, or name a database that does not exist yet'
  if (name.trim() === '') throw new PoolToolError('USAGE', '--db is empty', hint)
  if (SYSTEM_DATABASES.includes(name.toLowerCase())) {
    throw new PoolToolError('USAGE', `--db ${name} is a system database: bench never writes there`, hint)
  }
  if (INVALID_DB_NAME_CHARS.test(name)) {
    throw new PoolToolError('USAGE', `--db '${name}' is not a valid database name (it may not contain / \\ . space " $ * < > : | ?)`, hint)
  }
  if (Buffer.byteLength(name) > MAX_DB_NAME_BYTES) {
    throw new PoolToolError('USAGE', `--db '${name}' is longer than MongoDB's ${MAX_DB_NAME_BYTES} bytes`, hint)
  }
}

/** `admin.system.*` and friends are the server's own: they never make a database someone else's. */
const isServerOwned = (collection: string) => collection.startsWith('system.')

export class OwnedNamespace {
  private heartbeat: NodeJS.Timeout | undefined
  private heartbeatFailures = 0

  private constructor(
    private readonly db: Db,
    readonly marker: RunMarker,
    /** Dead runs whose leftovers this run dropped when it started. */
    readonly reclaimed: ReclaimedRun[],
  ) {}

  get database(): string {
    return this.db.databaseName
  }

  /** `db.collection` names, for the report. */
  get namespaces(): string[] {
    return this.marker.collections.map((c) => `${this.database}.${c}`)
  }

  /**
   * Check the database is pooltool's (or absent), register this run's marker and
   * reclaim dead runs' leftovers. Throws USAGE, before any write, for a database
   * that holds data and no marker.
   */
  static async claim(db: Db, run: {runId: string; collections: string[]; keep: boolean; segment?: {index: number; count: number}}): Promise<OwnedNamespace> {
    const existing = (await db.listCollections({}, {nameOnly: true}).toArray()).map((c) => c.name).filter((name) => !isServerOwned(name))
    if (existing.length > 0 && !existing.includes(MARKER_COLLECTION)) {
      throw new PoolToolError(
        'USAGE',
        `database ${db.databaseName} exists and is not pooltool's (${existing.length} collection${existing.length === 1 ? '' : 's'}, no ${MARKER_COLLECTION} marker): bench writes only into a database it created`,
        'leave --db out to use pooltool_bench, or name a database that does not exist yet',
      )
    }
    const markers = db.collection<RunMarker>(MARKER_COLLECTION)
    const fields = {
      tool: 'pooltool' as const,
      command: 'bench' as const,
      runId: run.runId,
      host: hostname(),
      pid: process.pid,
      collections: run.collections,
      keep: run.keep,
      ...(run.segment ? {segment: run.segment} : {}),
    }
    const markerId = run.segment ? `${run.runId}-s${run.segment.index}` : run.runId
    // The server stamps the times, so every run judges heartbeats on one clock.
    await markers.updateOne({_id: markerId}, {$setOnInsert: fields, $currentDate: {startedAt: true, heartbeatAt: true}}, {upsert: true})
    const own = await markers.findOne({_id: markerId})
    if (!own) throw new Error(`the marker of run ${markerId} was not found right after it was written`)
    const namespace = new OwnedNamespace(db, own, await reclaimDeadRuns(db, own))
    return namespace
  }

  /**
   * Refresh the heartbeat until release; a failed refresh is retried on the next tick. A refresh that
   * finds the marker gone, or someone else's under this run's id, calls `onLost` (once) and stops: a
   * later run reclaimed this one's namespace, which happens when this process was paused longer than
   * RECLAIM_AFTER_MS (a laptop asleep, SIGSTOP, a VM frozen). Its collections were dropped under it, so
   * what it measures from then on is against an empty collection: the run must not go on as if it owned
   * them (before, the refresh upserted the marker back and the run carried on without a word).
   */
  startHeartbeat(intervalMs = HEARTBEAT_INTERVAL_MS, onLost?: (why: string) => void): void {
    const markers = this.db.collection<RunMarker>(MARKER_COLLECTION)
    const {_id, host, pid, startedAt} = this.marker
    let checking = false
    this.heartbeat = setInterval(() => {
      if (checking) return
      checking = true
      void (async () => {
        // Only this run's own marker (same host, pid and start) gets the new beat.
        const beat = await markers.updateOne({_id, host, pid, startedAt}, {$currentDate: {heartbeatAt: true}})
        if (beat.matchedCount > 0 || this.heartbeat === undefined) return
        const now = await markers.findOne({_id})
        if (this.heartbeat === undefined) return
        this.stopHeartbeat()
        this.takenOver = now !== null
        this.lostReason = now
          ? `the marker of run ${_id} in ${this.database}.${MARKER_COLLECTION} now belongs to another process (${now.host}, pid ${now.pid})`
          : `the marker of run ${_id} is gone from ${this.database}.${MARKER_COLLECTION}: another run reclaimed this run's collections as a dead run's (no heartbeat for ${RECLAIM_AFTER_MS / 1000} s: this process was paused, e.g. the machine slept)`
        onLost?.(this.lostReason)
      })()
        .catch(() => {
          this.heartbeatFailures += 1
        })
        .finally(() => {
          checking = false
        })
    }, intervalMs)
    this.heartbeat.unref()
  }

  /** Why this run no longer owns its namespace (set by the heartbeat), if it does not. */
  lostReason: string | undefined
  /** Another process registered under this run's id: its collections are that process's now, never dropped here. */
  private takenOver = false

  stopHeartbeat(): void {
    clearInterval(this.heartbeat)
    this.heartbeat = undefined
  }

  /**
   * Drop this run's collections and marker; drop the marker collection (and so the
   * database) when no other run is registered and nothing else is in it.
   * With `keep`, nothing is dropped and the marker stays, marked kept.
   */
  async release(): Promise<NamespaceRelease> {
    this.stopHeartbeat()
    if (this.marker.keep) return {dropped: [], leftBehind: this.namespaces, databaseDropped: false, reason: '--keep'}
    if (this.takenOver) return {dropped: [], leftBehind: [], databaseDropped: false, reason: `not dropped: ${this.lostReason}`}
    const markers = this.db.collection<RunMarker>(MARKER_COLLECTION)
    const stillRunning = this.marker.segment ? await this.leaveSharedRun(markers) : 0
    if (stillRunning > 0) {
      return {
        dropped: [],
        leftBehind: this.namespaces,
        databaseDropped: false,
        reason: `${stillRunning} other segment${stillRunning === 1 ? '' : 's'} of run ${this.marker.runId} still running: the last to finish drops the collections`,
      }
    }
    const dropped: string[] = []
    for (const name of this.marker.collections) {
      if (await dropIfPresent(this.db, name)) dropped.push(`${this.database}.${name}`)
    }
    // Only this run's own marker: after a reclaim there is none left to delete.
    await markers.deleteOne({_id: this.marker._id, host: this.marker.host, pid: this.marker.pid, startedAt: this.marker.startedAt})
    let databaseDropped = false
    if ((await markers.countDocuments({})) === 0) {
      const others = (await this.db.listCollections({}, {nameOnly: true}).toArray()).filter((c) => c.name !== MARKER_COLLECTION && !isServerOwned(c.name))
      if (others.length === 0) databaseDropped = await dropIfPresent(this.db, MARKER_COLLECTION)
    }
    return {dropped, leftBehind: [], databaseDropped}
  }

  /**
   * A segment leaves its run: its marker goes, and it counts the run's other segments still
   * heartbeating (ages on the server's clock, read from this segment's last stamp). Each segment
   * removes its marker before it counts, so the last to leave always counts none and drops.
   */
  private async leaveSharedRun(markers: Collection<RunMarker>): Promise<number> {
    const own = this.marker._id
    await markers.updateOne({_id: own}, {$currentDate: {heartbeatAt: true}})
    const serverNow = (await markers.findOne({_id: own}))?.heartbeatAt.getTime()
    await markers.deleteOne({_id: own})
    if (serverNow === undefined) return 0
    return markers.countDocuments({runId: this.marker.runId, heartbeatAt: {$gte: new Date(serverNow - RECLAIM_AFTER_MS)}})
  }
}

/**
 * Drops `collection` if it is there; whether it was. 7.0+ answers ok to dropping a collection that
 * does not exist (older servers NamespaceNotFound), so the report asks first: `dropped` lists only
 * what was there. Segments finishing together can both find it and both drop it.
 */
async function dropIfPresent(db: Db, collection: string): Promise<boolean> {
  const present = await db.listCollections({name: collection}, {nameOnly: true}).toArray()
  if (present.length === 0) return false
  try {
    return await db.collection(collection).drop()
  } catch (error) {
    if ((error as {code?: number}).code === NAMESPACE_NOT_FOUND) return false
    throw error
  }
}

/** Drop what runs that stopped heartbeating left behind (never a kept run's). Ages on the server's clock. */
async function reclaimDeadRuns(db: Db, self: RunMarker): Promise<ReclaimedRun[]> {
  const markers = db.collection<RunMarker>(MARKER_COLLECTION)
  const serverNow = self.heartbeatAt.getTime()
  const dead = await markers.find({_id: {$ne: self._id}, keep: {$ne: true}, heartbeatAt: {$lt: new Date(serverNow - RECLAIM_AFTER_MS)}}).toArray()
  const reclaimed: ReclaimedRun[] = []
  for (const marker of dead) {
    // Only collections that belong to that run by name: a marker is data, and data can be wrong.
    const ownName = RUN_ID.test(marker.runId) ? `bench_${marker.runId}` : undefined
    // A dead segment's run goes on while another of its segments (this one included) heartbeats.
    const runAlive = marker.runId === self.runId || (await markers.countDocuments({runId: marker.runId, heartbeatAt: {$gte: new Date(serverNow - RECLAIM_AFTER_MS)}})) > 0
    const collections = ownName === undefined || runAlive ? [] : (marker.collections ?? []).filter((name) => typeof name === 'string' && (name === ownName || name.startsWith(`${ownName}_`)))
    for (const name of collections) await dropIfPresent(db, name)
    await markers.deleteOne({_id: marker._id})
    reclaimed.push({
      runId: marker.runId,
      host: marker.host,
      pid: marker.pid,
      heartbeatAgeMS: serverNow - marker.heartbeatAt.getTime(),
      collections: collections.map((c) => `${db.databaseName}.${c}`),
    })
  }
  return reclaimed
}

/** The `namespace` part of bench's JSON result. */
export interface NamespaceReport {
  database: string
  /** The run's id (a `report merge` of separate runs: their ids, comma-separated). */
  runId: string
  /** `db.collection` names this run wrote to (or may create). */
  collections: string[]
  /** Leftovers of dead runs (heartbeat stopped) that this run dropped at its start. */
  reclaimed: ReclaimedRun[]
  dropped: string[]
  /** What stays on the cluster after this run, and why (`reason`). */
  leftBehind: string[]
  databaseDropped: boolean
  reason?: string
}
