/** Text for `pooltool report merge` and `pooltool report compare` (pure: result → text). */
import type {CompareResult, ComparedMetric, GateLine, MergedBenchResult, MetricComparison} from '../report/types.js'
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

const ratioText = (value: number) => `${value.toFixed(2)}×`

function intervalText(interval: MetricComparison['interval']): string {
  if (interval === null) return ''
  return ` [${interval[0].toFixed(2)}–${interval[1] === null ? '∞' : interval[1].toFixed(2)}]`
}

function cell(metric: ComparedMetric, value: MetricComparison): string {
  const format = TIME_METRICS.has(metric) ? formatUs : formatCount
  const ratio = value.ratio === null ? 'no ratio (base 0)' : ratioText(value.ratio)
  const noise = value.withinNoise === null ? '' : value.withinNoise ? ' within noise' : ' beyond noise'
  const model = value.noise === 'sampling' ? ' (sampling only)' : ''
  return `${LABELS[metric]} ${format(value.base)} → ${format(value.new)}: ${ratio}${intervalText(value.interval)}${noise}${model}`
}

type GateRun = GateLine['failures'][number]

const gateRun = ({run, actual, interval}: GateRun) => `${run}: ${actual === null ? 'no ratio' : actual.toFixed(2)}${intervalText(interval)}`

export function renderCompare(result: CompareResult, _layout: Layout = UNLIMITED): string {
  const lines = [`pooltool report compare · base ${result.base} · new ${result.new}`]
  if (result.differOnPurpose.length > 0 || result.pair.length > 0) {
    const differences = result.differOnPurpose.map((d) => `${d.setting} ${d.base} → ${d.new}`)
    lines.push(`differ on purpose (--pair ${result.pair.join(',')}): ${differences.length > 0 ? differences.join(', ') : 'no file setting'}`)
  }
  for (const run of result.runs) {
    lines.push('', run.baseRun === run.run ? run.run : `${run.baseRun} → ${run.run}`)
    const own = run.differOnPurpose.filter((d) => !result.differOnPurpose.some((f) => f.setting === d.setting))
    if (own.length > 0) lines.push(`  differ on purpose: ${own.map((d) => `${d.setting} ${d.base} → ${d.new}`).join(', ')}`)
    for (const [metric, value] of Object.entries(run.metrics) as Array<[ComparedMetric, MetricComparison]>) lines.push(`  ${cell(metric, value)}`)
  }
  if (result.failOn) {
    lines.push('')
    for (const gate of result.failOn.gates) {
      const noisy = gate.withinNoise.length > 0 ? ` (crossed within noise, not failed: ${gate.withinNoise.map(gateRun).join('; ')})` : ''
      lines.push(gate.passed ? `✓ ${gate.expression}${noisy}` : `✗ ${gate.expression} (${gate.failures.map(gateRun).join('; ')})${noisy}`)
    }
  }
  lines.push('', `within noise: the ratio's 95% interval [low–high] holds 1; ${result.noiseRule}`)
  for (const note of result.notes) lines.push(`note: ${note}`)
  return lines.join('\n')
}
