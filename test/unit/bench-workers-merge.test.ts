/**
 * The workers' outcomes merge exactly: the merged latency is the histogram of every worker's
 * values (never an average of percentiles), per series interval too, and counts add up.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {createHistogram, encodeHistogram, mergeBucketCounts, summarize, toBucketCounts, toPortable} from '../../src/metrics/histograms.js'
import {mergeOutcomes} from '../../src/bench/worker-load.js'
import type {WorkerOutcome} from '../../src/bench/worker-protocol.js'

const histogramOf = (values: readonly number[]) => {
  const h = createHistogram()
  for (const v of values) h.recordValue(v)
  return h
}

function outcome(values: number[], seriesValues: number[][], overrides: Partial<WorkerOutcome> = {}): WorkerOutcome {
  const empty = toPortable(createHistogram())
  return {
    ops: values.length, errors: 0, errorsByClass: {}, scheduled: null, missed: 0, missedByReason: {}, aborted: 0, durationMs: 1000, interrupted: false,
    latencyUs: toPortable(histogramOf(values)), latencyCorrectedUs: null, scheduleLagUs: null, latencyByOpUs: {find: toPortable(histogramOf(values))},
    series: seriesValues.map((v, i) => ({tMS: i * 500, durationMS: 500, ops: v.length, errors: 0, opsPerSec: v.length * 2, latencyMaxUs: Math.max(...v), poolInUse: 1, poolTotal: 2})),
    seriesLatencyUs: seriesValues.map((v) => encodeHistogram(histogramOf(v))),
    pool: {created: 2, closed: {}, checkOutFailed: {}, cleared: 0, total: 2, inUse: 0, peakTotal: 2, peakInUse: 2},
    telemetry: {checkoutWaitUs: empty, checkoutWaitDriverMS: empty, setupUs: empty, setupDriverMS: empty},
    clients: 1, stages: [], startedAtEpochMs: 1000, ...overrides,
  }
}

describe('merging worker outcomes', () => {
  it('percentiles of the merged histograms equal those of one histogram fed every value', () => {
    // A fast worker and a slow one: averaging their p99s would be wrong both ways.
    const fast = Array.from({length: 990}, (_, i) => 100 + i)
    const slow = Array.from({length: 10}, (_, i) => 50_000 + i * 1000)
    const parts = [
      {index: 0, plan: {concurrency: 4, warmupMs: 0, drainTimeoutMs: 0, tickIntervalMs: 0}, outcome: outcome(fast, [fast.slice(0, 500), fast.slice(500)])},
      {index: 1, plan: {concurrency: 4, warmupMs: 0, drainTimeoutMs: 0, tickIntervalMs: 0}, outcome: outcome(slow, [slow.slice(0, 5), slow.slice(5)], {startedAtEpochMs: 1001.5})},
    ]
    const {measurement, pool, workers} = mergeOutcomes(parts, [{h: 3}, {h: 4}])
    const expected = summarize(histogramOf([...fast, ...slow]))
    assert.deepEqual(summarize(measurement.latencyUs), expected)
    assert.deepEqual(summarize(measurement.latencyByOpUs.find!), expected)
    assert.equal(measurement.ops, 1000)
    const secondInterval = summarize(histogramOf([...fast.slice(500), ...slow.slice(5)]))
    assert.deepEqual(
      {ops: measurement.series[1]!.ops, p99: measurement.series[1]!.latencyP99Us, max: measurement.series[1]!.latencyMaxUs, inUse: measurement.series[1]!.poolInUse, server: measurement.series[1]!.serverConnections},
      {ops: 490 + 5, p99: secondInterval.p99, max: secondInterval.max, inUse: 2, server: {h: 4}},
    )
    assert.deepEqual({created: pool.created, peakInUse: pool.peakInUse}, {created: 4, peakInUse: 4})
    assert.equal(workers!.startSkewMS, 1.5)
    assert.deepEqual(workers!.perWorker.map((w) => w.ops), [990, 10])
  })

  it('stages: each stage\'s parts added (counts, shares, in-flight time, histograms), its window the first worker\'s', () => {
    const stage = (index: number, values: number[], concurrency: number, peak: number) => ({
      index, startMs: index * 300, durationMs: 300, concurrency, rate: null, ops: values.length, errors: 0, scheduled: null, missed: 0,
      inFlightPeak: peak, inFlightAreaMs: peak * 300, latencyUs: toPortable(histogramOf(values)), latencyCorrectedUs: null,
    })
    const a = [100, 200, 300]
    const b = [5000, 6000]
    const plan = {concurrency: 4, warmupMs: 0, drainTimeoutMs: 0, tickIntervalMs: 0}
    const parts = [
      {index: 0, plan, outcome: outcome([...a, 1], [[1]], {stages: [stage(0, a, 1, 1), stage(1, [1], 4, 4)]})},
      {index: 1, plan, outcome: outcome([...b, 2], [[2]], {stages: [stage(0, b, 1, 1), stage(1, [2], 4, 3)]})},
    ]
    const {measurement} = mergeOutcomes(parts, [])
    assert.deepEqual(measurement.stages.map((s) => [s.index, s.startMs, s.concurrency, s.ops, s.inFlightPeak, s.inFlightAreaMs]), [[0, 0, 2, 5, 2, 600], [1, 300, 8, 2, 7, 2100]])
    assert.deepEqual(summarize(measurement.stages[0]!.latencyUs), summarize(histogramOf([...a, ...b])))
  })

  it('progress ticks: bucket counts merge to the histogram of every value, exact max included, as the encoding does', () => {
    // Values spread over many buckets (1 µs to 40 s, sub-bucket precision matters at the top) in two workers, and one idle.
    const fast = Array.from({length: 3000}, (_, i) => 1 + ((i * 7919) % 20_000))
    const slow = [...Array.from({length: 50}, (_, i) => 123_457 + i * 10_007), 40_000_001]
    const merged = mergeBucketCounts([fast, slow, []].map((values) => toBucketCounts(histogramOf(values))))
    const all = histogramOf([...fast, ...slow])
    assert.deepEqual(summarize(merged), summarize(all))
    assert.equal(merged.maxValue, 40_000_001)
    assert.equal(merged.minNonZeroValue, all.minNonZeroValue)
    for (const p of [10, 50, 75, 90, 99, 99.9, 99.99]) assert.equal(merged.getValueAtPercentile(p), all.getValueAtPercentile(p), `p${p}`)
    assert.equal(mergeBucketCounts([toBucketCounts(createHistogram())]).totalCount, 0)
  })
})
