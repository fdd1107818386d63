/**
 * conns watch's round deadline (src/conns/watch.ts roundDeadlineMs): the first round also opens and
 * authenticates every connection, so it is bounded like conns list's one round (the per-host timeout plus
 * 500 ms), not by the interval; later rounds read over open connections within the interval (at least 500 ms).
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {roundDeadlineMs} from '../../src/conns/watch.js'

describe('conns watch round deadline', () => {
  it('later rounds: the interval, at least 500 ms', () => {
    assert.equal(roundDeadlineMs(250, {first: false, hostTimeoutMs: 1000}), 500)
    assert.equal(roundDeadlineMs(2000, {first: false, hostTimeoutMs: 4000}), 2000)
  })

  it('the first round: the per-host timeout plus 500 ms, never less than a later round', () => {
    assert.equal(roundDeadlineMs(500, {first: true, hostTimeoutMs: 1000}), 1500)
    assert.equal(roundDeadlineMs(5000, {first: true, hostTimeoutMs: 1000}), 5000)
  })
})
