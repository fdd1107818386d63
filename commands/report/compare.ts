import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base-command.js'
import {EXIT_CODES} from '../../src/errors.js'
import {compareBenchResults, NOISE_RULE, parseRatioGates} from '../../src/report/compare.js'
import {loadBenchResult} from '../../src/report/load.js'
import type {CompareResult} from '../../src/report/types.js'
import {renderCompare} from '../../src/reporters/report.js'

export default class ReportCompare extends BaseCommand<typeof ReportCompare> {
  static override summary = 'Compare two bench results run by run, and gate regressions (exit 8).'

  static override description =
    'Each run of NEW is matched to the run of BASE with the same model, concurrency, pool size and rate. For each: ' +
    'ratios NEW ÷ BASE of ops/s, p50, p99, p99.9 (open loop: the latency corrected for coordinated omission), checkout ' +
    'wait p99 and connections created; a ratio is 1 when both are 0 and null when only the base is 0.\n\n' +
    `Within noise: ${NOISE_RULE}.\n\n` +
    '--fail-on gates the ratios: one ✓/✗ line per threshold; a threshold fails when any matched run crosses it or has no ' +
    'ratio; exit 8 when one fails.\n\n' +
    'JSON (--json): {base, new, runs: [{run, metrics: {opsPerSec|p50|p99|p999|checkoutWaitP99|connectionsCreated: ' +
    '{base, new, ratio, withinNoise}}}], unmatched: {new: [], base: []}, noiseRule, failOn: {expressions, gates: ' +
    '[{expression, passed, failures: [{run, actual}]}], passed} | null, notes}. Times in µs.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> base.json new.json',
    "<%= config.bin %> <%= command.id %> base.json new.json --fail-on 'p99Ratio>1.10,opsPerSecRatio<0.95'",
  ]

  static override args = {
    base: Args.string({required: true, description: 'The bench result to compare against.'}),
    new: Args.string({required: true, description: 'The bench result being judged.'}),
  }

  static override flags = {
    'fail-on': Flags.string({
      summary: "Exit 8 when a ratio crosses a threshold, e.g. 'p99Ratio>1.10,opsPerSecRatio<0.95'.",
      description: 'Metrics: opsPerSecRatio p50Ratio p99Ratio p999Ratio checkoutWaitP99Ratio connectionsCreatedRatio; operators > >= < <=.',
    }),
  }

  async run(): Promise<CompareResult> {
    const gates = this.flags['fail-on'] === undefined ? undefined : parseRatioGates(this.flags['fail-on'])
    const base = await loadBenchResult(this.args.base)
    const next = await loadBenchResult(this.args.new)
    const result = compareBenchResults(base, next, gates)
    this.logText((layout) => renderCompare(result, layout))
    if (result.failOn && !result.failOn.passed) process.exitCode = EXIT_CODES.thresholdBreached
    return result
  }
}
