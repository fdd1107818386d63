/**
 * The watches' metrics flags as a user meets them: a port in use is said
 * before the cluster is touched (exit 2, one line, a hint), label flags
 * without an export are refused, and `--once` prints one exposition and
 * nothing else on stdout (a textfile collector reads the file whole). Each run goes through this process
 * (test/helpers/in-process.ts, the path bin/run.js takes): a process start cost ~1 CPU-s a case, and the
 * watches' real processes are proven elsewhere (exit 2: test/cli/bad-input.test.ts; exit 0:
 * conns-client-leak.test.ts, and the files that stop a watch with a signal).
 */
import assert from 'node:assert/strict'
import {createServer, type Server} from 'node:net'
import {after, before, describe, it} from 'node:test'

import {runInProcess} from '../helpers/in-process.js'

describe('watch metrics flags', () => {
  let busy: Server
  let busyPort: number

  before(async () => {
    busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()))
    busyPort = (busy.address() as {port: number}).port
  })

  after(() => new Promise<void>((resolve) => busy.close(() => resolve())))

  it('a --metrics-port in use: exit 2 with the port named and a hint, before any cluster starts', async () => {
    const run = await runInProcess(['conns', 'watch', '--metrics-port', String(busyPort)])
    assert.equal(run.code, 2)
    assert.match(run.stderr, new RegExp(`--metrics-port ${busyPort}: the port is in use on 127\\.0\\.0\\.1`))
    assert.match(run.stderr, /--metrics-port 0/)
    assert.doesNotMatch(run.stderr, /embedded simulated/)
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace')
  })

  it('--top-locks without --metrics-port or --once: exit 2, says what to add', async () => {
    const run = await runInProcess(['locks', 'watch', '--top-locks', '5'])
    assert.equal(run.code, 2)
    assert.match(run.stderr, /--top-locks shapes metric labels, and no metrics are asked for/)
  })

  it('conns watch --once: stdout is one exposition, HELP and TYPE for each family, a series per host', async () => {
    const run = await runInProcess(['conns', 'watch', '--once', '--sim-topology', 'replset', '--redact-hosts'])
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trimEnd().split('\n')
    assert.ok(lines.every((line) => line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ') || /^pooltool_[a-z_]+(\{.*\})? -?[0-9.e+-]+$/.test(line)), run.stdout)
    const up = lines.filter((line) => line.startsWith('pooltool_host_up{'))
    assert.equal(up.length, 3)
    assert.ok(up.every((line) => /host="host-\d\.redacted:\d+"/.test(line)), 'hosts aliased with --redact-hosts')
    assert.doesNotMatch(run.stdout, /127\.0\.0\.1/)
  })
})
