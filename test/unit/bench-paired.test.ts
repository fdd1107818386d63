/** The benchmarks' paired method (test/benchmarks/paired.ts): slice order, paired ratios, the seeded bootstrap, goals. No I/O. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {bootstrapMedianInterval, formatFigure, median, orderOfPair, pairedFigure, runPaired, valueFigure} from '../benchmarks/paired.js'

describe('paired benchmark method', () => {
  it('runs the sides A B B A A B …, warm-up pairs first and dropped', async () => {
    const calls: string[] = []
    const run = await runPaired({
      sides: ['a', 'b'],
      pairs: 3,
      warmupPairs: 1,
      slice: async (side, index) => {
        calls.push(`${side}${index}`)
        return {v: index}
      },
    })
    assert.deepEqual(calls, ['a0', 'b0', 'b1', 'a1', 'a2', 'b2', 'b3', 'a3'])
    assert.deepEqual(run.pairs.map((p) => p.a.v), [1, 2, 3])
    assert.deepEqual(orderOfPair(['x', 'y', 'z'], 1), ['z', 'y', 'x'])
  })

  it('a drift that slows both slices of a pair alike leaves the paired ratio exact', () => {
    // The machine's speed swings threefold from pair to pair; B costs 2 % more than A within each pair.
    const drift = [1, 3, 1.4, 2.2, 0.9, 2.8, 1.1, 1.9, 2.5, 1.3]
    const run = {sides: ['bare', 'engine'] as const, warmupPairs: 0, pairs: drift.map((d) => ({bare: {cpu: 100 * d}, engine: {cpu: 102 * d}}))}
    const figure = pairedFigure(run, {label: 'cpu', metric: 'cpu', a: 'bare', b: 'engine', goal: 1.02, upperGoal: 1.05})
    assert.ok(Math.abs(figure.value - 1.02) < 1e-12)
    assert.ok(Math.abs(figure.interval[0] - 1.02) < 1e-12 && Math.abs(figure.interval[1] - 1.02) < 1e-12)
    assert.equal(figure.met, true)
    assert.equal(figure.pairs, 10)
    assert.match(formatFigure(figure), /^cpu: ratio 1\.020 \[1\.020, 1\.020\] \(goal ≤ 1\.02, interval's upper end ≤ 1\.05\) · met/)
  })

  it('the bootstrap interval is seeded (same pairs, same interval), brackets the median, and narrows with more pairs', () => {
    const noisy = Array.from({length: 40}, (_, i) => 1 + ((i * 7919) % 97) / 970)
    const first = bootstrapMedianInterval(noisy)
    assert.deepEqual(bootstrapMedianInterval(noisy), first)
    assert.ok(first[0] <= median(noisy) && median(noisy) <= first[1])
    const few = bootstrapMedianInterval(noisy.slice(0, 8))
    assert.ok(first[1] - first[0] < few[1] - few[0], `40 pairs ${first} should be narrower than 8 pairs ${few}`)
  })

  it('a goal needs the ratio and, when set, the interval upper end within it', () => {
    const pairs = [1.01, 1.015, 1.0, 1.2, 0.99, 1.3, 1.02, 1.25].map((r) => ({a: {x: 1}, b: {x: r}}))
    const run = {sides: ['a', 'b'] as const, warmupPairs: 0, pairs}
    const loose = pairedFigure(run, {label: 'x', metric: 'x', a: 'a', b: 'b', goal: 1.05})
    const strict = pairedFigure(run, {label: 'x', metric: 'x', a: 'a', b: 'b', goal: 1.05, upperGoal: 1.05})
    assert.equal(loose.met, true)
    assert.ok(strict.interval[1] > 1.05)
    assert.equal(strict.met, false)
    assert.equal(pairedFigure(run, {label: 'x', metric: 'x', a: 'a', b: 'b', goal: null}).met, null)
    assert.equal(valueFigure({label: 'ms', unit: 'ms', samples: [900, 950, 1200], goal: 1000}).met, true)
    assert.equal(valueFigure({label: 'ms', unit: 'ms', samples: [900, 950, 1200], goal: 1000, met: false}).met, false)
  })
})
