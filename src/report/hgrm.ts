/**
 * `pooltool report hgrm`: one histogram of a bench result as HdrHistogram's percentile distribution
 * (the `.hgrm` text that HdrHistogram's plotter and its users read), values in milliseconds.
 * The histogram is the one the result carries (runs[].histograms, compressed, exact counts), not
 * rebuilt from the percentiles.
 */
import {runLabel} from '../bench/fail-on.js'
import type {BenchResult} from '../bench/types.js'
import {usageError} from '../errors.js'
import {decodeHistogram} from '../metrics/histograms.js'

/** Which histogram: `latency` (send → reply), `corrected` (open loop, from the schedule) or `op:<name>` (a workload's operation). */
export type HgrmChoice = string

export interface HgrmResult {
  file: string
  /** Index into the file's runs[], and its label ("pool c=8"). */
  runIndex: number
  run: string
  histogram: HgrmChoice
  /** Values in the text are milliseconds (the histogram holds whole µs). */
  valueUnit: 'ms'
  count: number
  hgrm: string
}

/** HdrHistogram's default: 5 ticks per half distance to 100 %. */
const TICKS_PER_HALF_DISTANCE = 5
const US_PER_MS = 1000

export function toHgrm(file: string, result: BenchResult, runIndex: number, choice: HgrmChoice): HgrmResult {
  const run = result.runs[runIndex]
  if (!run) throw usageError(`${file} has no run ${runIndex}: it has ${result.runs.length} (0–${Math.max(0, result.runs.length - 1)})`, 'give --run one of those indexes (runs[] in the JSON)')
  const encoded = encodedHistogram(run, choice)
  if (encoded === undefined) throw usageError(`${file} run ${runIndex} (${runLabel(run)}) has no ${choice} histogram`, hintFor(run))
  const histogram = decodeHistogram(encoded)
  return {
    file,
    runIndex,
    run: runLabel(run),
    histogram: choice,
    valueUnit: 'ms',
    count: histogram.totalCount,
    hgrm: histogram.outputPercentileDistribution(TICKS_PER_HALF_DISTANCE, US_PER_MS),
  }
}

function encodedHistogram(run: BenchResult['runs'][number], choice: HgrmChoice): string | undefined {
  if (choice === 'latency') return run.histograms.latencyUs
  if (choice === 'corrected') return run.histograms.latencyCorrectedUs ?? undefined
  if (choice.startsWith('op:')) return run.histograms.latencyByOpUs?.[choice.slice(3)]
  return undefined
}

function hintFor(run: BenchResult['runs'][number]): string {
  const ops = Object.keys(run.histograms.latencyByOpUs ?? {}).map((name) => `op:${name}`)
  const choices = ['latency', ...(run.histograms.latencyCorrectedUs ? ['corrected'] : []), ...ops]
  return `this run has: ${choices.join(', ')} (corrected: open loop only)`
}
