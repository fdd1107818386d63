/**
 * Fault matrix, `pooltool locks watch` column, on one sharded cluster with auth (6.0:
 * config.locks is read through the router every poll). Each fault is injected once the
 * watch has polled a few times (the router's query counter is the trigger). Every run
 * ends on its own at --duration with its summary; a failed poll is a marked round
 * (failedPolls = pollFailures.length = the sum of failedPollsByReason) and the watch
 * goes on, so it exits 0 as long as polls answered (README: locks watch).
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import type {MongoClient} from 'mongodb'

import type {LocksWatchResult} from '../../src/locks/types.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {observer, runWithFault, serverFigureGrew, sum, withUser} from '../helpers/faults.js'
import {waitForState} from '../helpers/sim.js'

/** finds only: the observer's own serverStatus readings count as commands. */
const finds = (status: any): number => Number(status.opcounters?.query ?? 0)

/**
 * Each poll is bounded by --timeout-ms: 800 ms where the fault is a host that stops answering (its polls
 * must fail within the 3 s run); a fault the server answers (a refusal) gets a bound no loaded machine
 * reaches, since opening the session (hello, buildInfo, SCRAM for a new user) must not be what fails.
 */
const LOST_HOST_TIMEOUT_MS = 800
const ANSWERED_TIMEOUT_MS = 10_000

function assertHonestSummary(result: LocksWatchResult, timeoutMs = LOST_HOST_TIMEOUT_MS): void {
  assert.equal(result.failedPolls, result.pollFailures.length)
  assert.equal(result.failedPolls, sum(result.failedPollsByReason))
  assert.ok(result.polls >= result.failedPolls, `${result.polls} polls, ${result.failedPolls} failed`)
  assert.equal(result.interrupted, false)
  assert.equal(result.pollTimeoutMS, timeoutMs, 'each poll is bounded by --timeout-ms')
  assert.equal(result.target.uri.includes('pooltool-sim'), false, 'the envelope\'s URI is redacted')
  if (result.failedPolls > 0) assert.ok(result.notes.some((note) => /failed polls/.test(note)), `a note on failed polls: ${JSON.stringify(result.notes)}`)
  for (const f of result.pollFailures) {
    assert.equal(typeof f.error, 'string')
    assert.ok(f.error.length > 0, `poll ${f.poll} says why it failed`)
    assert.equal(f.error.includes('pooltool-sim'), false, 'credentials redacted')
  }
}

describe('fault matrix: locks watch', {timeout: 120_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '6.0', mongos: 1, shards: 1, auth: true})
  let router: string
  let config: string
  let watch: MongoClient
  /**
   * The fault lands about 0.4 s into the run (two polls); the rest of the 3 s is the room it has to
   * take effect before the run ends on its own, even when the machine is loaded (with 2 s, a loaded
   * machine could end the run before a poll met the fault).
   */
  const args = (uri: string, json = true, timeoutMs = LOST_HOST_TIMEOUT_MS) => ['locks', 'watch', '--uri', uri, '--duration', '3s', '--interval', '200ms', '--timeout-ms', String(timeoutMs), ...(json ? ['--json'] : [])]
  /** Two polls in (each poll runs four finds on the router), seen by the test: for faults the test itself causes. */
  const polling = () => serverFigureGrew(watch, finds, 8)
  /** The same mark, watched by the cluster, which fires the fault itself: a loaded machine cannot make it late. */
  const polled = () => ({armed: {host: router, opcounter: 'query' as const, grows: 8}})

  /** Waits until the router reads config.locks again (the config server is back). */
  async function configReadable(): Promise<void> {
    const readable = () => watch.db('config').collection('locks').findOne({}).then(() => true, () => false)
    await waitForState('the router reads config.locks again', readable, (ok) => ok)
  }

  before(() => {
    router = cluster.sim.info.processes.find((p) => p.role === 'mongos')!.host
    config = cluster.sim.info.processes.find((p) => p.role === 'config')!.host
    watch = observer(cluster.uri)
  })
  after(async () => {
    await watch?.close()
  })

  it('dropped sockets: the driver reconnects, the watch runs to the end, exit 0', async () => {
    // Spawned: every case of this matrix exits 0; this one proves the real process, the others run in this process.
    const {run} = await runWithFault(cluster.sim, args(cluster.uri), polled(), {kind: 'drop-connections', hosts: [router]})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<LocksWatchResult>(run)
    assertHonestSummary(result)
    assert.ok(result.polls > result.failedPolls, 'polls answered')
  })

  it('router stalls past --timeout-ms: timed-out polls are marked rounds on stderr, the summary counts them, exit 0', async () => {
    const {run} = await runWithFault(cluster.sim, args(cluster.uri, false), polled(), {kind: 'stall', ms: 1200, hosts: [router]}, {inProcess: true})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    assert.match(run.stderr, /poll \d+ failed \(timeout\): no answer within 800 ms \(--timeout-ms\)/)
    assert.match(run.stdout, /\d+ polls \(\d+ failed: \d+ timeout/)
  })

  it('router restarts: the watch resumes when it answers again, exit 0', async () => {
    const {run} = await runWithFault(cluster.sim, args(cluster.uri), polled(), {kind: 'restart', downMS: 500, hosts: [router]}, {inProcess: true})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<LocksWatchResult>(run)
    assertHonestSummary(result)
    const lastFailure = result.pollFailures.at(-1)?.poll ?? 0
    assert.ok(lastFailure < result.polls, 'the last poll answered again')
  })

  it('connection limit on the router: polls that get no connection are marked, the watch goes on, exit 0', async () => {
    // A refused connection is an answer (the server closes it at once): the long bound, so that opening the
    // session on a loaded machine is not what fails (a stress run saw discovery miss the 800 ms one).
    // The observer is closed before the limit: its monitor would reconnect and could keep the one connection, and
    // then the watch's monitor never reaches the router, every poll waits out server selection (the 10 s bound)
    // and the run ends 10-20 s late. Only the watch's own connections compete for it.
    const {run} = await runWithFault(cluster.sim, args(cluster.uri, true, ANSWERED_TIMEOUT_MS), polling(), async () => {
      await watch.close()
      await cluster.sim.control({kind: 'max-connections', max: 1, hosts: [router]})
      await cluster.sim.control({kind: 'drop-connections', hosts: [router]})
    }, {inProcess: true})
    await cluster.sim.control({kind: 'max-connections', max: 65_536, hosts: [router]})
    watch = observer(cluster.uri)
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    assertHonestSummary(parseJson<LocksWatchResult>(run), ANSWERED_TIMEOUT_MS)
  })

  it('user dropped: later polls are unauthorized, the summary is produced, exit 0', async () => {
    await watch.db('admin').command({createUser: 'lockwatcher', pwd: 'lockwatcher-pw', roles: [{role: 'clusterMonitor', db: 'admin'}, {role: 'read', db: 'config'}]})
    const {run} = await runWithFault(cluster.sim, args(withUser(cluster.uri, 'lockwatcher', 'lockwatcher-pw'), true, ANSWERED_TIMEOUT_MS), polling(), async () => {
      await watch.db('admin').command({dropUser: 'lockwatcher'})
    }, {inProcess: true})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<LocksWatchResult>(run)
    assertHonestSummary(result, ANSWERED_TIMEOUT_MS)
    assert.ok(result.failedPollsByReason.unauthorized >= 1, JSON.stringify(result.pollFailures))
    assert.ok(result.polls > result.failedPolls)
    assert.equal(run.stdout.includes('lockwatcher-pw'), false)
  })

  // Host lost, twice: the config server (the router answers with its error) and the router itself, each down past the end of the run.
  it('config server lost: polls fail as unreachable with the router\'s error, the watch ends at --duration, exit 0', async () => {
    const downMS = 4000
    const {run} = await runWithFault(cluster.sim, args(cluster.uri), polled(), {kind: 'restart', downMS, hosts: [config]}, {inProcess: true})
    // The run is over: the rest of the down time is no one's (the figures below were taken while it lasted).
    await cluster.sim.control({kind: 'recover', hosts: [config]})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<LocksWatchResult>(run)
    assertHonestSummary(result)
    assert.ok(result.failedPollsByReason.unreachable >= 1, JSON.stringify(result.pollFailures))
    // Every poll from the first that met the fault failed, up to the end or until the config server was back: a
    // poll answered only once the host was down no longer. (The run usually ends first, but on a loaded machine the
    // last poll at the end, itself bounded by one --timeout-ms, can start past the 4 s.)
    const failed = result.pollFailures.map((f) => f.poll)
    const first = failed[0]!
    const facts = JSON.stringify({polls: result.polls, failures: result.pollFailures, startedAt: result.startedAt, durationMS: result.durationMS})
    assert.deepEqual(failed, Array.from({length: failed.length}, (_, k) => first + k), `the failures are one run of polls: ${facts}`)
    const lastFailed = failed.at(-1)!
    if (lastFailed < result.polls) {
      // The fault came after the first poll began, so the host was back no sooner than downMS after it.
      const endedMS = Date.parse(result.startedAt) + result.durationMS
      assert.ok(endedMS >= Date.parse(result.startedAt) + downMS, `a poll answered before the config server was back: ${facts}`)
    }
    assert.match(result.pollFailures[0]!.error, /HostUnreachable|ECONNREFUSED/)
    await configReadable()
  })

  /**
   * A restart while the watch opens its session (hello, buildInfo, config's collections): the router had
   * answered (the handshake), so the watch rides it out as it does between polls: failed attempts are marked
   * polls, and the watch starts once the router answers again. On the file's cluster (a start of its own cost
   * a second sharded cluster), with no other client on the router: the armed trigger counts the router's
   * commands, and only the watch's may move it, so the observer is closed first (its heartbeats are commands)
   * and opened again for any case after it. The runs above closed their clients when they ended.
   */
  describe('a restart as it starts', () => {
    before(async () => {
      await watch.close()
    })
    after(async () => {
      watch = observer(cluster.uri)
      // The router, back from its restart, reads config.locks again before the next case's first poll (which must answer).
      await configReadable()
    })

    it('the router restarts before the first poll: the watch rides it out and starts when it is back, exit 0', async () => {
      // Two commands in: past the handshake, inside the session's first reads (before this change: exit 4 at once).
      // Down for as long as it takes the watch to mark the failed attempt, then brought back (a recover): the
      // watch must start on its own once the router answers, however long it was away.
      const armed = await cluster.sim.armFault({kind: 'restart', downMS: 60_000, hosts: [router]}, {host: router, opcounter: 'command', grows: 2})
      let recovering: Promise<void> | undefined
      // Spawned: stopped by a real SIGINT. Open-ended: stopped with Ctrl-C once it has started after a failed attempt (exit 0: nothing cut short).
      // The bound of an answered fault: the open's first reads must be answered before the router goes, and with
      // 800 ms a loaded machine (four test files at once) let that bound run out first (exit 4, never answered).
      // The failed attempt does not wait for it: the router's restart cuts the open's connections.
      const run = await runCli(['locks', 'watch', '--uri', cluster.uri, '--interval', '200ms', '--timeout-ms', String(ANSWERED_TIMEOUT_MS), '--ndjson'], {
        timeoutMs: 60_000,
        signalWhen: [[/"type":"pollFailure"[\s\S]*"type":"start"/, 'SIGINT']],
        onSpawn: (child) => {
          let out = ''
          child.stdout?.on('data', (chunk) => {
            out += String(chunk)
            if (!recovering && /"type":"pollFailure"/.test(out)) recovering = cluster.sim.control({kind: 'recover', hosts: [router]})
          })
        },
      })
      await recovering
      assert.ok(recovering, `the watch marked a failed attempt:\n${run.stdout}\n${run.stderr}`)
      assert.ok(await armed.disarm(), `the restart fired:\n${run.stdout}\n${run.stderr}`)
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line))
      const summary = lines.at(-1)
      assert.equal(summary.type, 'summary')
      assert.equal(summary.interrupted, true)
      assert.ok(summary.failedPolls >= 1, JSON.stringify(summary.pollFailures))
      assert.equal(summary.failedPolls, summary.pollFailures.length)
      assert.equal(summary.failedPolls, sum(summary.failedPollsByReason))
      assert.equal(summary.pollFailures[0].poll, 1, 'the failed open is the first poll')
      assert.equal(summary.pollFailures[0].reason, 'unreachable')
      assert.equal(summary.pollFailures[0].error.includes('pooltool-sim'), false, 'credentials redacted')
      assert.ok(summary.notes.some((note: string) => /failed polls/.test(note)), JSON.stringify(summary.notes))
    })
  })

  // Last: the router stays down past the end of the run (the cluster is stopped after it).
  it('router lost: every later poll is unreachable, the summary is produced, exit 0 (earlier polls answered)', async () => {
    const {run} = await runWithFault(cluster.sim, args(cluster.uri), polled(), {kind: 'restart', downMS: 60_000, hosts: [router]}, {inProcess: true})
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const result = parseJson<LocksWatchResult>(run)
    assertHonestSummary(result)
    assert.ok(result.failedPollsByReason.unreachable + result.failedPollsByReason.timeout >= 1, JSON.stringify(result.pollFailures))
    assert.equal(result.pollFailures.at(-1)?.poll, result.polls, `still failing at the end: ${JSON.stringify({polls: result.polls, failures: result.pollFailures, startedAt: result.startedAt, durationMS: result.durationMS})}`)
  })
})
