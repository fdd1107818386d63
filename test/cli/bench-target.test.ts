/**
 * Honest targets through the built CLI (issue 26): with CI=true and MONGODB_URI set but empty, `bench --fail-on`
 * ran on the embedded cluster and passed the gate. Now an empty variable is a usage error like an empty --uri (every
 * command that picks a target), a gate without a URI is refused unless --sim asks for the embedded cluster, and
 * --sim with --uri is refused; each one line on stderr, exit 2, before anything starts. Every run goes through this
 * process (test/helpers/in-process.ts, the path bin/run.js takes, with the same environment overrides; the target
 * is chosen from the environment when the command runs): a process start cost ~1 CPU-s a case, and each command's
 * exit 2 in the real process is proven in test/cli/bad-input.test.ts, bench's exit 0 in test/cli/bench.test.ts.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'

const ONE_USAGE_LINE = /^Error \[USAGE\]: [^\n]+ \(hint: [^\n]+\)\n$/

describe('bench: the target is the one asked for', () => {
  it('CI=true MONGODB_URI= bench --fail-on …: exit 2, one line naming the empty variable, nothing started', async () => {
    const run = await runInProcess(['bench', '--fail-on', 'p99>50ms,errors>0', '--duration', '1s'], {env: {CI: 'true', MONGODB_URI: ''}})
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, ONE_USAGE_LINE)
    assert.match(run.stderr, /^Error \[USAGE\]: MONGODB_URI is set but empty \(hint: set MONGODB_URI to a connection string, or unset it and pass --sim to use the embedded simulated cluster\)$/m)
    assert.doesNotMatch(run.stderr, /embedded simulated standalone/, 'no embedded cluster was started')
    assert.equal(run.stdout, '')
  })

  it('an empty POOLTOOL_URI is refused by the other commands too (conns list)', async () => {
    const run = await runInProcess(['conns', 'list'], {env: {POOLTOOL_URI: ''}})
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /^Error \[USAGE\]: POOLTOOL_URI is set but empty \(hint: set POOLTOOL_URI to a connection string, or unset it to use the embedded simulated cluster\)\n$/)
  })

  it('a gate with no URI at all is refused, the hint naming --uri and --sim', async () => {
    const run = await runInProcess(['bench', '--fail-on', 'errors>0', '--duration', '1s'], {env: {CI: 'true'}})
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, ONE_USAGE_LINE)
    assert.match(run.stderr, /--fail-on would gate a run on the embedded simulated cluster.*\(hint: pass --uri mongodb:\/\/… .*or --sim to gate the embedded one on purpose\)/)
  })

  it('--sim with --uri is refused; --sim with --emit too', async () => {
    const both = await runInProcess(['bench', '--sim', '--uri', 'mongodb://127.0.0.1:1/', '--duration', '1s'])
    assert.equal(both.code, 2, both.stderr)
    assert.match(both.stderr, /^Error \[USAGE\]: --sim and --uri cannot be combined \(hint: /)
    const emit = await runInProcess(['bench', '--sim', '--emit', 'k8s-job', '--parallelism', '2'])
    assert.equal(emit.code, 2, emit.stderr)
    assert.match(emit.stderr, /^Error \[USAGE\]: --sim cannot go into the emitted Job/)
  })

  it('--sim runs the gate on the embedded cluster on purpose (an empty variable beside it is not read), and the result says so', async () => {
    const run = await runInProcess(['bench', '--sim', '--fail-on', 'errors>100', '--warmup', '0s', '--duration', '500ms', '--concurrency', '2', '--json'], {env: {CI: 'true', MONGODB_URI: ''}})
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.deepEqual([result.target.source, result.target.simulated], ['embedded', true])
    assert.deepEqual(result.failOn.breaches, [])
    assert.match(run.stderr, /^pooltool: --sim: using the embedded simulated standalone \(mongodb:\/\/127\.0\.0\.1:\d+\/[^)]*\)$/m)
  })
})
