/**
 * `bench --stages`: the flag's grammar and what it excludes, the open loop's
 * piecewise schedule, and the engine with a fake `execute`: the number of
 * operations in flight changes at the stage boundaries, and every stage keeps
 * the run's accounting identities on its own.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {setTimeout as sleep} from 'node:timers/promises'

import {runEngine} from '../../src/bench/engine.js'
import {parseStages, SlotSchedule, stagedLoadOf, toStageResults} from '../../src/bench/stages.js'
import {PoolToolError} from '../../src/errors.js'
import {decodeHistogram} from '../../src/metrics/histograms.js'
import {renderBenchTick} from '../../src/reporters/bench.js'
import {hooks, plan} from '../helpers/engine.js'

const usage = (fn: () => unknown, pattern: RegExp, hint = /./) =>
  assert.throws(fn, (error: unknown) => error instanceof PoolToolError && error.code === 'USAGE' && error.exitCode === 2 && pattern.test(error.message) && hint.test(error.hint))

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

describe('--stages grammar', () => {
  it('reads durations with units and concurrencies, or rates per second', () => {
    assert.deepEqual(parseStages('10s:8,30s:64,10s:8'), [
      {durationMs: 10_000, concurrency: 8},
      {durationMs: 30_000, concurrency: 64},
      {durationMs: 10_000, concurrency: 8},
    ])
    assert.deepEqual(parseStages(' 250ms:500/s , 1m:2000/s'), [
      {durationMs: 250, rate: 500},
      {durationMs: 60_000, rate: 2000},
    ])
  })

  it('refuses a bad stage with one line naming the stage at fault', () => {
    usage(() => parseStages('10s:8,30s'), /stage 2 '30s' is not DURATION:CONCURRENCY/, /10s:8,30s:64/)
    usage(() => parseStages('10s:8,,10s:8'), /stage 2 is empty/)
    usage(() => parseStages('10s:8,10:64'), /stage 2 '10:64': duration 10 has no unit/, /10ms or 10s/)
    usage(() => parseStages('10x:8'), /stage 1 '10x:8': duration '10x' is not a duration/, /500ms, 10s/)
    usage(() => parseStages('0s:8'), /stage 1 '0s:8': a stage must last more than 0/)
    usage(() => parseStages('10s:0'), /stage 1 '10s:0': the concurrency must be from 1/)
    usage(() => parseStages('10s:0/s'), /stage 1 '10s:0\/s': the rate must be at least 1\/s/)
    usage(() => parseStages('10s:8.5'), /stage 1 '10s:8.5' is not DURATION/)
    usage(() => parseStages('10s:8,10s:500/s'), /mixes concurrencies and rates \(stage 2 '10s:500\/s'\)/)
    usage(() => parseStages('500h:1,500h:1'), /above the longest duration/)
  })

  it('excludes --duration, --ops, --rate and a --concurrency list', () => {
    usage(() => stagedLoadOf({stages: '1s:2', concurrency: '10', duration: 5000}, '10'), /--stages and --duration/)
    usage(() => stagedLoadOf({stages: '1s:2', concurrency: '10', ops: 100}, '10'), /--stages and --ops/)
    usage(() => stagedLoadOf({stages: '1s:2', concurrency: '10', rate: 100}, '10'), /--stages and --rate/, /10s:500\/s/)
    usage(() => stagedLoadOf({stages: '1s:200/s', concurrency: '8,64'}, '10'), /--concurrency list/)
    usage(() => stagedLoadOf({stages: '1s:2', concurrency: '32'}, '10'), /--concurrency has no meaning beside closed-loop --stages/)
  })

  it('sets the run: the stages\' sum, the largest concurrency (closed) or the cap and the mean rate (open)', () => {
    const closed = stagedLoadOf({stages: '300ms:2,300ms:8,300ms:2', concurrency: '10'}, '10')!
    assert.equal(closed.durationMs, 900)
    assert.equal(closed.concurrency, 8)
    assert.equal(closed.rate, undefined)
    assert.equal(closed.stages.length, 3)
    const open = stagedLoadOf({stages: '1s:100/s,3s:500/s', concurrency: '64'}, '10')!
    assert.equal(open.concurrency, 64)
    assert.equal(open.rate, 400, '(100 × 1 s + 500 × 3 s) / 4 s')
    assert.equal(open.durationMs, 4000)
    assert.equal(stagedLoadOf({concurrency: '10'}, '10'), undefined, 'no --stages, no stages')
  })
})

describe('open-loop schedule', () => {
  it('starts each stage with a slot at its boundary and holds rate × duration slots per stage', () => {
    const schedule = new SlotSchedule([
      {at: 1000, ratePerSec: 100},
      {at: 1300, ratePerSec: 400},
      {at: 1500, ratePerSec: 30},
    ])
    assert.equal(schedule.slotTime(0), 1000)
    assert.equal(schedule.firstSlotAtOrAfter(1300), 30, '100/s for 300 ms')
    assert.equal(schedule.slotTime(30), 1300)
    assert.equal(schedule.firstSlotAtOrAfter(1500) - 30, 80, '400/s for 200 ms')
    assert.equal(schedule.slotTime(110), 1500)
    assert.equal(schedule.firstSlotAtOrAfter(2500) - 110, 30, '30/s for 1 s')
    assert.ok(schedule.slotTime(29) < 1300 && schedule.slotTime(31) > 1300)
    // A stage shorter than one interval still holds its first slot.
    const short = new SlotSchedule([{at: 0, ratePerSec: 1}, {at: 10, ratePerSec: 1}])
    assert.equal(short.firstSlotAtOrAfter(10), 1)
  })
})

describe('engine with stages, closed loop', () => {
  it('changes the operations in flight at the boundaries: 2, then 6, then 2 again', async () => {
    let inFlight = 0
    /** The start times of the operations in flight. */
    const running = new Set<number>()
    const seen: Array<{at: number; inFlight: number; startsInFlight: number[]}> = []
    let measureStart = Number.NaN
    const m = await runEngine(plan({concurrency: 6, stages: [{durationMs: 250, concurrency: 2}, {durationMs: 250, concurrency: 6}, {durationMs: 250, concurrency: 2}]}), {
      ...hooks(async () => {
        const at = performance.now()
        inFlight += 1
        running.add(at)
        seen.push({at, inFlight, startsInFlight: [...running]})
        await sleep(5)
        running.delete(at)
        inFlight -= 1
      }),
      onMeasureStart: (at) => {
        measureStart = at
      },
    })
    assert.deepEqual(m.stages.map((stage) => stage.concurrency), [2, 6, 2])
    const boundaries = m.stages.map((stage) => measureStart + stage.startMs)
    const inStage = (index: number) => seen.filter(({at}) => at >= boundaries[index]! && (index === 2 || at < boundaries[index + 1]!))
    // Before the first boundary only stage 0's two workers exist: nothing sees more.
    const first = seen.filter(({at}) => at < boundaries[1]!)
    assert.ok(first.length > 0)
    assert.ok(first.every((s) => s.inFlight <= 2), JSON.stringify(first.filter((s) => s.inFlight > 2)))
    // The second stage reaches its six, never more.
    assert.equal(Math.max(...inStage(1).map((s) => s.inFlight)), 6)
    // The third: the four extra workers finish the operation they were running and start no other, so operations
    // started in the stage are never more than its two at once (however late a loaded machine ends the others).
    const third = inStage(2)
    assert.ok(third.length > 0)
    for (const op of third) {
      const startedInStage = op.startsInFlight.filter((start) => start >= boundaries[2]!).length
      assert.ok(startedInStage <= 2, `an operation of stage 3 saw ${startedInStage} of the stage's own in flight`)
    }
    // The engine's own account of the load it kept up: the peak follows the ramp up; the mean follows it both ways,
    // the first stage never above its two (the third's mean includes the extra workers' last operations).
    assert.deepEqual(m.stages.slice(0, 2).map((stage) => stage.inFlightPeak), [2, 6])
    const means = toStageResults(m.stages).map((stage) => stage.inFlightMean)
    assert.ok(means[0]! > 0 && means[0]! <= 2 && means[1]! > 2, JSON.stringify(means))
    // The stages add up to the run, and the run is their sum.
    assert.equal(sum(m.stages.map((stage) => stage.ops)), m.ops)
    assert.equal(sum(m.stages.map((stage) => stage.errors)), m.errors)
    assert.ok(Math.abs(sum(m.stages.map((stage) => stage.durationMs)) - m.durationMs) < 1e-6)
    assert.deepEqual(m.stages.map((stage) => Math.round(stage.startMs)), [0, 250, 500])
    for (const stage of m.stages) {
      assert.equal(stage.latencyUs.totalCount, stage.ops)
      assert.equal(stage.scheduled, null)
      assert.equal(stage.latencyCorrectedUs, null)
    }
  })

  it('counts each failure in the stage in which it started', async () => {
    let n = 0
    const m = await runEngine(plan({stages: [{durationMs: 100, concurrency: 1}, {durationMs: 100, concurrency: 3}]}), hooks(async () => {
      n += 1
      await sleep(2)
      if (n % 2 === 0) throw new Error('boom')
    }))
    assert.ok(m.errors > 0)
    assert.equal(sum(m.stages.map((stage) => stage.errors)), m.errors)
    assert.equal(sum(m.stages.map((stage) => stage.ops)), m.ops)
    assert.ok(m.stages.every((stage) => stage.errors > 0), JSON.stringify(m.stages.map((s) => s.errors)))
  })

  it('runs warm-up at the first stage\'s level and measures the stages after it', async () => {
    let inFlight = 0
    let peakBeforeMeasuring = 0
    let measuring = false
    const m = await runEngine(plan({warmupMs: 100, stages: [{durationMs: 100, concurrency: 3}, {durationMs: 100, concurrency: 1}]}), {
      ...hooks(async () => {
        inFlight += 1
        if (!measuring) peakBeforeMeasuring = Math.max(peakBeforeMeasuring, inFlight)
        await sleep(2)
        inFlight -= 1
      }),
      onMeasureStart: () => {
        measuring = true
      },
    })
    assert.equal(peakBeforeMeasuring, 3)
    assert.deepEqual(m.stages.map((stage) => Math.round(stage.startMs)), [0, 100])
    assert.equal(sum(m.stages.map((stage) => stage.ops)), m.ops)
  })

  it('reports only the stages a stop request let begin', async () => {
    const controller = new AbortController()
    let calls = 0
    const m = await runEngine(plan({stages: [{durationMs: 60_000, concurrency: 2}, {durationMs: 60_000, concurrency: 4}]}), hooks(async () => {
      calls += 1
      if (calls === 20) controller.abort()
      await sleep(2)
    }, controller.signal))
    assert.equal(m.interrupted, true)
    assert.equal(m.stages.length, 1)
    assert.equal(m.stages[0]!.ops + m.stages[0]!.errors, m.ops + m.errors)
    assert.ok(Math.abs(m.stages[0]!.durationMs - m.durationMs) < 1e-6)
  })
})

describe('engine with stages, stopped during the warm-up', () => {
  for (const openLoop of [false, true]) {
    it(`measures nothing and reports the first stage, empty (${openLoop ? 'open' : 'closed'} loop)`, async () => {
      const controller = new AbortController()
      let calls = 0
      const stages = openLoop ? [{durationMs: 1000, rate: 200}, {durationMs: 1000, rate: 400}] : [{durationMs: 1000, concurrency: 2}, {durationMs: 1000, concurrency: 4}]
      const m = await runEngine(plan({warmupMs: 60_000, concurrency: 4, ...(openLoop ? {rate: 300} : {}), stages}), hooks(async () => {
        calls += 1
        if (calls === 5) controller.abort()
        await sleep(1)
      }, controller.signal))
      assert.equal(m.interrupted, true)
      assert.equal(m.ops, 0)
      assert.equal(m.stages.length, 1)
      assert.equal(m.stages[0]!.ops + m.stages[0]!.errors + m.stages[0]!.missed, 0)
      assert.equal(m.stages[0]!.scheduled, openLoop ? 0 : null)
    })
  }
})

describe('engine with stages, open loop', () => {
  it('schedules rate × duration per stage, and scheduled = ops + errors + missed per stage and over the run', async () => {
    const m = await runEngine(
      plan({concurrency: 8, rate: 200, stages: [{durationMs: 300, rate: 100}, {durationMs: 300, rate: 400}, {durationMs: 300, rate: 100}]}),
      hooks(() => sleep(1)),
    )
    assert.deepEqual(m.stages.map((stage) => stage.scheduled), [30, 120, 30])
    assert.deepEqual(m.stages.map((stage) => stage.rate), [100, 400, 100])
    assert.deepEqual(m.stages.map((stage) => stage.concurrency), [8, 8, 8], 'open loop: the in-flight cap')
    for (const stage of m.stages) {
      assert.equal(stage.scheduled, stage.ops + stage.errors + stage.missed, JSON.stringify({...stage, latencyUs: undefined, latencyCorrectedUs: undefined}))
      assert.equal(stage.latencyCorrectedUs!.totalCount, stage.ops + stage.missed)
    }
    assert.equal(m.scheduled, 180)
    assert.equal(m.scheduled, m.ops + m.errors + m.missed)
    assert.equal(sum(m.stages.map((stage) => stage.ops)), m.ops)
    assert.equal(sum(m.stages.map((stage) => stage.missed)), m.missed)
  })

  it('plans the boundaries after the warm-up: the stage after the first holds exactly its slots', async () => {
    const m = await runEngine(
      plan({concurrency: 4, rate: 150, warmupMs: 100, stages: [{durationMs: 200, rate: 100}, {durationMs: 200, rate: 200}]}),
      hooks(() => sleep(1)),
    )
    // The warm-up timer may fire late and shorten the first stage's measured part; never the second's.
    assert.equal(m.stages[1]!.scheduled, 40)
    assert.ok(m.stages[0]!.scheduled! <= 20 && m.stages[0]!.scheduled! > 0, `first stage scheduled ${m.stages[0]!.scheduled}`)
    for (const stage of m.stages) assert.equal(stage.scheduled, stage.ops + stage.errors + stage.missed)
    assert.equal(m.scheduled, sum(m.stages.map((stage) => stage.scheduled!)))
  })

  it('keeps per-stage identities when the in-flight cap is full and slots are missed', async () => {
    // One slot in flight at a time, each operation 30 ms: the second stage's 300/s cannot be delivered.
    const m = await runEngine(
      plan({concurrency: 1, rate: 150, drainTimeoutMs: 2000, stages: [{durationMs: 200, rate: 20}, {durationMs: 200, rate: 300}]}),
      hooks(() => sleep(30)),
    )
    assert.deepEqual(m.stages.map((stage) => stage.scheduled), [4, 60])
    assert.ok(m.stages[1]!.missed > 0, 'the cap held the second stage back')
    for (const stage of m.stages) assert.equal(stage.scheduled, stage.ops + stage.errors + stage.missed)
    assert.equal(m.scheduled, m.ops + m.errors + m.missed)
    assert.equal(sum(m.stages.map((stage) => stage.missed)), m.missed)
  })
})

describe('stage results', () => {
  it('the live line says which stage is running', async () => {
    const ticks: Array<{number: number; of: number} | undefined> = []
    await runEngine(plan({tickIntervalMs: 20, stages: [{durationMs: 100, concurrency: 1}, {durationMs: 100, concurrency: 2}]}), {
      ...hooks(() => sleep(1)),
      onTick: (tick) => ticks.push(tick.stage),
    })
    assert.ok(ticks.length > 0 && ticks.every((stage) => stage !== undefined && stage.of === 2 && stage.number >= 1 && stage.number <= 2), JSON.stringify(ticks))
    assert.deepEqual(ticks.map((stage) => stage!.number), [...ticks.map((stage) => stage!.number)].sort(), 'the stages only go forward')
    assert.match(renderBenchTick('pool c=8', {elapsedMs: 3000, opsPerSecLastTick: 10, p99Us: 1000, errors: 0, inUse: 2, stage: {number: 2, of: 3}}), /· 3s · stage 2\/3 ·/)
    assert.doesNotMatch(renderBenchTick('pool c=8', {elapsedMs: 3000, opsPerSecLastTick: 10, p99Us: 1000, errors: 0, inUse: 2}), /stage/)
  })

  it('encode each stage\'s histograms beside its summaries', async () => {
    const m = await runEngine(plan({concurrency: 2, rate: 100, stages: [{durationMs: 100, rate: 100}, {durationMs: 100, rate: 100}]}), hooks(() => sleep(1)))
    const results = toStageResults(m.stages)
    assert.deepEqual(results.map((stage) => [stage.startMS, stage.durationMS]), [[0, 100], [100, 100]])
    for (const stage of results) {
      assert.equal(decodeHistogram(stage.histograms.latencyUs).totalCount, stage.ops)
      assert.equal(decodeHistogram(stage.histograms.latencyCorrectedUs!).totalCount, stage.latencyCorrectedUs!.count)
      assert.equal(stage.latencyUs.count, stage.ops)
      assert.ok(stage.opsPerSec > 0)
    }
  })
})
