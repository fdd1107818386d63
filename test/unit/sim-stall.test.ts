/** A stall's hold (src/sim/faults.ts): it lasts its time, is extended by a later stall, and `endStall` ends it now. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {endStall, initialFaultState, waitOutStall} from '../../src/sim/faults.js'
import {DEFAULT_SIM_OPTIONS} from '../../src/sim/types.js'

describe('sim stall', () => {
  it('endStall releases every held reply at once and ends the stall', {timeout: 60_000}, async () => {
    const state = initialFaultState(DEFAULT_SIM_OPTIONS)
    state.stallUntil = Date.now() + 600_000
    const held = [waitOutStall(state), waitOutStall(state)]
    assert.equal(state.stallWaiters.size, 2, 'both replies are held')
    endStall(state)
    // Ten minutes early: only endStall can have released them.
    await Promise.all(held)
    assert.equal(state.stallWaiters.size, 0)
    assert.equal(state.stallUntil, 0)
    await waitOutStall(state)
  })

  it('a reply arriving with no stall in force is not held', async () => {
    const state = initialFaultState(DEFAULT_SIM_OPTIONS)
    await waitOutStall(state)
    assert.equal(state.stallWaiters.size, 0)
  })
})
