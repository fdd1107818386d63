/**
 * What the HTML report draws, computed from bench results (pure): each run's latency spectrum
 * from its own HDR histogram (HdrHistogram's percentile plot: x is 1/(1−p) on a log axis), its
 * time series (ops/s, p99, errors, the client pool, each host's server connections), the sweep
 * as a concurrency × pool-size grid with the knee, and the runs side by side.
 */
import path from 'node:path'

import {runLabel} from '../bench/fail-on.js'
import type {BenchResult, RunResult} from '../bench/types.js'
import {describeWarmup} from '../bench/warmup.js'
import {decodeHistogram, type Histogram} from '../metrics/histograms.js'
import {type LockTimeline, lockTimeline} from './watch-html-data.js'

/** Spectrum points per decade of 1/(1−p): HdrHistogram's plots use a comparable density. */
const SPECTRUM_POINTS_PER_DECADE = 20

export interface SpectrumSeries {
  label: string
  /** The run it is of (its index in `runs`), and whether it is the run's latency corrected for coordinated omission. */
  run: number
  corrected: boolean
  /** Latency in ms at each x of the spectrum's grid; null past what the run's count can resolve. */
  valuesMs: Array<number | null>
}

export interface Spectrum {
  /** 1/(1−p), log-spaced: 1 is p0, 2 is p50, 10 is p90, 100 is p99, 1000 is p99.9. */
  x: number[]
  series: SpectrumSeries[]
}

export interface RunSeries {
  label: string
  /**
   * Wall-clock start of the measured interval (ms since the epoch), from the run's `startedAt`; null for a
   * file written before runs carried it (its charts then count seconds from the start).
   */
  startMS: number | null
  /** Seconds from the start of the measured interval, one per --series-interval. */
  tS: number[]
  /** Each interval's end, seconds from the start: where the report draws it (its gauges were read then). */
  endS: number[]
  opsPerSec: number[]
  p99Ms: Array<number | null>
  errors: number[]
  /** Gauges at each interval's end; null where the file has none (a gap, never a 0). */
  poolInUse: Array<number | null>
  poolTotal: Array<number | null>
  /** Checkout wait p99 of the checkouts that ended in each interval (null where none did). */
  checkoutWaitP99Ms: Array<number | null>
  /**
   * Per host: server connections at each interval's end (null where unknown): the MAX_HOST_SERIES hosts with the
   * most connections at their peak, so a chart's legend stays readable on a large cluster.
   */
  serverConnections: Record<string, Array<number | null>>
  /** The other hosts' connections, mean per host (null where none of them is known), and how many they are; null when none is left out. */
  otherHosts: {count: number; values: Array<number | null>} | null
}

export interface SweepCell {
  concurrency: number
  maxPoolSize: number | null
  opsPerSec: number
  p99Ms: number
  knee: boolean
  overSlo: boolean
}

export interface Sweep {
  model: string
  concurrencies: number[]
  poolSizes: Array<number | null>
  cells: SweepCell[]
  sloMs: number | null
}

export interface RunSummary {
  label: string
  opsPerSec: number
  p50Ms: number
  p99Ms: number
  p999Ms: number
  errors: number
  connectionsCreated: number
  /** What was warm-up and why it ended ("settled after 7.5 s: …", "did not settle within the 30 s cap: …", "fixed 5 s"). */
  warmup: string
  /** false: an adaptive warm-up that reached its cap unsettled (the page marks it); else true or unknown. */
  warmupSettled?: boolean
}

export interface ReportData {
  title: string
  /** The input files as given, in order (bench --html: "this run"); the title names them, up to four. */
  files: string[]
  sources: string[]
  spectrum: Spectrum
  series: RunSeries[]
  sweeps: Sweep[]
  runs: RunSummary[]
  /** ddl runs on a sharded cluster: the bench database's locks as the run's lock observer saw them. */
  lockTimelines: Array<{label: string; timeline: LockTimeline; eventsNotKept: number}>
}

const ms = (us: number) => Math.round(us) / 1000

/**
 * Lines for server hosts in a run's connections chart: all hosts when they are this many or fewer, else the
 * busiest MAX_HOST_SERIES − 1 and one line for the rest (their mean per host). With the pool's two lines that is at most 10
 * series, within the report's 12 colours: no colour is used twice in a chart.
 */
export const MAX_HOST_SERIES = 8

/** Input files named in the page title before "and N more" (the page's source list names every one). */
const TITLE_FILES = 4

/** The value at each 1/(1−p) of the grid, up to the resolution of the histogram's count. */
function spectrumValues(histogram: Histogram, x: readonly number[]): Array<number | null> {
  const count = histogram.totalCount
  return x.map((reciprocal) => {
    // 1/(1−p) above the count: a percentile finer than one value in `count`, which the data cannot tell.
    if (count === 0 || reciprocal > count) return null
    return ms(histogram.getValueAtPercentile(100 * (1 - 1 / reciprocal)))
  })
}

function spectrumOf(runs: ReadonlyArray<{label: string; run: RunResult}>): Spectrum {
  const histograms = runs.flatMap(({label, run}, index) => [
    {label, run: index, corrected: false, histogram: decodeHistogram(run.histograms.latencyUs)},
    ...(run.histograms.latencyCorrectedUs ? [{label: `${label} (corrected)`, run: index, corrected: true, histogram: decodeHistogram(run.histograms.latencyCorrectedUs)}] : []),
  ])
  const maxCount = Math.max(1, ...histograms.map(({histogram}) => histogram.totalCount))
  const steps = Math.ceil(Math.log10(maxCount) * SPECTRUM_POINTS_PER_DECADE)
  const x = Array.from({length: steps + 1}, (_, k) => 10 ** (k / SPECTRUM_POINTS_PER_DECADE))
  return {x, series: histograms.map(({label, run, corrected, histogram}) => ({label, run, corrected, valuesMs: spectrumValues(histogram, x)}))}
}

function seriesOf(label: string, run: RunResult): RunSeries | undefined {
  const points = run.series ?? []
  if (points.length === 0) return undefined
  const hosts = [...new Set(points.flatMap((point) => Object.keys(point.serverConnections ?? {})))]
  const countsOf = (host: string) => points.map((point) => gauge(point.serverConnections?.[host]))
  const peak = (values: Array<number | null>) => Math.max(0, ...values.map((value) => value ?? 0))
  // The busiest hosts by name, the rest as one line: stable order (by peak, then name) so reruns read alike.
  const ranked = hosts.map((host) => ({host, values: countsOf(host)})).sort((a, b) => peak(b.values) - peak(a.values) || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
  const shown = ranked.length > MAX_HOST_SERIES ? ranked.slice(0, MAX_HOST_SERIES - 1) : ranked
  const rest = ranked.slice(shown.length)
  const started = Date.parse(run.startedAt ?? '')
  return {
    label,
    startMS: Number.isFinite(started) ? started : null,
    tS: points.map((point) => point.tMS / 1000),
    endS: points.map((point) => (point.tMS + (Number.isFinite(point.durationMS) ? point.durationMS : 0)) / 1000),
    opsPerSec: points.map((point) => point.opsPerSec),
    p99Ms: points.map((point) => (point.latencyP99Us === undefined ? null : ms(point.latencyP99Us))),
    errors: points.map((point) => point.errors),
    poolInUse: points.map((point) => gauge(point.poolInUse)),
    poolTotal: points.map((point) => gauge(point.poolTotal)),
    checkoutWaitP99Ms: points.map((point) => (point.checkoutWaitP99Us === undefined ? null : ms(point.checkoutWaitP99Us))),
    serverConnections: Object.fromEntries(shown.map(({host, values}) => [host, values])),
    otherHosts: rest.length === 0
      ? null
      : {count: rest.length, values: points.map((_, i) => meanOf(rest.map(({values}) => values[i] ?? null)))},
  }
}

/**
 * The hosts not drawn by name, as one line: their mean per host where any is known (to 0.1). A sum would
 * dwarf the named hosts on the chart's shared scale; the mean stays within it (each is below the named at its peak).
 */
function meanOf(values: Array<number | null>): number | null {
  const known = values.filter((value): value is number => value !== null)
  return known.length === 0 ? null : Math.round((10 * known.reduce((sum, value) => sum + value, 0)) / known.length) / 10
}

/** A run's warm-up in words: its own record, else the file's setting (older files), else unknown. */
function warmupOf(run: RunResult, config: BenchResult['config']): string {
  if (run.warmup) return describeWarmup(run.warmup)
  const ms = config.warmup?.mode === 'fixed' ? config.warmup.ms : config.warmupMS
  if (ms === undefined || ms === null) return 'unknown'
  return ms > 0 ? `fixed ${ms / 1000} s` : 'none (--warmup 0s)'
}

/** A gauge as read from a file: a number, or null (a gap in the line) where it is missing; never a 0 made up. */
const gauge = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null)

/**
 * The page title: every input file by name (up to TITLE_FILES, then how many more), the workloads and the
 * targets. One file: its workload and target, as before.
 */
export function reportTitle(results: ReadonlyArray<{file: string; result: BenchResult}>): string {
  const distinct = (values: string[]) => [...new Set(values)]
  const workloads = distinct(results.map(({result}) => String(result.config.workload)))
  const targets = distinct(results.map(({result}) => String(result.target.uri)))
  const runs = results.reduce((sum, {result}) => sum + result.runs.length, 0)
  if (results.length === 1) return `pooltool bench · ${workloads[0]} · ${targets[0]}${runs > 1 ? ` · ${runs} runs` : ''}`
  const names = results.map(({file}) => path.basename(file))
  const listed = names.length > TITLE_FILES ? `${names.slice(0, TITLE_FILES - 1).join(', ')} and ${names.length - TITLE_FILES + 1} more` : names.join(', ')
  const target = targets.length === 1 ? targets[0] : `${targets.length} targets`
  return `pooltool bench · ${results.length} files (${runs} runs): ${listed} · ${workloads.join(', ')} · ${target}`
}

function sweepsOf(result: BenchResult): Sweep[] {
  const sloUs = result.knee?.sloUs
  return [...new Set(result.runs.map((run) => run.model))].flatMap((model) => {
    const runs = result.runs.filter((run) => run.model === model && run.rate === null && (run.stages ?? []).length === 0)
    if (runs.length < 2) return []
    const cells = runs.map((run) => ({
      concurrency: run.concurrency,
      maxPoolSize: run.maxPoolSize,
      opsPerSec: run.opsPerSec,
      p99Ms: ms(run.latencyUs.p99),
      knee: result.knee?.model === model && result.knee.concurrency === run.concurrency && result.knee.maxPoolSize === run.maxPoolSize,
      overSlo: sloUs !== undefined && run.latencyUs.p99 > sloUs,
    }))
    return [{
      model,
      concurrencies: [...new Set(runs.map((run) => run.concurrency))].sort((a, b) => a - b),
      poolSizes: [...new Set(runs.map((run) => run.maxPoolSize))].sort((a, b) => (a ?? 0) - (b ?? 0)),
      cells,
      sloMs: sloUs === undefined ? null : ms(sloUs),
    }]
  })
}

/** The report of one or more bench results (several files: their runs side by side, labelled by file). */
export function reportData(results: ReadonlyArray<{file: string; result: BenchResult}>): ReportData {
  // Several files: each run is named by its file's name (the directory adds nothing to tell them apart).
  const labelled = results.flatMap(({file, result}) => result.runs.map((run) => ({label: results.length > 1 ? `${path.basename(file)}: ${runLabel(run)}` : runLabel(run), run, config: result.config})))
  return {
    title: reportTitle(results),
    files: results.map(({file}) => file),
    sources: results.map(({file, result}) => `${file}: ${result.target.uri} (${result.cluster?.topology ?? 'topology unknown'}, MongoDB ${result.cluster?.serverVersion ?? 'unknown'}), ${result.runs.length} run(s)`),
    spectrum: spectrumOf(labelled),
    series: labelled.flatMap(({label, run}) => seriesOf(label, run) ?? []),
    sweeps: results.flatMap(({result}) => sweepsOf(result)),
    runs: labelled.map(({label, run, config}) => ({
      label,
      opsPerSec: run.opsPerSec,
      p50Ms: ms(run.latencyUs.p50),
      p99Ms: ms(run.latencyUs.p99),
      p999Ms: ms(run.latencyUs.p999),
      errors: run.errors,
      connectionsCreated: run.pool.created,
      warmup: warmupOf(run, config),
      ...(run.warmup?.endedBy === 'cap' ? {warmupSettled: false} : {}),
    })),
    lockTimelines: labelled.flatMap(({label, run}) =>
      run.locks?.events ? [{label, timeline: lockTimeline(run.locks.events, run.durationMS, run.locks.model), eventsNotKept: run.locks.eventsNotKept ?? 0}] : [],
    ),
  }
}
