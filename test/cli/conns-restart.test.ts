/**
 * A host that goes away during the watch is shown as unreachable, comes back,
 * and the watch goes on. The restart is injected once the watch has printed
 * its second round; the watch is stopped (Ctrl-C) once the member has come
 * back and one more round is in: no step waits a fixed time.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {CliOutput} from '../helpers/output.js'

describe('conns watch while a member restarts', () => {
  const cluster = useCluster({topology: 'replset', members: 3})

  it('shows the member unreachable, then back, and goes on', async () => {
    const {sim} = cluster
    const victim = sim.info.processes.find((p) => p.role === 'secondary')!.host
    const out = new CliOutput()
    const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--interval', '300ms', '--ndjson'], {timeoutMs: 60_000, onSpawn: out.attach})
    const sampleOfVictim = (rest: string) => new RegExp(`"type":"sample"[^\\n]*"host":"${victim.replaceAll('.', '\\.')}"[^\\n]*${rest}`)
    await out.until(sampleOfVictim('"state":"ok"'))
    await out.until(/"type":"sample","round":2,/)
    await sim.control({kind: 'restart', downMS: 1500, hosts: [victim]})
    // Back: the first answer after the restart shows the counter reset.
    await out.until(sampleOfVictim('"counterReset":true'))
    await out.until(/"type":"sample","round":\d+,/, out.mark())
    out.signal()
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
    const summary = lines.at(-1)
    assert.equal(summary.type, 'summary')
    assert.equal(summary.interrupted, true, 'stopped by Ctrl-C')
    const host = summary.hosts.find((h: {host: string}) => h.host === victim)
    assert.ok(host.unreachableRounds >= 1, `unreachable rounds ${host.unreachableRounds}`)
    assert.equal(host.state, 'ok')
    assert.equal(host.samples + host.unreachableRounds, summary.rounds)
    // The other members answered every round.
    for (const h of summary.hosts.filter((x: {host: string}) => x.host !== victim)) assert.equal(h.unreachableRounds, 0, `${h.host} missed a round`)
  })
})

describe('conns watch with a member down at the start', () => {
  const cluster = useCluster({topology: 'replset', members: 3})

  it('polls it every round with its real error, and shows its figures as soon as it listens again', async () => {
    const {sim} = cluster
    const victim = sim.info.processes.find((p) => p.role === 'secondary')!.host
    // Down before the watch starts: its first poll fails. Long enough to outlast the CLI's start-up and first round.
    await sim.control({kind: 'restart', downMS: 6000, hosts: [victim]})
    const out = new CliOutput()
    const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--interval', '300ms', '--timeout-ms', '1000', '--no-holders', '--ndjson'], {timeoutMs: 60_000, onSpawn: out.attach})
    const victimSample = (rest: string) => new RegExp(`"type":"sample"[^\\n]*"host":"${victim.replaceAll('.', '\\.')}"[^\\n]*${rest}`)
    await out.until(victimSample('"state":"ok"[^\\n]*"current":\\d+'))
    out.signal()
    const run = await watching
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
    const samples = lines.filter((l) => l.type === 'sample' && l.host === victim)
    assert.equal(samples[0].state, 'unreachable', `the member was up at the first round: the test did not start with it down (${JSON.stringify(samples[0])})`)
    for (const s of samples.filter((x) => x.state !== 'ok')) {
      assert.doesNotMatch(s.error, /Topology is closed/i, 'the real error, not the closed client')
      assert.match(s.error, /ECONNREFUSED|refused|no answer within|timed out/i)
    }
    assert.equal(samples.at(-1).state, 'ok')
    const summary = lines.at(-1)
    const host = summary.hosts.find((h: {host: string}) => h.host === victim)
    assert.ok(host.samples >= 1)
    assert.equal(host.state, 'ok')
  })
})
