/**
 * Opt-in: every command against a real deployment named by POOLTOOL_TEST_URI
 * (loopback or a test cluster of your own — bench writes to its own database
 * and drops it). Without the variable these tests are reported as skipped.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson, runCli} from '../helpers/cli.js'

const uri = process.env.POOLTOOL_TEST_URI
const skip = uri ? false : 'set POOLTOOL_TEST_URI to run against a real server'

describe('against a real server (POOLTOOL_TEST_URI)', () => {
  it('bench measures and cleans up', {skip}, async () => {
    const run = await runCli(['bench', '--warmup', '0s', '--uri', uri!, '--duration', '2s', '--concurrency', '4', '--json'], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.target.simulated, false)
    assert.ok(result.runs[0].ops > 0)
    assert.equal(result.cleanedUp, true)
    assert.doesNotMatch(run.stdout + run.stderr, /:\/\/[^<@/]+:[^@/]+@/, 'no credentials in the output')
  })

  it('conns list finds the hosts', {skip}, async () => {
    const run = await runCli(['conns', 'list', '--uri', uri!, '--json'], {timeoutMs: 60_000})
    assert.equal(run.code, 0, run.stderr)
    assert.ok(parseJson(run).hosts.length >= 1)
  })

  it('locks list answers for a sharded cluster, or exits 7 for any other topology', {skip}, async () => {
    const run = await runCli(['locks', 'list', '--uri', uri!, '--json'], {timeoutMs: 60_000})
    if (run.code === 7) return
    assert.equal(run.code, 0, run.stderr)
    assert.match(parseJson(run).model, /^(config\.locks|in-memory)$/)
  })

  it('auth measures new connections', {skip}, async () => {
    const run = await runCli(['auth', '--uri', uri!, '--connections', '4', '--parallel', '2', '--pings', '20', '--json'], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    assert.ok(parseJson(run).mechanisms.length >= 1)
  })
})
