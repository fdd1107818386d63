/**
 * The embedded cluster's process lifecycle, through the host API: it outlives its
 * parent's cleanup when the parent's process group is signalled, ignores signals sent
 * to it directly, leaves when the parent is gone, and its death is noticed without an
 * IPC error reaching the parent.
 */
import assert from 'node:assert/strict'
import {type ChildProcessWithoutNullStreams, spawn} from 'node:child_process'
import {createServer} from 'node:net'
import {describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

import {PoolToolError} from '../../src/errors.js'
import {type FiredFault, startSimCluster, unexpectedExitError} from '../../src/sim/index.js'
import {RawClient, delay, portOf, processAlive as alive} from '../helpers/sim.js'


/** Waits for the process to be gone; fails (rather than hangs) if it never goes. */
async function waitGone(pid: number, what: string): Promise<void> {
  const giveUpAt = Date.now() + 15_000
  while (alive(pid) && Date.now() < giveUpAt) await delay(50)
  assert.equal(alive(pid), false, what)
}

/**
 * The host unrefs the child between requests (library callers exit promptly), so a test
 * that only waits on `exited` or fault events holds the event loop itself.
 */
async function holdingTheLoop<T>(work: Promise<T>): Promise<T> {
  const keepAlive = setInterval(() => undefined, 1000)
  try {
    return await work
  } finally {
    clearInterval(keepAlive)
  }
}

async function pingAnswers(port: number): Promise<boolean> {
  const raw = await RawClient.open(port)
  try {
    return (await raw.command('admin', {ping: 1})).ok === 1
  } finally {
    await raw.close()
  }
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects if it exits first. */
function waitForLine(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (d: Buffer) => {
      out += d.toString()
      const m = pattern.exec(out)
      if (m) {
        child.stdout.off('data', onData)
        child.off('exit', onExit)
        resolve(m)
      }
    }
    const onExit = (code: number | null, signal: string | null) => reject(new Error(`parent exited (${signal ?? code}) before ${pattern}: ${out}`))
    child.stdout.on('data', onData)
    child.once('exit', onExit)
  })
}

/**
 * A parent that starts the cluster and, on a signal, "cleans up" until the test writes a
 * line on its stdin; then it exits, calling stop() first or (the disconnect path) not.
 * It runs in its own process group so the test can signal the whole group.
 */
function startParent(stopBeforeExit: boolean): ChildProcessWithoutNullStreams {
  const hostUrl = new URL('../../src/sim/host.ts', import.meta.url).href
  const script = `
    const {startSimCluster} = await import(${JSON.stringify(hostUrl)})
    const sim = await startSimCluster()
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {
      console.log('CLEANING UP after ' + signal)
      process.stdin.once('data', async () => {
        if (${stopBeforeExit}) await sim.stop()
        process.exit(0)
      })
    })
    console.log('READY ' + sim.info.pid + ' ' + sim.info.processes[0].port)
    setInterval(() => {}, 1000)
  `
  return spawn(process.execPath, ['--import', fileURLToPath(new URL('../helpers/ts-loader.mjs', import.meta.url)), '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
  })
}

describe('embedded cluster lifecycle', () => {
  for (const [signal, stopBeforeExit] of [['SIGTERM', true], ['SIGINT', false], ['SIGHUP', false]] as const) {
    it(`outlives the parent's cleanup when the group gets ${signal}, and is gone after the parent ${stopBeforeExit ? 'stops it' : 'exits without stopping it'}`, async () => {
      const parent = startParent(stopBeforeExit)
      const parentExited = new Promise<number | null>((resolve) => parent.once('exit', (code) => resolve(code)))
      try {
        const [, pid, port] = (await waitForLine(parent, /READY (\d+) (\d+)/)).map(Number) as [number, number, number]
        process.kill(-parent.pid!, signal)
        await waitForLine(parent, new RegExp(`CLEANING UP after ${signal}`))
        assert.ok(alive(pid), 'the cluster is still running while its parent cleans up')
        assert.equal(await pingAnswers(port), true, 'and still answers')
        parent.stdin.write('done\n')
        assert.equal(await parentExited, 0)
        await waitGone(pid, 'no cluster left behind after its parent exited')
      } finally {
        if (parent.exitCode === null && parent.signalCode === null) parent.kill('SIGKILL')
      }
    })
  }

  it('is gone when its parent is killed with SIGKILL during cleanup', async () => {
    const parent = startParent(true)
    try {
      const [, pid, port] = (await waitForLine(parent, /READY (\d+) (\d+)/)).map(Number) as [number, number, number]
      process.kill(-parent.pid!, 'SIGTERM')
      await waitForLine(parent, /CLEANING UP/)
      assert.equal(await pingAnswers(port), true)
      parent.kill('SIGKILL')
      await waitGone(pid, 'no orphan cluster after its parent was killed')
    } finally {
      parent.kill('SIGKILL')
    }
  })

  it('ignores SIGINT, SIGTERM and SIGHUP sent to the cluster process itself', async () => {
    const sim = await startSimCluster()
    try {
      const port = portOf(sim.info.processes[0].host)
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.kill(sim.info.pid, signal)
      assert.equal(await pingAnswers(port), true)
      assert.ok(alive(sim.info.pid))
    } finally {
      await sim.stop()
    }
    assert.deepEqual(await sim.exited, {requested: true, code: 0, signal: null})
  })

  it('reports a killed cluster through `exited`; stop() and control() then fail quietly, with no IPC error', async () => {
    const sim = await startSimCluster()
    process.kill(sim.info.pid, 'SIGKILL')
    // Straight after the kill, before the exit is known: the stop message may hit a closed channel (EPIPE).
    await sim.stop()
    assert.deepEqual(await sim.exited, {requested: true, code: null, signal: 'SIGKILL'})
    await sim.stop()
    await assert.rejects(sim.control({kind: 'latency', ms: 1}), /not running|exited/)

    const other = await startSimCluster()
    process.kill(other.info.pid, 'SIGKILL')
    assert.deepEqual(await holdingTheLoop(other.exited), {requested: false, code: null, signal: 'SIGKILL'}, 'an unexpected death is told apart')
    await assert.rejects(other.control({kind: 'latency', ms: 1}), /not running|exited/)
    await other.stop()
  })

  it('an unexpected death is 9 when killed from outside, 1 when the cluster exited by itself', () => {
    const killed = unexpectedExitError({requested: false, code: null, signal: 'SIGKILL'}, 42)
    assert.deepEqual([killed.code, killed.exitCode], ['SERVER_ERROR', 9])
    assert.equal(killed.message, 'the embedded cluster (pid 42) was killed by SIGKILL; nothing is serving its URI any more')
    const exited = unexpectedExitError({requested: false, code: 3, signal: null}, 42)
    assert.deepEqual([exited.code, exited.exitCode], ['INTERNAL', 1])
    assert.match(exited.message, /exited with code 3/)
  })

  it('tells the parent each scheduled fault as it fires, in order, replaying those fired before subscribing', async () => {
    const sim = await startSimCluster({
      faultSchedule: [
        {atMs: 0, fault: {kind: 'latency', ms: 1}},
        {atMs: 50, fault: {kind: 'setup-cost', ms: 0, hosts: ['127.0.0.1:1']}},
        {atMs: 100, fault: {kind: 'stall', ms: 10}},
      ],
    })
    try {
      const seen: FiredFault[] = []
      const allThree = new Promise<void>((resolve) =>
        sim.onFaultFired((event) => {
          seen.push(event)
          if (seen.length === 3) resolve()
        }),
      )
      await holdingTheLoop(allThree)
      assert.deepEqual(
        seen.map((e) => [e.atMS, e.fault.kind, e.ok]),
        [
          [0, 'latency', true],
          [50, 'setup-cost', false],
          [100, 'stall', true],
        ],
      )
      assert.match(seen[1]!.error ?? '', /no simulated process matches/)
      assert.ok(!Number.isNaN(Date.parse(seen[0]!.at)))
      const late: FiredFault[] = []
      sim.onFaultFired((event) => late.push(event))
      assert.equal(late.length, 3, 'a late subscriber gets the faults that already fired')
    } finally {
      await sim.stop()
    }
  })

  it('stops cleanly during a restart fault without waiting out its down time', async () => {
    const sim = await startSimCluster({faultSchedule: [{atMs: 0, fault: {kind: 'restart', downMS: 60_000}}]})
    await holdingTheLoop(new Promise<void>((resolve) => sim.onFaultFired(() => resolve())))
    await sim.stop()
    // 0, not the child's "stop overran" code (70) nor a SIGKILL from stop()'s grace timer.
    assert.deepEqual(await sim.exited, {requested: true, code: 0, signal: null})
  })

  it('classifies start failures: a port in use and a bad option are usage errors', async () => {
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
    const port = (blocker.address() as {port: number}).port
    try {
      await assert.rejects(startSimCluster({basePort: port}), (e: unknown) => {
        assert.ok(e instanceof PoolToolError, String(e))
        assert.equal(e.exitCode, 2)
        assert.match(e.message, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: address already in use`))
        assert.match(e.hint, /--port 0/)
        return true
      })
    } finally {
      blocker.close()
    }
    await assert.rejects(startSimCluster({scenarios: ['dead-lock-holder']}), (e: unknown) => {
      assert.ok(e instanceof PoolToolError, String(e))
      assert.equal(e.exitCode, 2)
      assert.match(e.message, /needs --topology sharded/)
      return true
    })
    await assert.rejects(startSimCluster({topology: 'replset', members: 3, basePort: 65534}), (e: unknown) => {
      assert.ok(e instanceof PoolToolError, String(e))
      assert.equal(e.exitCode, 2)
      assert.match(e.message, /ports 65534-65536 are needed for 3 processes/)
      return true
    })
  })
})
