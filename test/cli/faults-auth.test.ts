/**
 * Fault matrix, `pooltool auth` column: every fault once the run has authenticated a
 * number of connections (the server's SCRAM-SHA-256 counter is the trigger). Each run
 * ends on its own (bounded --connections, --timeout-ms), its counts add up
 * (connectionsOpened = succeeded + failed + aborted, failed = the sum of errors), and
 * it exits as the README says: 0 when it rode the fault out, 4 with the partial
 * figures when the host stayed away, 5 when the credentials stopped working.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import type {MongoClient} from 'mongodb'

import type {AuthResult} from '../../src/auth/types.js'
import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer, runWithFault, serverFigureGrew, sum, withUser} from '../helpers/faults.js'

const CONNECTIONS = 20
/** Per mechanism: driver-free and driver, one at a time and in storms. */
const FULL = 4 * CONNECTIONS
const TIMEOUT_MS = 1500

const sha256Received = (status: any): number => Number(status.security?.authentication?.mechanisms?.['SCRAM-SHA-256']?.authenticate?.received ?? 0)

function assertHonestCounts(result: AuthResult): void {
  for (const m of result.mechanisms) {
    assert.equal(m.connectionsFailed, sum(m.errors), `${m.mechanism}: failed = the sum of errors`)
    assert.equal(m.connectionsOpened, m.connectionsSucceeded + m.connectionsFailed + m.connectionsAborted, `${m.mechanism}: every connection accounted for`)
  }
}

describe('fault matrix: auth', {timeout: 120_000}, () => {
  const cluster = useCluster({auth: true, scramIterationCount: 5000, scramSHA256IterationCount: 5000})
  let watch: MongoClient
  const args = (uri: string, pings = 50) => ['auth', '--uri', uri, '--mechanisms', 'none,SCRAM-SHA-256', '--connections', String(CONNECTIONS), '--pings', String(pings), '--timeout-ms', String(TIMEOUT_MS), '--json']
  const midRun = () => serverFigureGrew(watch, sha256Received, 8)

  before(() => {
    watch = observer(cluster.uri)
  })
  after(async () => {
    await watch?.close()
  })

  // Dropped sockets, a stall shorter than --timeout-ms and a short restart are ridden out:
  // a connection caught by the fault is counted as failed, the run measures every connection.
  for (const fault of [
    {kind: 'drop-connections'},
    {kind: 'stall', ms: 700},
    {kind: 'restart', downMS: 400},
  ] as const) {
    it(`${fault.kind}: rides it out, exit 0, every connection opened and accounted for`, async () => {
      // The first (exit 0) spawns the real process; the others run in this process (the path bin/run.js takes).
      const {run} = await runWithFault(cluster.sim, args(cluster.uri), midRun(), fault, {inProcess: fault.kind !== 'drop-connections'})
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      const result = parseJson<AuthResult>(run)
      assert.equal(result.error, undefined)
      assertHonestCounts(result)
      for (const m of result.mechanisms) assert.equal(m.connectionsOpened, FULL, `${m.mechanism} opened every connection`)
      assert.ok(result.mechanisms.every((m) => m.connectionsSucceeded > 0), `every mechanism measured something: ${JSON.stringify(result.mechanisms.map((m) => [m.mechanism, m.connectionsSucceeded]))}`)
    })
  }

  it('connection limit: connections beyond it fail and are counted; exit 0', async () => {
    // Storms of 10 against a limit of 4. pooltool's probe connection holds one of them and the observer up to three
    // (its monitor, its pool's one, and the driver's RTT pinger once it has streamed for 10 s, which after the restart
    // case depends on the machine's speed): then every measured connection is turned away, and each must fail at once.
    const {run} = await runWithFault(cluster.sim, args(cluster.uri), midRun(), {kind: 'max-connections', max: 4}, {inProcess: true})
    await cluster.sim.control({kind: 'max-connections', max: 65_536})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<AuthResult>(run)
    assertHonestCounts(result)
    const failed = result.mechanisms.reduce((n, m) => n + m.connectionsFailed, 0)
    assert.ok(failed > 0, `storms above the limit failed: ${JSON.stringify(result.mechanisms.map((m) => m.errors))}`)
    assert.ok(result.notes.some((n) => /connections failed/.test(n)), `a note counts the failed connections:\n${result.notes.join('\n')}`)
  })

  it('user dropped: stops at the refusal with what it measured, exit 5', async () => {
    await watch.db('admin').command({createUser: 'leaving', pwd: 'leaving-pw', roles: [{role: 'clusterMonitor', db: 'admin'}]})
    // Spawned: auth's exit-5 path in this matrix, the real process's secret guard included.
    const {run} = await runWithFault(cluster.sim, args(withUser(cluster.uri, 'leaving', 'leaving-pw')), midRun(), async () => {
      await watch.db('admin').command({dropUser: 'leaving'})
    })
    assert.equal(run.code, 5, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<AuthResult>(run)
    assert.equal(result.error?.code, 'AUTH_FAILED')
    assert.equal(result.error?.exitCode, 5)
    assertHonestCounts(result)
    const scram = result.mechanisms.find((m) => m.mechanism === 'SCRAM-SHA-256')!
    assert.ok(scram.connectionsSucceeded > 0, 'the figures before the drop are kept')
    assert.ok(scram.connectionsOpened < FULL, 'it stopped instead of failing every remaining connection')
    assert.ok((scram.errors.auth ?? 0) >= 1, `the refusal is counted as an auth error: ${JSON.stringify(scram.errors)}`)
    assert.equal(run.stdout.includes('leaving-pw'), false)
  })

  // Host lost: down for longer than the run has left (it gives up after --timeout-ms of silence); once the run has
  // ended, brought back at once (a recover) for the next case.
  it('host lost: stops within --timeout-ms of silence with the partial figures, exit 4', async () => {
    // Spawned: auth's exit-4 path in this matrix.
    const {run} = await runWithFault(cluster.sim, args(cluster.uri), midRun(), {kind: 'restart', downMS: 5000})
    await cluster.sim.control({kind: 'recover'})
    assert.equal(run.code, 4, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<AuthResult>(run)
    assert.equal(result.error?.code, 'UNREACHABLE')
    assert.match(result.error!.message, /stopped answering/)
    assertHonestCounts(result)
    const opened = result.mechanisms.reduce((n, m) => n + m.connectionsOpened, 0)
    assert.ok(opened > 0 && opened < FULL * result.mechanisms.length, `partial: ${opened} connections opened`)
    assert.ok(result.mechanisms.some((m) => m.connectionsSucceeded > 0), 'what was measured before the loss is reported')
  })

  // Last: lost during the pooled pings, after every measured connection (the cluster is stopped after it).
  it('host lost during the pooled pings: the connection figures are complete, the headline is missing, exit 4', async () => {
    const commands = (status: any): number => Number(status.opcounters?.command ?? 0)
    let connectionsDone: number | undefined
    const pinging = {
      // Every SCRAM-SHA-256 connection authenticated (4 x --connections), then a few hundred commands more: the pings run.
      server: async () => {
        const status = await watch.db('admin').command({serverStatus: 1})
        if (connectionsDone === undefined) {
          if (sha256Received(status) - baselineSha256 < FULL) return false
          connectionsDone = commands(status)
        }
        return commands(status) - connectionsDone >= 200
      },
    }
    const baselineSha256 = sha256Received(await watch.db('admin').command({serverStatus: 1}))
    const {run} = await runWithFault(cluster.sim, args(cluster.uri, 1_000_000), pinging, {kind: 'restart', downMS: 60_000}, {inProcess: true})
    assert.equal(run.code, 4, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<AuthResult>(run)
    assert.equal(result.error?.code, 'UNREACHABLE')
    assert.match(result.error!.message, /during the pooled pings/)
    assert.equal(result.pooledPingUs, null)
    assertHonestCounts(result)
    for (const m of result.mechanisms) assert.equal(m.connectionsOpened, FULL)
  })
})
