import assert from 'node:assert/strict'
import {AUTO_FALLBACK_MS, SETTLE_RULE} from '../../src/bench/warmup.js'
import {describe, it} from 'node:test'

import {parseMix, toBenchConfig, type BenchFlagValues} from '../../src/bench/config.js'
import {checkThresholds, parseFailOn} from '../../src/bench/fail-on.js'
import type {RunResult} from '../../src/bench/types.js'
import {PoolToolError} from '../../src/errors.js'
import {formatDuration, parseDurationMs} from '../../src/parse/durations.js'
import {parseFaultSpec} from '../../src/parse/fault-spec.js'
import {parseIntegerList} from '../../src/parse/lists.js'

const usage = (fn: () => unknown, pattern: RegExp, hint = /./) =>
  assert.throws(fn, (error: unknown) => error instanceof PoolToolError && error.code === 'USAGE' && error.exitCode === 2 && pattern.test(error.message) && hint.test(error.hint))

const baseFlags: BenchFlagValues = {
  workload: 'find',
  'doc-size': 256,
  'seed-docs': 1000,
  db: 'pooltool_bench',
  keep: false,
  model: 'pool',
  concurrency: '10',
  // Durations arrive in milliseconds: the duration flags parse them (test/unit/cli-flags.test.ts).
  warmup: 0,
  'sample-interval': 250,
}

describe('durations and lists', () => {
  it('reads every unit into milliseconds', () => {
    assert.equal(parseDurationMs('10s', 'duration'), 10_000)
    assert.equal(parseDurationMs('250ms', 'duration'), 250)
    assert.equal(parseDurationMs('1.5m', 'duration'), 90_000)
    assert.equal(parseDurationMs('2h', 'duration'), 7_200_000)
    assert.equal(parseDurationMs(' 2S ', 'duration'), 2000, 'units in any case, blanks around')
    assert.equal(parseDurationMs('0.5ms', 'latency'), 1, 'rounded to a whole millisecond')
    usage(() => parseDurationMs('ten', 'duration'), /--duration 'ten' is not a duration/, /500ms, 10s, 2m or 1h/)
    usage(() => parseDurationMs('-1s', 'duration'), /not a duration/)
    usage(() => parseDurationMs('5d', 'duration'), /not a duration/)
  })
  it('refuses a bare number, whatever the flag, and says which units exist', () => {
    // `--interval 500` meant 500 s in conns watch and 500 ms in locks watch: now it means nothing.
    for (const flag of ['interval', 'duration', 'latency', 'slo']) {
      usage(() => parseDurationMs('500', flag), new RegExp(`^--${flag} 500 has no unit$`), /say 500ms or 500s; the units are ms, s, m and h/)
    }
    usage(() => parseDurationMs('1.5', 'warmup'), /--warmup 1.5 has no unit/, /1.5ms or 1.5s/)
    assert.equal(parseDurationMs('0', 'warmup'), 0, 'zero is zero in every unit')
  })
  it('writes milliseconds back the way a user would', () => {
    assert.deepEqual([0, 250, 1000, 1500, 30_000, 90_000, 900_000, 7_200_000].map(formatDuration), ['0s', '250ms', '1s', '1500ms', '30s', '90s', '15m', '2h'])
    for (const ms of [1, 250, 1000, 1500, 90_000, 900_000]) assert.equal(parseDurationMs(formatDuration(ms), 'interval'), ms, `${ms} ms survives a round trip`)
  })
  it('reads comma lists within bounds', () => {
    assert.deepEqual(parseIntegerList('1,8, 64', 'concurrency', 1), [1, 8, 64])
    usage(() => parseIntegerList('0', 'concurrency', 1), /out of range/)
    usage(() => parseIntegerList('-4', 'concurrency', 1), /out of range/)
    usage(() => parseIntegerList('1,,2', 'concurrency', 1), /empty entry/)
    usage(() => parseIntegerList('2.5', 'concurrency', 1), /not a whole number/)
  })
})

describe('bench flags', () => {
  it('builds a frozen config', () => {
    const config = toBenchConfig({...baseFlags, model: 'pool,single', concurrency: '1,8', 'max-pool-size': '5,20'})
    assert.deepEqual(config.models, ['pool', 'single'])
    assert.deepEqual(config.concurrencies, [1, 8])
    assert.deepEqual(config.maxPoolSizes, [5, 20])
    assert.equal(config.durationMs, 10_000)
    assert.ok(Object.isFrozen(config), 'the config is frozen')
  })
  it('takes durations in milliseconds and applies the defaults the flags show', () => {
    const config = toBenchConfig({...baseFlags, duration: 3000, warmup: 500, slo: 20, 'sample-interval': 100})
    assert.deepEqual([config.durationMs, config.warmupMs, config.sloUs, config.sampleIntervalMs], [3000, 500, 20_000, 100])
    const defaults = toBenchConfig({workload: 'find', 'doc-size': 256, 'seed-docs': 1000, db: 'pooltool_bench', keep: false, model: 'pool', concurrency: '10'})
    // A warm-up by default (issue 26): adaptive, until ops/s settles, its cap the longest (src/bench/warmup.ts).
    assert.deepEqual([defaults.durationMs, defaults.warmupMs, defaults.warmupRule, defaults.sloUs, defaults.sampleIntervalMs], [10_000, SETTLE_RULE.capMs, SETTLE_RULE, undefined, 250])
    assert.equal(toBenchConfig({...baseFlags, warmup: 0}).warmupMs, 0, '--warmup 0s turns it off')
    assert.equal(toBenchConfig({...baseFlags, warmup: 0}).warmupRule, undefined)
    assert.equal(toBenchConfig({...baseFlags, warmup: 10_000}).warmupRule, undefined, '--warmup 10s is exactly 10 s')
    // Where auto cannot be decided during the load, a fixed 5 s, and why.
    const segment = toBenchConfig({...baseFlags, warmup: 'auto', segment: '0/2', 'run-id': 'a1b2c3d4', concurrency: '4'})
    assert.deepEqual([segment.warmupMs, segment.warmupRule], [AUTO_FALLBACK_MS, undefined])
    assert.match(segment.warmupFallback!, /--segment/)
    const openStages = toBenchConfig({...baseFlags, warmup: 'auto', stages: '1s:100/s,1s:200/s'})
    assert.deepEqual([openStages.warmupMs, openStages.warmupRule], [AUTO_FALLBACK_MS, undefined])
    assert.equal(toBenchConfig({...baseFlags, warmup: 'auto', stages: '1s:2,1s:4'}).warmupRule, SETTLE_RULE, 'closed-loop stages start with the measured interval: auto applies')
    usage(() => toBenchConfig({...baseFlags, duration: 0}), /--duration must be above 0/)
  })
  it('rejects impossible combinations', () => {
    usage(() => toBenchConfig({...baseFlags, concurrency: '0'}), /concurrency 0 is out of range/)
    usage(() => toBenchConfig({...baseFlags, rate: 100, ops: 10}), /--rate and --ops/)
    usage(() => toBenchConfig({...baseFlags, model: 'pooled'}), /--model 'pooled' is not one of/)
    usage(() => toBenchConfig({...baseFlags, workload: 'scan'}), /--workload 'scan' is not one of/)
    usage(() => toBenchConfig({...baseFlags, mix: 'find=80,insert=20'}), /needs --workload mixed/)
    usage(() => toBenchConfig({...baseFlags, 'min-pool-size': 50, 'max-pool-size': '10'}), /min-pool-size 50 is above/)
  })
  it('requires a mix that adds up to 100', () => {
    assert.deepEqual(parseMix('find=80,insert=20'), {find: 80, insert: 20})
    usage(() => parseMix('find=80,insert=30'), /adds up to 110/)
    usage(() => parseMix('find=80,scan=20'), /unknown operation 'scan'/)
    usage(() => parseMix('find'), /does not parse/)
  })
})

function fakeRun(overrides: Partial<RunResult>): RunResult {
  const latency = {p50: 1000, p90: 2000, p99: 40_000, p999: 60_000, max: 70_000, mean: 1500, count: 100}
  return {
    model: 'pool', workload: 'find', concurrency: 8, rate: null, maxPoolSize: null, ops: 100, errors: 0, durationMS: 1000, opsPerSec: 100,
    latencyUs: latency, latencyCorrectedUs: null, scheduleLagUs: null, checkoutWaitUs: {p50: 10, p99: 20_000, max: 30_000},
    pool: {created: 8, closed: {}, peakTotal: 8, peakInUse: 8, checkOutFailed: {}, cleared: 0, clients: 1, setupUs: {p50: 0, p99: 0, max: 0}},
    server: [], errorsByClass: {}, histograms: {latencyUs: '', latencyCorrectedUs: null}, interrupted: false,
    ...overrides,
  }
}

describe('--fail-on', () => {
  it('parses units and checks every run', () => {
    const thresholds = parseFailOn('p99>50ms, errors>0, checkoutWaitP99>10ms')
    assert.equal(thresholds.length, 3)
    assert.equal(thresholds[0]!.limit, 50_000)
    const breaches = checkThresholds(thresholds, [fakeRun({}), fakeRun({errors: 3, concurrency: 64})])
    assert.deepEqual(
      breaches.map((b) => `${b.expression}@${b.run}=${b.actual}`),
      ['checkoutWaitP99>10ms@pool c=8=20000', 'errors>0@pool c=64=3', 'checkoutWaitP99>10ms@pool c=64=20000'],
    )
  })
  it('judges open-loop runs on the corrected latency', () => {
    const corrected = {p50: 1000, p90: 2000, p99: 900_000, p999: 1_000_000, max: 1_000_000, mean: 5000, count: 100}
    const breaches = checkThresholds(parseFailOn('p99>100ms'), [fakeRun({latencyCorrectedUs: corrected, rate: 100})])
    assert.equal(breaches.length, 1)
    assert.equal(breaches[0]!.actual, 900_000)
  })
  it('rejects what it cannot read', () => {
    usage(() => parseFailOn('p99 is high'), /does not parse/)
    usage(() => parseFailOn('latency>5ms'), /unknown metric 'latency'/)
    usage(() => parseFailOn('errors>5ms'), /takes no unit/)
  })
})

describe('--fault', () => {
  it('reads KIND[:VALUE]@AT', () => {
    assert.deepEqual(parseFaultSpec('stall:1s@5s'), {atMs: 5000, fault: {kind: 'stall', ms: 1000}})
    assert.deepEqual(parseFaultSpec('drop-connections@10s'), {atMs: 10_000, fault: {kind: 'drop-connections'}})
    assert.deepEqual(parseFaultSpec('restart:2s@0'), {atMs: 0, fault: {kind: 'restart', downMS: 2000}})
    assert.deepEqual(parseFaultSpec('latency:5ms@1.5m'), {atMs: 90_000, fault: {kind: 'latency', ms: 5}})
    usage(() => parseFaultSpec('explode@1s'), /unknown fault/)
    usage(() => parseFaultSpec('stall@1s'), /needs a value/)
  })
  it('wants a unit on its durations, as every duration flag does', () => {
    usage(() => parseFaultSpec('stall:1s@5'), /--fault 'stall:1s@5': '5' is not a duration with a unit/, /stall:1s@5s/)
    usage(() => parseFaultSpec('latency:5@0s'), /--fault 'latency:5@0s': '5' is not a duration with a unit/)
  })
  it('reads lock-hold:NAMESPACE:MODE:DURATION@AT and names what is wrong in a bad one', () => {
    assert.deepEqual(parseFaultSpec('lock-hold:app.orders:W:5s@10s'), {atMs: 10_000, fault: {kind: 'lock-hold', ns: 'app.orders', mode: 'W', ms: 5000}})
    assert.deepEqual(parseFaultSpec('lock-hold:app.a.b:R:1m@0s'), {atMs: 0, fault: {kind: 'lock-hold', ns: 'app.a.b', mode: 'R', ms: 60_000}})
    usage(() => parseFaultSpec('lock-hold@1s'), /lock-hold needs a value/, /lock-hold:app\.orders:W:5s@10s/)
    usage(() => parseFaultSpec('lock-hold:app.orders:5s@1s'), /--fault 'lock-hold:app.orders:5s@1s': lock-hold needs NAMESPACE:MODE:DURATION/)
    usage(() => parseFaultSpec('lock-hold:orders:W:5s@1s'), /'orders' is not a namespace \(db\.collection\)/)
    usage(() => parseFaultSpec('lock-hold:app.orders:X:5s@1s'), /the mode must be W \(exclusive\) or R \(shared\), not 'X'/)
    usage(() => parseFaultSpec('lock-hold:app.orders:W:5@1s'), /'5' is not a duration with a unit/)
  })
})
