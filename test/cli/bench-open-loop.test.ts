/**
 * Coordinated omission on a real run: with --rate and a 1 s server stall, the
 * latency measured from the scheduled start shows the stall; the latency
 * measured from the actual send hides it (only the operations in flight when
 * the stall began waited it out). The run goes through this process (test/helpers/in-process.ts, the
 * path bin/run.js takes; a process start cost ~1 CPU-s), the stall sent while it runs.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import {decodeHistogram, type Histogram} from '../../src/metrics/histograms.js'
import type {MongoClient} from '../../src/mongo/driver.js'
import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer} from '../helpers/faults.js'
import {runInProcess} from '../helpers/in-process.js'
import {waitForState} from '../helpers/sim.js'

const RATE = 400
const IN_FLIGHT_CAP = 4
const STALL_MS = 1000

/** How many recorded values are at most `n` at or above `value`: the value n places below the top lies under it. */
const atMostAtOrAbove = (histogram: Histogram, n: number, value: number) =>
  histogram.totalCount <= n || histogram.getValueAtPercentile((100 * (histogram.totalCount - n)) / histogram.totalCount) < value

describe('bench open loop', () => {
  const cluster = useCluster({})
  let watcher: MongoClient
  before(() => {
    watcher = observer(cluster.uri)
  })
  after(async () => {
    await watcher?.close()
  })

  it('corrected latency shows a 1 s stall that the uncorrected latency hides', async () => {
    const commands = async () => Number((await watcher.db('admin').command({serverStatus: 1})).opcounters.command)
    const before = await commands()
    const running = runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--rate', String(RATE), '--concurrency', String(IN_FLIGHT_CAP), '--duration', '5s', '--json'])
    // Stall the server once the measured run is well under way (about a second of its pings seen).
    await waitForState('bench pinging at its rate', commands, (n) => n >= before + RATE)
    await cluster.sim.control({kind: 'stall', ms: STALL_MS})
    const run = await running
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.equal(r.rate, RATE)
    assert.ok(r.ops > 0, `ops ${r.ops}`)
    assert.ok(r.latencyCorrectedUs.p99 >= 500_000, `corrected p99 ${r.latencyCorrectedUs.p99}µs`)
    // Uncorrected: only the sends in flight when the stall began (at most the in-flight cap) waited half of it or more.
    const uncorrected = decodeHistogram(r.histograms.latencyUs)
    assert.ok(atMostAtOrAbove(uncorrected, IN_FLIGHT_CAP, (STALL_MS / 2) * 1000), `more than ${IN_FLIGHT_CAP} uncorrected latencies ≥ ${STALL_MS / 2} ms (p99 ${r.latencyUs.p99}µs)`)
    assert.ok(r.latencyUs.p99 < r.latencyCorrectedUs.p99, `uncorrected p99 ${r.latencyUs.p99}µs hides what the corrected ${r.latencyCorrectedUs.p99}µs shows`)
    assert.ok(r.latencyUs.max >= 500_000, 'the operations caught in the stall still show in max')
    assert.ok(r.scheduleLagUs.max >= 500_000, 'schedule lag shows the backlog')
    // The backlog is worked off after the stall; whatever was left is counted, not dropped.
    assert.equal(r.scheduled, 5 * RATE)
    assert.equal(r.ops + r.errors + r.missed, r.scheduled, JSON.stringify({ops: r.ops, errors: r.errors, missed: r.missed}))
  })
})
