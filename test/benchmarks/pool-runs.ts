/**
 * Several runs of one benchmark as one sample: the per-pair ratios each run's JSON keeps (`samples`), put
 * together, and the median with paired.ts's seeded bootstrap interval over all of them. For runs of the same
 * code on the same machine (npm run bench three times in a row, say): one run's interval is as wide as a
 * day's spread allows (±2.5–3.7 % for overhead on 2026-12-08), the pooled pairs narrow it by √runs.
 * A figure is pooled only when every file has it, by the same label.
 *
 *   node --import tsx test/benchmarks/pool-runs.ts run1/overhead.json run2/overhead.json run3/overhead.json
 */
import {readFileSync} from 'node:fs'

import {type BenchJson, bootstrapMedianInterval, median} from './paired.js'

const files = process.argv.slice(2)
if (files.length < 2) throw new Error('pool-runs: give two or more JSON files of the same benchmark')
const runs = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchJson)

for (const figure of runs[0]!.figures) {
  const all = runs.map((run) => run.figures.find((f) => f.label === figure.label))
  if (all.some((f) => !f?.samples?.length)) continue
  // JSON has no NaN: a pair left out reads null there.
  const samples = all.flatMap((f) => f!.samples!).filter((value): value is number => typeof value === 'number' && Number.isFinite(value))
  const value = median(samples)
  const [lo, hi] = bootstrapMedianInterval(samples)
  const goal = figure.goal === null ? 'no goal set' : `goal ≤ ${figure.goal}${figure.upperGoal === undefined ? '' : `, interval's upper end ≤ ${figure.upperGoal}`}`
  const halfWidth = (((hi - lo) / 2 / value) * 100).toFixed(1)
  console.log(`${figure.label}: ${value.toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] over ${samples.length} pairs of ${runs.length} runs (half-width ±${halfWidth} %; ${goal})`)
  console.log(`  each run: ${all.map((f) => `${f!.value?.toFixed(3)} [${f!.interval.map((x) => x.toFixed(3)).join(', ')}]`).join(' · ')}`)
}
