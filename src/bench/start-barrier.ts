/**
 * `--start-at all-ready`: the segments of a distributed run start together once every one of them is
 * set up (connected, its namespace claimed, its share seeded), wherever and whenever each process
 * began. Pods of a Kubernetes Job start minutes apart (scheduling, image pulls); a start instant fixed
 * when the manifest is printed is either too early for a slow pod or wastes minutes for all.
 *
 * The barrier is kept in the run's own marker collection, in the database every segment already
 * writes to, so it needs nothing else: no Kubernetes API access (no RBAC), no shared volume, no leader.
 * Each segment stamps `readyAt` on its marker with the server's clock; when all `count` markers of the
 * run carry one, every segment computes the same start, the latest `readyAt` plus START_MARGIN_MS (on
 * the server's clock, so one number for all), and waits for it on its own clock, corrected by its
 * offset to the server's (measured on the stamp's round trip: off by at most half of it).
 * The margin covers the poll interval: every segment sees the last stamp well before the start. The
 * poll interval grows with the segment count (pollIntervalMs) so that all of them together ask the
 * server at most about 100 times a second, and each poll is a count until all are there.
 *
 * A segment that never gets ready (a pod that cannot be scheduled) would hold the others forever: each
 * gives up READY_TIMEOUT_MS after its own stamp, naming the missing segments, and fails (exit 9), so a
 * Job with no retries fails instead of hanging.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {Db} from '../mongo/driver.js'

import {PoolToolError} from '../errors.js'
import {MARKER_COLLECTION, type RunMarker} from './namespace.js'

/** From the last segment's readiness to the start, at least: several polls, so every segment has seen it. */
export const START_MARGIN_MS = 5000
/** How often a ready segment looks for the others, at least. */
export const POLL_INTERVAL_MS = 500

/** A ready segment's poll interval: 500 ms, longer past 50 segments (10 ms per segment: ~100 polls/s in all). */
export function pollIntervalMs(count: number): number {
  return Math.max(POLL_INTERVAL_MS, count * 10)
}

/** From the last readiness to the start: 5 s, or three polls when they are longer (the same for every segment of a run). */
export function startMarginMs(count: number): number {
  return Math.max(START_MARGIN_MS, 3 * pollIntervalMs(count))
}
/** How long a ready segment waits for the others before the run fails. */
export const READY_TIMEOUT_MS = 10 * 60_000

export interface BarrierStart {
  /** The start, on the server's clock: the same instant for every segment. */
  at: Date
  /** This process's clock minus the server's (ms), as measured when it stamped its readiness. */
  clockOffsetMs: number
  /** The last segment's readiness (server clock). */
  lastReadyAt: Date
}

/**
 * Stamp this segment ready, then wait until every segment of the run is (or a stop request: undefined).
 * `markerId`: this segment's marker (OwnedNamespace.marker._id).
 */
export async function waitForAllReady(
  db: Db,
  run: {markerId: string; runId: string; count: number},
  signal: AbortSignal,
  o: {pollMs?: number; timeoutMs?: number; marginMs?: number} = {},
): Promise<BarrierStart | undefined> {
  const markers = db.collection<RunMarker & {readyAt?: Date}>(MARKER_COLLECTION)
  const sentAt = Date.now()
  await markers.updateOne({_id: run.markerId}, {$currentDate: {readyAt: true}})
  const own = await markers.findOne({_id: run.markerId}, {projection: {readyAt: 1}})
  const receivedAt = Date.now()
  if (!own?.readyAt) throw new Error(`the marker of run ${run.markerId} was not found right after it was stamped ready`)
  // The server stamped readyAt somewhere inside the round trip: its middle is the best guess.
  const clockOffsetMs = (sentAt + receivedAt) / 2 - own.readyAt.getTime()
  const timeoutMs = o.timeoutMs ?? READY_TIMEOUT_MS
  const giveUpAt = receivedAt + timeoutMs
  for (;;) {
    if (signal.aborted) return undefined
    // One marker per segment (its _id is <runId>-s<index>): a count says when all are there, and costs little.
    const readyFilter = {runId: run.runId, 'segment.count': run.count, readyAt: {$type: 'date' as const}}
    if ((await markers.countDocuments(readyFilter)) >= run.count) {
      const ready = await markers.find(readyFilter, {projection: {readyAt: 1}}).toArray()
      const lastReadyAt = new Date(Math.max(...ready.map((m) => m.readyAt!.getTime())))
      return {at: new Date(lastReadyAt.getTime() + (o.marginMs ?? startMarginMs(run.count))), clockOffsetMs, lastReadyAt}
    }
    if (Date.now() >= giveUpAt) {
      const ready = await markers.find(readyFilter, {projection: {segment: 1}}).toArray()
      const indices = new Set(ready.map((m) => m.segment?.index))
      const missing = Array.from({length: run.count}, (_, i) => i).filter((i) => !indices.has(i))
      throw new PoolToolError(
        'SERVER_ERROR',
        `segment${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of ${run.count} of run ${run.runId} not set up ${Math.round(timeoutMs / 1000)} s after this one (--start-at all-ready): no segment started`,
        'see why those segments did not start (kubectl get pods, kubectl describe pod: unschedulable, image pull, no route to the cluster), then run the Job again',
      )
    }
    // A stop request ends the wait at once (no error: the loop checks the signal).
    await sleep(o.pollMs ?? pollIntervalMs(run.count), undefined, {signal}).catch(() => {})
  }
}
