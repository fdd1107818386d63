/**
 * What the engine spends per operation, for `node --cpu-prof` (issue 28: profile before changing code).
 * findOne by _id at --concurrency (64) against the embedded cluster (pinned to the other core), for
 * --seconds, through either side of bench:overhead: `--side bare` (the bare driver loop) or
 * `--side engine` (runBench). Run each under the profiler and compare the two profiles with
 * summarize-profile.ts:
 *
 *   node --cpu-prof --cpu-prof-dir test-output/prof/bare --import tsx test/benchmarks/profile-find.ts --side bare
 *   node --cpu-prof --cpu-prof-dir test-output/prof/engine --import tsx test/benchmarks/profile-find.ts --side engine
 *   node --import tsx test/benchmarks/summarize-profile.ts test-output/prof/bare/*.cpuprofile test-output/prof/engine/*.cpuprofile
 */
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../dist/src/bench/config.js'
import {runBench} from '../../dist/src/bench/run-bench.js'
import {createRandom} from '../../dist/src/bench/workloads.js'
import {MongoClient} from '../../dist/src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
import {resolveTarget} from '../../dist/src/target.js'
import {cpuMicros} from './paired.js'
import {pinClientAndServer} from './pin.js'

const {values} = parseArgs({options: {side: {type: 'string', default: 'engine'}, concurrency: {type: 'string', default: '64'}, seconds: {type: 'string', default: '10'}}})
const concurrency = Number(values.concurrency)
const seconds = Number(values.seconds)
const SEED_DOCS = 1000

const sim = await startSimCluster({})
pinClientAndServer(sim.info.pid)
const client = new MongoClient(sim.info.uri)
try {
  await client.connect()
  let ops = 0
  const cpu = process.cpuUsage()
  if (values.side === 'bare') {
    await client.db('pooltool_profile_bare').collection('bench').insertMany(Array.from({length: SEED_DOCS}, (_, i) => ({_id: i as never, payload: 'x'.repeat(256)})))
    const collection = client.db('pooltool_profile_bare').collection('bench')
    const random = createRandom()
    const end = performance.now() + seconds * 1000
    await Promise.all(
      Array.from({length: concurrency}, async () => {
        while (performance.now() < end) {
          await collection.findOne({_id: Math.floor(random() * SEED_DOCS)} as never)
          ops++
        }
      }),
    )
  } else {
    const target = await resolveTarget({flagUri: sim.info.uri, connection: {appName: 'pooltool-profile', timeoutMs: 10_000}})
    const config = toBenchConfig({
      workload: 'find', 'doc-size': 256, 'seed-docs': SEED_DOCS, db: 'pooltool_profile', keep: false, model: 'pool',
      concurrency: String(concurrency), duration: seconds * 1000, warmup: 0, 'sample-interval': 250, workers: 1,
    })
    const result = await runBench(target, config, {signal: new AbortController().signal})
    ops = result.runs[0]!.ops
    await target.close()
  }
  console.log(`${values.side}: ${ops} ops in ${seconds}s, ${(cpuMicros(process.cpuUsage(cpu)) / ops).toFixed(1)} µs CPU/op (set-up included)`)
} finally {
  await client.db('pooltool_profile_bare').dropDatabase().catch(() => undefined)
  await client.close()
  await sim.stop()
}
