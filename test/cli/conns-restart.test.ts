/** A host that goes away during the watch is shown as unreachable, comes back, and the watch goes on. */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import {runCli} from '../helpers/cli.js'

describe('conns watch while a member restarts', () => {
  let sim: SimCluster
  before(async () => {
    sim = await startSimCluster({topology: 'replset', members: 3})
  })
  after(async () => {
    await sim?.stop()
  })

  it('shows the member unreachable, then back, and runs to the end', async () => {
    const victim = sim.info.processes.find((p) => p.role === 'secondary')!.host
    const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--duration', '7s', '--interval', '300ms', '--ndjson'], {timeoutMs: 40_000})
    // Restart once the watch has certainly begun (CLI start-up plus discovery take about a second).
    await new Promise((resolve) => setTimeout(resolve, 2500))
    await sim.control({kind: 'restart', downMs: 1500, hosts: [victim]})
    const run = await watching
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
    const states = lines.filter((l) => l.type === 'sample' && l.host === victim).map((s) => s.state as string)
    const firstDown = states.indexOf('unreachable')
    assert.ok(firstDown > 0, `never shown unreachable: ${states.join(',')}`)
    assert.ok(states.indexOf('ok', firstDown) > firstDown, `never came back: ${states.join(',')}`)
    const down = lines.find((l) => l.type === 'sample' && l.host === victim && l.state === 'unreachable')
    assert.equal(typeof down.error, 'string')
    assert.equal(down.current, undefined, 'no figures while unreachable')
    const back = lines.find((l) => l.type === 'sample' && l.host === victim && l.counterReset === true)
    assert.ok(back, 'the restart is visible as a counter reset')
    const summary = lines.at(-1)
    assert.equal(summary.type, 'summary')
    assert.equal(summary.interrupted, false)
    const host = summary.hosts.find((h: {host: string}) => h.host === victim)
    assert.ok(host.unreachableRounds >= 1)
    assert.equal(host.state, 'ok')
    assert.equal(host.samples + host.unreachableRounds, summary.rounds)
    // The other members answered every round.
    for (const h of summary.hosts.filter((x: {host: string}) => x.host !== victim)) assert.equal(h.unreachableRounds, 0)
  })
})
