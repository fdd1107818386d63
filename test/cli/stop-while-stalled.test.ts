/**
 * Ctrl-C stops a one-shot read at once, also while a host stalls: one member of a replica set
 * holds every reply far longer than any test waits (10 min), so a command that finished its read
 * after "stopping" would run into the test's timeout; exit 130 can only come from stopping. The
 * signal goes when the command shows (its --debug driver log) that its reads are under way.
 */
import assert from 'node:assert/strict'
import type {ChildProcess} from 'node:child_process'
import {before, describe, it} from 'node:test'

import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer} from '../helpers/faults.js'
import {waitForState} from '../helpers/sim.js'

/** Longer than any run of this file: the stall is still in force whenever the command ends. */
const STALL_MS = 600_000

describe('Ctrl-C while a host stalls', {timeout: 120_000}, () => {
  const cluster = useCluster({topology: 'replset', members: 3})
  let stalled: string

  before(async () => {
    stalled = cluster.sim.info.processes.find((p) => p.role === 'secondary')!.host
    await cluster.sim.control({kind: 'stall', ms: STALL_MS, hosts: [stalled]})
  })

  it('conns list: stops at once with the hosts that answered, exit 130', async () => {
    // --timeout-ms as long as the stall: only Ctrl-C can end the read of the stalled member.
    const run = await runCli(['conns', 'list', '--uri', cluster.uri, '--timeout-ms', String(STALL_MS), '--no-holders', '--json', '--debug'], {
      timeoutMs: 60_000,
      // A host's poll started (its serverStatus leaves out the sections discovery's asks for: "sharding":0): the
      // round is under way, the stalled member's read with it.
      interruptWhen: /commandName: 'serverStatus'.*message: 'Command started'.*"sharding":0/,
    })
    assert.equal(run.code, 130, `${run.stdout}\n${run.stderr.split('\n').filter((l) => !l.startsWith('pooltool debug')).join('\n')}`)
    assert.match(run.stderr, /SIGINT received: stopping/)
    const result = parseJson(run)
    assert.equal(result.interrupted, true)
    assert.equal(result.hosts.some((h: {host: string}) => h.host === stalled), false, 'the stalled member is not listed as read')
    assert.ok(result.notes.some((n: string) => n.startsWith('stopped before') && n.includes(stalled)), JSON.stringify(result.notes))
  })
})

describe('auth: Ctrl-C while the host stalls', {timeout: 120_000}, () => {
  const cluster = useCluster({auth: true})

  it('stops at once, the connections in flight abandoned, partial results, exit 130', async () => {
    const watcher = observer(cluster.uri)
    let child: ChildProcess | undefined
    try {
      const running = runCli(['auth', '--uri', cluster.uri, '--timeout-ms', String(STALL_MS), '--connections', '400', '--json'], {
        timeoutMs: 60_000,
        onSpawn: (spawned) => (child = spawned),
      })
      // The passes are under way once the server has seen a few of the run's new connections; then the host stalls
      // (every reply held, pooltool's counter reads included) and Ctrl-C follows. Finishing would need the stall to end.
      await waitForState('the run has opened a few connections', () => watcher.db('admin').command({serverStatus: 1}).then((s) => Number(s.connections?.totalCreated ?? 0)), (() => {
        let first: number | undefined
        return (created: number) => created - (first ??= created) >= 20
      })())
      await cluster.sim.control({kind: 'stall', ms: STALL_MS})
      child!.kill('SIGINT')
      const run = await running
      assert.equal(run.code, 130, `${run.stdout}\n${run.stderr}`)
      const result = parseJson(run)
      assert.equal(result.interrupted, true)
      assert.ok(result.mechanisms.length > 0, 'the mechanisms measured until then are reported')
    } finally {
      await cluster.sim.control({kind: 'stall', ms: 0})
      await watcher.close()
    }
  })
})
