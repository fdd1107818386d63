/**
 * The time series and per-operation latency of `bench`, through the built CLI
 * and the real driver against the embedded cluster: every operation in
 * exactly one interval, per-interval percentiles, pool and server gauges,
 * the CSV beside the JSON, per-operation histograms of a mixed workload. The JSON runs and the first
 * refusal are spawned (the real process, exit 0 and 2); the text run and the second refusal go through
 * this process (test/helpers/in-process.ts, the path bin/run.js takes).
 */
import assert from 'node:assert/strict'
import {mkdtemp, readdir, readFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {before, describe, it} from 'node:test'

import {decodeHistogram} from '../../src/metrics/histograms.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

describe('bench --series-interval / --csv', () => {
  const cluster = useCluster({latencyMs: 2})
  let dir: string
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pooltool-series-'))
  })

  it('writes runs[].series whose ops add up to the run, and the same series as CSV', async () => {
    const csv = path.join(dir, 'series.csv')
    const run = await runCli(
      ['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--concurrency', '1,4', '--duration', '1200ms', '--series-interval', '250ms', '--sample-interval', '100ms', '--csv', csv, '--json'],
      {timeoutMs: 60_000},
    )
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.config.seriesIntervalMS, 250)
    const host = result.cluster.hosts[0].host
    for (const r of result.runs) {
      // 1200 ms in 250 ms intervals: four whole ones and a last one of 200 ms.
      assert.deepEqual(r.series.map((p: any) => p.tMS), [0, 250, 500, 750, 1000])
      assert.deepEqual(r.series.map((p: any) => p.durationMS), [250, 250, 250, 250, 200])
      assert.equal(sum(r.series.map((p: any) => p.ops)), r.ops)
      assert.equal(sum(r.series.map((p: any) => p.errors)), r.errors)
      // (A loaded machine may stall a whole interval: most, not all, intervals complete operations.)
      assert.ok(r.series.filter((p: any) => p.ops > 0).length >= 3, JSON.stringify(r.series))
      for (const p of r.series) {
        // Each interval's own histogram: within the run's bounds, never above the run's max; absent where nothing completed.
        if (p.ops > 0) assert.ok(p.latencyP50Us >= 2000 && p.latencyMaxUs <= r.latencyUs.max && p.latencyP99Us <= p.latencyMaxUs, JSON.stringify(p))
        else assert.equal(p.latencyP99Us, undefined)
        assert.ok(p.poolTotal >= 1 && p.poolInUse <= p.poolTotal, JSON.stringify(p))
        assert.ok(p.serverConnections[host] >= 1, JSON.stringify(p))
      }
      // Some checkout ended in the run's intervals (absent, never 0, where none did).
      assert.ok(r.series.some((p: any) => p.checkoutWaitP99Us !== undefined))
    }
    const lines = (await readFile(csv, 'utf8')).trimEnd().split('\n')
    const header = lines[0]!.split(',')
    assert.deepEqual(header.slice(0, 8), ['runIndex', 'model', 'concurrency', 'maxPoolSize', 'rate', 'tMS', 'durationMS', 'ops'])
    assert.ok(header.includes(`connections:${host}`), lines[0])
    assert.equal(lines.length, 1 + sum(result.runs.map((r: any) => r.series.length)))
    const opsColumn = header.indexOf('ops')
    for (const [index, r] of result.runs.entries()) {
      const rows = lines.slice(1).map((line) => line.split(',')).filter((fields) => fields[0] === String(index))
      assert.equal(sum(rows.map((fields) => Number(fields[opsColumn]))), r.ops)
    }
    assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith('.tmp')), [], 'written atomically: no temp file left')
  })

  it('keeps one latency histogram per operation of a mixed workload, adding up to ops', async () => {
    const run = await runCli(
      ['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'mixed', '--mix', 'find=70,update=30', '--seed-docs', '100', '--concurrency', '4', '--duration', '1s', '--json'],
      {timeoutMs: 60_000},
    )
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.deepEqual(Object.keys(r.latencyByOpUs).sort(), ['find', 'update'])
    assert.equal(r.latencyByOpUs.find.count + r.latencyByOpUs.update.count, r.ops)
    assert.ok(r.latencyByOpUs.find.count > r.latencyByOpUs.update.count, JSON.stringify(r.latencyByOpUs))
    // Encoded beside the summaries, so segments merge exactly.
    for (const name of ['find', 'update']) assert.equal(decodeHistogram(r.histograms.latencyByOpUs[name]).totalCount, r.latencyByOpUs[name].count)
    const text = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'mixed', '--mix', 'find=50,insert=50', '--duration', '500ms'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /Latency per operation/)
    assert.match(text.stdout, /: find [\d,]+ ops · p50 /)
    assert.match(text.stdout, /: insert [\d,]+ ops · p50 /)
  })

  it('refuses a --series-interval below 10ms and a --csv it must not write, before any load', async () => {
    const short = await runCli(['bench', '--duration', '1s', '--series-interval', '5ms'])
    assert.equal(short.code, 2, short.stderr)
    assert.match(short.stderr, /--series-interval 5ms is too short/)
    const device = await runInProcess(['bench', '--duration', '1s', '--csv', '/dev/null'])
    assert.equal(device.code, 2, device.stderr)
    assert.match(device.stderr, /--csv \/dev\/null is a device/)
    assert.doesNotMatch(device.stderr, /embedded simulated/)
  })
})
