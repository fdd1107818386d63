import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base-command.js'
import {usageError} from '../../src/errors.js'
import {checkOutputFiles, writeJsonAtomically} from '../../src/output.js'
import type {MergedBenchResult} from '../../src/report/types.js'
import {renderMerge} from '../../src/reporters/report.js'

export default class ReportMerge extends BaseCommand<typeof ReportMerge> {
  static override summary = 'Merge the bench results of the segments of one distributed run into one result.'

  static override description =
    'Every file must come from the same bench configuration with the same runs (matched by model, concurrency, pool size ' +
    'and rate); a file that is not a bench result or does not match is refused with one line naming the file and field (exit 2).\n\n' +
    'Exact: latency HDR histograms are decoded, added and re-encoded, and every percentile is recomputed from the merged ' +
    'histogram (never averaged), per operation name too (latencyByOpUs) when every segment has them; ops, errors, errorsByClass, missed, scheduled, aborted and the pool counts (created, closed, ' +
    'cleared, checkOutFailed, clients) are summed; ops/s is recomputed over the common measured interval (segments start ' +
    'together with --start-at, so it is the longest segment\'s).\n\n' +
    'Bounds: checkoutWaitUs, checkoutWaitDriverMS, pool.setupUs, pool.setupDriverMS and scheduleLagUs are kept as percentiles ' +
    'only, so the merged value is the worst segment\'s (an upper bound); pool.peakTotal and pool.peakInUse are sums of each ' +
    'segment\'s own pools\' peaks (an upper bound).\n\n' +
    'Server side, per host: readings of the whole server, which every segment sees, so they are not summed: the merged `server` ' +
    'keeps the highest connectionsPeak, connectionsAtEnd and totalCreatedDelta and the lowest connectionsBefore and ' +
    'connectionsAfter; `serverBySegment` keeps each segment\'s own readings (with its clock skew).\n\n' +
    'The JSON (--json, --out) is a bench result plus `segments` (on the file and on each run) and `runs[].serverBySegment`; ' +
    'concurrency, maxPoolSize and rate stay each segment\'s values. A merged file can be merged again (merge is associative) ' +
    'and compared with `report compare`. `namespace` and `cleanedUp` say what the merged run left on the cluster: the segments ' +
    'share one namespace, which every segment but the last to finish leaves behind and the last drops, so a collection is ' +
    'left behind only when a segment left it and no segment dropped it. The per-interval series (runs[].series) are not carried: their percentiles come ' +
    'from histograms the files do not hold.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> seg0.json seg1.json seg2.json --out total.json',
    '<%= config.bin %> <%= command.id %> total-ab.json seg2.json --json',
  ]

  static override usage = '<%= command.id %> FILE FILE... [--out FILE] [--json]'

  // The files are a variadic list: read from argv, at least two.
  static override strict = false

  static override flags = {
    out: Flags.string({summary: 'Write the merged JSON result to this file (absent or a regular file; written atomically).'}),
  }

  async run(): Promise<MergedBenchResult> {
    const {argv} = await this.parse(ReportMerge)
    const files = argv as string[]
    if (files.length < 2) throw usageError(`report merge needs at least two bench result files (got ${files.length})`, 'e.g. pooltool report merge seg0.json seg1.json --out total.json')
    // Merging into one of the segments would replace it: refused before any file is read.
    await checkOutputFiles([{flag: '--out', file: this.flags.out}], files.map((file) => ({flag: 'input file', file})))
    // Imported once the flags are checked: oclif loads this file for a usage error, which must not load zod and the reports.
    const [{loadBenchResult}, {mergeBenchResults}] = await Promise.all([import('../../src/report/load.js'), import('../../src/report/merge.js')])
    const inputs = []
    for (const file of files) inputs.push(await loadBenchResult(file))
    const result = mergeBenchResults(inputs)
    if (this.flags.out !== undefined) await writeJsonAtomically(this.flags.out, result)
    this.logText((layout) => renderMerge(result, files, this.flags.out, layout))
    return result
  }
}
