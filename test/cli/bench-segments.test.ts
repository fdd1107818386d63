/**
 * A distributed bench run on one machine: three `bench --segment i/3` processes with one --run-id
 * and --start-at against the embedded cluster, as the pods of an emitted Kubernetes Job run them;
 * then `report merge` adds them up. They share one namespace: together they seed every id once,
 * and the last to finish drops it. Of each three segments, two are spawned processes and one runs
 * in this process (test/helpers/in-process.ts, the path bin/run.js takes; runs there are one at a
 * time, so only one segment can). The other runs are in this process too (a process start per case
 * cost ~1 CPU-s), except one refusal that proves the real process's secret guard (bench exit 2).
 */
import assert from 'node:assert/strict'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, it} from 'node:test'

import {Job} from 'kubernetes-models/batch/v1/Job'
import {parse as parseYaml} from 'yaml'

import {type CliRun, parseJson, runCli} from '../helpers/cli.js'
import {useClusterClient} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const SEGMENTS = 3
const SEED_DOCS = 100

describe('bench --segment: three shares of one run', {timeout: 120_000}, () => {
  const cluster = useClusterClient({})
  const segmentArgs = (runId: string, index: number, startAt: string, extra: string[] = []) =>
    ['bench', '--warmup', '0s', '--uri', cluster.uri, '--db', 'pooltool_segments', '--workload', 'find', '--seed-docs', String(SEED_DOCS), '--concurrency', '8', '--duration', '500ms',
      '--segment', `${index}/${SEGMENTS}`, '--run-id', runId, '--start-at', startAt, '--json', ...extra]
  const soon = () => new Date(Date.now() + 4000).toISOString()
  /** Segment 0 in this process, the others spawned, all at once. */
  const segment = (index: number, args: string[]): Promise<CliRun> => (index === 0 ? runInProcess(args) : runCli(args, {timeoutMs: 60_000}))
  const runAll = (runId: string, extra: string[] = []) => {
    const startAt = soon()
    return Promise.all(Array.from({length: SEGMENTS}, (_, i) => segment(i, segmentArgs(runId, i, startAt, extra))))
  }

  it('together they seed each id once, each drives its share, and the shares add up', async () => {
    const runs = await runAll('5e65e650', ['--keep'])
    const results = runs.map((run) => {
      assert.equal(run.code, 0, run.stderr)
      return parseJson(run)
    })
    const collection = cluster.client.db('pooltool_segments').collection('bench_5e65e650')
    try {
      assert.equal(await collection.countDocuments({}), SEED_DOCS, 'each seeded id exactly once')
      assert.deepEqual(results.map((r) => r.runs[0].segment), [
        {index: 0, count: 3, concurrency: 3, rate: null},
        {index: 1, count: 3, concurrency: 3, rate: null},
        {index: 2, count: 3, concurrency: 2, rate: null},
      ])
      for (const r of results) {
        assert.equal(r.runs[0].concurrency, 8, 'each file carries the whole run\'s concurrency')
        assert.equal(r.namespace.collections[0], 'pooltool_segments.bench_5e65e650')
        assert.ok(r.runs[0].pool.peakInUse <= r.runs[0].segment.concurrency, 'no more connections in use than its share')
      }
    } finally {
      await collection.drop()
      await cluster.client.db('pooltool_segments').collection('pooltool_runs').drop()
    }
    const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-seg-'))
    const files = results.map((r, i) => {
      const file = path.join(dir, `segment-${i}.json`)
      writeFileSync(file, JSON.stringify(r))
      return file
    })
    const merged = parseJson(await runInProcess(['report', 'merge', ...files, '--json']))
    const [run] = merged.runs
    assert.equal(run.ops, results.reduce((sum, r) => sum + r.runs[0].ops, 0))
    assert.equal(run.segments, 3)
    assert.equal(run.concurrency, 8)
    assert.equal(run.loadSplit, true)
    assert.deepEqual(merged.config.segment.indices, [0, 1, 2])
    assert.ok(!merged.notes.some((n: string) => /not merged/.test(n)), merged.notes.join('\n'))
    const partial = parseJson(await runInProcess(['report', 'merge', files[0]!, files[2]!, '--json']))
    assert.ok(partial.notes.includes('segment 1 of 3 of run 5e65e650 not merged: the figures hold only the shares merged'), partial.notes.join('\n'))
  })

  it('with --stages: each segment ramps its share; the merged stages carry the whole ramp and add up', async () => {
    const startAt = soon()
    const stageArgs = (index: number) =>
      ['bench', '--warmup', '0s', '--uri', cluster.uri, '--db', 'pooltool_segments', '--workload', 'ping', '--stages', '300ms:3,300ms:6', '--segment', `${index}/${SEGMENTS}`, '--run-id', '5ea6e500', '--start-at', startAt, '--json']
    const runs = await Promise.all(Array.from({length: SEGMENTS}, (_, i) => segment(i, stageArgs(i))))
    const results = runs.map((run) => {
      assert.equal(run.code, 0, run.stderr)
      return parseJson(run)
    })
    for (const r of results) assert.deepEqual(r.runs[0].stages.map((s: any) => s.concurrency), [3, 6], "each file carries the whole stages, as it carries the run's concurrency")
    const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-seg-stages-'))
    const files = results.map((r, i) => {
      const file = path.join(dir, `segment-${i}.json`)
      writeFileSync(file, JSON.stringify(r))
      return file
    })
    const [run] = parseJson(await runInProcess(['report', 'merge', ...files, '--json'])).runs
    assert.deepEqual(run.stages.map((s: any) => s.concurrency), [3, 6])
    for (const [index, stage] of run.stages.entries()) {
      assert.equal(stage.ops, results.reduce((sum, r) => sum + r.runs[0].stages[index].ops, 0), `stage ${index} adds up`)
      assert.ok(stage.ops > 0)
    }
    const refused = await runInProcess(['bench', '--uri', cluster.uri, '--stages', '300ms:2,300ms:6', '--segment', '0/3', '--run-id', '5ea6e501'])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /^Error \[USAGE\]: --stages: a stage of concurrency 2 cannot be split over 3 segments/)
  })

  it('the last segment to finish drops the shared collections; the others leave them to it', async () => {
    const runs = await runAll('d00dfeed')
    const results = runs.map((run) => {
      assert.equal(run.code, 0, run.stderr)
      return parseJson(run)
    })
    const namespaces = JSON.stringify(results.map((r) => r.namespace))
    // Each segment leaves its marker before it counts the others, so the last to leave always drops. Segments
    // finishing together may both find the collection and both drop it, or one find it already dropped.
    const dropped = results.filter((r) => r.namespace.dropped.includes('pooltool_segments.bench_d00dfeed'))
    assert.ok(dropped.length >= 1, namespaces)
    for (const r of results.filter((x) => !dropped.includes(x))) {
      if (r.namespace.leftBehind.length === 0) continue // it left last, together with the one that dropped
      assert.match(r.namespace.reason ?? '', /other segments? of run d00dfeed still running: the last to finish drops the collections/, namespaces)
      assert.deepEqual(r.namespace.leftBehind, ['pooltool_segments.bench_d00dfeed'])
    }
    const names = (await cluster.client.db('pooltool_segments').listCollections().toArray()).map((c) => c.name)
    assert.deepEqual(names, [], 'nothing of the run is left, not even the marker collection')
  })

  it('--emit k8s-job prints a Job the Kubernetes schema accepts, and the steps to collect and merge its results', async () => {
    const run = await runInProcess(['bench', '--emit', 'k8s-job', '--parallelism', '4', '--concurrency', '16', '--duration', '1m', '--image', 'registry.example/pooltool:0.1.0'])
    assert.equal(run.code, 0, run.stderr)
    const manifest = parseYaml(run.stdout)
    new Job(manifest).validate()
    const [container] = manifest.spec.template.spec.containers
    assert.deepEqual(container.args.slice(0, 7), ['--concurrency', '16', '--duration', '1m', '--segment', '$(JOB_COMPLETION_INDEX)/4', '--run-id'])
    assert.match(run.stderr, /^# {3}pooltool report merge pooltool-bench-[0-9a-f]{8}-\*\.json --out pooltool-bench-[0-9a-f]{8}\.json$/m)
    // Spawned: bench's usage error (exit 2) in the real process, its secret guard included.
    const refused = await runCli(['bench', '--emit', 'k8s-job', '--parallelism', '2', '--uri', 'mongodb://user:hunter2@db.example/'])
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, /--uri cannot go into the emitted Job/)
    assert.doesNotMatch(refused.stdout + refused.stderr, /hunter2/)
  })
})
