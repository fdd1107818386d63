/**
 * Bench results built in memory for report tests: one run whose HDR histogram
 * (the real encoder) holds every interval's operations, and a series whose
 * points hold each interval's own figures, as bench writes them. Settings
 * that `report compare` matches on can be set one by one.
 */
import type {BenchResult, RunResult, SeriesPoint} from '../../src/bench/types.js'
import {createHistogram, encodeHistogram, percentileUs, summarize} from '../../src/metrics/histograms.js'
import {checkBenchResult, type LoadedResult} from '../../src/report/load.js'
import {seededRandom} from '../../src/metrics/seeded-random.js'

/** Deterministic values around `center` (µs), spread ±`spread` (fraction), from a seed. */
function values(count: number, seed: number, center: number, spread = 0.3): number[] {
  const random = seededRandom(seed)
  return Array.from({length: count}, () => Math.max(1, Math.round(center * (1 + spread * (2 * random() - 1)))))
}

export interface Interval {
  ops: number
  /** The interval's latency scale: its operations' values centre on it. */
  centerUs: number
}

export interface Craft {
  intervals?: Interval[]
  /** false: no series (a file from before bench kept one). */
  series?: boolean
  model?: RunResult['model']
  concurrency?: number
  maxPoolSize?: number | null
  simLatencyMS?: number | undefined
  simulated?: boolean
  uri?: string
  workloadSha?: string
  keyDist?: string | undefined
  warmupMS?: number
  seed?: number
}

export const STEADY: Interval[] = Array.from({length: 10}, () => ({ops: 1000, centerUs: 1000}))

/** One bench result: one run whose histogram holds every interval's operations; the series holds each interval's own figures. */
export function craft(file: string, options: Craft = {}): LoadedResult {
  const intervals = options.intervals ?? STEADY
  const whole = createHistogram()
  const series: SeriesPoint[] = intervals.map((interval, index) => {
    const own = createHistogram()
    for (const value of values(interval.ops, (options.seed ?? 1) * 1000 + index, interval.centerUs)) {
      own.recordValue(value)
      whole.recordValue(value)
    }
    return {
      tMS: index * 1000, durationMS: 1000, ops: interval.ops, errors: 0, opsPerSec: interval.ops,
      latencyP50Us: percentileUs(own, 50), latencyP99Us: percentileUs(own, 99), latencyMaxUs: own.maxValue,
      poolInUse: 4, poolTotal: 4, serverConnections: {},
    }
  })
  const ops = intervals.reduce((sum, interval) => sum + interval.ops, 0)
  const durationMS = intervals.length * 1000
  const run: RunResult = {
    model: options.model ?? 'pool', workload: 'find', concurrency: options.concurrency ?? 4, rate: null,
    maxPoolSize: options.maxPoolSize === undefined ? null : options.maxPoolSize,
    ops, errors: 0, scheduled: null, missed: 0, missedByReason: {}, aborted: 0, durationMS,
    opsPerSec: Math.round((ops * 10_000) / durationMS) / 10, achievedRatePerSec: null, rateShortfall: null,
    latencyUs: summarize(whole), latencyCorrectedUs: null, scheduleLagUs: null,
    checkoutWaitUs: {p50: 10, p99: 50, max: 90}, checkoutWaitDriverMS: {p50: 0, p99: 0, max: 0},
    pool: {created: 4, closed: {}, peakTotal: 4, peakInUse: 4, checkOutFailed: {}, cleared: 0, clients: 1,
      setupUs: {p50: 100, p99: 200, max: 200}, setupDriverMS: {p50: 0, p99: 0, max: 0}},
    server: [], errorsByClass: {},
    ...(options.series === false ? {} : {series}),
    histograms: {latencyUs: encodeHistogram(whole), latencyCorrectedUs: null},
    interrupted: false,
  }
  const simulated = options.simulated ?? true
  const result: BenchResult = {
    target: {uri: options.uri ?? `mongodb://127.0.0.1:${40_000 + (options.seed ?? 1)}/`, source: simulated ? 'embedded' : '--uri', simulated},
    notes: [], interrupted: false,
    cluster: {topology: 'replset', serverVersion: '7.0.14', hosts: []},
    config: {
      workload: 'find', docSizeBytes: 256, keyDist: (options.keyDist ?? 'uniform') as BenchResult['config']['keyDist'], db: 'pooltool_bench',
      warmupMS: options.warmupMS ?? 3000, durationMS, sampleIntervalMS: 250, seriesIntervalMS: 1000, seedDocs: 1000,
      poolOptions: {},
      ...(simulated && 'simLatencyMS' in options ? (options.simLatencyMS === undefined ? {} : {simLatencyMS: options.simLatencyMS}) : simulated ? {simLatencyMS: 0} : {}),
      ...(options.workloadSha ? {workload: 'file' as const, workloadFile: {path: 'w.yaml', sha256: options.workloadSha, operations: [{name: 'q', kind: 'find' as const, weight: 1, namespace: 'own' as const}]}} : {}),
    },
    runs: [run], knee: null, failOn: null, cleanedUp: true, namespace: null, abandoned: [],
  }
  if (options.keyDist === undefined && 'keyDist' in options) delete (result.config as {keyDist?: string}).keyDist
  return {file, result: checkBenchResult(file, JSON.parse(JSON.stringify(result)))}
}

