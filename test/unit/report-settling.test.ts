/**
 * report compare's "had not settled" note: a run whose ops/s still climbs from its first to its
 * last half of intervals (the embedded cluster's first run after a few idle seconds went
 * 3,501 → 6,965 ops/s over five 1 s intervals, the runs after it 6,086–7,490) is named; a steady
 * run, a short one and a staged one (its load changes on purpose) are not.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {unsettled} from '../../src/report/settling.js'

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
