/**
 * npm run bench:open-loop — a benchmark, not a test.
 *
 * How well bench keeps an open-loop schedule: `ping` at 1,000, 5,000 and 10,000 scheduled
 * operations per second against the embedded cluster (its own process, pinned to the other core
 * when there are two), through the whole of runBench (CMAP telemetry, series, server sampling).
 * Prints, per rate, the achieved rate, the schedule lag (how late operations started against
 * their slot: p50, p99, max), missed operations by reason, and the p99 corrected for coordinated
 * omission beside the uncorrected one. Goal: schedule lag p99 under 2 ms wherever the
 * client has a free core. Each rate runs once per --workers count (worker threads, the rate split
 * over them; the client process is pinned to one core, so two workers share it).
 *
 * Beside them, per rate, a bare loop over the official driver keeps the same schedule (a 1 ms
 * ticker starting every slot that is due, the same in-flight cap) and its lag is measured the same
 * way: the floor any scheduler on this driver and runtime has. The driver leaves tens of KB of
 * garbage per operation, so V8 pauses for a young-generation collection a few times a second;
 * a slot that falls due in a pause starts late, in pooltool and in the bare loop alike.
 *
 * Flags: --rates 1000,5000,10000 --seconds S per rate (10) --cap N in-flight cap (512) --workers 1,2
 */
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../src/bench/config.js'
import {runBench} from '../../src/bench/run-bench.js'
import {createHistogram, percentileUs, recordMs} from '../../src/metrics/histograms.js'
import {MongoClient} from '../../src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
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

const WARMUP_MS = 1000

/**
 * The bare driver keeping an open-loop schedule: slot i due at start + i / rate, a 1 ms ticker
 * starting every due slot while fewer than `cap` are in flight (a slot over the cap waits for the
 * next completion). Lag: start minus due time, of the slots due after the warm-up.
 */
async function bareOpenLoop(uri: string, rate: number): Promise<{lagP50Us: number; lagP99Us: number; lagMaxUs: number; achievedPerSec: number}> {
  const client = new MongoClient(uri, {maxPoolSize: cap, appName: 'pooltool-open-loop-bare'})
  await client.connect()
  const admin = client.db('admin')
  const lag = createHistogram()
  const start = performance.now()
  const dueAt = (slot: number) => start + (slot * 1000) / rate
  const slots = Math.floor(((WARMUP_MS + seconds * 1000) * rate) / 1000)
  let next = 0
  let inFlight = 0
  let measuredDone = 0
  await new Promise<void>((resolve) => {
    const startDue = (): void => {
      const now = performance.now()
      while (next < slots && inFlight < cap && dueAt(next) <= now) {
        const due = dueAt(next)
        const measured = due - start >= WARMUP_MS
        if (measured) recordMs(lag, now - due)
        next += 1
        inFlight += 1
        void admin.command({ping: 1}).finally(() => {
          inFlight -= 1
          if (measured) measuredDone += 1
          if (next >= slots && inFlight === 0) resolve()
          else startDue()
        })
      }
    }
    const tick = (): void => {
      startDue()
      if (next < slots) setTimeout(tick, 1)
    }
    tick()
  })
  const elapsedMs = performance.now() - start - WARMUP_MS
  await client.close()
  return {lagP50Us: percentileUs(lag, 50), lagP99Us: percentileUs(lag, 99), lagMaxUs: lag.maxValue, achievedPerSec: (measuredDone * 1000) / elapsedMs}
}

const sim = await startSimCluster({})
const pinned = pinClientAndServer(sim.info.pid)
const target = await resolveTarget({flagUri: sim.info.uri, connection: {appName: 'pooltool-open-loop', timeoutMs: 10_000}})
try {
  console.log(`bench:open-loop · ping · ${seconds}s per rate · in-flight cap ${cap} · workers ${workerCounts.join(', ')} · ${pinned ? 'client on core 0, server on core 1' : 'not pinned (no taskset or one core)'}`)
  for (const rate of rates) {
    const bare = await bareOpenLoop(sim.info.uri, rate)
    console.log(
      `rate ${rate}/s, bare driver loop: achieved ${bare.achievedPerSec.toFixed(0)}/s (${(bare.achievedPerSec / rate).toFixed(3)} of target) · ` +
        `schedule lag p50 ${ms(bare.lagP50Us)}, p99 ${ms(bare.lagP99Us)}, max ${ms(bare.lagMaxUs)}`,
    )
    for (const workers of workerCounts) {
      const config = toBenchConfig({
        workload: 'ping', 'doc-size': 0, 'seed-docs': 1, db: 'pooltool_open_loop', keep: false, model: 'pool',
        concurrency: String(cap), rate, duration: seconds * 1000, warmup: WARMUP_MS, 'sample-interval': 1000, workers,
      })
      const result = await runBench(target, config, {signal: new AbortController().signal})
      const run = result.runs[0]!
      const missed = Object.entries(run.missedByReason).filter(([, n]) => n > 0).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none'
      console.log(
        `rate ${rate}/s, ${workers} worker${workers === 1 ? '' : 's'}: achieved ${run.achievedRatePerSec?.toFixed(0)}/s (${((run.achievedRatePerSec ?? 0) / rate).toFixed(3)} of target) · ` +
          `schedule lag p50 ${ms(run.scheduleLagUs?.p50)}, p99 ${ms(run.scheduleLagUs?.p99)}, max ${ms(run.scheduleLagUs?.max)} · ` +
          `missed ${missed} · p99 corrected ${ms(run.latencyCorrectedUs?.p99)} vs uncorrected ${ms(run.latencyUs.p99)}` +
          ` · lag p99 ${((run.scheduleLagUs?.p99 ?? Number.NaN) / bare.lagP99Us).toFixed(2)} × the bare loop's` +
          `${(run.scheduleLagUs?.p99 ?? Infinity) < 2000 ? '' : ' · over the 2 ms goal'}`,
      )
    }
  }
} finally {
  await target.close()
  await sim.stop()
}
