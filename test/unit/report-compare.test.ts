/**
 * report compare on crafted results: the bootstrap over a run's series
 * intervals (deterministic, widening with the spread between intervals), the
 * ratio interval and the gate decided with it, and "same configuration"
 * (every setting that changes the figures, --pair for those that differ on
 * purpose). Results carry real HDR histograms, so the run figures are the
 * encoder's own.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {RunResult} from '../../src/bench/types.js'
import {PoolToolError} from '../../src/errors.js'
import {compareBenchResults, parsePair, parseRatioGates} from '../../src/report/compare.js'
import {uriHosts} from '../../src/report/config-match.js'
import type {LoadedResult} from '../../src/report/load.js'
import {ratioInterval, seriesSpread} from '../../src/report/noise.js'
import {craft, type Interval, STEADY} from '../helpers/crafted-results.js'

const refused = (pattern: RegExp, hint?: RegExp) => (error: PoolToolError) => {
  assert.equal(error.exitCode, 2)
  assert.match(error.message, pattern)
  if (hint) assert.match(error.hint, hint)
  return true
}

describe('report compare: the bootstrap over series intervals', () => {
  const wandering: Interval[] = [800, 1400, 900, 1700, 1000, 1200, 700, 1500].map((centerUs, i) => ({ops: 900 + 40 * i, centerUs}))

  it('is reproducible: the same run gives the same factors, and another seed others', () => {
    const run = craft('a.json', {intervals: wandering}).result.runs[0]!
    const one = seriesSpread(run, 'p99', 42)!
    const again = seriesSpread(run, 'p99', 42)!
    assert.equal(one.intervals, 8)
    assert.deepEqual([...one.factors], [...again.factors])
    assert.notDeepEqual([...seriesSpread(run, 'p99', 43)!.factors], [...one.factors])
  })

  it('steady intervals give a narrow spread, wandering ones a wide one', () => {
    const width = (intervals: Interval[]) => {
      const run = craft('x.json', {intervals}).result.runs[0]!
      const [low, high] = ratioInterval(1, seriesSpread(run, 'p99', 1)!, 1, seriesSpread(run, 'p99', 2)!)!
      assert.ok(low <= 1 && 1 <= high, `${low}..${high} holds 1: the same run`)
      return high - low
    }
    const steady = width(STEADY)
    const wide = width(wandering)
    assert.ok(steady < 0.05, `steady: ${steady}`)
    assert.ok(wide > 4 * steady, `wandering ${wide} vs steady ${steady}`)
  })

  it('ops/s is recomputed as operations over time of the drawn intervals; identical intervals give factors of exactly 1', () => {
    const run = craft('a.json', {intervals: STEADY}).result.runs[0]!
    const spread = seriesSpread(run, 'opsPerSec', 7)!
    assert.ok(spread.factors.every((factor) => factor === 1))
    assert.deepEqual(ratioInterval(2000, spread, 2200, spread), [2200 / 2000, 2200 / 2000])
  })

  it('a staged run is drawn within each stage: two steady stages far apart are not noise', () => {
    const twoLevels: Interval[] = [...STEADY.slice(0, 5), ...STEADY.slice(0, 5).map(() => ({ops: 250, centerUs: 4000}))]
    const run = craft('staged.json', {intervals: twoLevels}).result.runs[0]!
    const across = seriesSpread(run, 'p99', 1)!
    const staged = {...run, stages: [{startMS: 0}, {startMS: 5000}] as unknown as RunResult['stages']}
    const within = seriesSpread(staged, 'p99', 1)!
    const width = (spread: typeof within) => {
      const [low, high] = ratioInterval(1, spread, 1, seriesSpread(staged, 'p99', 2)!)!
      return high - low
    }
    assert.ok(width(within) < 0.05, `within stages: ${width(within)}`)
    assert.ok(width(across) > 0.5, `across stages: ${width(across)}`)
  })

  it('fewer than 2 intervals, or no series, tell nothing', () => {
    assert.equal(seriesSpread(craft('a.json', {intervals: [{ops: 1000, centerUs: 1000}]}).result.runs[0]!, 'p99', 1), null)
    assert.equal(seriesSpread(craft('a.json', {series: false}).result.runs[0]!, 'p99', 1), null)
  })
})

describe('report compare: noise and the gate', () => {
  const gate = parseRatioGates('p99Ratio>1.10,opsPerSecRatio<0.95')
  // Two runs of the same configuration on a machine whose speed wanders from second to second: the same intervals, in another order and seed.
  const wanderA: Interval[] = [800, 1400, 900, 1700, 1000, 1200, 700, 1500, 1100, 900].map((centerUs) => ({ops: Math.round(1_000_000 / centerUs), centerUs}))
  // B: the same wandering, 15% slower on the whole: a shift a machine that wanders this much cannot tell from none.
  const wanderB: Interval[] = [1500, 900, 1700, 800, 1200, 1100, 900, 1400, 700, 1000].map((center) => ({ops: Math.round(1_000_000 / (center * 1.15)), centerUs: center * 1.15}))

  it('identical runs: every ratio 1 inside its interval, the gate passes', () => {
    const a = craft('a.json', {intervals: wanderA})
    const result = compareBenchResults(a, a, {gates: gate})
    const run = result.runs[0]!
    for (const name of ['opsPerSec', 'p50', 'p99'] as const) {
      assert.equal(run.metrics[name].ratio, 1, name)
      assert.equal(run.metrics[name].noise, 'series', name)
      assert.equal(run.metrics[name].withinNoise, true, name)
    }
    assert.equal(run.metrics.p999.noise, 'sampling', 'the series keeps no p99.9')
    assert.equal(result.failOn!.passed, true)
  })

  it('a run of the same configuration that crosses 1.10 inside its wandering passes, shown as within noise', () => {
    const result = compareBenchResults(craft('a.json', {intervals: wanderA, seed: 1}), craft('b.json', {intervals: wanderB, seed: 2}), {gates: gate})
    const p99 = result.runs[0]!.metrics.p99
    assert.ok(p99.ratio! > 1.1, `p99 ratio ${p99.ratio}: crosses the gate`)
    assert.equal(p99.withinNoise, true, `interval ${p99.interval}`)
    const line = result.failOn!.gates[0]!
    assert.equal(line.passed, true)
    assert.deepEqual(line.withinNoise.map((check) => check.run), ['pool c=4'])
    assert.deepEqual(line.failures, [])
    assert.equal(result.failOn!.passed, true, JSON.stringify(result.runs[0]!.metrics.opsPerSec))
  })

  it('the same crossing from steady runs is beyond noise and fails', () => {
    const slower = STEADY.map((interval) => ({...interval, centerUs: 1150}))
    const result = compareBenchResults(craft('a.json', {seed: 1}), craft('b.json', {intervals: slower, seed: 2}), {gates: gate})
    const p99 = result.runs[0]!.metrics.p99
    assert.ok(p99.ratio! > 1.1)
    assert.equal(p99.withinNoise, false, `interval ${p99.interval}`)
    assert.ok(p99.interval![0] > 1)
    assert.equal(result.failOn!.passed, false)
    assert.deepEqual(result.failOn!.gates.map((line) => line.passed), [false, true])
    assert.equal(result.failOn!.gates[0]!.failures[0]!.interval, p99.interval)
  })

  it('injected latency far beyond the wandering (2 ms on ~1 ms operations) fails both lines', () => {
    const slow = wanderB.map(({centerUs}) => ({centerUs: centerUs + 2000, ops: Math.round(1_000_000 / (centerUs + 2000))}))
    const result = compareBenchResults(craft('a.json', {intervals: wanderA}), craft('b.json', {intervals: slow, simLatencyMS: 2}), {gates: gate, pair: ['sim-latency']})
    assert.deepEqual(result.failOn!.gates.map((line) => line.passed), [false, false])
    assert.equal(result.runs[0]!.metrics.opsPerSec.withinNoise, false)
  })

  it('files without a series fall back to sampling noise, and say so', () => {
    const result = compareBenchResults(craft('a.json', {series: false}), craft('b.json', {series: false, seed: 2}), {gates: gate})
    const run = result.runs[0]!
    assert.deepEqual(run.intervals, {base: 0, new: 0})
    for (const name of ['opsPerSec', 'p50', 'p99', 'p999'] as const) assert.equal(run.metrics[name].noise, 'sampling', name)
    assert.equal(run.metrics.checkoutWaitP99.withinNoise, null)
    assert.ok(result.notes.some((note) => /no series in either file \(a merged file, or one written before bench kept one\): sampling noise only/.test(note)), result.notes.join('\n'))
  })
})

describe('report compare: same configuration, --pair', () => {
  it('refuses a different latency injection, naming it and --pair; --pair sim-latency compares and says so', () => {
    const plain = craft('plain.json')
    const slow = craft('slow.json', {simLatencyMS: 2})
    assert.throws(() => compareBenchResults(plain, slow), refused(/^slow\.json and plain\.json are different configurations: sim-latency 0ms → 2ms$/, /--pair sim-latency$/))
    const result = compareBenchResults(plain, slow, {pair: parsePair('sim-latency')})
    assert.deepEqual(result.differOnPurpose, [{setting: 'sim-latency', base: '0ms', new: '2ms'}])
    assert.deepEqual(result.runs[0]!.differOnPurpose, [{setting: 'sim-latency', base: '0ms', new: '2ms'}])
  })

  it('"did a smaller pool help?": refused without --pair naming max-pool-size, matched with it', () => {
    const big = craft('big.json', {maxPoolSize: 100})
    const small = craft('small.json', {maxPoolSize: 10})
    assert.throws(() => compareBenchResults(big, small), refused(/no run matches a run of big\.json: the closest differ in max-pool-size 100 → 10/, /--pair max-pool-size$/))
    const result = compareBenchResults(big, small, {pair: ['max-pool-size']})
    assert.equal(result.runs[0]!.run, 'pool c=4 pool=10')
    assert.equal(result.runs[0]!.baseRun, 'pool c=4 pool=100')
    assert.deepEqual(result.runs[0]!.differOnPurpose, [{setting: 'max-pool-size', base: '100', new: '10'}])
    assert.deepEqual(result.differOnPurpose, [])
  })

  it('every recorded setting that changes the figures is part of the match', () => {
    const base = craft('a.json')
    const cases: Array<[string, LoadedResult]> = [
      ['workload-file', craft('b.json', {workloadSha: 'f'.repeat(64)})],
      ['target', craft('b.json', {simulated: false, uri: 'mongodb://u:***@db1:27017,db2:27017/'})],
      ['warmup', craft('b.json', {warmupMS: 0})],
      ['key-dist', craft('b.json', {keyDist: 'zipf'})],
    ]
    for (const [setting, other] of cases) {
      assert.throws(() => compareBenchResults(base, other), refused(new RegExp(`different configurations: .*${setting}`), new RegExp(`--pair .*${setting}`)), setting)
    }
    // Two files of one workload file: same content, same workload.
    assert.equal(compareBenchResults(craft('a.json', {workloadSha: 'a'.repeat(64)}), craft('b.json', {workloadSha: 'a'.repeat(64)})).runs.length, 1)
    // The embedded cluster's port changes every run: not a different target.
    assert.equal(compareBenchResults(craft('a.json', {seed: 1}), craft('b.json', {seed: 2})).runs.length, 1)
  })

  it('a setting an older file does not record is not held against it, but said', () => {
    const result = compareBenchResults(craft('old.json', {simLatencyMS: undefined, keyDist: undefined}), craft('new.json'))
    assert.ok(result.notes.includes('sim-latency: not recorded in old.json (written by an older pooltool): not checked'), result.notes.join('\n'))
    assert.ok(result.notes.some((note) => note.startsWith('key-dist: not recorded in old.json')))
  })

  it('refuses an unknown --pair setting and an ambiguous match', () => {
    assert.throws(() => parsePair('pool-size'), refused(/unknown setting 'pool-size'/, /max-pool-size/))
    const matrix = craft('m.json')
    matrix.result.runs.push({...matrix.result.runs[0]!, maxPoolSize: 50})
    assert.throws(() => compareBenchResults(matrix, craft('b.json', {maxPoolSize: 10}), {pair: ['max-pool-size']}), refused(/matches 2 runs of m\.json/))
  })

  it("a URI's hosts, without credentials, sorted", () => {
    assert.equal(uriHosts('mongodb://u:***@b:2,a:1/db?replicaSet=rs'), 'a:1,b:2')
    assert.equal(uriHosts('mongodb+srv://cluster0.example.net/'), 'cluster0.example.net')
  })
})
