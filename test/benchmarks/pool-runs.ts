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

import {type BenchJson, figureOverSamples, fmt, formatFigure, withHalfWidth} from './paired.js'

const files = process.argv.slice(2)
if (files.length < 2) throw new Error('pool-runs: give two or more JSON files of the same benchmark')
const runs = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchJson)

for (const figure of runs[0]!.figures) {
  const all = runs.map((run) => run.figures.find((f) => f.label === figure.label))
  if (all.some((f) => !f?.samples?.length)) continue
  // JSON has no NaN: a pair left out reads null there (figureOverSamples keeps the finite ones).
  const samples = all.flatMap((f) => f!.samples!).filter((value): value is number => typeof value === 'number')
  const each = `each run: ${all.map((f) => `${fmt(f!.value, f!.unit)} [${f!.interval.map((x) => fmt(x, f!.unit)).join(', ')}]`).join(' · ')}`
  const pooled = figureOverSamples(figure, samples, `${runs.length} runs pooled; ${each}`)
  console.log(formatFigure(pooled.kind === 'ratio' ? withHalfWidth(pooled) : pooled))
}
