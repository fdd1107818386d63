/**
 * What the bench HTML report draws, from result files (src/report/html-data.ts, issue 26): the title
 * names every input, a missing gauge is a gap (null) and never a 0, the busiest hosts are drawn by
 * name and the rest as one mean line, and each run carries its wall-clock start for its time axis.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {BenchResult, RunResult} from '../../src/bench/types.js'
import {MAX_HOST_SERIES, reportData, reportTitle} from '../../src/report/html-data.js'
import {createHistogram, encodeHistogram, recordMs} from '../../src/metrics/histograms.js'

const histogram = (() => {
  const h = createHistogram()
  for (let ms = 1; ms <= 50; ms++) recordMs(h, ms)
  return encodeHistogram(h)
})()

function run(series: unknown[], extra: Partial<RunResult> = {}): RunResult {
  return {
    model: 'pool', workload: 'find', concurrency: 4, rate: null, maxPoolSize: 4, ops: 50, errors: 0, durationMS: 3000, opsPerSec: 16.7,
    latencyUs: {p50: 25_000, p99: 50_000, p999: 50_000}, pool: {created: 4}, histograms: {latencyUs: histogram, latencyCorrectedUs: null},
    series, ...extra,
  } as unknown as RunResult
}

function result(runs: RunResult[], uri = 'mongodb://db.example:27017/', workload = 'find'): BenchResult {
  return {target: {uri, source: 'flag', simulated: false}, cluster: {topology: 'standalone', serverVersion: '7.0.14', hosts: []}, config: {workload}, runs, knee: null} as unknown as BenchResult
}

const point = (tMS: number, gauges: Record<string, unknown>) => ({tMS, durationMS: 1000, ops: 10, errors: 0, opsPerSec: 10, ...gauges})

describe('bench HTML report data', () => {
  it('names every input file in the title (and how many more past four), the workloads and the targets', () => {
    const one = [{file: '/tmp/a.json', result: result([run([])])}]
    assert.equal(reportTitle(one), 'pooltool bench · find · mongodb://db.example:27017/')
    const two = [{file: '/tmp/a.json', result: result([run([])])}, {file: '/x/b.json', result: result([run([]), run([])], 'mongodb://other:27017/', 'insert')}]
    assert.equal(reportTitle(two), 'pooltool bench · 2 files (3 runs): a.json, b.json · find, insert · 2 targets')
    const many = Array.from({length: 10}, (_, i) => ({file: `r${i}.json`, result: result([run([])])}))
    assert.equal(reportTitle(many), 'pooltool bench · 10 files (10 runs): r0.json, r1.json, r2.json and 7 more · find · mongodb://db.example:27017/')
    assert.deepEqual(reportData(two).files, ['/tmp/a.json', '/x/b.json'])
  })

  it('keeps a missing gauge as a gap (null), never a 0, and each run\'s clock start', () => {
    const series = [point(0, {poolInUse: 4, poolTotal: 4, serverConnections: {h: 9}}), point(1000, {serverConnections: {}})]
    const data = reportData([{file: 'a.json', result: result([run(series, {startedAt: '2026-11-28T01:44:36.000Z'})])}])
    const [s] = data.series
    assert.deepEqual(s!.poolInUse, [4, null])
    assert.deepEqual(s!.poolTotal, [4, null])
    assert.deepEqual(s!.serverConnections, {h: [9, null]})
    assert.deepEqual(s!.endS, [1, 2])
    assert.equal(s!.startMS, Date.UTC(2026, 10, 28, 1, 44, 36))
    // A file written before runs carried their start: the report counts seconds instead.
    assert.equal(reportData([{file: 'a.json', result: result([run(series)])}]).series[0]!.startMS, null)
  })

  it('draws the busiest hosts by name and the rest as one line (their mean), so a legend stays bounded', () => {
    const hosts = Array.from({length: 30}, (_, i) => `host${String(i).padStart(2, '0')}:27017`)
    const series = [0, 1000].map((tMS) => point(tMS, {poolInUse: 1, poolTotal: 1, serverConnections: Object.fromEntries(hosts.map((h, i) => [h, i + tMS / 1000]))}))
    const [s] = reportData([{file: 'a.json', result: result([run(series)])}]).series
    const shown = Object.keys(s!.serverConnections)
    assert.equal(shown.length, MAX_HOST_SERIES - 1)
    assert.deepEqual(shown, hosts.slice(-(MAX_HOST_SERIES - 1)).reverse(), 'the busiest first')
    const rest = hosts.length - shown.length
    assert.equal(s!.otherHosts!.count, rest)
    // The mean of hosts 0 … rest−1 at each interval (their counts are i, then i + 1).
    const mean = (rest - 1) / 2
    assert.deepEqual(s!.otherHosts!.values, [mean, mean + 1])
    // Few hosts: all by name, no "other" line.
    const few = reportData([{file: 'a.json', result: result([run([point(0, {poolInUse: 1, poolTotal: 1, serverConnections: {a: 1, b: 2}})])])}]).series[0]!
    assert.deepEqual(Object.keys(few.serverConnections).sort(), ['a', 'b'])
    assert.equal(few.otherHosts, null)
  })
})
