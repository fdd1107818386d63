/**
 * `pooltool report merge`, `report compare` and `report hgrm` on real bench results: the
 * built CLI runs bench against the embedded cluster first (short runs), then
 * merges and compares the files it wrote. The benches and most report runs go through
 * test/helpers/in-process.ts (the path bin/run.js takes, in this process); one spawned run per
 * command and exit code stays, each marked, to prove the real process: merge, compare and hgrm
 * succeeding (exit 0) and compare's failed gate (exit 8). Their usage errors (exit 2) run in this
 * process: each report command's exit 2 in a real process is proven in report-hostile-files.test.ts.
 */
import assert from 'node:assert/strict'
import {mkdtemp, readFile, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {before, describe, it} from 'node:test'

import type {BenchResult} from '../../src/bench/types.js'
import {decodeHistogram, mergeHistograms, summarize} from '../../src/metrics/histograms.js'
import type {CompareResult, MergedBenchResult} from '../../src/report/types.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'

describe('report merge and compare', () => {
  let dir: string
  const file = (name: string) => path.join(dir, name)
  const read = async <T = BenchResult>(name: string) => JSON.parse(await readFile(file(name), 'utf8')) as T

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pooltool-report-'))
    const bench = async (out: string, extra: string[] = []) => {
      // Inputs only (this file tests report): in-process, one after another as before. A short fixed warm-up, not 0s:
      // the gate below needs seg0's p50 from a warmed pool and JIT (with --warmup 0s at load 15, a cold seg0 had a
      // p50 of 45 ms and the file 50 ms per operation slower was within noise), and not auto (5–30 s per run).
      const run = await runInProcess(['bench', '--duration', '1s', '--warmup', '500ms', '--concurrency', '4', '--out', file(out), ...extra])
      assert.equal(run.code, 0, run.stderr)
    }
    for (const name of ['seg0.json', 'seg1.json', 'seg2.json']) await bench(name)
    // The same configuration against a server 50 ms slower per operation: a regression far beyond a loaded machine's noise.
    await bench('slow.json', ['--sim-latency', '50ms'])
  })

  it('merges 3 segment files exactly: percentiles of the added histograms, counts summed', async () => {
    // Spawned: report merge's success (exit 0) in the real process.
    const run = await runCli(['report', 'merge', file('seg0.json'), file('seg1.json'), file('seg2.json'), '--out', file('total.json')])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /3 segments/)
    const segments = await Promise.all(['seg0.json', 'seg1.json', 'seg2.json'].map((name) => read(name)))
    const merged = await read<MergedBenchResult>('total.json')
    const runs = segments.map((result) => result.runs[0]!)
    const one = summarize(mergeHistograms(runs.map((r) => decodeHistogram(r.histograms.latencyUs))))
    const total = merged.runs[0]!
    // A decoded histogram knows its largest value only to its bucket; no percentile lies above the exact one.
    const exactMax = Math.max(...runs.map((r) => r.latencyUs.max))
    for (const key of ['p50', 'p90', 'p99', 'p999'] as const) assert.equal(total.latencyUs[key], Math.min(one[key], exactMax), key)
    assert.equal(total.latencyUs.count, one.count)
    assert.equal(total.latencyUs.max, exactMax, 'the exact largest value recorded')
    assert.equal(total.ops, runs.reduce((sum, r) => sum + r.ops, 0))
    assert.equal(total.pool.created, runs.reduce((sum, r) => sum + r.pool.created, 0))
    assert.equal(total.segments, 3)
    assert.equal(total.serverBySegment.length, 3)
  })

  it('merges a merged file again', async () => {
    const run = await runInProcess(['report', 'merge', file('total.json'), file('seg0.json'), '--json'])
    assert.equal(run.code, 0, run.stderr)
    const again = parseJson<MergedBenchResult>(run)
    const total = await read<MergedBenchResult>('total.json')
    const seg0 = await read('seg0.json')
    assert.equal(again.segments, 4)
    assert.equal(again.runs[0]!.segments, 4)
    assert.equal(again.runs[0]!.ops, total.runs[0]!.ops + seg0.runs[0]!.ops)
    assert.equal(again.runs[0]!.latencyUs.count, total.runs[0]!.latencyUs.count + seg0.runs[0]!.latencyUs.count)
  })

  it('compares a file with itself: all 1.00, and any ratio gate passes', async () => {
    const gates = 'p99Ratio>1.0,p50Ratio>1.0,p999Ratio>1.0,opsPerSecRatio<1.0,checkoutWaitP99Ratio>1.0,connectionsCreatedRatio>1.0'
    // Spawned: report compare's success (exit 0) in the real process.
    const run = await runCli(['report', 'compare', file('seg0.json'), file('seg0.json'), '--fail-on', gates])
    assert.equal(run.code, 0, run.stdout + run.stderr)
    assert.equal(run.stdout.match(/^✓ /gm)?.length, 6)
    assert.doesNotMatch(run.stdout, /^✗/m)
    const json = parseJson<CompareResult>(await runInProcess(['report', 'compare', file('seg0.json'), file('seg0.json'), '--json']))
    for (const [name, metric] of Object.entries(json.runs[0]!.metrics)) assert.equal(metric.ratio, 1, name)
  })

  it('a file with injected latency is another configuration: refused without --pair; paired, it fails the latency gate with exit 8 and one ✗ line', async () => {
    // Spawned: report compare's failed gate (exit 8) in the real process, while the usage error (exit 2) runs in this one.
    const [refused, run] = await Promise.all([
      runInProcess(['report', 'compare', file('seg0.json'), file('slow.json'), '--fail-on', 'p50Ratio>1.10']),
      runCli(['report', 'compare', file('seg0.json'), file('slow.json'), '--pair', 'sim-latency', '--fail-on', 'p50Ratio>1.10,opsPerSecRatio<0.001']),
    ])
    assert.equal(refused.code, 2, refused.stdout + refused.stderr)
    assert.match(refused.stderr.trim(), /different configurations: sim-latency 0ms → 50ms \(hint: .*--pair sim-latency\)$/)
    assert.equal(run.code, 8, run.stdout + run.stderr)
    assert.match(run.stdout, /^✗ p50Ratio>1\.10 \(pool c=4: \d+\.\d\d \[\d+\.\d\d–(\d+\.\d\d|∞)\]\)$/m)
    assert.match(run.stdout, /^✓ opsPerSecRatio<0\.001$/m)
  })

  it('report hgrm: the run\'s own histogram as HdrHistogram\'s percentile distribution, in ms; to a file with --out', async () => {
    const result = await read('seg0.json')
    const latency = result.runs[0]!.latencyUs
    // Spawned: report hgrm's success (exit 0) in the real process, while its usage error (exit 2) runs in this one.
    const [run, closedLoop] = await Promise.all([runCli(['report', 'hgrm', file('seg0.json')]), runInProcess(['report', 'hgrm', file('seg0.json'), '--histogram', 'corrected'])])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^ +Value +Percentile +TotalCount 1\/\(1-Percentile\)$/m)
    const rows = [...run.stdout.matchAll(/^ +([\d.]+) +([\d.]+) +(\d+)/gm)].map((m) => ({valueMs: Number(m[1]), percentile: Number(m[2]), count: Number(m[3])}))
    assert.equal(rows.at(-1)!.count, latency.count, 'every recorded value')
    assert.equal(rows.at(-1)!.percentile, 1)
    // The median row: the first at or past 50 %, within HDR's 3 significant digits of latencyUs.p50.
    const median = rows.find((row) => row.percentile >= 0.5)!
    assert.ok(Math.abs(median.valueMs * 1000 - latency.p50) <= latency.p50 * 0.002 + 1, `p50 ${median.valueMs} ms vs ${latency.p50} µs`)
    assert.match(run.stdout, new RegExp(`#\\[Max += +[\\d.]+, Total count += +${latency.count}\\]`))

    const out = await runInProcess(['report', 'hgrm', file('seg0.json'), '--out', file('seg0.hgrm')])
    assert.equal(out.code, 0, out.stderr)
    assert.equal(await readFile(file('seg0.hgrm'), 'utf8'), run.stdout)
    assert.equal(closedLoop.code, 2)
    assert.match(closedLoop.stderr, /^Error \[USAGE\]: .* has no corrected histogram \(hint: this run has: latency/)
  })

  it('refuses a file that is not a bench result: one line naming the file and field, exit 2', async () => {
    await writeFile(file('other.json'), JSON.stringify({runs: [], notes: []}))
    // report merge's usage error (exit 2) in a real process: report-hostile-files.test.ts.
    const run = await runInProcess(['report', 'merge', file('seg0.json'), file('other.json')])
    assert.equal(run.code, 2)
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
    assert.match(run.stderr, /other\.json: config is missing: not a pooltool bench result/)
    const missing = await runInProcess(['report', 'compare', file('seg0.json'), file('nope.json')])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /nope\.json does not exist/)
  })
})
