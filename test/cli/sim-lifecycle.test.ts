/**
 * The embedded cluster's lifecycle as a user meets it: a signal to the command's whole
 * process group (`timeout`, a CI cancel, Ctrl-C in a shell pipeline) ends the command
 * without an IPC stack trace, and leaves no cluster behind.
 */
import assert from 'node:assert/strict'
import {type ChildProcessWithoutNullStreams, spawn} from 'node:child_process'
import path from 'node:path'
import {describe, it} from 'node:test'

import {REPO_ROOT} from '../helpers/cli.js'
import {RawClient, delay} from '../helpers/sim.js'

/** The built CLI in its own process group, so the test can signal the group as `timeout` does. */
function spawnInOwnGroup(args: string[]) {
  const env: NodeJS.ProcessEnv = {...process.env, FORCE_COLOR: '0'}
  delete env.POOLTOOL_URI
  delete env.MONGODB_URI
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/run.js'), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  }) as ChildProcessWithoutNullStreams
  const out = {stdout: '', stderr: ''}
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return {child, out, exited}
}

/** Polls the output until `pattern` matches; fails if the command ends first. */
async function waitForOutput(run: ReturnType<typeof spawnInOwnGroup>, pattern: RegExp): Promise<RegExpExecArray> {
  let ended = false
  void run.exited.then(() => (ended = true))
  for (;;) {
    const m = pattern.exec(run.out.stdout) ?? pattern.exec(run.out.stderr)
    if (m) return m
    if (ended) throw new Error(`ended before ${pattern}\nstdout: ${run.out.stdout}\nstderr: ${run.out.stderr}`)
    await delay(50)
  }
}

/** Waits until nothing listens on the port any more; fails (rather than hangs) if it stays up. */
async function waitPortClosed(port: number): Promise<void> {
  const giveUpAt = Date.now() + 15_000
  for (;;) {
    try {
      await (await RawClient.open(port)).close()
    } catch {
      return
    }
    assert.ok(Date.now() < giveUpAt, `the embedded cluster still listens on ${port}`)
    await delay(50)
  }
}

const NO_STACK = /EPIPE|ERR_IPC|Unhandled|^\s+at /m

describe('embedded cluster lifecycle, through the CLI', () => {
  it('conns watch: SIGTERM to the group ends it with its summary, no IPC stack trace, and no cluster left', async () => {
    const run = spawnInOwnGroup(['conns', 'watch', '--sim-topology', 'standalone', '--interval', '200ms'])
    try {
      const port = Number((await waitForOutput(run, /embedded simulated standalone \(mongodb:\/\/127\.0\.0\.1:(\d+)\//))[1])
      await waitForOutput(run, /#2 127\.0\.0\.1:\d+/)
      process.kill(-run.child.pid!, 'SIGTERM')
      const code = await run.exited
      assert.doesNotMatch(run.out.stderr, NO_STACK)
      assert.notEqual(code, 1, run.out.stderr)
      assert.match(run.out.stdout, /\d+ rounds every 200 ms/, 'the summary was printed: the cluster answered its last round')
      await waitPortClosed(port)
    } finally {
      run.child.kill('SIGKILL')
    }
  })

  it('sim: SIGTERM to the group stops it cleanly (exit 0) and its cluster is gone', async () => {
    const run = spawnInOwnGroup(['sim', '--ndjson'])
    try {
      const started = JSON.parse((await waitForOutput(run, /^\{"type":"started".*\}$/m))[0])
      process.kill(-run.child.pid!, 'SIGTERM')
      assert.equal(await run.exited, 0, run.out.stderr)
      assert.doesNotMatch(run.out.stderr, NO_STACK)
      await waitPortClosed(started.ports[0])
    } finally {
      run.child.kill('SIGKILL')
    }
  })
})
