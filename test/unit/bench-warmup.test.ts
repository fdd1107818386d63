/**
 * bench's adaptive warm-up (src/bench/warmup.ts) on recorded series. Per-second ops/s from the
 * idle 2-core machine (issue 26): the run still ramping after a fixed 5 s warm-up went
 * 3,501 → 4,138 → 4,052 → 5,643 → 6,965; the runs right after it 6,086 → 6,709 → 6,161 → 6,900 → 6,441
 * and 6,163 → 6,247 → 6,447 → 6,847 → 7,490. From the loaded machine (load average 12–23), a cold
 * run's seconds: 144 → 133 → 106 → 157 → 123 → 246 → 160 → 240 → 308 → 377 → 448 → 401 → 455 → 652 → 701.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {setTimeout as sleep} from 'node:timers/promises'

import {runEngine} from '../../src/bench/engine.js'
import {describeWarmup, SETTLE_RULE, SettleJudge, toRunWarmup, verdictOf, type WarmupOutcome, type WarmupWindow, WorkersJudge} from '../../src/bench/warmup.js'
import {hooks, plan} from '../helpers/engine.js'

const RAMP = [3501, 4138, 4052, 5643, 6965]
const STEADY = [6086, 6709, 6161, 6900, 6441]
const STILL_RISING = [6163, 6247, 6447, 6847, 7490]
const LOADED_COLD = [144, 133, 106, 157, 123, 246, 160, 240, 308, 377, 448, 401, 455, 652, 701]

const windows = (opsPerSec: number[], pool = 10): WarmupWindow[] => opsPerSec.map((ops) => ({ops, durationMs: 1000, poolTotal: pool}))

/** Feeds a series second by second; the outcome and the second it came at (1-based), if any. */
function judge(opsPerSec: number[], pools?: number[], startPool = 0): {outcome?: WarmupOutcome; at?: number} {
  const judge = new SettleJudge(SETTLE_RULE, startPool)
  for (const [i, ops] of opsPerSec.entries()) {
    const outcome = judge.push({ops, durationMs: 1000, poolTotal: pools?.[i] ?? 10})
    if (outcome) return {outcome, at: i + 1}
  }
  return {}
}

describe('the settle rule on recorded series', () => {
  it('the ramp (3,501 → 6,965) is not level anywhere', () => {
    for (let end = SETTLE_RULE.windows; end <= RAMP.length; end++) {
      const verdict = verdictOf(windows(RAMP.slice(0, end)), SETTLE_RULE, 10)!
      assert.equal(verdict.level, false, `seconds ${end - 3}–${end}: halves ${verdict.halves.map(Math.round).join(' → ')}`)
    }
    assert.equal(judge(RAMP).outcome, undefined, 'warm-up goes on through the ramp')
  })

  it('the steady runs after it are level at every 4 s span', () => {
    for (let end = SETTLE_RULE.windows; end <= STEADY.length; end++) assert.equal(verdictOf(windows(STEADY.slice(0, end)), SETTLE_RULE, 10)!.level, true)
    const {outcome, at} = judge(STEADY, undefined, 10)
    assert.equal(outcome?.endedBy, 'settled')
    assert.equal(at, 5, 'at the floor: the first second at which the rule can hold twice running')
  })

  it('a run still rising 5 % a second is not level yet (it drifted 21 % over its 5 s)', () => {
    assert.equal(verdictOf(windows(STILL_RISING.slice(0, 4)), SETTLE_RULE, 10)!.level, false)
    assert.equal(verdictOf(windows(STILL_RISING), SETTLE_RULE, 10)!.level, false)
  })

  it('the ramp, then the level it reached: settles once the last 4 s are past the ramp', () => {
    const {outcome, at} = judge([...RAMP, ...STEADY])
    assert.equal(outcome?.endedBy, 'settled')
    // At 7 s the span 5,643 → 6,965 → 6,086 → 6,709 is level (halves 1.5 % apart), at 8 s again: the steep part is behind it.
    assert.equal(at, 8)
    assert.deepEqual(outcome!.windowsOpsPerSec!.slice(0, RAMP.length), RAMP, 'every warm-up second is kept')
  })

  it('noise on a loaded machine does not pass for a level: the cap ends it, and says so', () => {
    // Halves that happen to match are not enough when single seconds wander 30 %.
    const noisy = [90, 150, 140, 100]
    // Recorded at load 23: a rule of halves alone "settled" here (106 → 104 ops/s), and the run then went 96 → 275.
    const recorded = [77, 129, 85, 136, 92, 72, 172, 100, 85, 125]
    assert.equal(judge(recorded).outcome, undefined, 'no verdict from those seconds')
    // The cold run at load 12–16: one level span at 13 s (377 → 448 → 401 → 455), not twice running; it went on to 701.
    assert.equal(verdictOf(windows(LOADED_COLD.slice(0, 13)), SETTLE_RULE, 10)!.level, true)
    assert.equal(judge(LOADED_COLD).outcome, undefined)
    const verdict = verdictOf(windows(noisy), SETTLE_RULE, 10)!
    assert.ok(Math.abs(verdict.halves[1] - verdict.halves[0]) / verdict.halves[0] <= 0.05, 'halves alike')
    assert.equal(verdict.level, false, 'but seconds far from their mean')
    const long = [...LOADED_COLD, ...LOADED_COLD.map((n) => n * 3), ...LOADED_COLD.slice(0, 5)]
    const {outcome, at} = judge(long)
    assert.equal(outcome?.endedBy, 'cap')
    assert.equal(at, SETTLE_RULE.capMs / 1000)
    assert.equal(outcome!.ms, SETTLE_RULE.capMs)
  })

  it('a pool still growing holds warm-up open even when ops/s is level', () => {
    const pools = [2, 4, 6, 8, 10, 10, 10, 10, 10, 10]
    const {outcome, at} = judge(Array(10).fill(6000), pools)
    assert.equal(outcome?.endedBy, 'settled')
    assert.equal(at, 10, 'once two spans in a row hold no new connection (the pool last grew at 5 s)')
    assert.equal(outcome!.poolTotal, 10)
    const growing = judge(Array(30).fill(6000), Array.from({length: 30}, (_, i) => i + 1))
    assert.equal(growing.outcome?.endedBy, 'cap')
    assert.equal(growing.outcome?.poolGrew, true)
    assert.match(describeWarmup(toRunWarmup(growing.outcome!, SETTLE_RULE)), /^did not settle within the 30 s cap: the pool still growing, pool 30 connections/)
  })

  it('no operation at all is not a level (a stalled server)', () => {
    assert.equal(verdictOf(windows([0, 0, 0, 0]), SETTLE_RULE, 10)!.level, false)
    assert.equal(judge(Array(30).fill(0)).outcome?.endedBy, 'cap')
  })

  it('a pool not watched is not held against it (unknown, not grown)', () => {
    const verdict = verdictOf(STEADY.slice(0, 4).map((ops) => ({ops, durationMs: 1000})), SETTLE_RULE)!
    assert.equal(verdict.poolGrew, undefined)
    assert.equal(verdict.level, true)
  })
})

describe('what the report says', () => {
  it('settled: how long, the halves, the bounds and the pool', () => {
    const {outcome} = judge([...RAMP, ...STEADY])
    const text = describeWarmup(toRunWarmup({...outcome!, ms: 7240}, SETTLE_RULE))
    assert.match(text, /^settled after 7\.2 s: the last 4 s level \(halves [\d,]+ → [\d,]+ ops\/s, within 5 %; each second within 15 %\), and a second before, pool 10 connections$/)
  })

  it('the cap: not level, with what was seen and the rule', () => {
    const {outcome} = judge([...LOADED_COLD, ...LOADED_COLD.map((n) => n * 3)])
    const text = describeWarmup(toRunWarmup(outcome!, SETTLE_RULE))
    assert.match(text, /^did not settle within the 30 s cap: the last 4 s not level \(halves [\d,]+ → [\d,]+ ops\/s, seconds up to \d+ % from their mean; the rule: halves within 5 %; each second within 15 %\); the figures may still include the ramp$/)
  })

  it('fixed and off say so', () => {
    assert.equal(describeWarmup({durationMS: 2000, endedBy: 'fixed'}), 'fixed 2 s')
    assert.equal(describeWarmup({durationMS: 0, endedBy: 'off'}), 'none (--warmup 0s)')
  })
})

/**
 * What test/cli/bench-warmup.test.ts reads in a real run's runs[].warmup, decided here on given seconds,
 * for both endings: a real run settles or reaches the cap depending on the machine, so one run proves only one.
 */
describe('what an adaptive warm-up reports (runs[].warmup)', () => {
  const json = (outcome: WarmupOutcome) => toRunWarmup(outcome, SETTLE_RULE)

  it('settled: level, the pool not grown, one entry per second, the halves, the pool and the rule', () => {
    const {outcome, at} = judge([...RAMP, ...STEADY], undefined, 10)
    const warmup = json(outcome!)
    assert.equal(warmup.endedBy, 'settled')
    assert.equal(warmup.level, true)
    assert.equal(warmup.poolGrew, false)
    assert.equal(warmup.durationMS, at! * 1000)
    assert.equal(warmup.windowsOpsPerSec!.length, Math.round(warmup.durationMS / 1000), 'one entry per warm-up second')
    assert.equal(warmup.halvesOpsPerSec!.length, 2)
    assert.equal(warmup.poolTotal, 10)
    assert.deepEqual(warmup.rule, {windowMS: 1000, windows: 4, tolerance: 0.05, spread: 0.15, confirmations: 2, floorMS: 5000, capMS: 30_000})
  })

  it('the cap: not level, with what was seen in its last span, one entry per second', () => {
    const {outcome} = judge([...LOADED_COLD, ...LOADED_COLD.map((n) => n * 3)])
    const warmup = json(outcome!)
    assert.equal(warmup.endedBy, 'cap')
    assert.equal(warmup.level, false)
    assert.equal(warmup.durationMS, SETTLE_RULE.capMs)
    assert.equal(warmup.windowsOpsPerSec!.length, SETTLE_RULE.capMs / 1000)
    assert.equal(warmup.halvesOpsPerSec!.length, 2)
    assert.equal(typeof warmup.spread, 'number')
  })

  it('never before the floor, however level the load is from its first second', () => {
    const flat = Array(40).fill(6000)
    assert.equal(judge(flat, undefined, 10).at, SETTLE_RULE.floorMs / 1000)
    // A floor later than the rule's own earliest verdict (4 s and a confirmation) is waited for too.
    const late = new SettleJudge({...SETTLE_RULE, floorMs: 9000}, 10)
    const at = flat.findIndex((ops) => late.push({ops, durationMs: 1000, poolTotal: 10}) !== undefined) + 1
    assert.equal(at, 9)
    // A timer may close a window a little early: half a window short of the floor still counts as there.
    const early = new SettleJudge(SETTLE_RULE, 10)
    const ends = flat.slice(0, 5).map((ops) => early.push({ops, durationMs: 910, poolTotal: 10}))
    assert.equal(ends.findIndex((outcome) => outcome !== undefined), 4, `settled at 4.55 s, within half a window of the 5-s floor`)
  })

  it('--workers: the parent too waits for the floor, and reports both pools summed', () => {
    const ended: WarmupOutcome[] = []
    const parent = new WorkersJudge(SETTLE_RULE, 2, (outcome) => ended.push(outcome))
    for (let i = 0; i < 10 && ended.length === 0; i++) for (let worker = 0; worker < 2; worker++) parent.window({ops: 3000, durationMs: 1000, poolTotal: 2}, i, i === 0 ? 2 : undefined)
    assert.equal(ended.length, 1)
    assert.equal(ended[0]!.windowsOpsPerSec!.length, SETTLE_RULE.floorMs / 1000)
    assert.equal(ended[0]!.poolTotal, 4, 'two workers of 2 connections each')
  })
})

describe('--workers: the parent judges the workers summed', () => {
  it('one verdict for all, once every worker has sent a window', () => {
    const ended: WarmupOutcome[] = []
    const parent = new WorkersJudge(SETTLE_RULE, 2, (outcome) => ended.push(outcome))
    // Each worker half the load; worker 1's windows arrive late and out of step.
    const half = STEADY.map((n) => n / 2)
    for (const [i, ops] of half.entries()) parent.window({ops, durationMs: 1000, poolTotal: 5}, i, i === 0 ? 5 : undefined)
    assert.equal(ended.length, 0, 'nothing judged on one worker alone')
    for (const [i, ops] of half.entries()) parent.window({ops, durationMs: 1001, poolTotal: 5}, i, i === 0 ? 5 : undefined)
    assert.equal(ended.length, 1, 'decided once')
    assert.equal(ended[0]!.endedBy, 'settled')
    assert.deepEqual(ended[0]!.windowsOpsPerSec, STEADY.map((n) => Math.round((n * 1000) / 1001)), 'the workers summed')
    assert.equal(ended[0]!.poolTotal, 10)
  })
})

describe('the engine with an adaptive warm-up', () => {
  // A short rule, so the test takes a second: the engine's side (gate, timers, measured interval) is what is tested.
  const quick = {windowMs: 100, windows: 4, confirmations: 2, floorMs: 500, capMs: 1500}

  it('measuring begins when the rule says so, and the measurement says how warm-up ended', async () => {
    let started = 0
    let warmupOps = 0
    let measuring = false
    const m = await runEngine(plan({concurrency: 2, durationMs: 300, warmupMs: quick.capMs, settle: {...quick, tolerance: 1, spread: 10}}), {
      ...hooks(async () => {
        started += 1
        if (!measuring) warmupOps += 1
        await sleep(5)
      }),
      poolTotal: () => 2,
      onMeasureStart: () => (measuring = true),
    })
    assert.equal(m.warmup.mode, 'auto')
    assert.equal(m.warmup.endedBy, 'settled', JSON.stringify(m.warmup))
    assert.ok(m.warmup.ms >= quick.floorMs - quick.windowMs / 2, `not before the floor: ${m.warmup.ms} ms`)
    assert.ok(warmupOps > 0 && m.ops > 0 && m.ops <= started - warmupOps + 2, 'warm-up operations are not measured')
    assert.equal(m.warmup.windowsOpsPerSec!.length, Math.round(m.warmup.ms / quick.windowMs))
  })

  it('a rule that cannot hold ends at the cap, and says so', async () => {
    const m = await runEngine(plan({concurrency: 2, durationMs: 100, warmupMs: quick.capMs, settle: {...quick, tolerance: 0, spread: 0}}), {
      ...hooks(() => sleep(Math.random() * 10)),
      poolTotal: () => 2,
    })
    assert.equal(m.warmup.endedBy, 'cap')
    assert.ok(m.warmup.ms >= quick.capMs - quick.windowMs / 2, `${m.warmup.ms} ms`)
    assert.ok(m.ops > 0)
  })

  it('a fixed warm-up and none are reported as such', async () => {
    const fixed = await runEngine(plan({concurrency: 1, durationMs: 50, warmupMs: 100}), hooks(() => sleep(1)))
    assert.deepEqual([fixed.warmup.mode, fixed.warmup.endedBy], ['fixed', 'fixed'])
    assert.ok(fixed.warmup.ms >= 99)
    const none = await runEngine(plan({concurrency: 1, durationMs: 50}), hooks(() => sleep(1)))
    assert.deepEqual(none.warmup, {mode: 'off', ms: 0, endedBy: 'off'})
  })

  it('a stop request during an adaptive warm-up: interrupted, nothing measured', async () => {
    const stop = new AbortController()
    setTimeout(() => stop.abort(), 150)
    const m = await runEngine(plan({concurrency: 1, durationMs: 100, warmupMs: quick.capMs, settle: {...quick, tolerance: 0, spread: 0}}), hooks(() => sleep(2), stop.signal))
    assert.equal(m.warmup.endedBy, 'interrupted')
    assert.equal(m.ops, 0)
    assert.equal(m.interrupted, true)
  })
})
