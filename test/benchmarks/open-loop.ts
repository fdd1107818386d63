/**
 * npm run bench:open-loop — a benchmark, not a test.
 *
 * How well bench keeps an open-loop schedule: `ping` at 1,000 and 5,000 scheduled operations per
 * second against the embedded cluster (its own process, pinned to the other core when there are
 * two), through the whole of runBench (CMAP telemetry, series, server sampling), against a bare loop
 * over the official driver keeping the same schedule (a 1 ms ticker starting every slot that is
 * due, the same in-flight cap): the floor any scheduler on this driver and runtime has. Schedule
 * lag = how late an operation started against its slot.
 *
 * Paired by the method of paired.ts, per rate: slices alternating A B B A …, each a fresh client
 * (both sides connect, warm up `--warmup-ms`, then measure `--slice-ms`), warm-up pairs discarded;
 * the figure is the median of the per-pair ratios of lag p99, pooltool / bare, with a bootstrap 95%
 * interval (issue 28 goal ≤ 1.2). The lag p50 ratio and the achieved rates are printed beside it.
 *
 * The driver leaves tens of KB of garbage per operation, so V8 pauses for a young-generation
 * collection a few times a second; a slot that falls due in a pause starts late, in pooltool and in
 * the bare loop alike.
 *
 * Flags: --rates 1000,5000 --slice-ms MS (1000) --warmup-ms MS (500) --cap N in-flight cap (512)
 *        --pairs N (20; --quick 4) --warmup-pairs N (1) --workers N (1: > 1 adds pooltool on N worker threads as a third side)
 */
import {parseArgs} from 'node:util'

import {toBenchConfig} from '../../dist/src/bench/config.js'
import {runBench} from '../../dist/src/bench/run-bench.js'
import {createHistogram, percentileUs, recordMs} from '../../dist/src/metrics/histograms.js'
import {MongoClient} from '../../dist/src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
import {resolveTarget, type Target} from '../../dist/src/target.js'
import {benchRecord, type Figure, PAIRED_OPTIONS, pairedFigure, pairsOf, runPaired, type SliceValues} from './paired.js'
import {pinClientAndServer} from './pin.js'

const {values} = parseArgs({
  options: {
    ...PAIRED_OPTIONS,
    rates: {type: 'string', default: '1000,5000'},
    'slice-ms': {type: 'string', default: '1000'},
    'warmup-ms': {type: 'string', default: '500'},
    cap: {type: 'string', default: '512'},
    workers: {type: 'string', default: '1'},
  },
})
const rates = values.rates.split(',').map(Number)
const sliceMs = Number(values['slice-ms'])
const warmupMs = Number(values['warmup-ms'])
const cap = Number(values.cap)
const workers = Number(values.workers)
const {pairs, warmupPairs} = pairsOf(values, {full: 20, quick: 4, warmup: 1})

type Side = 'bare' | 'pooltool' | 'workers'

/**
 * The bare driver keeping an open-loop schedule: slot i due at start + i / rate, a 1 ms ticker
 * starting every due slot while fewer than `cap` are in flight (a slot over the cap waits for the
 * next completion). Lag: start minus due time, of the slots due after the warm-up. As in pooltool,
 * the window ends on time: a slot not started by then is not started (pooltool counts it missed),
 * and the slice waits only for the operations in flight. A slice that started no measured slot has
 * no lag (NaN: the pair is left out of the ratio).
 */
async function bareSlice(uri: string, rate: number): Promise<SliceValues> {
  const client = new MongoClient(uri, {maxPoolSize: cap, appName: 'pooltool-open-loop-bare'})
  await client.connect()
  const admin = client.db('admin')
  const lag = createHistogram()
  const start = performance.now()
  const endAt = start + warmupMs + sliceMs
  const dueAt = (slot: number) => start + (slot * 1000) / rate
  const slots = Math.floor(((warmupMs + sliceMs) * rate) / 1000)
  let next = 0
  let inFlight = 0
  let measuredDone = 0
  await new Promise<void>((resolve) => {
    const over = (): boolean => next >= slots || performance.now() >= endAt
    const startDue = (): void => {
      const now = performance.now()
      while (next < slots && inFlight < cap && dueAt(next) <= now && now < endAt) {
        const due = dueAt(next)
        const measured = due - start >= warmupMs
        if (measured) recordMs(lag, now - due)
        next += 1
        inFlight += 1
        void admin.command({ping: 1}).finally(() => {
          inFlight -= 1
          if (measured) measuredDone += 1
          if (over() && inFlight === 0) resolve()
          else startDue()
        })
      }
    }
    const tick = (): void => {
      startDue()
      if (!over()) setTimeout(tick, 1)
      else if (inFlight === 0) resolve()
    }
    tick()
  })
  await client.close()
  const measured = lag.totalCount > 0
  return {
    lagP50Us: measured ? percentileUs(lag, 50) : Number.NaN,
    lagP99Us: measured ? percentileUs(lag, 99) : Number.NaN,
    lagMaxUs: measured ? lag.maxValue : Number.NaN,
    achievedPerSec: (measuredDone * 1000) / sliceMs,
  }
}

async function pooltoolSlice(target: Target, rate: number, threads: number): Promise<SliceValues> {
  const config = toBenchConfig({
    workload: 'ping', 'doc-size': 0, 'seed-docs': 1, db: 'pooltool_open_loop', keep: false, model: 'pool',
    concurrency: String(cap), rate, duration: sliceMs, warmup: warmupMs, 'sample-interval': 1000, workers: threads,
  })
  const result = await runBench(target, config, {signal: new AbortController().signal})
  const run = result.runs[0]!
  // No operation started in the window (every slot missed): no lag to compare.
  if (run.ops + run.errors === 0) return {lagP50Us: Number.NaN, lagP99Us: Number.NaN, lagMaxUs: Number.NaN, achievedPerSec: 0, missed: run.missed}
  return {lagP50Us: run.scheduleLagUs?.p50 ?? Number.NaN, lagP99Us: run.scheduleLagUs?.p99 ?? Number.NaN, lagMaxUs: run.scheduleLagUs?.max ?? Number.NaN, achievedPerSec: run.achievedRatePerSec ?? Number.NaN, missed: run.missed}
}

const ms = (us: number | undefined) => (us === undefined || !Number.isFinite(us) ? '?' : `${(us / 1000).toFixed(2)} ms`)

const sim = await startSimCluster({})
const pinned = pinClientAndServer(sim.info.pid)
const target = await resolveTarget({flagUri: sim.info.uri, connection: {appName: 'pooltool-open-loop', timeoutMs: 10_000}})
try {
  const record = benchRecord('open-loop', {pairs, warmupPairs, slice: `each side a fresh client: ${warmupMs} ms warm-up, then ${sliceMs} ms measured`})
  console.log(
    `bench:open-loop · ping · rates ${rates.join(', ')}/s · in-flight cap ${cap}${workers > 1 ? ` · ${workers} workers as a third side` : ''} · ` +
      `${pinned ? 'client on core 0, server on core 1' : 'not pinned (no taskset or one core)'}\n${record.header}`,
  )
  const sides: [Side, Side, ...Side[]] = workers > 1 ? ['bare', 'pooltool', 'workers'] : ['bare', 'pooltool']
  const figures: Figure[] = []
  const extra: Record<string, unknown> = {}
  for (const rate of rates) {
    const run = await runPaired<Side>({
      sides,
      pairs,
      warmupPairs,
      slice: (side) => (side === 'bare' ? bareSlice(sim.info.uri, rate) : pooltoolSlice(target, rate, side === 'workers' ? workers : 1)),
      onPair: (index, v, measured) =>
        console.log(
          `${rate}/s ${measured ? `pair ${index - warmupPairs + 1}` : `warm-up ${index + 1}`} (${index % 2 === 0 ? 'A→B' : 'B→A'}): ` +
            sides.map((s) => `${s} achieved ${v[s].achievedPerSec!.toFixed(0)}/s lag p50 ${ms(v[s].lagP50Us)} p99 ${ms(v[s].lagP99Us)} max ${ms(v[s].lagMaxUs)}`).join(' | ') +
            ` · p99 ratio ${(v.pooltool.lagP99Us! / v.bare.lagP99Us!).toFixed(2)}`,
        ),
    })
    figures.push(pairedFigure(run, {label: `open-loop schedule lag p99 at ${rate}/s, pooltool / bare`, metric: 'lagP99Us', a: 'bare', b: 'pooltool', goal: 1.2}))
    figures.push(pairedFigure(run, {label: `open-loop schedule lag p50 at ${rate}/s, pooltool / bare`, metric: 'lagP50Us', a: 'bare', b: 'pooltool', goal: null}))
    if (workers > 1) figures.push(pairedFigure(run, {label: `open-loop schedule lag p99 at ${rate}/s, ${workers} workers / bare`, metric: 'lagP99Us', a: 'bare', b: 'workers', goal: 1.2}))
    extra[`achievedPerSec@${rate}`] = Object.fromEntries(sides.map((s) => [s, run.pairs.map((p) => Math.round(p[s].achievedPerSec!))]))
  }
  console.log('')
  await record.finish(figures, extra)
} finally {
  await target.close()
  await sim.stop()
}
