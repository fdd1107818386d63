/**
 * Honest counts on a real run: an open loop asked for more than its in-flight
 * cap can carry (one operation at a time against a 5 ms server) accounts for
 * every scheduled operation (completed, failed or missed) and says that the
 * rate was not delivered, naming the cap, in the JSON and in the text report.
 * Both runs go through this process (test/helpers/in-process.ts, the path bin/run.js takes) against one
 * embedded cluster shared by the block (what --sim-latency 5ms started per run): a process start and a
 * cluster fork per case cost ~1 CPU-s; bench's real process is proven in test/cli/bench.test.ts.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const RATE = 400
const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0)

describe('bench open loop: honest counts', () => {
  // A 5 ms server, as --sim-latency 5ms.
  const cluster = useCluster({latencyMs: 5})

  it('--json: scheduled = ops + errors + missed, and rateShortfall names the in-flight cap', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--rate', String(RATE), '--concurrency', '1', '--duration', '2s', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    // 2 s at 400/s: 800 slots, of which one 5 ms operation at a time can start at most ~400.
    assert.equal(r.scheduled, 2 * RATE)
    assert.equal(r.ops + r.errors + r.missed, r.scheduled, JSON.stringify({ops: r.ops, errors: r.errors, missed: r.missed}))
    assert.equal(r.errors, sum(r.errorsByClass))
    assert.equal(r.missed, sum(r.missedByReason))
    assert.ok(r.missedByReason.inFlightCapFull > 0, JSON.stringify(r.missedByReason))
    assert.equal(r.aborted, 0)
    assert.ok(r.ops > 0, `ops ${r.ops}`)
    // Missed operations waited too: they are in the corrected latency.
    assert.equal(r.latencyCorrectedUs.count, r.ops + r.missed)
    // First come, first served: the missed are the last `missed` slots, so the earliest of them waited at least missed / rate.
    assert.ok(r.latencyCorrectedUs.max >= 0.999 * (r.missed / RATE) * 1_000_000, `corrected max ${r.latencyCorrectedUs.max}µs for ${r.missed} missed`)
    for (const summary of [r.latencyUs, r.latencyCorrectedUs]) assert.ok(summary.p999 <= summary.max && summary.p99 <= summary.max, `percentiles within max: ${JSON.stringify(summary)}`)
    assert.ok(r.achievedRatePerSec < 0.99 * RATE, `achieved ${r.achievedRatePerSec}`)
    assert.equal(r.rateShortfall.targetPerSec, RATE)
    assert.equal(r.rateShortfall.achievedPerSec, r.achievedRatePerSec)
    assert.equal(r.rateShortfall.inFlightCap, 1)
    assert.match(r.rateShortfall.message, new RegExp(`^achieved [\\d,]+ of ${RATE} ops/s: the in-flight cap --concurrency 1 was full; raise it \\(${RATE} ops/s at a mean latency of [\\d.]+ms keep about \\d+ in flight\\)$`))
  })

  it('text: a warning line names the cap, beside the accounting', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--rate', String(RATE), '--concurrency', '1', '--duration', '1s'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, new RegExp(`scheduled ${RATE} = [\\d,]+ ops \\+ \\d+ errors \\+ [\\d,]+ missed \\(in-flight cap full [\\d,]+`))
    assert.match(run.stdout, new RegExp(`warning: achieved [\\d,]+ of ${RATE} ops/s: the in-flight cap --concurrency 1 was full; raise it`))
  })
})
