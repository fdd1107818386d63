/** Text for `pooltool report merge` and `pooltool report compare` (pure: result → text). */
import type {CompareResult, ComparedMetric, MergedBenchResult, MetricComparison} from '../report/types.js'
import {renderBench} from './bench.js'
import {type Layout, UNLIMITED} from './fit.js'
import {formatCount, formatUs} from './format.js'

export function renderMerge(result: MergedBenchResult, files: readonly string[], out: string | undefined, layout: Layout = UNLIMITED): string {
  const head = `pooltool report merge · ${formatCount(result.segments)} segments from ${files.join(', ')}${out === undefined ? '' : ` → ${out}`}`
  const segments = result.runs.map((run) => `  ${run.model} c=${run.concurrency}: ${run.segments} segments; concurrency, pool size and rate are each segment's`)
  return [head, ...segments, '', renderBench(result, layout)].join('\n')
}

const LABELS: Record<ComparedMetric, string> = {
  opsPerSec: 'ops/s',
  p50: 'p50',
  p99: 'p99',
  p999: 'p99.9',
  checkoutWaitP99: 'checkout wait p99',
  connectionsCreated: 'connections created',
}

const TIME_METRICS = new Set<ComparedMetric>(['p50', 'p99', 'p999', 'checkoutWaitP99'])

function cell(metric: ComparedMetric, value: MetricComparison): string {
  const format = TIME_METRICS.has(metric) ? formatUs : formatCount
  const ratio = value.ratio === null ? 'no ratio (base 0)' : `${value.ratio.toFixed(2)}×`
  const noise = value.withinNoise === null ? '' : value.withinNoise ? ' (within noise)' : ''
  return `${LABELS[metric]} ${format(value.base)} → ${format(value.new)}: ${ratio}${noise}`
}

export function renderCompare(result: CompareResult, _layout: Layout = UNLIMITED): string {
  const lines = [`pooltool report compare · base ${result.base} · new ${result.new}`]
  for (const run of result.runs) {
    lines.push('', run.run)
    for (const [metric, value] of Object.entries(run.metrics) as Array<[ComparedMetric, MetricComparison]>) lines.push(`  ${cell(metric, value)}`)
  }
  if (result.failOn) {
    lines.push('')
    for (const gate of result.failOn.gates) {
      const why = gate.failures.map(({run, actual}) => `${run}: ${actual === null ? 'no ratio' : actual.toFixed(2)}`).join('; ')
      lines.push(gate.passed ? `✓ ${gate.expression}` : `✗ ${gate.expression} (${why})`)
    }
  }
  lines.push('', `within noise: ${result.noiseRule}`)
  for (const note of result.notes) lines.push(`note: ${note}`)
  return lines.join('\n')
}
