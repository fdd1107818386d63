/**
 * The CI gate of issue 26 through the built CLI (one spawned run per exit path, the rest in-process
 * through the same code path), on crafted result files (no
 * live bench: on a shared machine identical live runs can differ by more than
 * any gate, so their passing is measured by hand, not asserted): identical
 * runs whose figures wander between intervals pass
 * `p99Ratio>1.10,opsPerSecRatio<0.95`, a crossing inside that wandering shown
 * as within noise; 2 ms of injected latency paired on purpose (--pair
 * sim-latency) fails it with exit 8; without --pair it is refused as a
 * different configuration (exit 2, the setting and --pair named); a smaller
 * pool is compared with --pair max-pool-size.
 */
import assert from 'node:assert/strict'
import {mkdtemp, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {before, describe, it} from 'node:test'

import type {CompareResult} from '../../src/report/types.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'
import {craft, type Craft, type Interval} from '../helpers/crafted-results.js'

const GATE = 'p99Ratio>1.10,opsPerSecRatio<0.95'

/** A machine whose speed wanders from second to second; B the same wandering in another order, 15% slower on the whole. */
const CENTERS = [800, 1400, 900, 1700, 1000, 1200, 700, 1500, 1100, 900]
const wander = (order: number[], scale = 1): Interval[] => order.map((i) => ({centerUs: CENTERS[i]! * scale, ops: Math.round(1_000_000 / (CENTERS[i]! * scale))}))
const A = wander([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
const B = wander([7, 2, 3, 0, 5, 8, 9, 1, 6, 4])

describe('report compare: the gate decided with the runs\' own noise', () => {
  let dir: string
  const file = (name: string) => path.join(dir, name)

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pooltool-compare-'))
    const files: Array<[string, Craft]> = [
      ['r1.json', {intervals: A, seed: 1}],
      ['r2.json', {intervals: B, seed: 2}],
      ['r3.json', {intervals: wander([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]), seed: 3}],
      ['slower.json', {intervals: wander([7, 2, 3, 0, 5, 8, 9, 1, 6, 4], 1.15), seed: 4}],
      ['latency.json', {intervals: B.map(({centerUs}) => ({centerUs: centerUs + 2000, ops: Math.round(1_000_000 / (centerUs + 2000))})), seed: 5, simLatencyMS: 2}],
      ['pool10.json', {intervals: B, seed: 6, maxPoolSize: 10}],
    ]
    for (const [name, options] of files) await writeFile(file(name), JSON.stringify(craft(name, options).result))
  })

  it('three identical runs compared pairwise pass the gate, exit 0', async () => {
    for (const [index, [base, next]] of [['r1.json', 'r2.json'], ['r1.json', 'r3.json'], ['r2.json', 'r3.json']].entries()) {
      const args = ['report', 'compare', file(base!), file(next!), '--fail-on', GATE]
      // The first pair spawned: the real process passing the gate (exit 0); the others in-process, same code path.
      const run = index === 0 ? await runCli(args) : await runInProcess(args)
      assert.equal(run.code, 0, `${base} vs ${next}\n${run.stdout}${run.stderr}`)
      assert.match(run.stdout, /^✓ p99Ratio>1\.10/m)
      assert.match(run.stdout, /^✓ opsPerSecRatio<0\.95/m)
      assert.doesNotMatch(run.stdout, /bench keeps no per-interval series/)
    }
  })

  it('a crossing inside the runs\' wandering passes, with its ratio and interval shown', async () => {
    const run = await runInProcess(['report', 'compare', file('r1.json'), file('slower.json'), '--fail-on', GATE])
    assert.equal(run.code, 0, run.stdout + run.stderr)
    assert.match(run.stdout, /^✓ p99Ratio>1\.10 \(crossed within noise, not failed: pool c=4: 1\.\d\d \[0\.\d\d–1\.\d\d\]\)$/m)
    assert.match(run.stdout, /^ {2}p99 .*: 1\.\d\d× \[\d\.\d\d–\d\.\d\d\] within noise$/m)
  })

  it('2 ms of injected latency: refused without --pair (exit 2, naming the setting); paired on purpose it fails the gate, exit 8', async () => {
    // Both spawned, side by side: the real process's usage-error exit (2) and its failed-gate exit (8).
    const [refused, paired] = await Promise.all([
      runCli(['report', 'compare', file('r1.json'), file('latency.json'), '--fail-on', GATE]),
      runCli(['report', 'compare', file('r1.json'), file('latency.json'), '--pair', 'sim-latency', '--fail-on', GATE]),
    ])
    assert.equal(refused.code, 2, refused.stdout + refused.stderr)
    assert.match(refused.stderr.trim(), /^Error \[USAGE\]: .*latency\.json and .*r1\.json are different configurations: sim-latency 0ms → 2ms \(hint: .*--pair sim-latency\)$/)

    assert.equal(paired.code, 8, paired.stdout + paired.stderr)
    assert.match(paired.stdout, /^differ on purpose \(--pair sim-latency\): sim-latency 0ms → 2ms$/m)
    assert.match(paired.stdout, /^✗ p99Ratio>1\.10 \(pool c=4: \d+\.\d\d \[\d+\.\d\d–\d+\.\d\d\]\)$/m)
    assert.match(paired.stdout, /^✗ opsPerSecRatio<0\.95 \(pool c=4: 0\.\d\d \[0\.\d\d–0\.\d\d\]\)$/m)

    const json = parseJson<CompareResult>(await runInProcess(['report', 'compare', file('r1.json'), file('latency.json'), '--pair', 'sim-latency', '--fail-on', GATE, '--json']))
    assert.deepEqual(json.differOnPurpose, [{setting: 'sim-latency', base: '0ms', new: '2ms'}])
    assert.deepEqual(json.pair, ['sim-latency'])
    const p99 = json.runs[0]!.metrics.p99
    assert.equal(p99.noise, 'series')
    assert.equal(p99.withinNoise, false)
    assert.ok(p99.interval![0] > 1.1, `interval ${p99.interval}`)
    assert.equal(json.failOn!.passed, false)
    assert.deepEqual(json.failOn!.gates[0]!.failures[0]!.interval, p99.interval)
  })

  it('"did a smaller pool help?": refused naming max-pool-size, compared with --pair max-pool-size', async () => {
    const refused = await runInProcess(['report', 'compare', file('r1.json'), file('pool10.json')])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr.trim(), /no run matches a run of .*r1\.json: the closest differ in max-pool-size driver default → 10 .*\(hint: to compare them on purpose add --pair max-pool-size\)$/)
    const paired = await runInProcess(['report', 'compare', file('r1.json'), file('pool10.json'), '--pair', 'max-pool-size'])
    assert.equal(paired.code, 0, paired.stderr)
    assert.match(paired.stdout, /^pool c=4 → pool c=4 pool=10$/m)
    assert.match(paired.stdout, /^ {2}differ on purpose: max-pool-size driver default → 10$/m)
    const unknown = await runInProcess(['report', 'compare', file('r1.json'), file('pool10.json'), '--pair', 'pool'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr.trim(), /--pair: unknown setting 'pool' \(hint: .*max-pool-size/)
  })
})
