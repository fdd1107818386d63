/**
 * Fault matrix, `pooltool conns watch` column, on one standalone with auth (one host:
 * every fault hits the whole watched cluster). Each fault is injected once the watch
 * has printed two samples. A round the host does not answer is a marked sample
 * (unreachable / unauthorized) and the watch goes on (README: conns watch).
 *
 * Two shapes, neither waiting a fixed time:
 * - the host comes back (drop, restart, a stall shorter than a few rounds) or a
 *   state is reached (user dropped): the watch is open-ended and stopped with Ctrl-C
 *   once the output shows it (exit 0, `interrupted: true`);
 * - the fault lasts past the end (a long stall, the host lost, a connection limit):
 *   the watch ends on its own at --duration, by the clock, with its summary (exit 0).
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import type {MongoClient} from 'mongodb'

import type {SimFault} from '../../src/sim/index.js'
import {type CliRun, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer, runInProcessAttached, runWithFault, withUser} from '../helpers/faults.js'
import {CliOutput} from '../helpers/output.js'

/** Two samples printed: the watch is past discovery and polling. */
const POLLING = /"type":"sample"[\s\S]*"type":"sample"/

/** A sample, then (in a later round) one the host answered. */
const ANSWERED_AGAIN = /"type":"sample"[^\n]*\n[\s\S]*"type":"sample"[^\n]*"state":"ok"/

interface Lines {
  samples: Array<{state: string; error?: string; round?: number; counterReset?: boolean}>
  summary: any
}

function linesOf(run: CliRun): Lines {
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
  const summary = lines.at(-1)
  assert.equal(summary.type, 'summary', 'the summary is the last line')
  return {samples: lines.filter((l) => l.type === 'sample'), summary}
}

function assertHonestSummary({samples, summary}: Lines, interrupted: boolean): void {
  assert.equal(summary.interrupted, interrupted)
  const [host] = summary.hosts
  assert.equal(host.samples + host.unreachableRounds, summary.rounds, 'every round is a sample or a marked round')
  assert.equal(samples.length, summary.rounds)
  for (const s of samples.filter((x) => x.state !== 'ok')) {
    assert.equal(typeof s.error, 'string')
    assert.equal(s.error!.includes('pooltool-sim'), false, 'credentials redacted')
  }
}

describe('fault matrix: conns watch', {timeout: 180_000}, () => {
  const cluster = useCluster({auth: true})
  let admin: MongoClient
  const watchArgs = (uri: string) => ['conns', 'watch', '--uri', uri, '--interval', '200ms', '--timeout-ms', '800', '--no-holders', '--ndjson']
  const boundedArgs = (uri: string) => [...watchArgs(uri), '--duration', '2s']

  /**
   * An open-ended watch: `inject` once it is polling, then Ctrl-C once the output
   * printed after the fault was in place matches `reached`. A watch that never gets
   * there runs into runCli's timeout and the test fails.
   */
  async function watchThrough(uri: string, inject: () => Promise<unknown>, reached: RegExp, {inProcess = true} = {}): Promise<CliRun> {
    // In this process, Ctrl-C reaches the command's own SIGINT handler (runInProcessAttached); one case spawns the
    // real process and stops it with a real SIGINT (conns watch's exit-0 path).
    const out = new CliOutput()
    const running = inProcess ? runInProcessAttached(watchArgs(uri), out.attach, 60_000) : runCli(watchArgs(uri), {timeoutMs: 60_000, onSpawn: out.attach})
    running.catch(() => undefined)
    await out.until(POLLING)
    await inject()
    await out.until(reached, out.mark())
    out.signal()
    return running
  }

  before(() => {
    admin = observer(cluster.uri)
  })
  after(async () => {
    await admin?.close()
  })

  for (const fault of [{kind: 'drop-connections'}, {kind: 'restart', downMS: 500}] satisfies SimFault[]) {
    it(`${fault.kind}: the watch goes on and the host answers again, exit 0`, async () => {
      // After a restart the first answer shows the counter reset.
      const reached = fault.kind === 'restart' ? /"type":"sample"[^\n]*"counterReset":true/ : ANSWERED_AGAIN
      const run = await watchThrough(cluster.uri, () => cluster.sim.control(fault), reached, {inProcess: fault.kind !== 'drop-connections'})
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      const lines = linesOf(run)
      assertHonestSummary(lines, true)
      assert.equal(lines.samples.at(-1)!.state, 'ok')
      if (fault.kind === 'restart') assert.ok(lines.samples.some((s) => s.counterReset), 'the restart shows as a counter reset')
    })
  }

  it('stall past the round deadline: unanswered rounds are marked unreachable, then it answers again, exit 0', async () => {
    const run = await watchThrough(cluster.uri, () => cluster.sim.control({kind: 'stall', ms: 1000}), /"state":"unreachable"[\s\S]*"state":"ok"/)
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const lines = linesOf(run)
    assertHonestSummary(lines, true)
    assert.ok(lines.summary.hosts[0].unreachableRounds >= 1, `unreachable rounds ${lines.summary.hosts[0].unreachableRounds}`)
    assert.equal(lines.samples.at(-1)!.state, 'ok')
  })

  it('stall past the end of the run: the last rounds are marked unreachable, the watch still ends with its summary, exit 0', async () => {
    // The stall outlasts what is left of --duration; overrunning rounds must not push the end (the watch stops by the clock).
    // In this process (the path bin/run.js takes): the first open-ended case spawns the real process, exit 0 as here.
    const {run} = await runWithFault(cluster.sim, boundedArgs(cluster.uri), {output: POLLING}, {kind: 'stall', ms: 4000}, {inProcess: true})
    // The run is over: the rest of the stall is no one's (the figures below were taken while it lasted).
    await cluster.sim.control({kind: 'recover'})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const lines = linesOf(run)
    assertHonestSummary(lines, false)
    assert.equal(lines.samples.at(-1)!.state, 'unreachable')
    assert.match(lines.samples.at(-1)!.error!, /no answer within/)
  })

  it('connection limit: rounds that get no connection are marked, the watch goes on to the end, exit 0', async () => {
    // Its connections are dropped and only one may come back: the watch's pooled and monitoring connections compete for it.
    const {run} = await runWithFault(cluster.sim, boundedArgs(cluster.uri), {output: POLLING}, async () => {
      await cluster.sim.control({kind: 'max-connections', max: 1})
      await cluster.sim.control({kind: 'drop-connections'})
    }, {inProcess: true})
    await cluster.sim.control({kind: 'max-connections', max: 65_536})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    assertHonestSummary(linesOf(run), false)
  })

  it('user dropped: later rounds are marked unauthorized, the summary is produced, exit 0', async () => {
    await admin.db('admin').command({createUser: 'connswatcher', pwd: 'connswatcher-pw', roles: [{role: 'clusterMonitor', db: 'admin'}]})
    const uri = withUser(cluster.uri, 'connswatcher', 'connswatcher-pw')
    const run = await watchThrough(uri, () => admin.db('admin').command({dropUser: 'connswatcher'}), /"state":"unauthorized"/)
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const lines = linesOf(run)
    assertHonestSummary(lines, true)
    assert.ok(lines.samples.some((s) => s.state === 'unauthorized'), JSON.stringify(lines.samples.map((s) => s.state)))
    assert.equal(run.stdout.includes('connswatcher-pw'), false)
  })

  // Last: the host stays down past the end of the run (the cluster is stopped after it).
  it('host lost: every later round is unreachable, the watch still ends at --duration with its summary, exit 0', async () => {
    const {run} = await runWithFault(cluster.sim, boundedArgs(cluster.uri), {output: POLLING}, {kind: 'restart', downMS: 60_000}, {inProcess: true})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const lines = linesOf(run)
    assertHonestSummary(lines, false)
    assert.equal(lines.summary.hosts[0].state, 'unreachable')
    assert.equal(lines.samples.at(-1)!.state, 'unreachable')
  })
})
