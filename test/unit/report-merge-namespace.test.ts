/**
 * report merge says truthfully what the merged run left on the cluster (issue 26: a merged result said
 * "namespace pooltool_bench kept" although the last segment had dropped it). The segments of one run share one
 * namespace: every segment but the last to finish leaves it behind, the last drops it.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {NamespaceReport} from '../../src/bench/namespace.js'
import type {BenchResult, RunResult} from '../../src/bench/types.js'
import {createHistogram, encodeHistogram, summarize} from '../../src/metrics/histograms.js'
import {checkBenchResult, type LoadedResult} from '../../src/report/load.js'
import {mergeBenchResults} from '../../src/report/merge.js'
import {renderMerge} from '../../src/reporters/report.js'

const RUN_ID = 'abcd1234'
const COLLECTION = `pooltool_bench.bench_${RUN_ID}`
const STILL_RUNNING = (n: number) => `${n} other segment${n === 1 ? '' : 's'} of run ${RUN_ID} still running: the last to finish drops the collections`

/** Each segment's own namespace report, as run-bench.ts writes it after release(). */
const leftForOthers = (others: number): NamespaceReport => ({database: 'pooltool_bench', runId: RUN_ID, collections: [COLLECTION], reclaimed: [], dropped: [], leftBehind: [COLLECTION], databaseDropped: false, reason: STILL_RUNNING(others)})
const droppedLast: NamespaceReport = {database: 'pooltool_bench', runId: RUN_ID, collections: [COLLECTION], reclaimed: [], dropped: [COLLECTION], leftBehind: [], databaseDropped: true}
const kept: NamespaceReport = {database: 'pooltool_bench', runId: RUN_ID, collections: [COLLECTION], reclaimed: [], dropped: [], leftBehind: [COLLECTION], databaseDropped: false, reason: '--keep'}

function segment(index: number, count: number, namespace: NamespaceReport): LoadedResult {
  const histogram = createHistogram()
  for (let i = 1; i <= 100; i++) histogram.recordValue(100 * i + index)
  const run: RunResult = {
    model: 'pool', workload: 'find', concurrency: 4, rate: null, maxPoolSize: null, segment: {index, count, concurrency: 2, rate: null},
    ops: 100, errors: 0, scheduled: null, missed: 0, missedByReason: {}, aborted: 0, durationMS: 1000, opsPerSec: 100, achievedRatePerSec: null, rateShortfall: null,
    latencyUs: summarize(histogram), latencyCorrectedUs: null, scheduleLagUs: null,
    checkoutWaitUs: {p50: 1, p99: 2, max: 3}, checkoutWaitDriverMS: {p50: 0, p99: 0, max: 0},
    pool: {created: 2, closed: {}, peakTotal: 2, peakInUse: 2, checkOutFailed: {}, cleared: 0, clients: 1, setupUs: {p50: 1, p99: 2, max: 2}, setupDriverMS: {p50: 0, p99: 0, max: 0}},
    server: [], errorsByClass: {}, histograms: {latencyUs: encodeHistogram(histogram), latencyCorrectedUs: null}, interrupted: false,
  }
  const result: BenchResult = {
    target: {uri: 'mongodb://db1:27017/', source: 'POOLTOOL_URI', simulated: false}, notes: [], interrupted: false,
    cluster: {topology: 'standalone', serverVersion: '7.0.14', hosts: []},
    config: {workload: 'find', docSizeBytes: 256, keyDist: 'uniform', db: 'pooltool_bench', warmupMS: 5000, durationMS: 1000, sampleIntervalMS: 250, seriesIntervalMS: 1000, segment: {index, count, runId: RUN_ID}},
    runs: [run], knee: null, failOn: null, cleanedUp: namespace.leftBehind.length === 0, namespace, abandoned: [],
  }
  const file = `seg${index}.json`
  return {file, result: checkBenchResult(file, JSON.parse(JSON.stringify(result)))}
}

describe('report merge: the namespace', () => {
  it('dropped when the last segment dropped it, whichever file comes first', () => {
    for (const order of [[0, 1, 2], [2, 1, 0], [1, 2, 0]]) {
      const reports = [leftForOthers(2), leftForOthers(1), droppedLast]
      const merged = mergeBenchResults(order.map((index) => segment(index, 3, reports[index]!)))
      assert.equal(merged.cleanedUp, true, `order ${order.join(',')}`)
      assert.deepEqual(merged.namespace?.leftBehind, [])
      assert.deepEqual(merged.namespace?.dropped, [COLLECTION])
      assert.equal(merged.namespace?.reason, undefined)
      assert.equal(merged.namespace?.databaseDropped, true)
      const text = renderMerge(merged, order.map((index) => `seg${index}.json`), undefined)
      assert.match(text, /\nnamespace pooltool_bench dropped$/)
      assert.doesNotMatch(text, /kept/)
    }
  })

  it('kept, with the segments\' reason, when the segment that dropped it is not among the files', () => {
    const merged = mergeBenchResults([segment(0, 3, leftForOthers(2)), segment(1, 3, leftForOthers(1))])
    assert.equal(merged.cleanedUp, false)
    assert.deepEqual(merged.namespace?.leftBehind, [COLLECTION])
    assert.equal(merged.namespace?.reason, `${STILL_RUNNING(2)}; ${STILL_RUNNING(1)}`)
    assert.match(renderMerge(merged, ['seg0.json', 'seg1.json'], undefined), /\nnamespace pooltool_bench kept \(2 other segments of run abcd1234 still running/)
  })

  it('kept (--keep) when every segment kept it', () => {
    const merged = mergeBenchResults([segment(0, 2, kept), segment(1, 2, kept)])
    assert.equal(merged.cleanedUp, false)
    assert.deepEqual(merged.namespace?.leftBehind, [COLLECTION])
    assert.equal(merged.namespace?.reason, '--keep')
    assert.match(renderMerge(merged, ['seg0.json', 'seg1.json'], undefined), /\nnamespace pooltool_bench kept \(--keep\)$/)
  })

  it('merges again to the same answer (a merged file is an input like a segment)', () => {
    const [a, b, c] = [segment(0, 3, leftForOthers(2)), segment(1, 3, droppedLast), segment(2, 3, leftForOthers(1))]
    const once = mergeBenchResults([a, b, c])
    const partial = mergeBenchResults([a, c])
    const twice = mergeBenchResults([{file: 'ac.json', result: checkBenchResult('ac.json', JSON.parse(JSON.stringify(partial)))}, b])
    assert.equal(partial.cleanedUp, false)
    assert.deepEqual([twice.cleanedUp, twice.namespace?.leftBehind, twice.namespace?.dropped], [once.cleanedUp, once.namespace?.leftBehind, once.namespace?.dropped])
    assert.equal(twice.cleanedUp, true)
  })
})
