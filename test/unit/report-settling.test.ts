/**
 * report compare's "had not settled" note: a run whose ops/s still climbs from its first to its
 * last half of intervals (the embedded cluster's first run after a few idle seconds went
 * 3,501 → 6,965 ops/s over five 1 s intervals, the runs after it 6,086–7,490) is named; a steady
 * run, a short one and a staged one (its load changes on purpose) are not.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {compareBenchResults} from '../../src/report/compare.js'
import {reportData} from '../../src/report/html-data.js'
import {notSettledReason, unsettled} from '../../src/report/settling.js'
import {craft} from '../helpers/crafted-results.js'

const series = (ops: number[]) => ops.map((n, i) => ({tMS: i * 1000, durationMS: 1000, ops: n, errors: 0, opsPerSec: n}))

describe('a run that had not settled', () => {
  it('the climbing run is named, with its first and last halves', () => {
    const drift = unsettled({series: series([3501, 4138, 4052, 5643, 6965])} as never)
    assert.ok(drift)
    assert.equal(drift.firstOpsPerSec, (3501 + 4138) / 2)
    assert.equal(drift.lastOpsPerSec, (5643 + 6965) / 2)
  })

  it('steady runs (within 20 %) and falling ones', () => {
    assert.equal(unsettled({series: series([6086, 6709, 6161, 6900, 6441])} as never), undefined)
    assert.equal(unsettled({series: series([6163, 6247, 6447, 6847, 7490])} as never), undefined)
    assert.ok(unsettled({series: series([7000, 6500, 5000, 4000, 3000])} as never))
  })

  it('too few intervals, or stages: nothing said', () => {
    assert.equal(unsettled({series: series([1000, 2000, 4000])} as never), undefined)
    assert.equal(unsettled({series: series([1000, 2000, 3000, 4000, 8000]), stages: [{}, {}]} as never), undefined)
    assert.equal(unsettled({} as never), undefined)
  })
})

describe('a run whose adaptive warm-up reached its cap', () => {
  const cap = {mode: 'auto', durationMS: 30_000, endedBy: 'cap', halvesOpsPerSec: [300, 420], spread: 0.31, level: false, poolGrew: false, poolTotal: 10,
    rule: {windowMS: 1000, windows: 4, tolerance: 0.05, spread: 0.15, confirmations: 2, floorMS: 5000, capMS: 30_000}} as const

  it('counts as not settled, even when its measured intervals look steady', () => {
    const why = notSettledReason({series: series([6086, 6709, 6161, 6900, 6441]), warmup: cap} as never)
    assert.match(why!, /^its warm-up did not settle within the 30 s cap: the last 4 s not level \(halves 300 → 420 ops\/s/)
    assert.equal(notSettledReason({series: series([6086, 6709, 6161, 6900, 6441]), warmup: {...cap, endedBy: 'settled'}} as never), undefined)
  })

  it('report compare names it', () => {
    const base = craft('a.json', {seed: 1})
    const next = craft('b.json', {seed: 2})
    next.result.runs[0]!.warmup = cap as never
    const result = compareBenchResults(base, next)
    assert.ok(result.notes.some((note) => /^b\.json .*: its warm-up did not settle within the 30 s cap: .*it had not settled/.test(note)), result.notes.join('\n'))
    assert.ok(!result.notes.some((note) => note.startsWith('a.json')), 'the settled one is not named')
  })

  it('the HTML report has its warm-up beside each run, the unsettled marked', () => {
    const base = craft('a.json', {seed: 1})
    base.result.runs[0]!.warmup = cap as never
    const [run] = reportData([base]).runs
    assert.match(run!.warmup, /^did not settle within the 30 s cap/)
    assert.equal(run!.warmupSettled, false)
    const fixed = craft('b.json', {seed: 1, warmupMS: 5000})
    assert.equal(reportData([fixed]).runs[0]!.warmup, 'fixed 5 s', 'a file from before runs[].warmup: its config')
  })
})
