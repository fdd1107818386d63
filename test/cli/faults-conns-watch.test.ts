/**
 * Fault matrix, `pooltool conns watch` column, on one standalone with auth (one host:
 * every fault hits the whole watched cluster). Each fault is injected once the watch
 * has printed two samples. Every run ends on its own at --duration with its summary;
 * a round the host does not answer is a marked sample (unreachable / unauthorized)
 * and the watch goes on, exit 0 (README: conns watch).
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import type {MongoClient} from 'mongodb'

import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import type {CliRun} from '../helpers/cli.js'
import {observer, runWithFault, waitUntilUp, withUser} from '../helpers/faults.js'

/** Two samples printed: the watch is past discovery and polling. */
const POLLING = {output: /"type":"sample"[\s\S]*"type":"sample"/}

interface Lines {
  samples: Array<{state: string; error?: string; round?: number}>
  summary: any
}

function linesOf(run: CliRun): Lines {
  const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
  const summary = lines.at(-1)
  assert.equal(summary.type, 'summary', 'the summary is the last line')
  return {samples: lines.filter((l) => l.type === 'sample'), summary}
}

function assertHonestSummary({samples, summary}: Lines): void {
  assert.equal(summary.interrupted, false)
  const [host] = summary.hosts
  assert.equal(host.samples + host.unreachableRounds, summary.rounds, 'every round is a sample or a marked round')
  assert.equal(samples.length, summary.rounds)
  for (const s of samples.filter((x) => x.state !== 'ok')) {
    assert.equal(typeof s.error, 'string')
    assert.equal(s.error!.includes('pooltool-sim'), false, 'credentials redacted')
  }
}

describe('fault matrix: conns watch', {timeout: 120_000}, () => {
  let sim: SimCluster
  let admin: MongoClient
  const args = (uri: string) => ['conns', 'watch', '--uri', uri, '--duration', '2s', '--interval', '200ms', '--timeout-ms', '800', '--no-holders', '--ndjson']

  before(async () => {
    sim = await startSimCluster({auth: true})
    admin = observer(sim.info.uri)
  })
  after(async () => {
    await admin?.close()
    await sim?.stop()
  })

  for (const fault of [{kind: 'drop-connections'}, {kind: 'restart', downMs: 500}] as const) {
    it(`${fault.kind}: the watch goes on and ends with the host answering, exit 0`, async () => {
      const {run} = await runWithFault(sim, args(sim.info.uri), POLLING, fault)
      assert.equal(run.code, 0, run.stderr)
      const lines = linesOf(run)
      assertHonestSummary(lines)
      assert.equal(lines.samples.at(-1)!.state, 'ok')
    })
  }

  it('stall past the round deadline: unanswered rounds are marked unreachable, then it answers again, exit 0', async () => {
    const {run} = await runWithFault(sim, args(sim.info.uri), POLLING, {kind: 'stall', ms: 1000})
    assert.equal(run.code, 0, run.stderr)
    const lines = linesOf(run)
    assertHonestSummary(lines)
    assert.ok(lines.summary.hosts[0].unreachableRounds >= 1)
    assert.equal(lines.samples.at(-1)!.state, 'ok')
  })

  it('stall past the end of the run: the last rounds are marked unreachable, the watch still ends with its summary, exit 0', async () => {
    // The stall outlasts what is left of --duration; overrunning rounds must not push the end (the watch stops by the clock).
    const {run} = await runWithFault(sim, args(sim.info.uri), POLLING, {kind: 'stall', ms: 4000})
    await waitUntilUp(sim.info.uri)
    assert.equal(run.code, 0, run.stderr)
    const lines = linesOf(run)
    assertHonestSummary(lines)
    assert.equal(lines.samples.at(-1)!.state, 'unreachable')
    assert.match(lines.samples.at(-1)!.error!, /no answer within/)
  })

  it('connection limit: rounds that get no connection are marked, the watch goes on to the end, exit 0', async () => {
    // Its connections are dropped and only one may come back: the watch's pooled and monitoring connections compete for it.
    const {run} = await runWithFault(sim, args(sim.info.uri), POLLING, async () => {
      await sim.control({kind: 'max-connections', max: 1})
      await sim.control({kind: 'drop-connections'})
    })
    await sim.control({kind: 'max-connections', max: 65_536})
    assert.equal(run.code, 0, run.stderr)
    assertHonestSummary(linesOf(run))
  })

  it('user dropped: later rounds are marked unauthorized, the summary is produced, exit 0', async () => {
    await admin.db('admin').command({createUser: 'connswatcher', pwd: 'connswatcher-pw', roles: [{role: 'clusterMonitor', db: 'admin'}]})
    const {run} = await runWithFault(sim, args(withUser(sim.info.uri, 'connswatcher', 'connswatcher-pw')), POLLING, async () => {
      await admin.db('admin').command({dropUser: 'connswatcher'})
    })
    assert.equal(run.code, 0, run.stderr)
    const lines = linesOf(run)
    assertHonestSummary(lines)
    assert.ok(lines.samples.some((s) => s.state === 'unauthorized'), JSON.stringify(lines.samples.map((s) => s.state)))
    assert.equal(run.stdout.includes('connswatcher-pw'), false)
  })

  // Last: the host stays down past the end of the run (the cluster is stopped after it).
  it('host lost: every later round is unreachable, the watch still ends at --duration with its summary, exit 0', async () => {
    const {run} = await runWithFault(sim, args(sim.info.uri), POLLING, {kind: 'restart', downMs: 60_000})
    assert.equal(run.code, 0, run.stderr)
    const lines = linesOf(run)
    assertHonestSummary(lines)
    assert.equal(lines.summary.hosts[0].state, 'unreachable')
    assert.equal(lines.samples.at(-1)!.state, 'unreachable')
  })
})
