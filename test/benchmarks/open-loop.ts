/**
 * npm run bench:open-loop — a benchmark, not a test.
 *
 * How well bench keeps an open-loop schedule: `ping` at 1,000, 5,000 and 10,000 scheduled
 * operations per second against the embedded cluster (its own process, pinned to the other core
 * when there are two), through the whole of runBench (CMAP telemetry, series, server sampling).
 * Prints, per rate, the achieved rate, the schedule lag (how late operations started against
 * their slot: p50, p99, max), missed operations by reason, and the p99 corrected for coordinated
 * omission beside the uncorrected one. Goal (issue 13): schedule lag p99 under 2 ms wherever the
 * client has a free core. Each rate runs once per --workers count (worker threads, the rate split
 * over them; the client process is pinned to one core, so two workers share it).
 *
 * Flags: --rates 1000,5000,10000 --seconds S per rate (10) --cap N in-flight cap (512) --workers 1,2
 */
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../src/bench/config.js'
import {runBench} from '../../src/bench/run-bench.js'
import {startSimCluster} from '../../src/sim/host.js'
import {pinClientAndServer} from './pin.js'
import {resolveTarget} from '../../src/target.js'

const {values} = parseArgs({
  options: {
    rates: {type: 'string', default: '1000,5000,10000'},
    seconds: {type: 'string', default: '10'},
    cap: {type: 'string', default: '512'},
    workers: {type: 'string', default: '1,2'},
  },
})
const rates = values.rates.split(',').map(Number)
const seconds = Number(values.seconds)
const cap = Number(values.cap)
const workerCounts = values.workers.split(',').map(Number)


const ms = (us: number | undefined) => (us === undefined ? '?' : `${(us / 1000).toFixed(2)} ms`)

const sim = await startSimCluster({})
const pinned = pinClientAndServer(sim.info.pid)
const target = await resolveTarget({flagUri: sim.info.uri, connection: {appName: 'pooltool-open-loop', timeoutMs: 10_000}})
try {
  console.log(`bench:open-loop · ping · ${seconds}s per rate · in-flight cap ${cap} · workers ${workerCounts.join(', ')} · ${pinned ? 'client on core 0, server on core 1' : 'not pinned (no taskset or one core)'}`)
  for (const rate of rates) for (const workers of workerCounts) {
    const config = toBenchConfig({
      workload: 'ping', 'doc-size': 0, 'seed-docs': 1, db: 'pooltool_open_loop', keep: false, model: 'pool',
      concurrency: String(cap), rate, duration: seconds * 1000, warmup: 1000, 'sample-interval': 1000, workers,
    })
    const result = await runBench(target, config, {signal: new AbortController().signal})
    const run = result.runs[0]!
    const missed = Object.entries(run.missedByReason).filter(([, n]) => n > 0).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none'
    console.log(
      `rate ${rate}/s, ${workers} worker${workers === 1 ? '' : 's'}: achieved ${run.achievedRatePerSec?.toFixed(0)}/s (${((run.achievedRatePerSec ?? 0) / rate).toFixed(3)} of target) · ` +
        `schedule lag p50 ${ms(run.scheduleLagUs?.p50)}, p99 ${ms(run.scheduleLagUs?.p99)}, max ${ms(run.scheduleLagUs?.max)} · ` +
        `missed ${missed} · p99 corrected ${ms(run.latencyCorrectedUs?.p99)} vs uncorrected ${ms(run.latencyUs.p99)}` +
        `${(run.scheduleLagUs?.p99 ?? Infinity) < 2000 ? '' : ' · lag p99 over the 2 ms goal'}`,
    )
  }
} finally {
  await target.close()
  await sim.stop()
}
