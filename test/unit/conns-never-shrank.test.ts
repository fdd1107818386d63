/** The never-shrank detector on synthetic series, and the per-host summariser. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {detectNeverShrank, type SeriesPoint} from '../../src/conns/never-shrank.js'
import {HostTracker} from '../../src/conns/summary.js'

/** One point per second: [current, totalCreated]. */
const series = (points: Array<[number, number]>): SeriesPoint[] => points.map(([current, totalCreated], i) => ({atMS: i * 1000, current, totalCreated}))

describe('detectNeverShrank', () => {
  test('grown, creation stopped, count held past the idle window: flagged', () => {
    const s = series([[3, 10], [10, 17], [23, 30], [23, 30], [23, 30], [23, 30], [23, 30]])
    const v = detectNeverShrank(s, 3000)
    assert.equal(v.neverShrank, true)
    assert.deepEqual(v.detail, {levelAtQuiet: 23, minSinceQuiet: 23, baseline: 3, quietForMS: 4000})
  })
  test('not yet past the idle window', () => {
    assert.equal(detectNeverShrank(series([[3, 10], [23, 30], [23, 30], [23, 30]]), 3000).neverShrank, false)
  })
  test('shrinks after the load (maxIdleTimeMS): not flagged', () => {
    assert.equal(detectNeverShrank(series([[3, 10], [23, 30], [23, 30], [12, 30], [4, 30], [4, 30], [4, 30]]), 3000).neverShrank, false)
  })
  test('a small dip within the tolerance (another client\'s monitor) still counts as held', () => {
    assert.equal(detectNeverShrank(series([[3, 10], [23, 30], [22, 30], [23, 30], [22, 30], [22, 30]]), 3000).neverShrank, true)
  })
  test('steady churn (creation never stops): not flagged', () => {
    assert.equal(detectNeverShrank(series([[5, 10], [5, 20], [5, 30], [5, 40], [5, 50], [5, 60]]), 2000).neverShrank, false)
  })
  test('an idle cluster that never grew: not flagged', () => {
    assert.equal(detectNeverShrank(series([[5, 10], [5, 10], [5, 10], [5, 10], [5, 10]]), 2000).neverShrank, false)
    assert.equal(detectNeverShrank(series([[5, 10], [6, 11], [6, 11], [6, 11], [6, 11]]), 2000).neverShrank, false, 'one connection is no growth')
  })
  test('a second burst that is held is judged on its own, after an earlier one shrank', () => {
    const s = series([[3, 10], [50, 57], [5, 57], [5, 57], [20, 72], [20, 72], [20, 72], [20, 72]])
    const v = detectNeverShrank(s, 3000)
    assert.equal(v.neverShrank, true)
    assert.equal(v.detail!.levelAtQuiet, 20)
  })
  test('a restart (totalCreated goes down) starts from scratch', () => {
    assert.equal(detectNeverShrank(series([[3, 10], [23, 30], [23, 30], [2, 2], [2, 2], [2, 2], [2, 2]]), 2000).neverShrank, false)
  })
})

describe('HostTracker', () => {
  const conns = (current: number, totalCreated: number, extra: Record<string, number> = {}) => ({current, available: 1000 - current, totalCreated, ...extra})

  test('rate per second, min/max/last, created, rejected during the watch, absent fields absent', () => {
    const t = new HostTracker({host: 'h:1', role: 'primary'}, 60_000)
    const first = t.record({ok: true, atMS: 0, connections: conns(5, 100, {rejected: 7})})
    assert.equal(first.sample.totalCreatedRatePerSec, undefined, 'no rate on the first answer')
    assert.equal(first.sample.threaded, undefined)
    const second = t.record({ok: true, atMS: 2000, connections: conns(25, 140, {rejected: 9})})
    assert.equal(second.sample.totalCreatedRatePerSec, 20)
    assert.equal(second.inputs.rejectedDelta, 2)
    t.record({ok: false, state: 'unreachable', error: 'connect ECONNREFUSED'})
    t.record({ok: true, atMS: 6000, connections: conns(10, 160, {rejected: 9})})
    const s = t.summary()
    assert.deepEqual(s.current, {min: 5, max: 25, last: 10})
    assert.equal(s.totalCreatedRate.max, 20)
    assert.equal(s.totalCreatedRate.mean, 10)
    assert.equal(s.created, 60)
    assert.equal(s.rejected, 2)
    assert.equal(s.samples, 3)
    assert.equal(s.unreachableRounds, 1)
    assert.equal(s.state, 'ok')
  })

  test('a server without rejected (before 6.3) reports no rejected, not 0', () => {
    const t = new HostTracker({host: 'h:1', role: 'standalone'}, 60_000)
    t.record({ok: true, atMS: 0, connections: conns(5, 100)})
    t.record({ok: true, atMS: 1000, connections: conns(5, 100)})
    assert.equal('rejected' in t.summary(), false)
    assert.equal(JSON.parse(JSON.stringify(t.summary())).rejected, undefined)
  })

  test('a restart: counterReset, no rate across it, created counts the new connections', () => {
    const t = new HostTracker({host: 'h:1', role: 'secondary'}, 60_000)
    t.record({ok: true, atMS: 0, connections: conns(5, 100)})
    const after = t.record({ok: true, atMS: 3000, connections: conns(2, 3)})
    assert.equal(after.sample.counterReset, true)
    assert.equal(after.sample.totalCreatedRatePerSec, undefined)
    t.record({ok: true, atMS: 4000, connections: conns(3, 4)})
    assert.equal(t.summary().created, 4)
    assert.equal(t.summary().totalCreatedRate.max, 1)
  })

  test('replica-set roles follow the member state', () => {
    const t = new HostTracker({host: 'h:1', role: 'secondary'}, 60_000)
    const {sample} = t.record({ok: true, atMS: 0, connections: conns(1, 1), memberState: 'primary'})
    assert.equal(sample.role, 'primary')
    assert.equal(t.summary().role, 'primary')
  })
})
