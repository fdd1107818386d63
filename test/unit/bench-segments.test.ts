/**
 * Distributed bench: segment shares add up to the run, the emitted Kubernetes Job validates
 * against the Kubernetes API schema (kubernetes-models, not string matching), and the flags a
 * user gave reach the pods as given.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Job} from 'kubernetes-models/batch/v1/Job'

import {toBenchConfig, type BenchFlagValues} from '../../src/bench/config.js'
import {emitK8sJob, type EmitFlags, K8S_FIELDS_SINCE, MIN_KUBERNETES, parseQuantity} from '../../src/bench/k8s-job.js'
import {parseSegment, parseStartAt, rateShareOf, shareOf} from '../../src/bench/segment.js'
import {passThroughArgs} from '../../src/cli/pass-through.js'
import {PoolToolError} from '../../src/errors.js'

const usage = (fn: () => unknown, message: RegExp) => assert.throws(fn, (e: unknown) => e instanceof PoolToolError && e.exitCode === 2 && message.test(e.message))

describe('segment shares', () => {
  it('add up to the whole run, the first segments taking the remainder', () => {
    for (const [total, count] of [[8, 3], [10, 10], [1000, 7], [64, 1]] as const) {
      const shares = Array.from({length: count}, (_, index) => shareOf(total, {index, count}))
      assert.equal(shares.reduce((a, b) => a + b, 0), total, `${total} over ${count}: ${shares}`)
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1)
    }
    assert.deepEqual([0, 1, 2].map((index) => shareOf(8, {index, count: 3})), [3, 3, 2])
    assert.equal(rateShareOf(3000, {index: 2, count: 3}), 1000)
    assert.equal(shareOf(8, undefined), 8)
  })

  it('parse as INDEX/COUNT from 0, and refuse what cannot be split', () => {
    assert.deepEqual(parseSegment('2/3'), {index: 2, count: 3})
    usage(() => parseSegment('3/3'), /--segment 3\/3 is out of range/)
    usage(() => parseSegment('1-3'), /is not INDEX\/COUNT/)
    const flags: BenchFlagValues = {workload: 'find', 'doc-size': 16, 'seed-docs': 100, db: 'pooltool_bench', keep: false, model: 'pool', concurrency: '8'}
    assert.deepEqual(toBenchConfig({...flags, segment: '1/3', 'run-id': 'a1b2c3d4'}).segment, {index: 1, count: 3})
    usage(() => toBenchConfig({...flags, segment: '1/3'}), /--segment needs --run-id/)
    usage(() => toBenchConfig({...flags, 'run-id': 'a1b2c3d4'}), /--run-id needs --segment/)
    usage(() => toBenchConfig({...flags, segment: '0/3', 'run-id': 'RUN'}), /--run-id 'RUN' is not 8 hex digits/)
    usage(() => toBenchConfig({...flags, segment: '0/9', 'run-id': 'a1b2c3d4'}), /--concurrency 8 cannot be split over 9 segments/)
    usage(() => toBenchConfig({...flags, concurrency: '8,16', segment: '0/2', 'run-id': 'a1b2c3d4'}), /--segment runs one cell, not a matrix/)
  })

  it('--start-at is an instant with its zone, at most a day ahead', () => {
    const now = Date.parse('2026-11-23T21:00:00Z')
    assert.equal(parseStartAt('2026-11-23T22:00:00+01:00', now).toISOString(), '2026-11-23T21:00:00.000Z')
    usage(() => parseStartAt('2026-11-23 21:00', now), /is not an instant with a zone/)
    usage(() => parseStartAt('2026-11-25T21:00:00Z', now), /more than a day ahead/)
    const flags: BenchFlagValues = {workload: 'find', 'doc-size': 16, 'seed-docs': 100, db: 'pooltool_bench', keep: false, model: 'pool', concurrency: '8'}
    assert.equal(toBenchConfig({...flags, segment: '1/3', 'run-id': 'a1b2c3d4', 'start-at': 'all-ready'}).startAt, 'all-ready')
    usage(() => toBenchConfig({...flags, 'start-at': 'all-ready'}), /--start-at all-ready needs --segment/)
  })
})

describe('bench --emit k8s-job', () => {
  const flags: EmitFlags = {workload: 'find', 'doc-size': 16, 'seed-docs': 100, db: 'pooltool_bench', keep: false, model: 'pool', concurrency: '12', parallelism: 3, 'uri-secret': 'mongo/uri'}
  const argv = ['--workload', 'find', '--concurrency=12', '--keep', '--emit', 'k8s-job', '--parallelism', '3', '--duration', '30s', '--json']
  const now = Date.parse('2026-11-23T21:00:00Z')

  it('prints an Indexed Job that the Kubernetes schema accepts, one segment per pod', async () => {
    const booleans = new Set(['keep', 'json'])
    const benchArgs = passThroughArgs(argv, {booleans}, new Set(['emit', 'parallelism', 'json']))
    assert.deepEqual(benchArgs, ['--workload', 'find', '--concurrency=12', '--keep', '--duration', '30s'])
    const plan = await emitK8sJob(flags, {benchArgs, defaultImage: 'pooltool:0.1.0', now})
    new Job(plan.manifest as never).validate()
    const spec = (plan.manifest as any).spec
    assert.deepEqual({mode: spec.completionMode, completions: spec.completions, parallelism: spec.parallelism, backoffLimit: spec.backoffLimit}, {mode: 'Indexed', completions: 3, parallelism: 3, backoffLimit: 0})
    const [container] = spec.template.spec.containers
    assert.equal(container.image, 'pooltool:0.1.0')
    assert.deepEqual(container.args, [...benchArgs, '--segment', '$(JOB_COMPLETION_INDEX)/3', '--run-id', plan.runId, '--start-at', 'all-ready', '--json'])
    assert.deepEqual(container.resources, {requests: {cpu: '1', memory: '512Mi'}, limits: {cpu: '1', memory: '512Mi'}}, 'Guaranteed QoS by default')
    assert.deepEqual(container.env, [{name: 'POOLTOOL_URI', valueFrom: {secretKeyRef: {name: 'mongo', key: 'uri'}}}])
    assert.match(plan.runId, /^[0-9a-f]{8}$/)
    assert.ok(plan.collect.some((line) => line.startsWith('pooltool report merge ')))
  })

  it('uses only fields every supported Kubernetes version (from 1.24) accepts, and selects pods by its own label', async () => {
    const plan = await emitK8sJob({...flags, duration: 300_000, warmup: 2000, 'k8s-cpu': '500m', 'k8s-memory': '1Gi'}, {benchArgs: [], defaultImage: 'pooltool:0.1.0', now})
    new Job(plan.manifest as never).validate()
    const paths = new Set<string>()
    // Leaf objects that are maps of user data (labels, selectors, quantities, env entries) end the walk.
    const opaque = new Set(['metadata.labels', 'spec.template.metadata.labels', 'spec.template.spec.topologySpreadConstraints', 'spec.template.spec.containers.env', 'spec.template.spec.containers.resources.requests', 'spec.template.spec.containers.resources.limits'])
    const walk = (value: unknown, at: string) => {
      if (at !== '' && (opaque.has(at) || value === null || typeof value !== 'object')) {
        paths.add(at)
        return
      }
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item === null || typeof item !== 'object') paths.add(at)
        else for (const [key, child] of Object.entries(item)) walk(child, at === '' ? key : `${at}.${key}`)
      }
    }
    walk(plan.manifest, '')
    const minor = (version: string) => Number(version.split('.')[1])
    for (const field of paths) {
      const since = K8S_FIELDS_SINCE[field]
      assert.ok(since !== undefined, `${field}: not in K8S_FIELDS_SINCE; look up the version that made it GA before using it`)
      assert.ok(minor(since) <= minor(MIN_KUBERNETES), `${field} needs Kubernetes ${since}, newer than the supported ${MIN_KUBERNETES}`)
    }
    const spec = (plan.manifest as any).spec
    assert.deepEqual(spec.template.spec.containers[0].resources, {requests: {cpu: '500m', memory: '1Gi'}, limits: {cpu: '500m', memory: '1Gi'}})
    // The wait for the other pods (10 min at most, then 5 s), the warm-up and the run (5 min) and 10 min of slack for pulls and the end.
    assert.equal(spec.activeDeadlineSeconds, 600 + 5 + 2 + 300 + 600)
    assert.equal(spec.template.metadata.labels['pooltool.io/run-id'], plan.runId)
    const steps = plan.collect.join('\n')
    assert.match(steps, new RegExp(`kubectl get pods -l pooltool\\.io/run-id=${plan.runId} --field-selector=status\\.phase=Succeeded -o name`))
    assert.doesNotMatch(steps, /kubectl logs -l|job-completion-index=/, 'never logs by selector (10 lines per pod), never the 1.28+ index label')
    const workers = await emitK8sJob({...flags, workers: 2, duration: 60_000}, {benchArgs: [], defaultImage: 'x', now})
    assert.deepEqual(workers.resources, {cpu: '2', memory: '1024Mi'}, 'a core and 512Mi per worker thread')
    const byOps = await emitK8sJob({...flags, ops: 1000}, {benchArgs: [], defaultImage: 'x', now})
    assert.equal((byOps.manifest as any).spec.activeDeadlineSeconds, undefined, 'a run bounded by --ops has no length to bound the Job by')
  })

  it('takes CPU and memory as Kubernetes quantities, and refuses the usual slips', () => {
    for (const good of ['1', '500m', '1.5', '2k']) assert.equal(parseQuantity('--k8s-cpu', good), good)
    for (const good of ['512Mi', '1Gi', '1G', '1e9', '268435456']) assert.equal(parseQuantity('--k8s-memory', good), good)
    usage(() => parseQuantity('--k8s-memory', '512m'), /--k8s-memory 512m is 512 thousandths of a byte/)
    usage(() => parseQuantity('--k8s-memory', '512MB'), /--k8s-memory '512MB' is not a Kubernetes quantity/)
    usage(() => parseQuantity('--k8s-cpu', '-1'), /is not a Kubernetes quantity/)
    usage(() => parseQuantity('--k8s-cpu', '0'), /--k8s-cpu 0 is zero/)
    usage(() => parseQuantity('--k8s-cpu', '0.0005'), /finer than a thousandth of a core/)
    usage(() => parseQuantity('--k8s-cpu', '1 '), /is not a Kubernetes quantity/)
  })

  it('refuses what cannot go into the pods, before printing anything', async () => {
    await assert.rejects(emitK8sJob({...flags, uri: 'mongodb://u:secret@db/'}, {benchArgs: [], defaultImage: 'x', now}), /--uri cannot go into the emitted Job/)
    await assert.rejects(emitK8sJob({...flags, out: 'r.json'}, {benchArgs: [], defaultImage: 'x', now}), /--out cannot go into the emitted Job/)
    await assert.rejects(emitK8sJob({...flags, html: 'r.html'}, {benchArgs: [], defaultImage: 'x', now}), (error: Error & {hint?: string}) => /--html cannot go into the emitted Job/.test(error.message) && /report html/.test(error.hint ?? ''))
    await assert.rejects(emitK8sJob({...flags, parallelism: 20}, {benchArgs: [], defaultImage: 'x', now}), /--concurrency 12 cannot be split over 20 segments/)
    await assert.rejects(emitK8sJob({...flags, 'uri-secret': 'mongo'}, {benchArgs: [], defaultImage: 'x', now}), /--uri-secret 'mongo' is not NAME\/KEY/)
    await assert.rejects(emitK8sJob({...flags, 'uri-secret': 'Mongo;rm/uri'}, {benchArgs: [], defaultImage: 'x', now}), /--uri-secret: 'Mongo;rm' is not a Secret name/)
    await assert.rejects(emitK8sJob({...flags, 'uri-secret': 'mongo/u ri'}, {benchArgs: [], defaultImage: 'x', now}), /--uri-secret: 'u ri' is not a Secret key/)
    await assert.rejects(emitK8sJob({...flags, image: 'reg.example/pooltool:1 && curl evil'}, {benchArgs: [], defaultImage: 'x', now}), /--image 'reg.example\/pooltool:1 && curl evil' is not an image reference/)
    for (const image of ['pooltool:0.1.0', 'registry.example:5000/team/pooltool:0.1.0-rc.1', 'ghcr.io/acme/pooltool@sha256:' + 'a'.repeat(64), 'pooltool']) {
      assert.equal(((await emitK8sJob({...flags, image}, {benchArgs: [], defaultImage: 'x', now})).manifest as any).spec.template.spec.containers[0].image, image)
    }
  })
})

describe('passing flags through', () => {
  it('keeps spelling and order, drops the named flags with their values', () => {
    const booleans = new Set(['keep', 'json'])
    assert.deepEqual(passThroughArgs(['--rate', '100', '--no-keep', '--image=x', '--json', '--out', 'f'], {booleans}, new Set(['image', 'out', 'json'])), ['--rate', '100', '--no-keep'])
  })
})
