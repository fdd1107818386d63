/** The matrix's elapsed time and time left on bench's live line (src/reporters/eta.ts). */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {clockDuration, matrixProgress, matrixRemainingMs} from '../../src/reporters/eta.js'

describe('matrix progress', () => {
  it('before any cell finished: the planned length of each (warm-up + duration)', () => {
    // 9 cells of 2 s warm-up + 10 s; 5 s into the first.
    const clock = {startedAt: 0, cellStartedAt: 0, index: 0, cells: 9, plannedCellMs: 12_000}
    assert.equal(matrixRemainingMs(clock, 5000), 7000 + 8 * 12_000)
    assert.equal(matrixProgress(clock, 5000), 'matrix 0:05, about 1:43 left')
  })

  it('after cells finished: their whole time per cell (set-up included) for the cells to come', () => {
    // Two cells took 30 s together (15 s each with set-up); the third is 4 s in.
    const clock = {startedAt: 0, cellStartedAt: 30_000, index: 2, cells: 4, plannedCellMs: 12_000}
    assert.equal(matrixRemainingMs(clock, 34_000), 8000 + 15_000)
    assert.equal(matrixProgress(clock, 34_000), 'matrix 0:34, about 0:23 left')
  })

  it('bounded by --ops: unknown until a cell finished, then learnt from it; never negative', () => {
    assert.equal(matrixProgress({startedAt: 0, cellStartedAt: 0, index: 0, cells: 3}, 4000), 'matrix 0:04')
    assert.equal(matrixRemainingMs({startedAt: 0, cellStartedAt: 20_000, index: 1, cells: 3}, 50_000), 0 + 20_000)
  })

  it('clock durations', () => {
    assert.deepEqual([clockDuration(0), clockDuration(65_400), clockDuration(3_600_000 + 7000)], ['0:00', '1:05', '1:00:07'])
  })
})
