/**
 * `bench --stages` through the built CLI and the real driver against the
 * embedded cluster: one run whose concurrency ramps 2 → 8 → 2, reported per
 * stage and over the run; a bad spec is one usage line. Every run goes through this process
 * (test/helpers/in-process.ts, the path bin/run.js takes): a Node start and a CLI load cost ~1 CPU-s
 * each. The real process of each command and exit path is proven elsewhere (bench: test/cli/bench.test.ts,
 * its worker threads: bench-workers.test.ts; report merge and compare: report.test.ts, their exit 2:
 * report-hostile-files.test.ts).
 */
import assert from 'node:assert/strict'
import {mkdtemp, readFile, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, it} from 'node:test'

import {decodeHistogram} from '../../src/metrics/histograms.js'
import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)

describe('bench --stages', () => {
  const cluster = useCluster({latencyMs: 2})

  it('ramps the concurrency in one run: three stages, each with its own figures, adding up to the run', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--stages', '300ms:2,300ms:8,300ms:2', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.deepEqual(result.config.stages, [
      {durationMS: 300, concurrency: 2},
      {durationMS: 300, concurrency: 8},
      {durationMS: 300, concurrency: 2},
    ])
    assert.equal(result.config.durationMS, 900)
    assert.equal(result.runs.length, 1, 'one run, not a matrix')
    const [r] = result.runs
    assert.equal(r.concurrency, 8, 'the run\'s concurrency is its largest stage\'s')
    assert.equal(r.rate, null)
    assert.deepEqual(r.stages.map((s: any) => s.index), [0, 1, 2])
    assert.deepEqual(r.stages.map((s: any) => s.concurrency), [2, 8, 2])
    assert.deepEqual(r.stages.map((s: any) => s.startMS), [0, 300, 600])
    assert.deepEqual(r.stages.map((s: any) => s.durationMS), [300, 300, 300])
    assert.equal(sum(r.stages.map((s: any) => s.ops)), r.ops)
    assert.equal(sum(r.stages.map((s: any) => s.errors)), r.errors)
    for (const stage of r.stages) {
      assert.ok(stage.ops > 0, JSON.stringify(stage))
      assert.equal(stage.scheduled, null)
      assert.equal(stage.latencyCorrectedUs, null)
      assert.equal(stage.latencyUs.count, stage.ops)
      // Each operation waits out the 2 ms service time.
      assert.ok(stage.latencyUs.p50 >= 2000, JSON.stringify(stage.latencyUs))
      assert.equal(decodeHistogram(stage.histograms.latencyUs).totalCount, stage.ops)
    }
    // The load kept up follows the ramp: the first stage never had more than its two in flight, the second had its eight.
    assert.ok(r.stages[0].inFlightPeak <= 2 && r.stages[0].inFlightMean <= 2, JSON.stringify(r.stages[0]))
    assert.equal(r.stages[1].inFlightPeak, 8)
    assert.ok(r.stages[1].inFlightMean > 2, JSON.stringify(r.stages[1]))
    // The pool saw more connections in use at once than the outer stages' two workers could hold: the ramp happened.
    assert.ok(r.pool.peakInUse > 2 && r.pool.peakInUse <= 8, `peak in use ${r.pool.peakInUse}`)
  })

  it('with --workers 2: each worker ramps its share; the stages add up over both', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--stages', '300ms:2,300ms:8,300ms:2', '--workers', '2', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const [r] = parseJson(run).runs
    assert.equal(r.workers.count, 2)
    assert.deepEqual(r.stages.map((s: any) => s.concurrency), [2, 8, 2], 'the shares add up to each stage')
    assert.deepEqual(r.stages.map((s: any) => s.startMS), [0, 300, 600])
    assert.equal(sum(r.stages.map((s: any) => s.ops)), r.ops)
    for (const stage of r.stages) {
      assert.ok(stage.ops > 0, JSON.stringify(stage))
      assert.equal(stage.latencyUs.count, stage.ops, 'the workers\' stage histograms added')
      assert.equal(decodeHistogram(stage.histograms.latencyUs).totalCount, stage.ops)
    }
    // Each worker's peak in the middle stage is its share (4), summed: the ramp happened in both.
    assert.ok(r.stages[0].inFlightPeak <= 2, JSON.stringify(r.stages[0]))
    assert.equal(r.stages[1].inFlightPeak, 8)
    const refused = await runInProcess(['bench', '--uri', cluster.uri, '--stages', '300ms:1,300ms:8', '--workers', '2'])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /^Error \[USAGE\]: --stages: a stage of concurrency 1 cannot be split over 2 workers/)
  })

  it('prints one row per stage under the run', async () => {
    const run = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--stages', '200ms:1,200ms:3'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /in stages 200ms:1,200ms:3/)
    assert.ok(run.stdout.includes('Per stage'), run.stdout)
    const section = run.stdout.slice(run.stdout.indexOf('Per stage'), run.stdout.indexOf('Client pool'))
    const rows = section.split('\n').filter((line) => /│\s*pool c=3\s*│/.test(line))
    assert.equal(rows.length, 2, section)
    assert.match(rows[0]!, /│\s*1\s*│\s*0ms\s*│\s*200ms\s*│\s*1\s*│/)
    assert.match(rows[1]!, /│\s*2\s*│\s*200ms\s*│\s*200ms\s*│\s*3\s*│/)
  })

  it('report merge merges the stages exactly (or drops them, said, when a segment lacks some), refuses other stages; compare reads the file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pooltool-stages-'))
    const file = path.join(dir, 'staged.json')
    const bench = await runInProcess(['bench', '--warmup', '0s', '--uri', cluster.uri, '--workload', 'ping', '--stages', '200ms:1,200ms:2', '--out', file])
    assert.equal(bench.code, 0, bench.stderr)
    const single = JSON.parse(await readFile(file, 'utf8'))
    // A twin of the file (report merge refuses one result given twice; a note tells the two apart).
    const twinFile = path.join(dir, 'twin.json')
    await writeFile(twinFile, JSON.stringify({...single, notes: [...single.notes, 'twin segment']}))
    const merged = await runInProcess(['report', 'merge', file, twinFile, '--json'])
    assert.equal(merged.code, 0, merged.stderr)
    const result = parseJson(merged)
    // The same run twice: every count doubles, the histograms add, the percentiles stay.
    assert.deepEqual(result.runs[0].stages.map((s: any) => s.ops), single.runs[0].stages.map((s: any) => 2 * s.ops))
    assert.deepEqual(result.runs[0].stages.map((s: any) => s.inFlightPeak), single.runs[0].stages.map((s: any) => 2 * s.inFlightPeak))
    for (const [index, stage] of result.runs[0].stages.entries()) {
      assert.equal(decodeHistogram(stage.histograms.latencyUs).totalCount, 2 * single.runs[0].stages[index].ops)
      assert.equal(stage.latencyUs.p99, single.runs[0].stages[index].latencyUs.p99)
      assert.equal(stage.durationMS, single.runs[0].stages[index].durationMS)
    }
    assert.ok(!result.notes.some((note: string) => note.includes('runs[].stages')), JSON.stringify(result.notes))
    // A segment stopped in its first stage has one stage only: the merged run has none, and says so.
    const stopped = JSON.parse(JSON.stringify(single))
    stopped.runs[0].stages = stopped.runs[0].stages.slice(0, 1)
    const stoppedFile = path.join(dir, 'stopped.json')
    await writeFile(stoppedFile, JSON.stringify(stopped))
    const partial = await runInProcess(['report', 'merge', file, stoppedFile, '--json'])
    assert.equal(partial.code, 0, partial.stderr)
    const partialResult = parseJson(partial)
    assert.equal(partialResult.runs[0].stages, undefined)
    assert.ok(partialResult.notes.some((note: string) => note.includes('runs[].stages')), JSON.stringify(partialResult.notes))
    const other = JSON.parse(await readFile(file, 'utf8'))
    other.config.stages[1].concurrency = 4
    const otherFile = path.join(dir, 'other.json')
    await writeFile(otherFile, JSON.stringify(other))
    const refused = await runInProcess(['report', 'merge', file, otherFile])
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, /config\.stages/)
    const compared = await runInProcess(['report', 'compare', file, file, '--fail-on', 'p99Ratio>1.10', '--json'])
    assert.equal(compared.code, 0, compared.stderr)
    assert.equal(parseJson(compared).runs[0].metrics.p99.ratio, 1)
  })

  it('refuses a bad stage with one line naming it (exit 2), before any load', async () => {
    const run = await runInProcess(['bench', '--uri', 'mongodb://127.0.0.1:1', '--stages', '300ms:2,300ms'])
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /--stages stage 2 '300ms' is not DURATION:CONCURRENCY/)
    const combined = await runInProcess(['bench', '--uri', 'mongodb://127.0.0.1:1', '--stages', '300ms:2', '--duration', '1s'])
    assert.equal(combined.code, 2, combined.stderr)
    assert.match(combined.stderr, /--stages and --duration cannot be combined/)
  })
})
