/**
 * What an open-loop run spends, for `node --cpu-prof` (issue 28: profile before changing code). `ping` (or, with
 * `--op find`, findOne by _id over 1000 seeded documents, as bench:overhead) at
 * --rate (1000) scheduled operations per second, in-flight cap --cap (512), against the embedded cluster
 * (pinned to the other core), for --seconds, through either side of bench:open-loop: `--side bare` (the
 * bare driver loop with its 1 ms ticker) or `--side engine` (runBench). Prints the schedule lag it saw.
 *
 *   node --cpu-prof --cpu-prof-dir test-output/prof/ol-bare --import tsx test/benchmarks/profile-open-loop.ts --side bare
 *   node --cpu-prof --cpu-prof-dir test-output/prof/ol-engine --import tsx test/benchmarks/profile-open-loop.ts --side engine
 *   node --import tsx test/benchmarks/summarize-profile.ts test-output/prof/ol-bare/*.cpuprofile test-output/prof/ol-engine/*.cpuprofile
 */
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../dist/src/bench/config.js'
import {runBench} from '../../dist/src/bench/run-bench.js'
import {createRandom} from '../../dist/src/bench/workloads.js'
import {createHistogram, percentileUs, recordMs} from '../../dist/src/metrics/histograms.js'
import {MongoClient} from '../../dist/src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
import {resolveTarget} from '../../dist/src/target.js'
import {cpuMicros} from './paired.js'
import {pinClientAndServer} from './pin.js'

const {values} = parseArgs({options: {side: {type: 'string', default: 'engine'}, op: {type: 'string', default: 'ping'}, 'sample-interval': {type: 'string', default: '1000'}, rate: {type: 'string', default: '1000'}, cap: {type: 'string', default: '512'}, seconds: {type: 'string', default: '10'}}})
if (values.op !== 'ping' && values.op !== 'find') throw new Error(`--op ping|find, not ${values.op}`)
/** find: findOne by _id over SEED_DOCS seeded documents, as bench:overhead's sides. */
const SEED_DOCS = 1000
const rate = Number(values.rate)
const cap = Number(values.cap)
const seconds = Number(values.seconds)

const sim = await startSimCluster({})
pinClientAndServer(sim.info.pid)
try {
  const cpu = process.cpuUsage()
  let line: string
  if (values.side === 'bare') {
    // The bare loop of open-loop.ts, without its warm-up split: a 1 ms ticker starting every due slot.
    const client = new MongoClient(sim.info.uri, {maxPoolSize: cap})
    await client.connect()
    const admin = client.db('admin')
    const collection = client.db('pooltool_profile_bare').collection<{_id: number; payload: string}>('bench')
    if (values.op === 'find') await collection.insertMany(Array.from({length: SEED_DOCS}, (_, i) => ({_id: i, payload: 'x'.repeat(256)})))
    const random = createRandom()
    const operation = values.op === 'find' ? () => collection.findOne({_id: Math.floor(random() * SEED_DOCS)}) : () => admin.command({ping: 1})
    const lag = createHistogram()
    const start = performance.now()
    const slots = Math.floor(seconds * rate)
    const dueAt = (slot: number) => start + (slot * 1000) / rate
    let next = 0
    let inFlight = 0
    let done = 0
    await new Promise<void>((resolve) => {
      const startDue = (): void => {
        const now = performance.now()
        while (next < slots && inFlight < cap && dueAt(next) <= now) {
          recordMs(lag, now - dueAt(next))
          next += 1
          inFlight += 1
          void operation().finally(() => {
            inFlight -= 1
            done += 1
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
    await client.close()
    line = `bare: ${done} ops, lag p50 ${percentileUs(lag, 50)} µs p99 ${percentileUs(lag, 99)} µs max ${lag.maxValue} µs`
  } else {
    const target = await resolveTarget({flagUri: sim.info.uri, connection: {appName: 'pooltool-profile', timeoutMs: 10_000}})
    const config = toBenchConfig({
      workload: values.op, 'doc-size': values.op === 'find' ? 256 : 0, 'seed-docs': values.op === 'find' ? SEED_DOCS : 1, db: 'pooltool_profile_open_loop', keep: false, model: 'pool',
      concurrency: String(cap), rate, duration: seconds * 1000, warmup: 0, 'sample-interval': Number(values['sample-interval']), workers: 1,
    })
    const run = (await runBench(target, config, {signal: new AbortController().signal})).runs[0]!
    await target.close()
    line = `engine: ${run.ops} ops, ${run.missed} missed, lag p50 ${run.scheduleLagUs?.p50} µs p99 ${run.scheduleLagUs?.p99} µs max ${run.scheduleLagUs?.max} µs`
  }
  console.log(`${line}, ${(cpuMicros(process.cpuUsage(cpu)) / (seconds * rate)).toFixed(1)} µs CPU per scheduled op (set-up included)`)
} finally {
  await sim.stop()
}
