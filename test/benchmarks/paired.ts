/**
 * The one method every comparative benchmark uses (issue 28), so a figure of a few percent can be
 * resolved on a machine whose speed drifts by tens of percent from one second to the next:
 *
 * - A (the baseline, e.g. the bare driver loop) and B (pooltool) run in many short alternating
 *   slices. Pair i runs A then B when i is even, B then A when odd (A B B A A B …), so a drift that
 *   is linear over two slices cancels out of the pair instead of favouring whichever runs second.
 * - The first `warmupPairs` pairs are run and discarded (JIT, caches, the server's first answers).
 * - The figure is the median of the per-pair ratios B/A: each ratio compares two slices a second or
 *   two apart, so the machine's slow minutes shift both sides of a pair alike. The 95% interval is a
 *   percentile bootstrap of that median (seeded: the same pairs always give the same interval), and
 *   the spread of the ratios (min, quartiles, max) is printed beside it.
 * - Every benchmark prints `label: ratio R [lo, hi] (goal ≤ G)` and writes the same figures to
 *   test-output/bench/<name>.json (writeBenchJson), which `npm run bench` (run-all.ts) reads for its table.
 *
 * A benchmark that cannot slice (a fresh process per trial, a watch that schedules its own rounds)
 * still reports through `pairedFigure`/`writeBenchJson`, and says in its header how it pairs.
 */
import {cpus, loadavg} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {mkdir} from 'node:fs/promises'

import {writeJsonAtomically} from '../../src/output.js'
import {seededRandom} from '../../src/metrics/seeded-random.js'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const BENCH_OUTPUT_DIR = path.join(ROOT, 'test-output', 'bench')

/** parseArgs options every paired benchmark accepts: --pairs N (measured pairs), --quick (fewer pairs). */
export const PAIRED_OPTIONS = {
  pairs: {type: 'string'},
  'warmup-pairs': {type: 'string'},
  quick: {type: 'boolean', default: false},
} as const

/** Pairs to run: --pairs when given, else `quick` or `full` by --quick. */
export function pairsOf(values: {pairs?: string; 'warmup-pairs'?: string; quick?: boolean}, defaults: {full: number; quick: number; warmup?: number}): {pairs: number; warmupPairs: number} {
  const pairs = values.pairs === undefined ? (values.quick ? defaults.quick : defaults.full) : Number(values.pairs)
  const warmupPairs = values['warmup-pairs'] === undefined ? (defaults.warmup ?? 1) : Number(values['warmup-pairs'])
  if (!Number.isInteger(pairs) || pairs < 2) throw new Error(`--pairs must be an integer ≥ 2 (got ${values.pairs})`)
  return {pairs, warmupPairs}
}

/** Which side runs at which position of pair `index`: forward when even, reversed when odd (A B B A …). */
export function orderOfPair<S>(sides: readonly S[], index: number): S[] {
  return index % 2 === 0 ? [...sides] : [...sides].reverse()
}

export type SliceValues = Record<string, number>

export interface PairedRun<S extends string> {
  sides: readonly S[]
  /** Measured pairs only (warm-up pairs dropped): pairs[i][side][metric]. */
  pairs: Record<S, SliceValues>[]
  warmupPairs: number
}

/**
 * Run `pairs` measured pairs (after `warmupPairs` discarded ones) of slices of every side, in alternating order.
 * `sides[0]` is the baseline the ratios are taken against. More than two sides: each pair runs all of them,
 * forward or reversed.
 */
export async function runPaired<S extends string>(options: {
  sides: readonly [S, S, ...S[]]
  pairs: number
  warmupPairs: number
  slice(side: S, pairIndex: number): Promise<SliceValues>
  /** After each pair (index counts warm-up pairs from 0, `measured` false for them): a progress line. */
  onPair?(index: number, values: Record<S, SliceValues>, measured: boolean): void
}): Promise<PairedRun<S>> {
  const measured: Record<S, SliceValues>[] = []
  const total = options.warmupPairs + options.pairs
  for (let index = 0; index < total; index++) {
    const values = {} as Record<S, SliceValues>
    for (const side of orderOfPair(options.sides, index)) values[side] = await options.slice(side, index)
    const isMeasured = index >= options.warmupPairs
    if (isMeasured) measured.push(values)
    options.onPair?.(index, values, isMeasured)
  }
  return {sides: options.sides, pairs: measured, warmupPairs: options.warmupPairs}
}

// ---- statistics ----


/** Linear-interpolated quantile (q in [0, 1]) of values already sorted ascending. */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  const position = (sorted.length - 1) * q
  const low = Math.floor(position)
  const high = Math.ceil(position)
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low)
}

export const median = (values: readonly number[]): number => quantileSorted([...values].sort((a, b) => a - b), 0.5)

export const BOOTSTRAP_RESAMPLES = 4000
export const BOOTSTRAP_SEED = 0x28

/** Percentile bootstrap 95% interval of the median: resample with replacement, median of each, 2.5th and 97.5th percentiles. */
export function bootstrapMedianInterval(values: readonly number[], resamples = BOOTSTRAP_RESAMPLES, seed = BOOTSTRAP_SEED): [number, number] {
  if (values.length === 0) return [Number.NaN, Number.NaN]
  const random = seededRandom(seed)
  const medians = new Float64Array(resamples)
  const sample = new Float64Array(values.length)
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(random() * values.length)]!
    sample.sort()
    medians[r] = quantileSorted(sample as unknown as number[], 0.5)
  }
  medians.sort()
  const sorted = medians as unknown as number[]
  return [quantileSorted(sorted, 0.025), quantileSorted(sorted, 0.975)]
}

// ---- figures ----

export interface Figure {
  /** What is compared, e.g. "client CPU per operation (findOne, c=64)". */
  label: string
  /** 'ratio': B/A per pair (the table's main kind); 'value': an absolute figure (unit says what). */
  kind: 'ratio' | 'value'
  unit: string
  /** Median of the per-pair ratios (or of the values). */
  value: number
  interval: [number, number]
  /** Goal: value ≤ goal; null when the issue sets none. */
  goal: number | null
  /** Optional: the interval's upper end must also be ≤ this. */
  upperGoal?: number
  /** null when there is no goal. */
  met: boolean | null
  pairs: number
  spread: {min: number; q1: number; q3: number; max: number}
  /** The two sides' medians (ratio figures), for context: {bare: 98.2, engine: 101.3}. */
  sides?: Record<string, number>
  /** Each pair's ratio (or value), in run order. */
  samples: number[]
  note?: string
}

function spreadOf(values: readonly number[]): Figure['spread'] {
  const sorted = [...values].sort((a, b) => a - b)
  return {min: sorted[0] ?? Number.NaN, q1: quantileSorted(sorted, 0.25), q3: quantileSorted(sorted, 0.75), max: sorted.at(-1) ?? Number.NaN}
}

function goalMet(value: number, interval: [number, number], goal: number | null, upperGoal?: number): boolean | null {
  // No value (every pair left out): whether the goal is met is unknown, not "not met".
  if (goal === null || !Number.isFinite(value)) return null
  return value <= goal && (upperGoal === undefined || interval[1] <= upperGoal)
}

/** The figure of metric `metric`: side `b` against side `a` (the baseline), one ratio per pair. */
export function pairedFigure<S extends string>(run: PairedRun<S>, options: {label: string; metric: string; a: S; b: S; goal: number | null; upperGoal?: number; note?: string}): Figure {
  const ratios = run.pairs.map((pair) => pair[options.b][options.metric]! / pair[options.a][options.metric]!).filter((r) => Number.isFinite(r))
  const value = median(ratios)
  const interval = bootstrapMedianInterval(ratios)
  const left = run.pairs.length - ratios.length
  const sideMedian = (side: S) => median(run.pairs.map((p) => p[side][options.metric]!).filter((v) => Number.isFinite(v)))
  const note = [options.note, left > 0 ? `${left} of ${run.pairs.length} pairs left out: a side measured nothing (e.g. every slot missed)` : undefined].filter(Boolean).join('; ')
  return {
    label: options.label,
    kind: 'ratio',
    unit: '×',
    value,
    interval,
    goal: options.goal,
    ...(options.upperGoal === undefined ? {} : {upperGoal: options.upperGoal}),
    met: goalMet(value, interval, options.goal, options.upperGoal),
    pairs: ratios.length,
    spread: spreadOf(ratios),
    sides: {[options.a]: sideMedian(options.a), [options.b]: sideMedian(options.b)},
    samples: ratios,
    ...(note ? {note} : {}),
  }
}

/**
 * The same figure over other samples (runs of one benchmark pooled, see pool-runs.ts): label, kind, unit and goals
 * kept, value, interval, spread and verdict computed afresh; the sides' medians, which the samples alone cannot give, dropped.
 */
export function figureOverSamples(figure: Figure, values: readonly number[], note?: string): Figure {
  const samples = values.filter((v) => Number.isFinite(v))
  const value = median(samples)
  const interval = bootstrapMedianInterval(samples)
  const {sides: _sides, note: _note, ...kept} = figure
  return {...kept, value, interval, met: goalMet(value, interval, figure.goal, figure.upperGoal), pairs: samples.length, spread: spreadOf(samples), samples, ...(note ? {note} : {})}
}

/** The interval's half-width as a share of the value, in the figure's note (issue 28: ≤ 2 % for CPU per operation and p50). */
export function withHalfWidth(figure: Figure): Figure {
  const halfWidth = ((figure.interval[1] - figure.interval[0]) / 2 / figure.value) * 100
  const text = `interval half-width ±${Number.isFinite(halfWidth) ? halfWidth.toFixed(1) : '?'} % of the ratio`
  return {...figure, note: figure.note ? `${text}; ${figure.note}` : text}
}

/** An absolute figure (e.g. wall ms): median of the samples with the same bootstrap interval. */
/** `met`: when the goal is about something else than the median (every round within an interval), the caller's verdict. */
export function valueFigure(options: {label: string; unit: string; samples: number[]; goal: number | null; met?: boolean; note?: string}): Figure {
  const samples = options.samples.filter((v) => Number.isFinite(v))
  const value = median(samples)
  const interval = bootstrapMedianInterval(samples)
  return {
    label: options.label,
    kind: 'value',
    unit: options.unit,
    value,
    interval,
    goal: options.goal,
    met: options.met ?? goalMet(value, interval, options.goal),
    pairs: samples.length,
    spread: spreadOf(samples),
    samples,
    ...(options.note ? {note: options.note} : {}),
  }
}

/** A figure's number as every benchmark prints it: ratios to 3 decimals, values by size. */
export const fmt = (n: number, unit: string): string => (unit === '×' ? n.toFixed(3) : Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2))

/** `label: ratio R [lo, hi] (goal ≤ G) · met` and the spread, as every benchmark prints it. */
export function formatFigure(figure: Figure): string {
  const u = figure.unit === '×' ? '' : ` ${figure.unit}`
  const head = `${figure.label}: ${figure.kind === 'ratio' ? 'ratio' : 'median'} ${fmt(figure.value, figure.unit)}${u} [${fmt(figure.interval[0], figure.unit)}, ${fmt(figure.interval[1], figure.unit)}]`
  const goal =
    figure.goal === null
      ? ' (no goal set)'
      : ` (goal ≤ ${figure.goal}${u}${figure.upperGoal === undefined ? '' : `, interval's upper end ≤ ${figure.upperGoal}`}) · ${figure.met === null ? 'unknown' : figure.met ? 'met' : 'NOT met'}`
  const s = figure.spread
  const sides = figure.sides ? ` · medians ${Object.entries(figure.sides).map(([side, v]) => `${side} ${v.toFixed(1)}`).join(', ')}` : ''
  return `${head}${goal}\n  ${figure.pairs} ${figure.kind === 'ratio' ? 'pairs' : 'samples'}, spread min ${fmt(s.min, figure.unit)} · IQR [${fmt(s.q1, figure.unit)}, ${fmt(s.q3, figure.unit)}] · max ${fmt(s.max, figure.unit)}${sides}${figure.note ? `\n  ${figure.note}` : ''}`
}

/** What the machine was doing: where these numbers came from. */
export function machine(): {cpu: string; cores: number; node: string; loadavg: number[]} {
  return {cpu: cpus()[0]?.model.trim() ?? 'unknown', cores: cpus().length, node: process.version, loadavg: loadavg().map((l) => Math.round(l * 100) / 100)}
}

export const loadText = (): string => `load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`

/** The JSON every benchmark writes, and run-all.ts reads (another benchmark can write the same shape to join the table). */
export interface BenchJson {
  benchmark: string
  date: string
  machine: ReturnType<typeof machine>
  /** Load average when the benchmark started and ended (the machine may be shared). */
  loadavg: {start: number[]; end: number[]}
  method: {pairs: number; warmupPairs: number; order: string; slice: string; bootstrap: {resamples: number; seed: number; interval: 0.95}}
  figures: Figure[]
  /** Anything the benchmark measured besides the figures (absolute values per side …). */
  extra?: Record<string, unknown>
}

/** Starts the clock on a benchmark's record: call at the top, `finish` at the end. */
export function benchRecord(benchmark: string, method: {pairs: number; warmupPairs: number; order?: string; slice: string}) {
  const start = machine()
  const date = new Date().toISOString()
  return {
    header: `${loadText()} · ${start.cores} × ${start.cpu} · node ${start.node} · ${method.pairs} measured pairs after ${method.warmupPairs} warm-up, order ${method.order ?? 'A B B A …'}`,
    async finish(figures: Figure[], extra?: Record<string, unknown>): Promise<string> {
      for (const figure of figures) console.log(formatFigure(figure))
      const json: BenchJson = {
        benchmark,
        date,
        machine: start,
        loadavg: {start: start.loadavg, end: machine().loadavg},
        method: {pairs: method.pairs, warmupPairs: method.warmupPairs, order: method.order ?? 'ABBA (pair i forward when even, reversed when odd)', slice: method.slice, bootstrap: {resamples: BOOTSTRAP_RESAMPLES, seed: BOOTSTRAP_SEED, interval: 0.95}},
        figures,
        ...(extra ? {extra} : {}),
      }
      return writeBenchJson(json)
    },
  }
}

export async function writeBenchJson(json: BenchJson): Promise<string> {
  await mkdir(BENCH_OUTPUT_DIR, {recursive: true})
  const file = path.join(BENCH_OUTPUT_DIR, `${json.benchmark}.json`)
  await writeJsonAtomically(file, json)
  console.log(`${loadText()} at the end · figures written to ${path.relative(process.cwd(), file)}`)
  return file
}

/** CPU time of this process (every thread), µs. */
export const cpuMicros = (usage: NodeJS.CpuUsage = process.cpuUsage()): number => usage.user + usage.system
