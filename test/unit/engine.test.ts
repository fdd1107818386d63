import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {setTimeout as sleep} from 'node:timers/promises'

import {runEngine} from '../../src/bench/engine.js'
import {findKnee} from '../../src/bench/knee.js'
import type {RunResult} from '../../src/bench/types.js'
import {hooks, plan} from '../helpers/engine.js'
import {createHistogram, decodeHistogram, type Histogram, encodeHistogram, mergeHistograms, recordMs, summarize} from '../../src/metrics/histograms.js'

/** At most `n` recorded values are ≥ `value`: the value n places below the top lies under it. */
const atMostAtOrAbove = (histogram: Histogram, n: number, value: number) =>
  histogram.totalCount <= n || histogram.getValueAtPercentile((100 * (histogram.totalCount - n)) / histogram.totalCount) < value

describe('engine, closed loop', () => {
  it('runs exactly --ops measured operations', async () => {
    let calls = 0
    const m = await runEngine(plan({ops: 250}), hooks(async () => { calls += 1 }))
    assert.equal(m.ops, 250)
    assert.equal(calls, 250)
    assert.equal(m.latencyUs.totalCount, 250)
    assert.equal(m.latencyCorrectedUs, null)
  })

  it('is bounded by concurrency: N workers over a 20 ms operation give about N/20ms', async () => {
    let inFlight = 0
    let peak = 0
    const m = await runEngine(plan({concurrency: 5, durationMs: 400}), hooks(async () => {
      inFlight += 1
      peak = Math.max(peak, inFlight)
      await sleep(20)
      inFlight -= 1
    }))
    assert.equal(peak, 5)
    // At most 5 workers × 400 ms / 19 ms (a timer may fire a millisecond early) + the 5 drained at the end;
    // how many fewer a loaded machine manages is not the engine's to promise.
    assert.ok(m.ops > 0 && m.ops <= 110, `ops ${m.ops}`)
    assert.ok(summarize(m.latencyUs).p50 >= 19_000, `p50 ${summarize(m.latencyUs).p50}`)
  })

  it('counts errors by class and keeps going', async () => {
    let n = 0
    const m = await runEngine(plan({ops: 30, concurrency: 1}), hooks(async () => {
      n += 1
      if (n % 3 === 0) throw new Error('boom')
    }))
    assert.equal(m.ops + m.errors, 30)
    assert.deepEqual(m.errorsByClass, {boom: 10})
  })

  it('does not record the warm-up', async () => {
    let calls = 0
    let measureStartedAtCall = -1
    const m = await runEngine(plan({concurrency: 1, warmupMs: 150, durationMs: 150}), {
      ...hooks(async () => {
        calls += 1
        await sleep(10)
      }),
      onMeasureStart: () => { measureStartedAtCall = calls },
    })
    // How many ops fit in the warm-up depends on the machine's load; that at least one ran does not
    // (the first starts at once), and exactly those started after it are measured (all drained at the end).
    assert.ok(measureStartedAtCall >= 1, `warm-up ran ${measureStartedAtCall} ops`)
    assert.equal(m.ops, calls - measureStartedAtCall, `measured ${m.ops} of ${calls}, ${measureStartedAtCall} started in the warm-up`)
  })

  it('stops on abort and reports what it measured', async () => {
    const controller = new AbortController()
    let calls = 0
    const m = await runEngine(plan({durationMs: 60_000}), hooks(async () => {
      calls += 1
      // The stop comes once 40 operations were started, whatever the machine's speed.
      if (calls === 40) controller.abort()
      await sleep(5)
    }, controller.signal))
    assert.equal(m.interrupted, true, 'the run says it was stopped')
    assert.ok(m.ops >= 36, `the operations started before the stop were measured: ${m.ops}`)
    assert.ok(m.ops <= calls, `nothing is counted that did not run: ${m.ops} of ${calls}`)
    // The measured interval ended at the stop, not at the 60 s --duration (a logical bound, not a speed bound).
    assert.ok(m.durationMs < 60_000, `duration ${m.durationMs}`)
  })
})

describe('engine, open loop', () => {
  it('keeps the schedule and records corrected latency', async () => {
    const m = await runEngine(plan({rate: 200, durationMs: 500}), hooks(() => sleep(2)))
    // The schedule is exact whatever the machine's load: 200/s × 500 ms; what a loaded machine did not start is missed.
    assert.equal(m.scheduled, 100)
    assert.equal(m.ops + m.errors + m.missed, 100, JSON.stringify({ops: m.ops, errors: m.errors, missed: m.missed}))
    assert.ok(m.ops > 0)
    // Every completed operation is in the corrected histogram, and so is every missed slot (its wait until the run
    // gave up on it): a loaded machine that misses slots still adds up; a lost or doubled operation does not.
    assert.equal(m.latencyCorrectedUs?.totalCount, m.ops + m.missed, JSON.stringify({ops: m.ops, missed: m.missed, corrected: m.latencyCorrectedUs?.totalCount}))
  })

  it('shows a stall in the corrected p99 that the uncorrected p99 hides (coordinated omission)', async () => {
    // 1000 ops/s for 1.5 s through 2 workers; the "server" stalls 400 ms at t=500 ms.
    const started = performance.now()
    const m = await runEngine(plan({rate: 1000, concurrency: 2, durationMs: 1500}), hooks(async () => {
      const t = performance.now() - started
      if (t >= 500 && t < 900) await sleep(900 - t)
    }))
    const corrected = summarize(m.latencyCorrectedUs!)
    const uncorrected = summarize(m.latencyUs)
    assert.ok(corrected.p99 > 250_000, `corrected p99 ${corrected.p99}µs`)
    // Only the sends in flight when the stall began (at most the 2 workers) waited it out; the
    // backlog behind them was sent late, which only the corrected latency counts.
    assert.ok(atMostAtOrAbove(m.latencyUs, 2, 250_000), `more than 2 uncorrected latencies ≥ 250 ms (p99 ${uncorrected.p99}µs)`)
    assert.ok(uncorrected.max > 250_000, 'the few stalled sends still show in max')
  })
})

describe('histograms', () => {
  it('merges rather than averages', () => {
    const fast = createHistogram()
    const slow = createHistogram()
    for (let i = 0; i < 990; i++) recordMs(fast, 1)
    for (let i = 0; i < 10; i++) recordMs(slow, 100)
    const merged = mergeHistograms([fast, slow])
    assert.equal(merged.totalCount, 1000)
    assert.ok(summarize(merged).p999 >= 99_000, `p99.9 ${summarize(merged).p999} µs shows the slow tenth of a percent`)
    const roundTrip = decodeHistogram(encodeHistogram(merged))
    assert.equal(roundTrip.totalCount, 1000)
    assert.equal(summarize(roundTrip).p50, summarize(merged).p50)
  })
})

describe('knee', () => {
  const run = (concurrency: number, opsPerSec: number, p99: number) =>
    ({model: 'pool', concurrency, maxPoolSize: 10, ops: 100, opsPerSec, latencyUs: {p99}, latencyCorrectedUs: null}) as unknown as RunResult
  it('picks the highest throughput within 2x the lowest p99', () => {
    const knee = findKnee([run(1, 100, 1000), run(8, 700, 1800), run(64, 900, 9000)])
    assert.equal(knee?.concurrency, 8)
    assert.equal(knee?.sloUs, 2000)
    assert.equal(knee?.sloSource, '2x lowest p99')
  })
  it('honours an explicit SLO', () => {
    assert.equal(findKnee([run(1, 100, 1000), run(64, 900, 9000)], 10_000)?.concurrency, 64)
  })
})
