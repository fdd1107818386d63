/**
 * The Kubernetes walk-through run as printed: `bench --emit k8s-job` prints a Job and the steps; the
 * Job's pods are played by real bench processes with the manifest's own args (the segment index
 * put in for $(JOB_COMPLETION_INDEX), the URI from POOLTOOL_URI as the Secret gives it) against the
 * embedded cluster, started at different moments; then the printed steps run in sh, unchanged,
 * against a fake kubectl (fixtures/fake-kubectl.mjs) that prints what a real one prints, the pods'
 * stdout as their logs. The files they collect must merge. docs/kubernetes.md shows the same steps.
 * `bench --emit` and one pod of each Job run in this process (test/helpers/in-process.ts, the path
 * bin/run.js takes; runs there are one at a time, so only one pod can); the other pods stay
 * spawned, as does the walk-through's own `pooltool report merge` (through the PATH stub).
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, it} from 'node:test'

import {Job} from 'kubernetes-models/batch/v1/Job'
import {parse as parseYaml} from 'yaml'

import {collectSteps} from '../../src/bench/k8s-job.js'
import {type CliRun, parseJson, REPO_ROOT, runCli} from '../helpers/cli.js'
import {useClusterClient} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const PODS = 3
const DB = 'pooltool_k8s'

/** Runs `script` in sh in `dir` with the fakes first on PATH. */
function sh(script: string, dir: string, env: Record<string, string>): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], {cwd: dir, env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr}))
  })
}

/** A directory of stand-ins, to put first on PATH: kubectl (the fake), pooltool (this build), docker (records its calls in docker.calls), sleep (waits for nothing). */
function fakeBin(dir: string): string {
  const bin = path.join(dir, 'bin')
  mkdirSync(bin)
  const stub = (name: string, body: string) => {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`)
    chmodSync(path.join(bin, name), 0o755)
  }
  stub('kubectl', `exec "${process.execPath}" "${path.join(REPO_ROOT, 'test/cli/fixtures/fake-kubectl.mjs')}" "$@"`)
  stub('pooltool', `exec "${process.execPath}" "${path.join(REPO_ROOT, 'bin/run.js')}" "$@"`)
  stub('docker', 'echo "docker $*" >> docker.calls')
  stub('sleep', ':')
  return bin
}

/** The steps `bench --emit k8s-job` printed on stderr (each after `#   `). */
const stepsOf = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('#   ')).map((line) => line.slice(4))

describe('the Kubernetes walk-through, as printed', {timeout: 180_000}, () => {
  const cluster = useClusterClient({})

  it('pods started apart run together; the printed steps collect every pod\'s whole log, and report merge accepts the files', async () => {
    // --warmup 0s reaches the pods through the manifest's args (the walk-through is not about warm-up; a segmented
    // run's default would be a fixed 5 s of full load in every pod).
    const emitted = await runInProcess(['bench', '--emit', 'k8s-job', '--parallelism', String(PODS), '--db', DB, '--workload', 'find', '--seed-docs', '60', '--concurrency', '6', '--duration', '600ms', '--warmup', '0s', '--image', 'registry.example/pooltool:0.1.0'])
    assert.equal(emitted.code, 0, emitted.stderr)
    const manifest = parseYaml(emitted.stdout)
    new Job(manifest).validate()
    const runId: string = manifest.metadata.labels['pooltool.io/run-id']
    const steps = stepsOf(emitted.stderr)
    assert.deepEqual(steps, collectSteps({runId, image: 'registry.example/pooltool:0.1.0', uriSecret: {name: 'pooltool-uri', key: 'uri'}}))

    // The pods, with the manifest's args: two start, and the third only once both are set up and waiting.
    const [container] = manifest.spec.template.spec.containers
    const podArgs = (index: number): string[] => container.args.map((arg: string) => arg.replace('$(JOB_COMPLETION_INDEX)', String(index)))
    // Pod 0 in this process; pods 1 and 2 spawned: real bench processes (exit 0) meeting at the barrier.
    const pod = (index: number): Promise<CliRun> =>
      index === 0 ? runInProcess(['bench', ...podArgs(index)], {env: {POOLTOOL_URI: cluster.uri}}) : runCli(['bench', ...podArgs(index)], {env: {POOLTOOL_URI: cluster.uri}, timeoutMs: 120_000})
    const early = [pod(0), pod(1)]
    const markers = cluster.client.db(DB).collection('pooltool_runs')
    for (;;) {
      if ((await markers.countDocuments({runId, readyAt: {$type: 'date'}})) === 2) break
      await new Promise((resolve) => setTimeout(resolve, 50)) // between polls of the markers, not a wait for time to pass
    }
    const lateLaunch = Date.now()
    const runs = await Promise.all([...early, pod(2)])
    const results = runs.map((run) => {
      assert.equal(run.code, 0, run.stderr)
      return parseJson(run)
    })
    const starts = new Set(results.map((r) => r.config.startAt))
    assert.equal(starts.size, 1, `one start for all: ${[...starts].join(', ')}`)
    assert.ok(Date.parse([...starts][0]) > lateLaunch, 'the first two waited for the third, launched after they were ready')
    for (const r of results) assert.ok(r.notes.some((n: string) => /^started with the other 2 segments at /.test(n)), r.notes.join('\n'))

    // The cluster kubectl sees: the Job's pods as the controller names and labels them (the 1.28+ index label too, so the old step can be tried).
    const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-k8s-'))
    const bin = fakeBin(dir)
    const job = manifest.metadata.name
    const podOf = (index: number, log: string, phase = 'Succeeded', message = '') => ({
      name: `${job}-${index}-${'abcde'.slice(index)}${'xyz'.slice(0, index)}`,
      labels: {...manifest.spec.template.metadata.labels, 'job-name': job, 'batch.kubernetes.io/job-name': job, 'batch.kubernetes.io/job-completion-index': String(index), 'controller-uid': 'c0ffee'},
      annotations: {'batch.kubernetes.io/job-completion-index': String(index)},
      phase,
      reason: phase === 'Succeeded' ? 'Completed' : 'Error',
      message,
      log,
    })
    const state = path.join(dir, 'cluster.json')
    writeFileSync(state, JSON.stringify({job: {name: job, polls: [[], ['SuccessCriteriaMet', 'Complete']]}, pods: runs.map((run, i) => podOf(i, run.stdout))}))
    writeFileSync(path.join(dir, 'job.yaml'), emitted.stdout)
    const env = {PATH: `${bin}:${process.env.PATH}`, FAKE_KUBECTL_STATE: state}
    for (const run of runs) assert.ok(run.stdout.split('\n').length > 10, 'a pod log longer than the 10 lines kubectl logs -l keeps')

    const walk = await sh(steps.join('\n'), dir, env)
    assert.equal(walk.code, 0, walk.stderr)
    assert.match(walk.stdout, new RegExp(`^job/${job}: SuccessCriteriaMet Complete$`, 'm'))
    assert.match(readFileSync(path.join(dir, 'docker.calls'), 'utf8'), /^docker build -t registry\.example\/pooltool:0\.1\.0 \.\ndocker push registry\.example\/pooltool:0\.1\.0\n$/)
    for (let i = 0; i < PODS; i++) assert.equal(readFileSync(path.join(dir, `${job}-${i}.json`), 'utf8'), runs[i]!.stdout, `pod ${i}'s whole log, named by its index`)
    const merged = JSON.parse(readFileSync(path.join(dir, `${job}.json`), 'utf8'))
    assert.equal(merged.runs[0].segments, PODS)
    assert.deepEqual(merged.config.segment.indices, [0, 1, 2])
    assert.equal(merged.runs[0].ops, results.reduce((sum, r) => sum + r.runs[0].ops, 0))

    // What the walk-through did before: logs by selector, 10 lines per pod; report merge refuses what it collects.
    const old = await sh(`for i in 0 1 2; do kubectl logs -l job-name=${job},batch.kubernetes.io/job-completion-index=$i > old-$i.json; done; pooltool report merge old-*.json --out old.json`, dir, env)
    assert.equal(old.code, 2, old.stderr)
    assert.equal(readFileSync(path.join(dir, 'old-0.json'), 'utf8').split('\n').length, 11, '10 lines and the last newline')
    assert.ok(!existsSync(path.join(dir, 'old.json')))
  })

  it('a failed pod ends the wait; the pods that succeeded are collected, and the merge says which segment is missing', async () => {
    // --warmup 0s, in the manifest's args as above.
    const emitted = await runInProcess(['bench', '--emit', 'k8s-job', '--parallelism', '3', '--db', DB, '--workload', 'ping', '--concurrency', '3', '--duration', '300ms', '--warmup', '0s'])
    assert.equal(emitted.code, 0, emitted.stderr)
    const manifest = parseYaml(emitted.stdout)
    const runId: string = manifest.metadata.labels['pooltool.io/run-id']
    const job = manifest.metadata.name
    const steps = stepsOf(emitted.stderr)
    // Pods 0 and 2 run; pod 1 failed (out of memory, say). At the barrier the others would wait for it 10 min, so
    // here they run with the manifest's args but one fixed start; the fake cluster says pod 1 failed.
    const startAt = new Date(Date.now() + 3000).toISOString()
    const args = (index: number): string[] => manifest.spec.template.spec.containers[0].args.map((arg: string) => arg.replace('$(JOB_COMPLETION_INDEX)', String(index)).replace('all-ready', startAt))
    // Pod 0 in this process, pod 2 spawned (the real process), together.
    const [run0, run2] = await Promise.all([0, 2].map((index) => (index === 0 ? runInProcess : runCli)(['bench', ...args(index)], {env: {POOLTOOL_URI: cluster.uri}})))
    for (const run of [run0!, run2!]) assert.equal(run.code, 0, run.stderr)
    const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-k8s-failed-'))
    const bin = fakeBin(dir)
    const labels = manifest.spec.template.metadata.labels
        const state = path.join(dir, 'cluster.json')
    writeFileSync(state, JSON.stringify({
      job: {name: job, polls: [[], [], ['FailureTarget', 'Failed']]},
      pods: [
        {name: `${job}-0-q7x2k`, labels, annotations: {'batch.kubernetes.io/job-completion-index': '0'}, phase: 'Succeeded', reason: 'Completed', log: run0!.stdout},
        {name: `${job}-1-m4n8p`, labels, annotations: {'batch.kubernetes.io/job-completion-index': '1'}, phase: 'Failed', reason: 'OOMKilled', message: '', log: ''},
        {name: `${job}-2-w9c3v`, labels, annotations: {'batch.kubernetes.io/job-completion-index': '2'}, phase: 'Succeeded', reason: 'Completed', log: run2!.stdout},
      ],
    }))
    writeFileSync(path.join(dir, 'job.yaml'), emitted.stdout)
    const walk = await sh(steps.join('\n'), dir, {PATH: `${bin}:${process.env.PATH}`, FAKE_KUBECTL_STATE: state})
    assert.equal(walk.code, 0, walk.stderr)
    assert.match(walk.stdout, new RegExp(`^job/${job}: FailureTarget Failed$`, 'm'), 'the wait ends on Failed')
    assert.match(walk.stdout, new RegExp(`^${job}-1-m4n8p Failed OOMKilled: $`, 'm'), 'and says why the pod failed')
    assert.match(walk.stdout, new RegExp(`^${job}-0-q7x2k Succeeded Completed: $`, 'm'))
    assert.equal(readFileSync(`${state}.calls`, 'utf8').split('\n').filter((line) => line.includes(`"job/${job}"`)).length, 3, 'polled until Failed')
    assert.ok(!existsSync(path.join(dir, `${job}-1.json`)), 'the failed pod is not collected')
    const merged = JSON.parse(readFileSync(path.join(dir, `${job}.json`), 'utf8'))
    assert.ok(merged.notes.includes(`segment 1 of 3 of run ${runId} not merged: the figures hold only the shares merged`), merged.notes.join('\n'))
  })
})
