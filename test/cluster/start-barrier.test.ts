/**
 * `--start-at all-ready` (src/bench/start-barrier.ts) on the embedded cluster: segments that get ready
 * at different moments agree on one start, the last readiness plus the margin; one left alone gives
 * up naming the missing segments; a stop request ends the wait. The whole walk of a Job's pods is in
 * test/cli/k8s-walkthrough.test.ts.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {PoolToolError} from '../../src/errors.js'
import {MARKER_COLLECTION} from '../../src/bench/namespace.js'
import {pollIntervalMs, START_MARGIN_MS, startMarginMs, waitForAllReady} from '../../src/bench/start-barrier.js'
import {useClusterClient} from '../helpers/cluster.js'

describe('start barrier', () => {
  const cluster = useClusterClient({})
  const db = () => cluster.client.db('pooltool_barrier')
  /** A segment's marker as OwnedNamespace.claim writes it (the fields the barrier reads). */
  const register = (runId: string, index: number, count: number) =>
    db().collection(MARKER_COLLECTION).insertOne({_id: `${runId}-s${index}` as never, runId, segment: {index, count}, heartbeatAt: new Date()})

  it('segments ready at different moments agree on one start: the last readiness plus the margin', async () => {
    const runId = 'ba221e00'
    const signal = new AbortController().signal
    await register(runId, 0, 2)
    await register(runId, 1, 2)
    const first = waitForAllReady(db(), {markerId: `${runId}-s0`, runId, count: 2}, signal, {pollMs: 20})
    // The second gets ready only once the first has stamped its readiness and is waiting.
    for (;;) {
      if ((await db().collection(MARKER_COLLECTION).countDocuments({runId, readyAt: {$type: 'date'}})) === 1) break
      await new Promise((resolve) => setTimeout(resolve, 20)) // between polls of the markers
    }
    const second = await waitForAllReady(db(), {markerId: `${runId}-s1`, runId, count: 2}, signal, {pollMs: 20})
    const start = (await first)!
    assert.ok(second)
    assert.equal(start.at.getTime(), second.at.getTime(), 'one instant for both')
    const stamps = (await db().collection(MARKER_COLLECTION).find({runId}).toArray()).map((m) => (m.readyAt as Date).getTime())
    assert.equal(start.lastReadyAt.getTime(), Math.max(...stamps))
    assert.equal(start.at.getTime(), Math.max(...stamps) + START_MARGIN_MS)
    // One machine, one clock: the measured offset to the server's is within the round trip.
    assert.ok(Math.abs(start.clockOffsetMs) < 1000, String(start.clockOffsetMs))
  })

  it('a segment left alone gives up, naming the segments that never got ready', async () => {
    const runId = 'ba221e01'
    await register(runId, 1, 3)
    await assert.rejects(
      waitForAllReady(db(), {markerId: `${runId}-s1`, runId, count: 3}, new AbortController().signal, {pollMs: 20, timeoutMs: 200}),
      (error: unknown) => error instanceof PoolToolError && error.exitCode === 9 && /^segments 0, 2 of 3 of run ba221e01 not set up 0 s after this one/.test(error.message),
    )
  })

  it('polls less often with many segments, and keeps three polls of margin', () => {
    assert.deepEqual([1, 50, 100, 1000].map(pollIntervalMs), [500, 500, 1000, 10_000])
    assert.deepEqual([2, 100, 1000].map(startMarginMs), [5000, 5000, 30_000])
  })

  it('a stop request ends the wait with no start', async () => {
    const runId = 'ba221e02'
    await register(runId, 0, 2)
    const stop = new AbortController()
    const waiting = waitForAllReady(db(), {markerId: `${runId}-s0`, runId, count: 2}, stop.signal, {pollMs: 20})
    for (;;) {
      if ((await db().collection(MARKER_COLLECTION).countDocuments({runId, readyAt: {$type: 'date'}})) === 1) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    stop.abort('SIGINT')
    assert.equal(await waiting, undefined)
  })
})
