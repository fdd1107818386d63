/**
 * report merge and compare, in-process: bench results are built with the real
 * HDR encoder from one stream of generated latencies split into segments, so
 * "exact" can be checked against one histogram fed the same values.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {BenchResult, RunResult} from '../../src/bench/types.js'
import {PoolToolError} from '../../src/errors.js'
import {createHistogram, decodeHistogram, encodeHistogram, summarize} from '../../src/metrics/histograms.js'
import {compareBenchResults, parseRatioGates, quantileInterval} from '../../src/report/compare.js'
import {checkBenchResult, type LoadedResult} from '../../src/report/load.js'
import {mergeBenchResults} from '../../src/report/merge.js'

/** Deterministic long-tailed latencies (µs): mostly 200–2,000, a few up to 200 ms. */
function latencies(count: number, seed: number, scale = 1): number[] {
  let state = seed
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
  return Array.from({length: count}, () => {
    const u = next()
    return Math.round(scale * (u < 0.98 ? 200 + 1800 * next() : 2000 + 198_000 * next()))
  })
}

/** A bench result of one closed-loop run whose latency figures come from `values` through the real encoder. */
function segment(file: string, values: readonly number[], overrides: {concurrency?: number; docSizeBytes?: number; durationMS?: number} = {}): LoadedResult {
  const histogram = createHistogram()
  for (const value of values) histogram.recordValue(value)
  const durationMS = overrides.durationMS ?? 1000
  const errors = values.length % 3
  const run: RunResult = {
    model: 'pool', workload: 'find', concurrency: overrides.concurrency ?? 8, rate: null, maxPoolSize: null,
    ops: values.length, errors, scheduled: null, missed: 0, missedByReason: {}, aborted: 0, durationMS,
    opsPerSec: Math.round((values.length * 10_000) / durationMS) / 10, achievedRatePerSec: null, rateShortfall: null,
    latencyUs: summarize(histogram), latencyCorrectedUs: null, scheduleLagUs: null,
    checkoutWaitUs: {p50: values[0]! % 50, p99: values[1]! % 500, max: values[2]!},
    checkoutWaitDriverMS: {p50: 0, p99: 0, max: Math.floor(values[2]! / 1000)},
    pool: {created: values.length % 7, closed: {idle: 1}, peakTotal: 8, peakInUse: 8, checkOutFailed: {}, cleared: 0, clients: 1,
      setupUs: {p50: values[3]!, p99: values[4]!, max: values[4]!}, setupDriverMS: {p50: 0, p99: 0, max: 0}},
    server: [{host: 'db1:27017', role: 'standalone', connectionsBefore: 3 + (values.length % 5), connectionsPeak: 20 + (values.length % 9), totalCreatedDelta: values.length % 11, clockSkewMS: values.length % 13}],
    errorsByClass: errors === 0 ? {} : {network: errors},
    histograms: {latencyUs: encodeHistogram(histogram), latencyCorrectedUs: null},
    interrupted: false,
  }
  const result: BenchResult = {
    target: {uri: 'mongodb://db1:27017/', source: 'flag', simulated: false}, notes: [], interrupted: false,
    cluster: {topology: 'standalone', serverVersion: '7.0.14', hosts: []},
    config: {workload: 'find', docSizeBytes: overrides.docSizeBytes ?? 256, db: 'pooltool_bench', warmupMS: 0, durationMS, sampleIntervalMS: 250},
    runs: [run], knee: null, failOn: null, cleanedUp: true, namespace: null, abandoned: [],
  }
  return {file, result: checkBenchResult(file, JSON.parse(JSON.stringify(result)))}
}

const all = latencies(30_000, 7)
const parts = [all.slice(0, 9000), all.slice(9000, 21_000), all.slice(21_000)]
const [a, b, c] = parts.map((values, index) => segment(`seg${index}.json`, values)) as [LoadedResult, LoadedResult, LoadedResult]

describe('report merge', () => {
  it('merged percentiles of 3 segments equal those of one histogram fed the same values', () => {
    const one = createHistogram()
    for (const value of all) one.recordValue(value)
    const merged = mergeBenchResults([a, b, c])
    const run = merged.runs[0]!
    assert.deepEqual(run.latencyUs, summarize(one))
    // The stored histogram (bucket counts; a decoded max reads the bucket's top) is the one histogram's stored form.
    assert.deepEqual(summarize(decodeHistogram(run.histograms.latencyUs)), summarize(decodeHistogram(encodeHistogram(one))), 'the re-encoded histogram is the merged one')
    // Averaging the segments' p99 would not give this: the check can fail.
    const averaged = Math.round((a.result.runs[0]!.latencyUs.p99 + b.result.runs[0]!.latencyUs.p99 + c.result.runs[0]!.latencyUs.p99) / 3)
    assert.notEqual(run.latencyUs.p99, averaged)
  })

  it('per-operation latency merges the same way: per name, one histogram fed the same values', () => {
    // Even positions are finds, odd ones updates, in every segment; each segment's per-operation histograms from the real encoder.
    const nameOf = (index: number) => (index % 2 === 0 ? 'find' : 'update')
    const withByOp = parts.map((values, index) => {
      const input = segment(`op${index}.json`, values)
      const run = input.result.runs[0]!
      const byName = new Map(['find', 'update'].map((name) => [name, createHistogram()]))
      values.forEach((value, position) => byName.get(nameOf(position))!.recordValue(value))
      run.latencyByOpUs = Object.fromEntries([...byName].map(([name, h]) => [name, summarize(h)]))
      run.histograms.latencyByOpUs = Object.fromEntries([...byName].map(([name, h]) => [name, encodeHistogram(h)]))
      return input
    })
    const merged = mergeBenchResults(withByOp).runs[0]!
    for (const name of ['find', 'update']) {
      const one = createHistogram()
      parts.forEach((values) => values.forEach((value, position) => nameOf(position) === name && one.recordValue(value)))
      assert.deepEqual(merged.latencyByOpUs?.[name], summarize(one), name)
    }
    assert.equal((merged.latencyByOpUs?.find?.count ?? 0) + (merged.latencyByOpUs?.update?.count ?? 0), merged.ops, 'the per-operation counts add up to ops')
    assert.equal(mergeBenchResults([a, b, c]).runs[0]!.latencyByOpUs, undefined, 'segments without per-operation latency give none, not an empty one')
  })

  it('sums counts, recomputes ops/s over the common interval, keeps server readings per segment', () => {
    const merged = mergeBenchResults([a, b, c])
    const run = merged.runs[0]!
    const runs = [a, b, c].map((input) => input.result.runs[0]!)
    assert.equal(run.ops, 30_000)
    assert.equal(run.errors, runs.reduce((sum, r) => sum + r.errors, 0))
    assert.equal(run.errorsByClass.network ?? 0, run.errors)
    assert.equal(run.opsPerSec, 30_000)
    assert.equal(run.pool.created, runs.reduce((sum, r) => sum + r.pool.created, 0))
    assert.deepEqual(run.pool.closed, {idle: 3})
    assert.equal(run.checkoutWaitUs.p99, Math.max(...runs.map((r) => r.checkoutWaitUs.p99)))
    assert.equal(run.server[0]!.connectionsPeak, Math.max(...runs.map((r) => r.server[0]!.connectionsPeak!)))
    assert.equal(run.server[0]!.connectionsBefore, Math.min(...runs.map((r) => r.server[0]!.connectionsBefore!)))
    assert.equal(run.server[0]!.clockSkewMS, undefined, 'a clock skew is one machine\'s: kept per segment only')
    assert.deepEqual(run.serverBySegment, runs.map((r) => r.server))
    assert.equal(run.segments, 3)
    assert.equal(merged.segments, 3)
  })

  it('is associative: a merged file merges again to the same result', () => {
    const roundTrip = (input: LoadedResult): LoadedResult => ({file: input.file, result: checkBenchResult(input.file, JSON.parse(JSON.stringify(input.result)))})
    const all3 = mergeBenchResults([a, b, c])
    const left = mergeBenchResults([roundTrip({file: 'ab.json', result: mergeBenchResults([a, b])}), c])
    const right = mergeBenchResults([a, roundTrip({file: 'bc.json', result: mergeBenchResults([b, c])})])
    for (const other of [left, right]) {
      assert.equal(other.segments, 3)
      const [x, y] = [all3.runs[0]!, other.runs[0]!]
      assert.deepEqual(y.latencyUs, x.latencyUs)
      assert.deepEqual(summarize(decodeHistogram(y.histograms.latencyUs)), summarize(decodeHistogram(x.histograms.latencyUs)))
      for (const field of ['ops', 'errors', 'opsPerSec', 'segments', 'checkoutWaitUs', 'pool', 'server', 'serverBySegment', 'errorsByClass'] as const) {
        assert.deepEqual(y[field], x[field], field)
      }
    }
  })

  it('refuses mismatched configurations and runs with one line naming the file and field (exit 2)', () => {
    const other = segment('other.json', parts[2]!, {docSizeBytes: 1024})
    assert.throws(() => mergeBenchResults([a, other]), (error: PoolToolError) => {
      assert.equal(error.exitCode, 2)
      assert.match(error.message, /^other\.json: config\.docSizeBytes is 1024, seg0\.json has 256$/)
      return true
    })
    const wider = segment('wider.json', parts[2]!, {concurrency: 16})
    assert.throws(() => mergeBenchResults([a, wider]), /^PoolToolError: wider\.json: runs\[0\] \(pool c=16\) is not in seg0\.json$/)
  })

  it('refuses a file that is not a bench result, naming the field', () => {
    const broken = JSON.parse(JSON.stringify(a.result))
    delete broken.runs[0].histograms
    // The field named is the one missing (the whole histograms object here).
    assert.throws(() => checkBenchResult('x.json', broken), /^PoolToolError: x\.json: runs\[0\]\.histograms is missing: not a pooltool bench result$/)
    broken.runs[0].histograms = {latencyUs: a.result.runs[0]!.histograms.latencyUs, latencyCorrectedUs: 42}
    assert.throws(() => checkBenchResult('x.json', broken), /^PoolToolError: x\.json: runs\[0\]\.histograms\.latencyCorrectedUs is not a string: not a pooltool bench result$/)
    broken.runs[0].histograms.latencyCorrectedUs = null
    // JSON's 1e999 parses to Infinity.
    const infinite = JSON.parse(JSON.stringify(broken).replace(/"opsPerSec":[\d.e+-]+/, '"opsPerSec":1e999'))
    assert.throws(() => checkBenchResult('x.json', infinite), /runs\[0\]\.opsPerSec is not a finite number/)
    assert.throws(() => checkBenchResult('y.json', {runs: []}), /y\.json: config is missing/)
  })
})

describe('report compare', () => {
  const gates = parseRatioGates('p99Ratio>1.10,p50Ratio>1.0001,p999Ratio>=1.01,opsPerSecRatio<0.95,checkoutWaitP99Ratio>1,connectionsCreatedRatio>1')

  it('a file compared with itself is all 1.00, within noise, and passes every ratio gate', () => {
    const result = compareBenchResults(a, a, {gates})
    for (const metric of Object.values(result.runs[0]!.metrics)) {
      assert.equal(metric.ratio, 1)
      assert.notEqual(metric.withinNoise, false)
    }
    assert.equal(result.failOn!.passed, true)
    assert.ok(result.failOn!.gates.every((gate) => gate.passed))
  })

  it('a slower file fails the latency gate and is out of noise', () => {
    const slower = segment('slower.json', latencies(9000, 11, 1.5))
    const result = compareBenchResults(a, slower, {gates: parseRatioGates('p99Ratio>1.10,opsPerSecRatio<0.95')})
    const p99 = result.runs[0]!.metrics.p99
    assert.ok(p99.ratio! > 1.1, `p99 ratio ${p99.ratio}`)
    assert.equal(p99.withinNoise, false)
    assert.deepEqual(result.failOn!.gates.map((gate) => [gate.expression, gate.passed]), [['p99Ratio>1.10', false], ['opsPerSecRatio<0.95', true]])
    assert.equal(result.failOn!.passed, false)
  })

  it('the 95% interval of a quantile holds the quantile and narrows with more samples', () => {
    const small = createHistogram()
    for (const value of latencies(1000, 3)) small.recordValue(value)
    const large = decodeHistogram(mergeBenchResults([a, b, c]).runs[0]!.histograms.latencyUs)
    for (const histogram of [small, large]) {
      const [low, high] = quantileInterval(histogram, 0.5)
      const p50 = summarize(histogram).p50
      assert.ok(low <= p50 && p50 <= high, `${low} ≤ ${p50} ≤ ${high}`)
    }
    const width = (h: typeof small) => quantileInterval(h, 0.5)[1] - quantileInterval(h, 0.5)[0]
    assert.ok(width(large) < width(small))
  })

  it('refuses unknown gate metrics', () => {
    assert.throws(() => parseRatioGates('p99>1.1'), /unknown metric 'p99'/)
  })
})
