/**
 * Reading bench result files for `pooltool report`: a file that is not a bench
 * result (or not one pooltool can merge) is refused with one line naming the
 * file and the field at fault (exit 2), before anything is merged or compared.
 */

import type {BenchResult} from '../bench/types.js'
import {usageError} from '../errors.js'
import {readUserFile} from '../input.js'

export interface LoadedResult {
  /** The path as the user gave it, for messages. */
  file: string
  result: BenchResult
}

const HINT = 'give the JSON files `pooltool bench --json` printed or `--out` wrote'

export function notBenchResult(file: string, field: string, why: string): Error {
  return usageError(`${file}: ${field} ${why}: not a pooltool bench result`, HINT)
}

export async function loadBenchResult(file: string): Promise<LoadedResult> {
  const text = await readUserFile(file, file, HINT)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw notBenchResult(file, 'the file', 'is not JSON')
  }
  return {file, result: checkBenchResult(file, parsed)}
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The fields merge and compare rely on; anything else is carried as it is. */
export function checkBenchResult(file: string, value: unknown): BenchResult {
  if (!isObject(value)) throw notBenchResult(file, 'the top level', 'is not an object')
  if (!isObject(value.config)) throw notBenchResult(file, 'config', 'is missing')
  if (typeof value.config.workload !== 'string') throw notBenchResult(file, 'config.workload', 'is missing')
  if (!Array.isArray(value.runs)) throw notBenchResult(file, 'runs', 'is missing')
  value.runs.forEach((run: unknown, index) => {
    const at = `runs[${index}]`
    if (!isObject(run)) throw notBenchResult(file, at, 'is not an object')
    for (const field of ['model', 'concurrency', 'ops', 'errors', 'durationMS', 'opsPerSec'] as const) {
      if (run[field] === undefined) throw notBenchResult(file, `${at}.${field}`, 'is missing')
    }
    if (!isObject(run.histograms) || typeof run.histograms.latencyUs !== 'string') throw notBenchResult(file, `${at}.histograms.latencyUs`, 'is missing')
    if (!isObject(run.latencyUs)) throw notBenchResult(file, `${at}.latencyUs`, 'is missing')
    if (!isObject(run.pool)) throw notBenchResult(file, `${at}.pool`, 'is missing')
    if (!isObject(run.checkoutWaitUs)) throw notBenchResult(file, `${at}.checkoutWaitUs`, 'is missing')
  })
  return value as unknown as BenchResult
}
