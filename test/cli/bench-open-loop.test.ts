/**
 * Coordinated omission on a real run: with --rate and a 1 s server stall, the
 * latency measured from the scheduled start shows the stall; the latency
 * measured from the actual send hides it.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import {parseJson, runCli} from '../helpers/cli.js'

describe('bench open loop', () => {
  let sim: SimCluster
  before(async () => {
    sim = await startSimCluster({})
  })
  after(async () => {
    await sim?.stop()
  })

  it('corrected p99 shows a 1 s stall that the uncorrected p99 hides', async () => {
    const running = runCli(['bench', '--uri', sim.info.uri, '--workload', 'ping', '--rate', '400', '--concurrency', '4', '--duration', '5s', '--json'], {timeoutMs: 60_000})
    // Stall the server for 1 s in the middle of the measured interval.
    const stall = new Promise<void>((resolve, reject) => {
      setTimeout(() => sim.control({kind: 'stall', ms: 1000}).then(resolve, reject), 2500)
    })
    const [run] = await Promise.all([running, stall])
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.equal(r.rate, 400)
    assert.ok(r.ops > 1500, `ops ${r.ops}`)
    assert.ok(r.latencyCorrectedUs.p99 >= 500_000, `corrected p99 ${r.latencyCorrectedUs.p99}µs`)
    assert.ok(r.latencyUs.p99 < 200_000, `uncorrected p99 ${r.latencyUs.p99}µs`)
    assert.ok(r.latencyUs.max >= 500_000, 'the operations caught in the stall still show in max')
    assert.ok(r.scheduleLagUs.max >= 500_000, 'schedule lag shows the backlog')
    // The backlog is worked off after the stall; whatever was left is counted, not dropped.
    assert.equal(r.scheduled, 5 * 400)
    assert.equal(r.ops + r.errors + r.missed, r.scheduled)
  })
})
