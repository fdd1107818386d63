/**
 * The seeds' effects, reproduced on the embedded cluster through the built
 * CLI and the real driver: M:1 is capped by one connection, the pool scales
 * up to maxPoolSize, per-op opens a connection per operation. The runs are
 * in this process (test/helpers/in-process.ts, the path bin/run.js takes):
 * what they check is the load and the pool, not the process, and a process
 * start per case cost ~1 CPU-s.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const LATENCY_MS = 5

describe('bench pool models against the embedded cluster', () => {
  const cluster = useCluster({latencyMs: LATENCY_MS})

  it('single is capped near 1/latency; pool scales with maxPoolSize', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--model', 'single,pool', '--concurrency', '8', '--max-pool-size', '2,8', '--duration', '1500ms', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const byLabel = new Map<string, any>(result.runs.map((r: any) => [`${r.model}:${r.maxPoolSize}`, r]))
    const single = byLabel.get('single:1')
    const pool2 = byLabel.get('pool:2')
    const pool8 = byLabel.get('pool:8')
    assert.ok(single && pool2 && pool8, JSON.stringify([...byLabel.keys()]))
    // One connection, one operation at a time, 5 ms each: at most ~200 ops/s.
    assert.ok(single.opsPerSec <= 1000 / LATENCY_MS + 10, `single ${single.opsPerSec} ops/s`)
    assert.equal(single.pool.peakTotal, 1, 'single rides one connection')
    // The pool carries operations side by side: more connections in use at once, more throughput. (About 4x
    // single on an idle machine; a machine short of CPU compresses the ratio, never below what 8 in flight give.)
    assert.equal(single.pool.peakInUse, 1, 'single: one operation at a time')
    assert.ok(pool8.pool.peakInUse > 2, `pool(8) had more connections in use at once than pool(2) can: ${pool8.pool.peakInUse}`)
    assert.ok(pool8.opsPerSec > 1.5 * single.opsPerSec, `pool(8) ${pool8.opsPerSec} vs single ${single.opsPerSec}`)
    assert.ok(pool2.pool.peakTotal <= 2 && pool8.pool.peakTotal <= 8, `peak totals ${pool2.pool.peakTotal} / ${pool8.pool.peakTotal} within maxPoolSize`)
    // Waiting for one of 2 connections shows in the checkout wait: 8 workers on 2 connections of a
    // 5 ms server wait about 3 operations' time for one; on pooltool's clock, not rounded to a millisecond.
    assert.ok(pool2.checkoutWaitUs.p50 > pool8.checkoutWaitUs.p50, `checkout p50 ${pool2.checkoutWaitUs.p50} vs ${pool8.checkoutWaitUs.p50}`)
    assert.ok(pool2.checkoutWaitUs.p50 >= LATENCY_MS * 1000, `pool(2) waits at least one operation for a connection: ${pool2.checkoutWaitUs.p50} µs`)
    // Beside the driver's whole milliseconds at the median: the same checkouts agree within the driver's flooring plus a
    // listener's delay, a mispaired one is off by a whole operation; half an operation tells them apart on any machine
    // (the derivation is in test/cluster/bench-pool-telemetry.test.ts).
    assert.ok(Math.abs(pool2.checkoutWaitUs.p50 / 1000 - pool2.checkoutWaitDriverMS.p50) < LATENCY_MS / 2, `own ${pool2.checkoutWaitUs.p50} µs vs driver ${pool2.checkoutWaitDriverMS.p50} ms`)
    assert.ok(result.knee, 'a matrix names its knee')
  })

  it('per-op opens one pooled connection per operation, and the server counts it', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--model', 'per-op', '--ops', '60', '--concurrency', '3', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.equal(r.ops, 60)
    assert.equal(r.pool.created, 60)
    assert.equal(r.pool.clients, 60)
    assert.equal(r.pool.closed.poolClosed, 60)
    // Server side: every pooled connection plus the one monitoring connection of each short-lived client.
    assert.equal(r.server[0].totalCreatedDelta, r.pool.created + r.pool.clients)
  })

  it('fixed spreads over N dedicated connections', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'find', '--model', 'fixed', '--max-pool-size', '3', '--concurrency', '6', '--ops', '120', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.equal(r.maxPoolSize, 3)
    assert.equal(r.pool.clients, 3)
    assert.equal(r.pool.peakTotal, 3)
    assert.equal(r.ops, 120)
  })
})
