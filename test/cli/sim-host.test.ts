/** The parent-side host API: start failures, stop, and no orphan child when the parent dies. */
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {createServer} from 'node:net'
import {fileURLToPath} from 'node:url'
import {startSimCluster} from '../../src/sim/index.js'
import {delay, processAlive as alive} from '../helpers/sim.js'


describe('host API', () => {
  it('rejects with a clear error when the port is in use', async () => {
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
    const port = (blocker.address() as {port: number}).port
    try {
      await assert.rejects(startSimCluster({basePort: port}), (e: Error) => {
        assert.match(e.message, /embedded cluster could not start: cannot listen on 127\.0\.0\.1:\d+: address already in use/)
        return true
      })
    } finally {
      blocker.close()
    }
  })

  it('rejects a cluster that cannot start (unknown scenario) and stops cleanly otherwise', async () => {
    await assert.rejects(startSimCluster({topology: 'sharded', scenarios: ['no-such-scenario']}), /unknown scenario 'no-such-scenario'/)
    const sim = await startSimCluster({basePort: 0})
    assert.ok(alive(sim.info.pid))
    await sim.stop()
    assert.equal(alive(sim.info.pid), false)
    await sim.stop() // idempotent
    await assert.rejects(sim.control({kind: 'latency', ms: 1}), /not running|exited/)
  })

  it('the child exits when its parent is killed', async () => {
    const hostUrl = new URL('../../src/sim/host.ts', import.meta.url).href
    const script = `const {startSimCluster} = await import(${JSON.stringify(hostUrl)}); const s = await startSimCluster(); console.log('PID ' + s.info.pid); setInterval(() => {}, 1000)`
    const parent = spawn(process.execPath, ['--import', fileURLToPath(new URL('../helpers/ts-loader.mjs', import.meta.url)), '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const pid = await new Promise<number>((resolve, reject) => {
      let out = ''
      parent.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        const m = /PID (\d+)/.exec(out)
        if (m) resolve(Number(m[1]))
      })
      parent.once('exit', () => reject(new Error(`parent exited early: ${out}`)))
    })
    assert.ok(alive(pid))
    parent.kill('SIGKILL')
    for (let i = 0; i < 50 && alive(pid); i++) await delay(100)
    assert.equal(alive(pid), false, 'no orphan simulated cluster')
  })
})
