/**
 * `pooltool auth` end to end: the built CLI against the embedded cluster with auth
 * (SCRAM iteration counts 10000 for SHA-1, 15000 for SHA-256). Assertions are
 * orderings and exact counts, never absolute times.
 *
 * Spawned, one per exit path: the default run (0), the wrong password in text (5, the real
 * secret guard), the missing SCRAM-SHA-1 credentials (2) and Ctrl-C (130, a real SIGINT). The
 * other runs go through this process (test/helpers/in-process.ts, the path bin/run.js takes).
 * The standalone cluster is shared by every standalone case, Ctrl-C last.
 */
import assert from 'node:assert/strict'
import type {ChildProcess} from 'node:child_process'
import {before, describe, it} from 'node:test'

import {MongoClient} from 'mongodb'

import type {AuthResult, MechanismResult} from '../../src/auth/types.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {waitForState} from '../helpers/sim.js'

const PASSWORD = 'pooltool-sim'

function withUser(uri: string, user: string, pwd: string): string {
  return uri.replace(/^mongodb:\/\/[^@]*@/, `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(pwd)}@`)
}

const byName = (result: AuthResult, name: string): MechanismResult => {
  const m = result.mechanisms.find((x) => x.mechanism === name)
  assert.ok(m, `${name} measured`)
  return m
}

describe('pooltool auth', () => {
  const cluster = useCluster({auth: true, scramIterationCount: 10_000, scramSHA256IterationCount: 15_000})
  let uri: string
  /** The default run, shared by the assertions on it. */
  let baseline: AuthResult

  before(async () => {
    uri = cluster.uri
    const root = new MongoClient(uri)
    try {
      const admin = root.db('admin')
      await admin.command({createUser: 'nomonitor', pwd: 'nomonitor-pw', roles: [{role: 'readWrite', db: 'app'}]})
      await admin.command({createUser: 'sha256only', pwd: 'sha256only-pw', roles: [{role: 'clusterMonitor', db: 'admin'}], mechanisms: ['SCRAM-SHA-256']})
      // A user whose credentials are created with 10x the iteration counts (see 'costs more' below); then back to the defaults.
      await admin.command({setParameter: 1, scramIterationCount: 100_000})
      await admin.command({setParameter: 1, scramSHA256IterationCount: 150_000})
      await admin.command({createUser: 'slow', pwd: 'slow-pw', roles: [{role: 'clusterMonitor', db: 'admin'}]})
      await admin.command({setParameter: 1, scramIterationCount: 10_000})
      await admin.command({setParameter: 1, scramSHA256IterationCount: 15_000})
    } finally {
      await root.close()
    }
    // Spawned: the real process of auth's exit-0 path. The other runs in this file that a signal does not stop run in
    // this process (test/helpers/in-process.ts, the path bin/run.js takes), but one per exit code stays spawned.
    const run = await runCli(['auth', '--uri', uri, '--connections', '20', '--parallel', '5', '--pings', '100', '--json'])
    assert.equal(run.code, 0, run.stderr)
    baseline = parseJson<AuthResult>(run)
  })

  it('measures none, SCRAM-SHA-1 and SCRAM-SHA-256 by default with the contract fields', () => {
    assert.deepEqual(baseline.mechanisms.map((m) => m.mechanism), ['none', 'SCRAM-SHA-1', 'SCRAM-SHA-256'])
    assert.equal(baseline.target.uri.includes(PASSWORD), false)
    assert.deepEqual({source: baseline.target.source, simulated: baseline.target.simulated}, {source: '--uri', simulated: false}, 'the envelope: a --uri target')
    assert.equal(baseline.interrupted, false)
    assert.ok(Array.isArray(baseline.notes), 'notes is a list')
    const standalone = cluster.sim.info.processes[0]!
    assert.deepEqual({host: baseline.measuredHost?.host, role: baseline.measuredHost?.role, topology: baseline.measuredHost?.topology}, {host: standalone.host, role: 'standalone', topology: 'standalone'})
    assert.ok(baseline.measuredHost!.maxWireVersion! >= 9, `wire version of the 7.0 profile: ${baseline.measuredHost!.maxWireVersion}`)
    for (const m of baseline.mechanisms) {
      assert.equal(m.connections, 20)
      assert.equal(m.parallel, 5)
      assert.equal(m.connectionsOpened, 80, 'driver-free and driver, one at a time and in storms')
      for (const key of ['p50', 'p99', 'max'] as const) assert.ok(m.setupUs![key] > 0, `${m.mechanism} setupUs.${key}`)
      // The driver's own connectionReady.durationMS is whole milliseconds, shown in µs: never pooltool's finer clock.
      for (const key of ['p50', 'p99', 'max'] as const) {
        assert.equal(m.connectionReadyDurationUs![key] % 1000, 0, `${m.mechanism} connectionReadyDurationUs.${key} ${m.connectionReadyDurationUs![key]}`)
      }
      assert.ok(m.tcpConnectUs!.p50 > 0 && m.tcpConnectUs!.p99 >= m.tcpConnectUs!.p50, `${m.mechanism} tcpConnectUs ${JSON.stringify(m.tcpConnectUs)}`)
      assert.ok(m.authUs!.p99 >= m.authUs!.p50, `${m.mechanism} authUs ${JSON.stringify(m.authUs)}`)
      assert.ok(m.connectionsPerSec! > 0, `${m.mechanism} connectionsPerSec ${m.connectionsPerSec}`)
      assert.ok(m.storm.driverFree!.connectionsPerSec! > 0, `${m.mechanism} driver-free storm connectionsPerSec ${m.storm.driverFree?.connectionsPerSec}`)
      assert.deepEqual(m.errors, {})
    }
    assert.ok(baseline.pooledPingUs!.p50 > 0 && baseline.pooledPingUs!.count === 100, `pooledPingUs ${JSON.stringify(baseline.pooledPingUs)}`)
    assert.equal(baseline.headlineMechanism, 'SCRAM-SHA-256')
    assert.ok(baseline.costInPooledOps! > 0, `costInPooledOps ${baseline.costInPooledOps}`)
    assert.equal(baseline.costInPooledOps, byName(baseline, 'SCRAM-SHA-256').costInPooledOps)
  })

  // Whether SHA-256 at 15000 iterations costs more than SHA-1 at 10000 depends on the CPU (SHA extensions)
  // and on the machine's load, not on pooltool: that the figure follows the iteration count is checked
  // with one user at 10x the counts below ('a user created under higher iteration counts costs more').
  it('orders authUs: either SCRAM mechanism > none, with the iteration counts of the credentials', () => {
    const none = byName(baseline, 'none')
    const sha1 = byName(baseline, 'SCRAM-SHA-1')
    const sha256 = byName(baseline, 'SCRAM-SHA-256')
    assert.equal(none.authUs!.p50, 0)
    assert.ok(sha1.authUs!.p50 > none.authUs!.p50, `SHA-1 ${sha1.authUs!.p50}µs > none ${none.authUs!.p50}µs`)
    assert.ok(sha256.authUs!.p50 > none.authUs!.p50, `SHA-256 ${sha256.authUs!.p50}µs > none ${none.authUs!.p50}µs`)
    assert.equal(sha1.iterationCount, 10_000)
    assert.equal(sha256.iterationCount, 15_000)
    assert.deepEqual(baseline.serverIterationCounts, {scramIterationCount: 10_000, scramSHA256IterationCount: 15_000})
  })

  it('reports round trips with speculative authentication (7.0 profile)', () => {
    assert.equal(byName(baseline, 'none').roundTrips, 1)
    for (const name of ['SCRAM-SHA-1', 'SCRAM-SHA-256']) {
      assert.equal(byName(baseline, name).roundTrips, 2)
      assert.equal(byName(baseline, name).speculative, true)
    }
  })

  it('accounts the server auth counters exactly: one authentication per SCRAM connection, none for none', () => {
    assert.deepEqual(baseline.serverCounters, {available: true})
    for (const name of ['SCRAM-SHA-1', 'SCRAM-SHA-256']) {
      const m = byName(baseline, name)
      assert.equal(m.serverAuthCounters!.received, m.connectionsOpened)
      assert.equal(m.serverAuthCounters!.successful, m.connectionsOpened)
      assert.equal(m.serverAuthCounters!.speculativeSuccessful, m.connectionsOpened)
      assert.equal(m.authenticationsExpected, m.connectionsOpened)
    }
    const none = byName(baseline, 'none')
    assert.deepEqual({received: none.serverAuthCounters!.received, successful: none.serverAuthCounters!.successful}, {received: 0, successful: 0})
    assert.ok(!baseline.notes.some((n) => /other clients/.test(n)), baseline.notes.join('\n'))
  })

  it('shows that a user created under higher iteration counts costs more', async () => {
    // authUs is wall time (PBKDF2 and the round trips), so the machine's load is in it. Against 4x the counts and the
    // spawned baseline of before() (a cold process, another moment of the load), the raised count's ~9 ms of PBKDF2
    // lost to load once in ten runs beside a busy core; against a control run just before it, once in fifty. Now the
    // user at the default counts is measured in this process right before and right after the slow one, with the same
    // options, and the slow one must cost more than the less disturbed of the two; at 10x the counts its PBKDF2 alone
    // (~30 ms for SHA-1 here) is several times a default login.
    const args = ['--mechanisms', 'SCRAM-SHA-1,SCRAM-SHA-256', '--connections', '10', '--parallel', '5', '--pings', '20', '--json']
    const measureDefaults = async (): Promise<AuthResult> => {
      const control = await runInProcess(['auth', '--uri', uri, ...args])
      assert.equal(control.code, 0, control.stderr)
      return parseJson<AuthResult>(control)
    }
    const earlier = await measureDefaults()
    const run = await runInProcess(['auth', '--uri', withUser(uri, 'slow', 'slow-pw'), ...args])
    assert.equal(run.code, 0, run.stderr)
    const slow = parseJson<AuthResult>(run)
    const later = await measureDefaults()
    assert.deepEqual(slow.mechanisms.map((m) => m.mechanism), ['SCRAM-SHA-1', 'SCRAM-SHA-256'])
    assert.equal(byName(slow, 'SCRAM-SHA-1').iterationCount, 100_000)
    assert.equal(byName(slow, 'SCRAM-SHA-256').iterationCount, 150_000)
    for (const name of ['SCRAM-SHA-1', 'SCRAM-SHA-256']) {
      for (const control of [earlier, later]) assert.equal(byName(control, name).iterationCount, name === 'SCRAM-SHA-1' ? 10_000 : 15_000)
      const quickerControl = Math.min(byName(earlier, name).authUs!.p50, byName(later, name).authUs!.p50)
      assert.ok(byName(slow, name).authUs!.p50 > quickerControl, `${name}: raised count costs more (${byName(slow, name).authUs!.p50} µs against ${quickerControl})`)
    }
    // The server now creates passwords with 10000/15000 again: the user's credential still says otherwise.
    assert.ok(slow.notes.some((n) => /SCRAM-SHA-256: the user's credential uses i=150000, the server now creates new passwords with 15000/.test(n)), slow.notes.join('\n'))
  })

  it('fails with exit 5 on a wrong password, in one line, without the password', async () => {
    const wrong = 'Wrong-Secret-123'
    // Spawned: auth's exit-5 path, the secret guard of the real process included.
    const run = await runCli(['auth', '--uri', withUser(uri, 'pooltool', wrong), '--connections', '2', '--parallel', '1'])
    assert.equal(run.code, 5)
    assert.equal(run.stdout, '')
    assert.match(run.stderr, /^Error \[AUTH_FAILED\]: authentication failed at mongodb:\/\/<credentials>@127\.0\.0\.1:\d+\/\?authSource=admin \(hint: .*\)\n$/)
    assert.equal(`${run.stdout}${run.stderr}`.includes(wrong), false)
    const json = await runInProcess(['auth', '--uri', withUser(uri, 'pooltool', wrong), '--json'])
    assert.equal(json.code, 5)
    assert.equal(parseJson(json).error.code, 'AUTH_FAILED')
    assert.equal(`${json.stdout}${json.stderr}`.includes(wrong), false)
  })

  it('still reports for a user without clusterMonitor: counters missing with the reason', async () => {
    const run = await runInProcess(['auth', '--uri', withUser(uri, 'nomonitor', 'nomonitor-pw'), '--connections', '3', '--parallel', '3', '--pings', '20', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson<AuthResult>(run)
    assert.equal(result.serverCounters.available, false)
    assert.match(result.serverCounters.reason!, /^serverStatus: not authorized on admin to execute command .*\(the user needs the clusterMonitor role\)$/)
    assert.match(result.serverIterationCounts.unavailable!, /getParameter: not authorized/)
    for (const m of result.mechanisms) {
      assert.equal(m.serverAuthCounters, null)
      assert.match(m.serverAuthCountersUnavailable!, /not authorized/)
      assert.ok(m.setupUs!.p50 > 0, `${m.mechanism} setupUs.p50 ${m.setupUs?.p50}`)
    }
    assert.equal(byName(result, 'SCRAM-SHA-256').iterationCount, 15_000, 'the count still comes from the server-first message')

    const text = await runInProcess(['auth', '--uri', withUser(uri, 'nomonitor', 'nomonitor-pw'), '--connections', '2', '--parallel', '1', '--pings', '10'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /unavailable: serverStatus: not authorized/)
    assert.match(text.stdout, /Headline: one new authenticated connection \(SCRAM-SHA-256\) costs as much as [\d.]+ pooled pings/)
    assert.equal(`${text.stdout}${text.stderr}`.includes('nomonitor-pw'), false)
  })

  it('rejects a mechanism the user has no credentials for, and measures only what it has by default', async () => {
    const only256 = withUser(uri, 'sha256only', 'sha256only-pw')
    // Spawned: auth's exit-2 path.
    const run = await runCli(['auth', '--uri', only256, '--mechanisms', 'SCRAM-SHA-1', '--connections', '2', '--parallel', '1'])
    assert.equal(run.code, 2)
    assert.match(run.stderr, /^Error \[USAGE\]: the URI's user has no SCRAM-SHA-1 credentials \(the server lists SCRAM-SHA-256 for it\) \(hint: .*\)\n$/)
    const defaults = await runInProcess(['auth', '--uri', only256, '--connections', '2', '--parallel', '2', '--pings', '10', '--json'])
    assert.equal(defaults.code, 0, defaults.stderr)
    assert.deepEqual(parseJson<AuthResult>(defaults).mechanisms.map((m) => m.mechanism), ['none', 'SCRAM-SHA-256'])
  })

  it('rejects an unknown mechanism and --parallel above --connections with exit 2', async () => {
    const unknown = await runInProcess(['auth', '--uri', uri, '--mechanisms', 'PLAIN'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /^Error \[USAGE\]: unknown mechanism 'PLAIN' in --mechanisms: pooltool auth measures none, SCRAM-SHA-1, SCRAM-SHA-256/)
    const storm = await runInProcess(['auth', '--uri', uri, '--connections', '4', '--parallel', '8'])
    assert.equal(storm.code, 2)
    assert.match(storm.stderr, /^Error \[USAGE\]: --parallel 8 is above --connections 4/)
    assert.equal(storm.stderr.trim().split('\n').length, 1)
  })

  it('runs a small --connections with the default --parallel (it follows --connections down)', async () => {
    const run = await runInProcess(['auth', '--uri', uri, '--mechanisms', 'none', '--connections', '3', '--pings', '10', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const [none] = parseJson<AuthResult>(run).mechanisms
    assert.equal(none!.parallel, 3)
    assert.equal(none!.connectionsOpened, 12)
  })

  it('says a URI authMechanism the server does not offer is a usage error (exit 2), not a server error', async () => {
    const plain = uri.replace('?', '?authMechanism=PLAIN&')
    assert.notEqual(plain, uri)
    const run = await runInProcess(['auth', '--uri', plain, '--connections', '2'])
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /^Error \[USAGE\]: the server does not offer authMechanism=PLAIN from the URI \(hint: .*\)\n$/)
  })

  // Last in this block: it leaves the cluster mid-run (connections aborted by Ctrl-C).
  it('stops on Ctrl-C with what it measured and exit 130', async () => {
    // Ctrl-C once the server has counted some SCRAM-SHA-256 authentications of the run (not after a fixed time).
    const observer = new MongoClient(cluster.uri, {directConnection: true, maxPoolSize: 1})
    const received = async () => Number((await observer.db('admin').command({serverStatus: 1})).security?.authentication?.mechanisms?.['SCRAM-SHA-256']?.authenticate?.received ?? 0)
    let child: ChildProcess | undefined
    try {
      const baseline = await received()
      // 500 connections per pass: the first SCRAM-SHA-256 ones come after 100 unauthenticated ones, and thousands
      // more of the run are still to come when the signal lands.
      const running = runCli(['auth', '--uri', cluster.uri, '--connections', '500', '--parallel', '10', '--json'], {onSpawn: (c) => (child = c)})
      await waitForState('10 SCRAM-SHA-256 authentications of the run', received, (n) => n - baseline >= 10)
      child!.kill('SIGINT')
      const run = await running
      assert.equal(run.code, 130, run.stderr)
      const result = parseJson<AuthResult>(run)
      assert.equal(result.interrupted, true)
      assert.equal(result.pooledPingUs, null)
      assert.ok(result.mechanisms.length > 0, 'mechanisms measured before Ctrl-C are reported')
      for (const m of result.mechanisms) assert.equal(m.connectionsOpened, m.connectionsSucceeded + m.connectionsFailed + m.connectionsAborted)
    } finally {
      await observer.close()
    }
  })
})

describe('pooltool auth on a replica set', () => {
  const cluster = useCluster({topology: 'replset', auth: true, members: 3})

  it('measures on the primary and counts its authentications there', async () => {
    const run = await runInProcess(['auth', '--uri', cluster.uri, '--mechanisms', 'none,SCRAM-SHA-256', '--connections', '4', '--parallel', '2', '--pings', '20', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson<AuthResult>(run)
    const primary = cluster.sim.info.processes.find((p) => p.role === 'primary')!
    assert.deepEqual({host: result.measuredHost?.host, role: result.measuredHost?.role, topology: result.measuredHost?.topology}, {host: primary.host, role: 'primary', topology: 'replset'})
    const sha256 = byName(result, 'SCRAM-SHA-256')
    assert.equal(sha256.serverAuthCounters!.received, 16)
    assert.equal(sha256.serverAuthCounters!.successful, 16)
    assert.equal(byName(result, 'none').serverAuthCounters!.received, 0)
  })
})

describe('pooltool auth on a sharded cluster', () => {
  const cluster = useCluster({topology: 'sharded', auth: true, mongos: 2, shards: 1, shardMembers: 1, configMembers: 1})

  it('measures on the router the URI names first, as discovery names it', async () => {
    const run = await runInProcess(['auth', '--uri', cluster.uri, '--mechanisms', 'none,SCRAM-SHA-256', '--connections', '2', '--parallel', '1', '--pings', '10', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson<AuthResult>(run)
    const firstRouter = /^mongodb:\/\/[^@]*@([^,/]+)/.exec(cluster.uri)?.[1]
    assert.deepEqual({host: result.measuredHost?.host, role: result.measuredHost?.role, topology: result.measuredHost?.topology}, {host: firstRouter, role: 'mongos', topology: 'sharded'})
    assert.equal(byName(result, 'SCRAM-SHA-256').connectionsSucceeded, 8)
  })
})
