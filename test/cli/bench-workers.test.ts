/**
 * `bench --workers`: the load on worker threads, each with its own clients, merged into one run
 * whose counts and histograms add up exactly; a stop request stops every worker and cleans up.
 * The runs are in this process (test/helpers/in-process.ts, the path bin/run.js takes; a process
 * start per case cost ~1 CPU-s), except the stop request: a real SIGINT to a spawned process.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson, runCli} from '../helpers/cli.js'
import {useClusterClient} from '../helpers/cluster.js'
import {sum} from '../helpers/faults.js'
import {runInProcess} from '../helpers/in-process.js'
import {waitForState} from '../helpers/sim.js'

describe('bench --workers', {timeout: 120_000}, () => {
  const cluster = useClusterClient({})
  const bench = (...args: string[]) => runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'find', '--seed-docs', '50', ...args, '--json'])

  it('closed loop: the concurrency split over the threads, each with its own pool, merged exactly', async () => {
    // A count, split 100/100/100, not a duration: every worker has its share however loaded the machine.
    const run = await bench('--workers', '3', '--concurrency', '8', '--ops', '300', '--series-interval', '200ms')
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.config.workers, 3)
    const [r] = result.runs
    assert.equal(r.concurrency, 8)
    assert.equal(r.workers.count, 3)
    assert.deepEqual(r.workers.perWorker.map((w: any) => [w.index, w.concurrency]), [[0, 3], [1, 3], [2, 2]])
    assert.equal(r.ops, sum(Object.fromEntries(r.workers.perWorker.map((w: any) => [w.index, w.ops]))), 'the run is the workers added up')
    assert.equal(r.ops + r.errors, 300)
    assert.deepEqual(r.workers.perWorker.map((w: any) => w.ops + w.errors), [100, 100, 100], 'each worker its share of --ops')
    assert.ok(r.workers.perWorker.every((w: any) => w.poolCreated >= 1), 'every worker drove load through its own pool')
    assert.equal(r.latencyUs.count, r.ops, 'one latency per completed operation, from the merged histograms')
    assert.equal(sum(Object.fromEntries(r.series.map((s: any, i: number) => [i, s.ops]))), r.ops, 'the merged series adds up to the run')
    assert.equal(r.pool.created, sum(Object.fromEntries(r.workers.perWorker.map((w: any) => [w.index, w.poolCreated]))))
    assert.ok(r.pool.peakInUse <= 8)
    assert.equal(result.cleanedUp, true)
  })

  it('open loop: each worker takes its share of the rate, and every scheduled operation is accounted for', async () => {
    const run = await bench('--workers', '2', '--rate', '300', '--concurrency', '16', '--duration', '1s')
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.deepEqual(r.workers.perWorker.map((w: any) => w.rate), [150, 150])
    assert.equal(r.scheduled, 300, '300/s × 1 s, split and interleaved, none lost or doubled')
    assert.equal(r.scheduled, r.ops + r.errors + r.missed)
    assert.equal(r.latencyCorrectedUs.count, r.ops + r.missed)
  })

  it('a stop request stops every worker: partial result, namespace dropped, exit 130', async () => {
    const queries = async () => Number((await cluster.client.db('admin').command({serverStatus: 1})).opcounters.query)
    const before = await queries()
    // Spawned: a real SIGINT to the process.
    const run = await runCli(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'find', '--seed-docs', '50', '--workers', '2', '--concurrency', '4', '--duration', '60s', '--json'], {
      timeoutMs: 60_000,
      onSpawn: (child) => {
        void waitForState('both workers measuring', queries, (n) => n >= before + 200).then(() => child.kill('SIGINT'))
      },
    })
    assert.equal(run.code, 130, run.stderr)
    const result = parseJson(run)
    assert.equal(result.interrupted, true)
    assert.ok(result.runs[0].ops > 0)
    assert.equal(result.cleanedUp, true, `${JSON.stringify(result.namespace)}\n${run.stderr}`)
  })

  it('refuses what cannot be split', async () => {
    for (const [args, message] of [
      [['--workers', '2', '--model', 'single'], /--model single cannot be split over workers/],
      [['--workers', '4', '--concurrency', '2'], /--concurrency 2 cannot be split over 4 workers/],
    ] as const) {
      const run = await runInProcess(['bench', '--uri', cluster.uri, ...args])
      assert.equal(run.code, 2, run.stderr)
      assert.match(run.stderr, message)
    }
  })
})
