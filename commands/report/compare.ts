import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base-command.js'
import {EXIT_CODES} from '../../src/errors.js'
import {compareBenchResults, NOISE_RULE, parsePair, parseRatioGates} from '../../src/report/compare.js'
import {SETTING_NAMES} from '../../src/report/config-match.js'
import {loadBenchResult} from '../../src/report/load.js'
import type {CompareResult} from '../../src/report/types.js'
import {renderCompare} from '../../src/reporters/report.js'

export default class ReportCompare extends BaseCommand<typeof ReportCompare> {
  static override summary = 'Compare two bench results run by run, and gate regressions (exit 8).'

  static override description =
    'Same configuration: every setting that changes the figures must be equal in both files: target (the embedded ' +
    "cluster, or a URI's hosts), server (topology and version), sim-latency, workload, workload-file (its content), " +
    'doc-size, seed-docs, key-dist, op-timeout, pool-options, warmup, duration, workers, segments. Runs are matched by ' +
    'model, concurrency, max-pool-size and rate. A difference is refused (exit 2) with the settings named, unless ' +
    '--pair names them: they differ on purpose (e.g. --pair max-pool-size for "did a smaller pool help?"), and the ' +
    'output says so.\n\n' +
    'For each matched run: ratios NEW ÷ BASE of ops/s, p50, p99, p99.9 (open loop: the latency corrected for ' +
    'coordinated omission), checkout wait p99 and connections created, each with the 95% interval of the ratio; a ' +
    'ratio is 1 when both are 0 and null when only the base is 0.\n\n' +
    `Within noise (the interval holds 1): ${NOISE_RULE}.\n\n` +
    '--fail-on gates the ratios: one ✓/✗ line per threshold, with each run\'s ratio and interval. A threshold fails ' +
    'when a run\'s ratio crosses it beyond noise (its interval does not hold 1) or has no ratio; a crossing within ' +
    'noise passes, shown as such. Exit 8 when one fails.\n\n' +
    'JSON (--json): {base, new, pair: [setting], differOnPurpose: [{setting, base, new}], runs: [{run, baseRun, ' +
    'differOnPurpose: [{setting, base, new}], intervals: {base, new}, metrics: {opsPerSec|p50|p99|p999|' +
    'checkoutWaitP99|connectionsCreated: {base, new, ratio, interval: [low, high|null] | null, withinNoise, noise: ' +
    '"series"|"sampling"|null}}}], unmatched: {new: [], base: []}, noiseRule, failOn: {expressions, gates: [{expression, ' +
    'passed, failures: [{run, actual, interval}], withinNoise: [{run, actual, interval}]}], passed} | null, notes}. Times in µs.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> base.json new.json',
    "<%= config.bin %> <%= command.id %> base.json new.json --fail-on 'p99Ratio>1.10,opsPerSecRatio<0.95'",
    '<%= config.bin %> <%= command.id %> pool100.json pool10.json --pair max-pool-size',
    "<%= config.bin %> <%= command.id %> plain.json slow.json --pair sim-latency --fail-on 'p99Ratio>1.10'",
  ]

  static override args = {
    base: Args.string({required: true, description: 'The bench result to compare against.'}),
    new: Args.string({required: true, description: 'The bench result being judged.'}),
  }

  static override flags = {
    'fail-on': Flags.string({
      summary: "Exit 8 when a ratio crosses a threshold beyond noise, e.g. 'p99Ratio>1.10,opsPerSecRatio<0.95'.",
      description: 'Metrics: opsPerSecRatio p50Ratio p99Ratio p999Ratio checkoutWaitP99Ratio connectionsCreatedRatio; operators > >= < <=.',
    }),
    pair: Flags.string({
      summary: 'Settings that differ on purpose, comma-separated, e.g. max-pool-size or sim-latency,model: compare the runs anyway.',
      description: `Settings: ${SETTING_NAMES.join(' ')}. A paired run setting (model, concurrency, max-pool-size, rate) is left out of the match, so pool=100 meets pool=10.`,
    }),
  }

  async run(): Promise<CompareResult> {
    const gates = this.flags['fail-on'] === undefined ? undefined : parseRatioGates(this.flags['fail-on'])
    const pair = this.flags.pair === undefined ? undefined : parsePair(this.flags.pair)
    const base = await loadBenchResult(this.args.base)
    const next = await loadBenchResult(this.args.new)
    const result = compareBenchResults(base, next, {gates, pair})
    this.logText((layout) => renderCompare(result, layout))
    if (result.failOn && !result.failOn.passed) process.exitCode = EXIT_CODES.thresholdBreached
    return result
  }
}
