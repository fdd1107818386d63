/**
 * Reading bench result files for `pooltool report`: a file that is not a bench
 * result (or not one pooltool can merge) is refused with one line naming the
 * file and the field at fault (exit 2), before anything is merged, compared or
 * rendered. One schema (below) says what a result is for every report command;
 * every histogram in it is decoded (bounded) here too, so no command meets a
 * bad one later.
 */
import {createHash} from 'node:crypto'
import {realpath} from 'node:fs/promises'

import {z} from 'zod'

import type {BenchResult} from '../bench/types.js'
import {usageError} from '../errors.js'
import {readUserFile} from '../input.js'
import {decodeHistogram, HistogramDecodeError} from '../metrics/histograms.js'

export interface LoadedResult {
  /** The path as the user gave it, for messages. */
  file: string
  result: BenchResult
  /** The file's real path and a digest of its content: the same result given twice is refused (report merge). */
  identity?: {realPath: string; sha256: string}
}

const HINT = 'give the JSON files `pooltool bench --json` printed or `--out` wrote'

/**
 * 64 MiB: a bench result is its runs' summaries, a compressed histogram each (at most a few kB) and
 * the per-interval series (about 200 bytes a point); 64 MiB holds some 300,000 points, over 80 hours
 * of runs at the default 1 s interval. A bigger file is not one bench wrote, and JSON.parse of it
 * would hold several times its size in memory.
 */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024

export function notBenchResult(file: string, field: string, why: string): Error {
  return usageError(`${file}: ${field} ${why}: not a pooltool bench result`, HINT)
}

export async function loadBenchResult(file: string): Promise<LoadedResult> {
  const text = await readUserFile(file, file, HINT, {maxBytes: MAX_RESULT_BYTES, what: 'a bench result'})
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw notBenchResult(file, 'the file', 'is not JSON')
  }
  let result: BenchResult
  let sha256: string
  try {
    result = checkBenchResult(file, parsed)
    // Of the parsed result, not the bytes: a copy re-indented is still the same result.
    sha256 = createHash('sha256').update(JSON.stringify(parsed)).digest('hex')
  } catch (error) {
    // Arrays nested thousands deep in a field the schema carries as it is: deeper than a recursive walk goes.
    if (error instanceof RangeError && /call stack/i.test(error.message)) throw notBenchResult(file, 'the file', 'nests too deeply')
    throw error
  }
  const realPath = await realpath(file).catch(() => file)
  return {file, result, identity: {realPath, sha256}}
}

// Numbers are finite numbers (z.number refuses NaN and ±Infinity; JSON's 1e999 parses to Infinity): a
// string where a number belongs would reach the sums and the HTML report as it is.
const num = z.number()
const optionalNum = num.nullish()
const numbers = z.record(z.string(), num)
const summary = z.looseObject({p50: num, p90: num, p99: num, p999: num, max: num, mean: num, count: num})
const host = z.looseObject({
  host: z.string(),
  role: z.string().optional(),
  setName: z.string().optional(),
  shard: z.string().optional(),
  connectionsBefore: optionalNum,
  connectionsPeak: optionalNum,
  connectionsAtEnd: optionalNum,
  connectionsAfter: optionalNum,
  totalCreatedDelta: optionalNum,
  clockSkewMS: optionalNum,
  unavailable: z.string().optional(),
})
const seriesPoint = z.looseObject({
  tMS: num,
  durationMS: num,
  ops: num,
  errors: num,
  opsPerSec: num,
  latencyP50Us: optionalNum,
  latencyP99Us: optionalNum,
  latencyMaxUs: optionalNum,
  poolInUse: optionalNum,
  poolTotal: optionalNum,
  checkoutWaitP99Us: optionalNum,
  serverConnections: numbers.optional(),
})
const stage = z.looseObject({
  index: num,
  startMS: num,
  durationMS: num,
  concurrency: num,
  rate: optionalNum,
  ops: num,
  errors: num,
  scheduled: optionalNum,
  missed: num,
  opsPerSec: num,
  inFlightPeak: optionalNum,
  inFlightMean: optionalNum,
  latencyUs: summary,
  latencyCorrectedUs: summary.nullish(),
  histograms: z.looseObject({latencyUs: z.string(), latencyCorrectedUs: z.string().nullish()}),
})
const run = z.looseObject({
  model: z.string(),
  workload: z.string().optional(),
  concurrency: num,
  rate: optionalNum,
  maxPoolSize: optionalNum,
  ops: num,
  errors: num,
  scheduled: optionalNum,
  missed: optionalNum,
  missedByReason: numbers.optional(),
  aborted: optionalNum,
  durationMS: num,
  opsPerSec: num,
  achievedRatePerSec: optionalNum,
  rateShortfall: z.looseObject({targetPerSec: num, achievedPerSec: num, inFlightCap: num, message: z.string()}).nullish(),
  latencyUs: summary,
  latencyByOpUs: z.record(z.string(), summary).optional(),
  latencyCorrectedUs: summary.nullish(),
  scheduleLagUs: summary.nullish(),
  checkoutWaitUs: numbers,
  checkoutWaitDriverMS: numbers.optional(),
  pool: z.looseObject({
    created: optionalNum,
    closed: numbers.optional(),
    peakTotal: optionalNum,
    peakInUse: optionalNum,
    checkOutFailed: numbers.optional(),
    cleared: optionalNum,
    clients: optionalNum,
    setupUs: numbers.optional(),
    setupDriverMS: numbers.optional(),
  }),
  server: z.array(host).optional(),
  serverBySegment: z.array(z.array(host)).optional(),
  series: z.array(seriesPoint).optional(),
  errorsByClass: numbers.optional(),
  segment: z.looseObject({index: num, count: num, concurrency: num, rate: optionalNum}).optional(),
  segments: optionalNum,
  stages: z.array(stage).optional(),
  histograms: z.looseObject({latencyUs: z.string(), latencyCorrectedUs: z.string().nullish(), latencyByOpUs: z.record(z.string(), z.string()).optional()}),
  interrupted: z.boolean().optional(),
})
const benchResult = z.looseObject({
  notes: z.array(z.string()).optional(),
  interrupted: z.boolean().optional(),
  config: z.looseObject({
    workload: z.string(),
    mix: numbers.optional(),
    docSizeBytes: optionalNum,
    warmupMS: optionalNum,
    durationMS: optionalNum,
    ops: optionalNum,
    segment: z.looseObject({index: num, count: num, runId: z.string(), indices: z.array(num).optional()}).optional(),
    stages: z.array(z.looseObject({durationMS: num, concurrency: optionalNum, rate: optionalNum})).optional(),
  }),
  runs: z.array(run),
  segments: optionalNum,
})

/** `runs[0].histograms.latencyUs` from zod's path. */
function fieldOf(path: readonly PropertyKey[]): string {
  let field = ''
  for (const key of path) field += typeof key === 'number' ? `[${key}]` : `${field === '' ? '' : '.'}${String(key)}`
  return field === '' ? 'the top level' : field
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`)

function whyWrong(issue: z.core.$ZodIssue): string {
  if (issue.code !== 'invalid_type') return issue.message
  if (issue.input === undefined) return 'is missing'
  if (issue.expected === 'number' && typeof issue.input === 'number') return 'is not a finite number'
  return `is not ${article(issue.expected)}`
}

/** The one check of a result's shape and histograms; anything the schema does not name is carried as it is. */
export function checkBenchResult(file: string, value: unknown): BenchResult {
  const parsed = benchResult.safeParse(value, {reportInput: true})
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw notBenchResult(file, fieldOf(issue.path), whyWrong(issue))
  }
  const result = value as BenchResult
  result.runs.forEach((run, index) => {
    const at = `runs[${index}]`
    checkHistogram(file, `${at}.histograms.latencyUs`, run.histograms.latencyUs)
    if (run.histograms.latencyCorrectedUs) checkHistogram(file, `${at}.histograms.latencyCorrectedUs`, run.histograms.latencyCorrectedUs)
    for (const [name, encoded] of Object.entries(run.histograms.latencyByOpUs ?? {})) checkHistogram(file, `${at}.histograms.latencyByOpUs.${name}`, encoded)
    run.stages?.forEach((stage, s) => {
      checkHistogram(file, `${at}.stages[${s}].histograms.latencyUs`, stage.histograms.latencyUs)
      if (stage.histograms.latencyCorrectedUs) checkHistogram(file, `${at}.stages[${s}].histograms.latencyCorrectedUs`, stage.histograms.latencyCorrectedUs)
    })
  })
  return result
}

/** Decodes one histogram (bounded: histograms.ts) so that a zlib bomb or a corrupt one is refused here. */
function checkHistogram(file: string, field: string, encoded: string): void {
  try {
    decodeHistogram(encoded)
  } catch (error) {
    const why = error instanceof HistogramDecodeError ? error.message : (error as Error).message
    throw notBenchResult(file, field, `does not decode as an HDR histogram (${why})`)
  }
}
