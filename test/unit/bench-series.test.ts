import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {setTimeout as sleep} from 'node:timers/promises'

import {runEngine} from '../../src/bench/engine.js'
import {SeriesRecorder} from '../../src/bench/series.js'
import {hooks, plan} from '../helpers/engine.js'

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

describe('bench time series (engine)', () => {
  it('puts every completed and failed operation in exactly one interval (closed loop, --duration)', async () => {
    let n = 0
    const m = await runEngine(plan({concurrency: 3, durationMs: 450, seriesIntervalMs: 100}), hooks(async () => {
      n += 1
      await sleep(3)
      if (n % 7 === 0) throw new Error('boom')
    }))
    assert.ok(m.ops > 0)
    assert.equal(m.series.length, 5, JSON.stringify(m.series.map((s) => s.tMS)))
    assert.deepEqual(m.series.map((s) => s.tMS), [0, 100, 200, 300, 400])
    assert.equal(m.series.at(-1)!.durationMS, 50)
    assert.equal(sum(m.series.map((s) => s.ops)), m.ops)
    assert.equal(sum(m.series.map((s) => s.errors)), m.errors)
    for (const interval of m.series) {
      if (interval.ops > 0) assert.ok(interval.latencyP50Us! >= 2000 && interval.latencyMaxUs! >= interval.latencyP99Us!)
      else assert.equal(interval.latencyP99Us, undefined)
    }
  })

  it('adds up in open loop and with --ops, and samples the caller\'s gauges as each interval closes', async () => {
    let samples = 0
    const open = await runEngine(plan({rate: 500, durationMs: 300, seriesIntervalMs: 100}), {
      ...hooks(async () => sleep(2)),
      sampleSeries: () => ({poolInUse: ++samples}),
    })
    assert.equal(sum(open.series.map((s) => s.ops)), open.ops)
    assert.equal(open.series.length, 3)
    assert.deepEqual(open.series.map((s) => s.poolInUse), [1, 2, 3])
    const counted = await runEngine(plan({ops: 200, concurrency: 2, seriesIntervalMs: 5}), hooks(async () => sleep(1)))
    assert.equal(counted.ops, 200)
    assert.equal(sum(counted.series.map((s) => s.ops)), 200)
    assert.ok(counted.series.length > 1)
  })

  it('reads the last interval\'s gauges when the measured interval ends, not after the operations in flight drained', async () => {
    // Operations in flight stand for the pool's connections in use: the old last point read 0 (issue 26).
    let inFlight = 0
    const m = await runEngine(plan({concurrency: 3, durationMs: 120, seriesIntervalMs: 50}), {
      ...hooks(async () => {
        inFlight += 1
        await sleep(15)
        inFlight -= 1
      }),
      sampleSeries: () => ({poolInUse: inFlight}),
    })
    assert.equal(inFlight, 0, 'every operation drained before the engine returned')
    assert.deepEqual(m.series.map((s) => s.tMS), [0, 50, 100])
    for (const point of m.series) assert.ok(point.poolInUse > 0, `operations were in flight at each interval's end: ${JSON.stringify(m.series.map((s) => s.poolInUse))}`)
  })

  it('counts operations given up on at the end in the last interval', async () => {
    const m = await runEngine(plan({concurrency: 2, durationMs: 100, drainTimeoutMs: 50, seriesIntervalMs: 40}), hooks(() => new Promise(() => {})))
    assert.equal(m.errors, 2)
    assert.equal(m.series.at(-1)!.errors, 2)
    assert.equal(sum(m.series.map((s) => s.errors)), 2)
  })

  it('adds up when a stop request cuts the run short, aborted operations in the last interval', async () => {
    const controller = new AbortController()
    let n = 0
    const running = runEngine(plan({concurrency: 3, durationMs: 5000, stopDrainMs: 30, seriesIntervalMs: 50}), hooks(async () => {
      n += 1
      // After a while every operation hangs: the stop must give up on them.
      await (n > 60 ? new Promise(() => {}) : sleep(2))
    }, controller.signal))
    while (n <= 60) await sleep(5)
    await sleep(60)
    controller.abort()
    const m = await running
    assert.equal(m.aborted, 3)
    assert.ok(m.series.length >= 2 && m.series.length < 100, `${m.series.length} intervals`)
    assert.equal(sum(m.series.map((s) => s.ops)), m.ops)
    assert.equal(sum(m.series.map((s) => s.errors)), m.errors)
    assert.equal(m.series.at(-1)!.errors, 3)
  })

  it('has no series without --series-interval', async () => {
    const m = await runEngine(plan({ops: 10}), hooks(async () => {}))
    assert.deepEqual(m.series, [])
  })
})

describe('per-operation latency (engine)', () => {
  it('keeps one histogram per operation name whose counts add up to ops', async () => {
    const names = ['find', 'find', 'update', 'find', 'insert']
    let i = 0
    const seen: (string | undefined)[] = []
    const m = await runEngine(plan({ops: 100, concurrency: 2}), {
      ...hooks(async () => {}),
      nextOperation: () => names[i++ % names.length],
      execute: async (operation) => {
        seen.push(operation)
        if (operation === 'update') await sleep(5)
      },
    })
    const counts = Object.fromEntries(Object.entries(m.latencyByOpUs).map(([name, h]) => [name, h.totalCount]))
    assert.deepEqual(counts, {find: 60, update: 20, insert: 20})
    assert.equal(sum(Object.values(counts)), m.ops)
    assert.ok(m.latencyByOpUs.update!.minNonZeroValue >= 4000)
    assert.ok(seen.every((name) => name !== undefined))
  })
})

describe('SeriesRecorder', () => {
  it('makes no interval of floating-point dust at the end', () => {
    // performance.now() + 300 − performance.now() is not always 300: 1007.123456789 + 300 − 1007.123456789 > 300.
    const start = 1007.123456789
    assert.ok(start + 300 - start > 300)
    const recorder = new SeriesRecorder(100)
    recorder.start(start)
    recorder.endAt(start + 300)
    recorder.recordOp(start + 299.9, 1)
    assert.deepEqual(recorder.finish(start + 300).map((s) => s.durationMS), [100, 100, 100])
  })

  it('keeps summaries, not histograms, of closed intervals', () => {
    const recorder = new SeriesRecorder(10)
    recorder.start(0)
    for (let t = 0; t < 1000; t += 1) {
      recorder.recordOp(t, 1)
      recorder.closeBefore(t)
    }
    // Only the interval still open holds a histogram.
    assert.equal((recorder as unknown as {open: Map<number, unknown>}).open.size, 1)
    const series = recorder.finish(1000)
    assert.equal(series.length, 100)
    assert.equal(sum(series.map((s) => s.ops)), 1000)
    assert.ok(series.every((s) => s.ops === 10 && s.opsPerSec === 1000 && s.latencyP99Us === 1000))
  })
})
