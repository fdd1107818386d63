/**
 * --key-dist draws and the --key-dist / --op-timeout flag values. The draws come from the
 * workload's seeded PRNG, so every count below is the same on every run.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {toBenchConfig, type BenchFlagValues} from '../../src/bench/config.js'
import {createKeyPicker, type KeyDistribution} from '../../src/bench/key-dist.js'
import {createRandom} from '../../src/bench/workloads.js'
import {PoolToolError} from '../../src/errors.js'

const IDS = 1000
const DRAWS = 200_000

/** How often each id was drawn, most frequent first. */
function frequencies(distribution: KeyDistribution): Array<[id: number, count: number]> {
  const pick = createKeyPicker(distribution, IDS, createRandom(42))
  const counts = new Map<number, number>()
  for (let i = 0; i < DRAWS; i++) {
    const id = pick()
    assert.ok(Number.isInteger(id) && id >= 0 && id < IDS, `id ${id} is a seeded id`)
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  return [...counts].sort((a, b) => b[1] - a[1])
}

/** Zipf with exponent 0.99 over 1,000 items: the most popular one's share, 1 / H(1000, 0.99). */
function topShare(): number {
  let h = 0
  for (let i = 1; i <= IDS; i++) h += 1 / i ** 0.99
  return 1 / h
}

describe('--key-dist draws', () => {
  it('uniform: every id about equally often', () => {
    const counts = frequencies('uniform')
    assert.equal(counts.length, IDS, 'every id drawn')
    assert.ok(counts[0]![1] / DRAWS < 3 / IDS, `no id stands out: the top one took ${counts[0]![1]}`)
  })

  it('zipfian: the most popular id takes its Zipf share, and the popular ids are spread over the range', () => {
    const counts = frequencies('zipfian')
    const share = counts[0]![1] / DRAWS
    assert.ok(Math.abs(share - topShare()) < 0.01, `top share ${share}, Zipf says ${topShare()}`)
    const top10 = counts.slice(0, 10).map(([id]) => id)
    assert.ok(Math.max(...top10) - Math.min(...top10) > IDS / 4, `scrambled, not neighbours: ${top10}`)
    assert.ok(counts.slice(0, 100).reduce((sum, [, n]) => sum + n, 0) / DRAWS > 0.5, 'a tenth of the ids take most operations')
  })

  it('latest: the same skew, the last seeded ids the most popular', () => {
    const counts = frequencies('latest')
    assert.equal(counts[0]![0], IDS - 1, 'the last seeded id is the most popular')
    assert.equal(counts[1]![0], IDS - 2)
    assert.ok(Math.abs(counts[0]![1] / DRAWS - topShare()) < 0.01)
  })
})

describe('--key-dist and --op-timeout values', () => {
  const flags: BenchFlagValues = {workload: 'find', 'doc-size': 16, 'seed-docs': 100, db: 'pooltool_bench', keep: false, model: 'pool', concurrency: '4'}
  const usage = (values: Partial<BenchFlagValues>, message: RegExp) =>
    assert.throws(() => toBenchConfig({...flags, ...values}), (e: unknown) => e instanceof PoolToolError && e.code === 'USAGE' && message.test(e.message))

  it('defaults: uniform keys, no time limit; --op-timeout alone is the client side', () => {
    const config = toBenchConfig(flags)
    assert.equal(config.keyDist, 'uniform')
    assert.equal(config.opTimeout, undefined)
    assert.deepEqual(toBenchConfig({...flags, 'op-timeout': 50}).opTimeout, {ms: 50, side: 'client'})
    assert.deepEqual(toBenchConfig({...flags, 'op-timeout': 50, 'timeout-side': 'server'}).opTimeout, {ms: 50, side: 'server'})
    assert.equal(toBenchConfig({...flags, workload: 'mixed', mix: 'update=10,insert=90', 'key-dist': 'latest'}).keyDist, 'latest')
  })

  it('refuses what cannot mean anything', () => {
    usage({'key-dist': 'zipfian', workload: 'insert'}, /--key-dist zipfian needs a workload that picks documents/)
    usage({'key-dist': 'zipfian', workload: 'mixed', mix: 'ping=50,insert=50'}, /needs a workload that picks documents/)
    usage({'key-dist': 'pareto'}, /key-dist/)
    usage({'timeout-side': 'server'}, /--timeout-side needs --op-timeout/)
    usage({'op-timeout': 0.5}, /too short/)
    usage({'op-timeout': 1.5}, /whole number of milliseconds/)
    usage({'op-timeout': 50, 'timeout-side': 'both'}, /--timeout-side 'both' is not known/)
  })
})
