/**
 * `conns watch` / `conns list` through the built CLI against an embedded
 * replica set: every member found, the JSON contract, ndjson, the snapshot,
 * and bad input with its exit codes.
 *
 * Runs that need no process of their own go through this process, by the path bin/run.js takes
 * (test/helpers/in-process.ts: the same code over real TCP, output and exit code captured),
 * sparing a Node start and CLI load each. Spawned stay the Ctrl-C cases: a signal needs a
 * process, and they are conns watch's exit 0 (interrupted) and 130 as a real process. Plain
 * rows on a real process's pipe are spawned in conventions and sim-lifecycle, a real process
 * starting its own embedded cluster in conventions, metrics-export and html-report; the bad
 * input's exit paths are spawned in bad-input.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const NO_STACK = /^\s+at .+:\d+:\d+\)?$/m

describe('conns against a replica set', () => {
  const cluster = useCluster({topology: 'replset', members: 3})

  it('watch --count 4 --json finds every member and follows the result contract', async () => {
    const {sim} = cluster
    const run = await runInProcess(['conns', 'watch', '--uri', sim.info.uri, '--count', '4', '--interval', '500ms', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    // The envelope every command's --json shares (src/result.ts).
    assert.deepEqual(result.target, {uri: sim.info.uri, source: '--uri', simulated: false})
    assert.ok(Array.isArray(result.notes), 'notes is a list')
    assert.equal(result.interrupted, false)
    for (const key of ['intervalMS', 'idleWindowMS', 'durationMS', 'startedAt', 'rounds', 'roundMS', 'alerts', 'alertCounts']) assert.ok(key in result, `${key} in the result`)
    assert.equal(result.intervalMS, 500)
    assert.equal(result.topology.kind, 'replset')
    assert.deepEqual(
      result.hosts.map((h: {host: string; role: string}) => [h.host, h.role]).sort(),
      sim.info.processes.map((p) => [p.host, p.role]).sort(),
    )
    assert.equal(result.rounds, 4)
    assert.ok(Array.isArray(result.alerts), 'alerts is a list')
    for (const h of result.hosts) {
      for (const key of ['host', 'role', 'samples', 'current', 'totalCreatedRate', 'rejected', 'neverShrank', 'holders']) assert.ok(key in h, `hosts[].${key}`)
      assert.equal(h.samples + h.unreachableRounds, result.rounds, `${h.host}: every round is a sample or a marked round`)
      assert.ok(h.samples >= 2, `${h.host} answered ${h.samples} of ${result.rounds} rounds`)
      assert.equal(typeof h.current.min, 'number')
      assert.ok(h.current.max >= h.current.min && h.current.last >= h.current.min, `${h.host} current ${JSON.stringify(h.current)}`)
      assert.equal(typeof h.totalCreatedRate.max, 'number')
      assert.equal(typeof h.totalCreatedRate.mean, 'number')
      assert.equal(h.neverShrank, false)
      // pooltool's own polling connections are among the holders, with appName, client host and driver.
      const own = h.holders.find((x: {appName: string}) => x.appName === 'pooltool-conns')
      assert.ok(own && own.client === '127.0.0.1' && own.driver === 'nodejs' && own.count >= 1, JSON.stringify(h.holders))
      // 7.0 profile: every connections field this version has.
      for (const key of ['active', 'threaded', 'rejected', 'exhaustHello']) assert.equal(typeof h.last[key], 'number', key)
    }
  })

  it('--ndjson streams one sample per host per round, then the summary', async () => {
    const {sim} = cluster
    const run = await runInProcess(['conns', 'watch', '--uri', sim.info.uri, '--count', '2', '--interval', '200ms', '--ndjson', '--verbose'])
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
    assert.equal(lines[0].type, 'topology')
    assert.equal(lines[0].target.uri, sim.info.uri)
    const samples = lines.filter((l) => l.type === 'sample')
    assert.equal(samples.length, 6)
    assert.deepEqual(samples.map((s) => s.round), [1, 1, 1, 2, 2, 2])
    assert.equal(samples[0].totalCreatedRatePerSec, undefined, 'no rate on the first answer')
    assert.equal(typeof samples[3].totalCreatedRatePerSec, 'number')
    assert.equal(lines.at(-1).type, 'summary')
    assert.deepEqual(Object.keys(lines.at(-1).target), ['uri', 'source', 'simulated'])
    assert.match(run.stderr, /round 1: \d+ ms for 3 hosts/)
  })

  it('plain rows on a pipe: one line per host per round, key=value', async () => {
    const {sim} = cluster
    // This process's stdout is the test runner's pipe, as a spawned run's is: the plain mode, not the live table.
    assert.ok(!process.stdout.isTTY, 'the test process writes to a pipe')
    const run = await runInProcess(['conns', 'watch', '--uri', sim.info.uri, '--count', '1'])
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stdout.split('\n').filter((l) => / #1 127\.0\.0\.1:\d+ (primary|secondary) current=\d+ /.test(l)).length, 3)
    assert.match(run.stdout, /never shrank/)
    assert.match(run.stderr, /discovered replica set rs0, 3 hosts/)
  })

  it('Ctrl-C ends an open-ended watch with the summary (exit 0); a bounded one exits 130', async () => {
    const {sim} = cluster
    // --verbose prints each round on stderr: Ctrl-C once the second round is done.
    const open = await runCli(['conns', 'watch', '--uri', sim.info.uri, '--interval', '200ms', '--json', '--verbose'], {interruptWhen: /round 2: /})
    assert.equal(open.code, 0, open.stderr)
    const result = parseJson(open)
    assert.equal(result.interrupted, true)
    assert.ok(result.rounds >= 2, `rounds ${result.rounds}`)
    assert.equal(result.hosts.length, 3)
    const bounded = await runCli(['conns', 'watch', '--uri', sim.info.uri, '--duration', '1m'], {interruptWhen: / #2 /})
    assert.equal(bounded.code, 130, bounded.stderr)
    assert.match(bounded.stdout, /stopped by Ctrl-C/)
  })

  it('list: one snapshot with the version fields and holders', async () => {
    const {sim} = cluster
    const run = await runInProcess(['conns', 'list', '--uri', sim.info.uri, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.deepEqual(result.target, {uri: sim.info.uri, source: '--uri', simulated: false})
    assert.deepEqual(result.notes, [])
    assert.equal(result.interrupted, false)
    assert.equal(result.hosts.length, 3)
    for (const h of result.hosts) {
      assert.equal(h.state, 'ok')
      assert.equal(typeof h.current, 'number')
      assert.equal(typeof h.totalCreated, 'number')
      assert.equal(h.totalCreatedRatePerSec, undefined)
      assert.ok(h.holders.length >= 1, `${h.host} holders ${JSON.stringify(h.holders)}`)
    }
    const text = await runInProcess(['conns', 'list', '--uri', sim.info.uri, '--no-holders'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /conns list .* replica set rs0, 3 hosts/)
    assert.doesNotMatch(text.stdout, /who holds/)
  })
})

describe('conns against the embedded cluster', () => {
  it('list without a URI: the envelope says the target is the embedded cluster', async () => {
    const run = await runInProcess(['conns', 'list', '--sim-topology', 'standalone', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.target.source, 'embedded')
    assert.equal(result.target.simulated, true)
    assert.match(result.target.uri, /^mongodb:\/\/127\.0\.0\.1:\d+/)
    assert.equal(result.hosts.length, 1)
  })
})

describe('conns bad input', () => {
  const cases: Array<[string, string[], number, RegExp]> = [
    ['interval below 100 ms', ['conns', 'watch', '--interval', '50ms'], 2, /--interval 50ms is below 100 ?ms/],
    ['alert that does not parse', ['conns', 'watch', '--alert', 'rate>>5'], 2, /--alert 'rate>>5' does not parse/],
    ['alert with an unknown metric', ['conns', 'watch', '--alert', 'speed>5'], 2, /unknown metric 'speed'/],
    ['--json with --ndjson', ['conns', 'watch', '--json', '--ndjson'], 2, /cannot also be provided/],
    ['unreachable entry point', ['conns', 'watch', '--uri', 'mongodb://127.0.0.1:1', '--timeout-ms', '500'], 4, /cannot reach mongodb:\/\/127\.0\.0\.1:1/],
    ['unreachable entry point (list)', ['conns', 'list', '--uri', 'mongodb://127.0.0.1:1', '--timeout-ms', '500'], 4, /cannot reach/],
  ]
  for (const [name, args, code, message] of cases) {
    it(name, async () => {
      const run = await runInProcess(args)
      assert.equal(run.code, code, run.stderr)
      if (args.includes('--json')) {
        // Under --json the error is the documented object on stdout.
        const {error} = JSON.parse(run.stdout)
        assert.equal(error.exitCode, code)
        assert.match(error.message, message)
        return
      }
      assert.match(run.stderr, message)
      assert.doesNotMatch(run.stderr, NO_STACK)
      if (code !== 2 || !/cannot also/.test(run.stderr)) assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
    })
  }

  it('credentials never printed in the unreachable error', async () => {
    const run = await runInProcess(['conns', 'watch', '--uri', 'mongodb://alice:s3cret@127.0.0.1:1/', '--timeout-ms', '500', '--json'])
    assert.equal(run.code, 4)
    assert.equal(parseJson(run).error.exitCode, 4)
    assert.doesNotMatch(run.stdout + run.stderr, /s3cret/)
  })
})
