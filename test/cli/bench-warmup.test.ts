/**
 * bench's warm-up as a user sets it (issue 26): by default adaptive, until ops/s has settled, and
 * the JSON and the text say how long it was and why it ended; --warmup 0s and --warmup 2s as
 * before; a value that is neither a duration nor auto is one usage line with a hint.
 *
 * An adaptive run costs at least the 5-s floor of load, up to the 30-s cap, so the file makes two:
 * one default run read twice (its text on stdout, its JSON through --out) and one with --workers 2.
 * What the rule decides on given seconds is tested on recorded series in
 * test/unit/bench-warmup.test.ts; here the CLI proves it is wired up, whichever way each warm-up
 * ends. Every run loads one embedded cluster, shared by the file, with a 50 ms service time (what
 * --sim-latency 50ms sets): the load is then bound by timers, not by the CPU. Without it each warm-up
 * second was CPU-bound on the shared 2-core machine (load 12), wandered 78 → 951 ops/s and ran to the
 * 30-s cap, 13.3 CPU-s for one run; with it the same run held 64–69 ops/s, settled after 6 s and cost
 * 4.0 CPU-s. The warm-up flags and what the JSON and text say about them are the same either way. The
 * runs are in this process (test/helpers/in-process.ts, the path bin/run.js takes), one at a time: a
 * process start per run cost ~1 CPU-s, and each --sim run's own cluster 0.3 more. Which way a warm-up
 * ends is not checked here.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, it} from 'node:test'

import {SETTLE_RULE} from '../../src/bench/warmup.js'
import {type CliRun, parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

/** A service time that bounds the load by timers instead of CPU (see above): 4 in flight, ~80 ops/s. */
const SERVICE_MS = 50

// The fixed runs first, then the adaptive ones, one at a time (runs in this process are): a warm-up judged on
// ops/s is not shared with other runs' load or start-up (five processes starting beside one starved its first
// seconds and held it to the cap).
describe('bench --warmup', () => {
  const cluster = useCluster({latencyMs: SERVICE_MS})
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-warmup-'))
  /** The default run, once for both of its tests: the text report on stdout, the JSON in a file. */
  let byDefault: Promise<{run: CliRun; json: string}> | undefined
  const defaultRun = () => (byDefault ??= (async () => {
    const out = path.join(dir, 'default.json')
    const run = await runInProcess(['bench', '--uri', cluster.uri, '--duration', '300ms', '--concurrency', '4', '--out', out])
    assert.equal(run.code, 0, run.stderr)
    return {run, json: readFileSync(out, 'utf8')}
  })())

  describe('a fixed warm-up, none, and bad values', () => {
    it('--warmup 0s: none, as before', async () => {
      const run = await runInProcess(['bench', '--uri', cluster.uri, '--warmup', '0s', '--duration', '300ms', '--concurrency', '2', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson(run)
      assert.equal(result.config.warmupMS, 0)
      assert.deepEqual(result.config.warmup, {mode: 'off'})
      assert.deepEqual(result.runs[0].warmup, {mode: 'off', durationMS: 0, endedBy: 'off'})
      // Without warm-up the measured interval opens the pool's connections itself.
      assert.ok(result.runs[0].pool.created >= 1, JSON.stringify(result.runs[0].pool))
    })

    it('--warmup 2s: exactly 2 s, fixed, as before', async () => {
      const run = await runInProcess(['bench', '--uri', cluster.uri, '--warmup', '2s', '--duration', '300ms', '--concurrency', '2', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson(run)
      assert.equal(result.config.warmupMS, 2000)
      assert.deepEqual(result.config.warmup, {mode: 'fixed', ms: 2000})
      const {warmup} = result.runs[0]
      assert.deepEqual([warmup.mode, warmup.endedBy], ['fixed', 'fixed'])
      assert.ok(warmup.durationMS >= 1999, `${warmup.durationMS} ms`)
      assert.equal(warmup.windowsOpsPerSec, undefined, 'a fixed warm-up is not judged')
      assert.equal(result.runs[0].pool.created, 0, 'the warm-up opened the pool: no set-up in the measured figures')
    })

    it('--warmup auto with --segment: a fixed 5 s, and why', async () => {
      const run = await runInProcess(['bench', '--uri', cluster.uri, '--segment', '0/1', '--run-id', 'a1b2c3d4', '--duration', '300ms', '--concurrency', '2', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson(run)
      assert.equal(result.config.warmupMS, 5000)
      assert.equal(result.config.warmup.mode, 'fixed')
      assert.match(result.config.warmup.fallback, /^--warmup auto is a fixed 5s here \(--segment: every segment warms up alike/)
      assert.equal(result.runs[0].warmup.endedBy, 'fixed')
    })

    it('a value that is neither auto nor a duration: one line with a hint, exit 2', async () => {
      const [run, bare] = await Promise.all([runInProcess(['bench', '--sim', '--warmup', 'soon']), runInProcess(['bench', '--sim', '--warmup', '5'])])
      assert.equal(run.code, 2)
      assert.equal(run.stderr.trim(), "Error [USAGE]: --warmup 'soon' is neither auto nor a duration (hint: give auto (the default) or a length with a unit, e.g. 10s; 0s turns it off)")
      assert.equal(bare.code, 2)
      assert.match(bare.stderr, /--warmup 5 has no unit/)
    })
  })

  describe('adaptive, by default', () => {
    it('by default warms up until ops/s settles, and says how long and why it ended', async () => {
      const result = JSON.parse((await defaultRun()).json)
      assert.deepEqual(result.config.warmup, {mode: 'auto', windowMS: 1000, windows: 4, tolerance: 0.05, spread: 0.15, confirmations: 2, floorMS: 5000, capMS: 30_000})
      assert.equal(result.config.warmupMS, undefined, 'no fixed length with auto')
      const {warmup} = result.runs[0]
      assert.equal(warmup.mode, 'auto')
      // Settled or the cap: which one depends on the machine; either is said, with what was seen.
      assert.ok(['settled', 'cap'].includes(warmup.endedBy), JSON.stringify(warmup))
      assert.ok(warmup.durationMS >= SETTLE_RULE.floorMs - SETTLE_RULE.windowMs / 2, `not before the floor: ${warmup.durationMS} ms`)
      assert.equal(warmup.windowsOpsPerSec.length, Math.round(warmup.durationMS / 1000), 'one entry per warm-up second')
      assert.equal(warmup.halvesOpsPerSec.length, 2)
      assert.equal(typeof warmup.level, 'boolean')
      assert.equal(warmup.poolTotal, 4, 'the pool filled to the concurrency')
      assert.deepEqual(warmup.rule, {windowMS: 1000, windows: 4, tolerance: 0.05, spread: 0.15, confirmations: 2, floorMS: 5000, capMS: 30_000})
      if (warmup.endedBy === 'settled') {
        assert.equal(warmup.level, true)
        assert.equal(warmup.poolGrew, false)
      }
    })

    it('the text report says the rule and how each run\'s warm-up ended', async () => {
      const {run} = await defaultRun()
      assert.match(run.stdout, /^warm-up auto before each run, until ops\/s settles \(the last 4 s: halves within 5 %, each second within 15 %, the pool no longer growing, twice running; 5s to 30s\), not measured/m)
      assert.match(run.stdout, /^Warm-up \(not measured\)\n {2}pool c=4: (settled after [\d.]+ s: the last 4 s level \(halves [\d,]+ → [\d,]+ ops\/s|did not settle within the [\d.]+ s cap: )/m)
    })

    it('--workers 2: one warm-up for both workers, judged on their sum by the parent', async () => {
      const run = await runInProcess(['bench', '--uri', cluster.uri, '--workers', '2', '--duration', '300ms', '--concurrency', '4', '--json'])
      assert.equal(run.code, 0, run.stderr)
      const [r] = parseJson(run).runs
      assert.equal(r.warmup.mode, 'auto')
      assert.ok(['settled', 'cap'].includes(r.warmup.endedBy), JSON.stringify(r.warmup))
      assert.equal(r.warmup.poolTotal, 4, 'both workers\' pools (2 connections each), summed')
      assert.ok(r.warmup.windowsOpsPerSec.length >= SETTLE_RULE.floorMs / 1000, JSON.stringify(r.warmup))
      assert.equal(r.workers.count, 2)
    })
  })
})
