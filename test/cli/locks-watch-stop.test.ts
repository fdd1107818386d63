/** `locks watch` stopped by Ctrl-C, also while the router stalls: the summary is printed and the exit code says it was cut short. */
import assert from 'node:assert/strict'
import {before, describe, it} from 'node:test'

import {runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'

describe('locks watch stopped by a signal', {timeout: 60_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '6.0', mongos: 2, shards: 1})
  /** Two routers: each test stalls its own, so none waits for another's stall to end. */
  let routers: string[]
  before(() => {
    routers = cluster.sim.info.processes.filter((p) => p.role === 'mongos').map((p) => p.host)
  })

  it('Ctrl-C during a stalled poll ends at once with the summary; a cut-short --duration exits 130', async () => {
    let stalled = false
    const router = routers[0]!
    const run = await runCli(['locks', 'watch', '--uri', `mongodb://${router}/`, '--duration', '60s', '--interval', '100ms', '--timeout-ms', '30000'], {
      timeoutMs: 20_000,
      // Once the watch has started, stall the router for longer than the test may take, then press Ctrl-C:
      // the poll in flight and the session's close both meet the stall.
      onSpawn: (child) => {
        child.stdout?.on('data', (chunk) => {
          if (stalled || !/config\.locks written by/.test(String(chunk))) return
          stalled = true
          void cluster.sim.control({kind: 'stall', ms: 25_000, hosts: [router]}).then(() => child.kill('SIGINT'))
        })
      },
    })
    assert.equal(run.code, 130, run.stderr)
    assert.match(run.stdout, /\d+ polls .*\(interrupted\)/)
    assert.doesNotMatch(run.stderr, /failed \(/, 'the interrupted poll is not a failure of the cluster')
  })

  it('locks list and pings against a stalled router give up after --timeout-ms: exit 4, one line', async () => {
    const router = routers[1]!
    await cluster.sim.control({kind: 'stall', ms: 25_000, hosts: [router]})
    for (const command of ['list', 'pings']) {
      const run = await runCli(['locks', command, '--uri', `mongodb://${router}/`, '--timeout-ms', '500'], {timeoutMs: 15_000})
      assert.equal(run.code, 4, run.stderr)
      assert.match(run.stderr, /^Error \[UNREACHABLE\]: .* (did not answer within 500 ms \(--timeout-ms\)|cannot reach)/)
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
    }
  })
})

