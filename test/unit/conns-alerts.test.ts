/** --alert expressions: parsing, usage errors, values and edge-triggered firing. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {AlertEvaluator, alertValue, parseAlerts} from '../../src/conns/alerts.js'
import {toWatchOptions} from '../../src/conns/options.js'
import {PoolToolError} from '../../src/errors.js'

const usage = (fn: () => unknown) =>
  assert.throws(fn, (e: unknown) => e instanceof PoolToolError && e.code === 'USAGE' && e.exitCode === 2 && !e.message.includes('\n'))

describe('parseAlerts', () => {
  test('the issue example', () => {
    const rules = parseAlerts('rate>50/s,current>80%')
    assert.deepEqual(rules, [
      {expression: 'rate>50/s', metric: 'rate', operator: '>', limit: 50, unit: '/s'},
      {expression: 'current>80%', metric: 'current', operator: '>', limit: 80, unit: '%'},
    ])
  })
  test('per minute, bare rate, counts, spaces, >= <', () => {
    const rules = parseAlerts(' rate >= 600/m , rate>3, active<2, available<=10%, rejected>0 ')
    assert.equal(rules[0]!.limit, 10)
    assert.equal(rules[0]!.unit, '/s')
    assert.equal(rules[1]!.unit, '/s')
    assert.equal(rules[2]!.metric, 'active')
    assert.equal(rules[3]!.unit, '%')
    assert.equal(rules[4]!.metric, 'rejected')
  })
  test('bad expressions are usage errors', () => {
    for (const bad of ['rate>>5', 'speed>5', 'rate>5%', 'current>5/s', 'rejected>1%', 'current>120%', '', ',', 'rate=5', 'rate>']) usage(() => parseAlerts(bad))
  })
})

describe('alert values and firing', () => {
  test('percent of current + available', () => {
    const [rule] = parseAlerts('current>80%')
    assert.equal(alertValue(rule!, {current: 85, available: 15}), 85)
    assert.equal(alertValue(rule!, {current: 85}), undefined)
  })
  test('fires when the condition becomes true, once, and again after it cleared', () => {
    const evaluator = new AlertEvaluator(parseAlerts('rate>50/s'))
    const at = '2024-01-01T00:00:00.000Z'
    assert.equal(evaluator.evaluate('h:1', {ratePerSec: 10}, at, 1).length, 0)
    const fired = evaluator.evaluate('h:1', {ratePerSec: 120.456}, at, 2)
    assert.deepEqual(fired, [{at, round: 2, host: 'h:1', rule: 'rate>50/s', metric: 'rate', value: 120.46, limit: 50, unit: '/s'}])
    assert.equal(evaluator.evaluate('h:1', {ratePerSec: 130}, at, 3).length, 0, 'still above: no new alert')
    assert.equal(evaluator.evaluate('h:1', {}, at, 4).length, 0, 'unknown (host unreachable) keeps the state')
    assert.equal(evaluator.evaluate('h:1', {ratePerSec: 140}, at, 5).length, 0)
    assert.equal(evaluator.evaluate('h:2', {ratePerSec: 140}, at, 5).length, 1, 'per host')
    evaluator.evaluate('h:1', {ratePerSec: 0}, at, 6)
    assert.equal(evaluator.evaluate('h:1', {ratePerSec: 60}, at, 7).length, 1, 'fires again after clearing')
  })
})

describe('watch flags', () => {
  // Durations arrive in milliseconds: the CLI's duration flags parse them (test/unit/cli-flags.test.ts).
  const base = {interval: 1000, holders: true}
  test('defaults and parsing', () => {
    const o = toWatchOptions({...base, duration: 3000, alert: 'rate>5/s'})
    assert.equal(o.intervalMS, 1000)
    assert.equal(o.durationMS, 3000)
    assert.equal(o.idleWindowMS, 30_000)
    assert.equal(o.alerts.length, 1)
  })
  test('interval below 100 ms, bad durations, idle window shorter than the interval', () => {
    usage(() => toWatchOptions({...base, interval: 99}))
    usage(() => toWatchOptions({...base, duration: 0}))
    usage(() => toWatchOptions({...base, interval: 2000, 'idle-window': 1000}))
    assert.equal(toWatchOptions({...base, interval: 100}).intervalMS, 100)
    assert.equal(toWatchOptions({holders: true}).intervalMS, 1000, 'the default interval')
  })
})
