import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base-command.js'
import {EXIT_CODES} from '../../src/errors.js'
import {checkOutputFiles, writeStdout, writeTextAtomically} from '../../src/output.js'
import type {HgrmResult} from '../../src/report/hgrm.js'

export default class ReportHgrm extends BaseCommand<typeof ReportHgrm> {
  static override summary = "Export one latency histogram of a bench result as HdrHistogram's .hgrm percentile distribution."

  static override description =
    'The histogram the result file carries (runs[].histograms: every recorded value, compressed), printed as ' +
    'HdrHistogram\'s outputPercentileDistribution: Value (ms), Percentile, TotalCount, 1/(1-Percentile), with the ' +
    'mean, std deviation, max and count at the end; HdrHistogram\'s plotter and tools that read .hgrm take it as it is. ' +
    '--histogram picks latency (send → reply, the default), corrected (open loop: from each operation\'s scheduled ' +
    'time) or op:NAME (one operation of a mixed or workload-file run).\n\n' +
    'JSON (--json): {file, runIndex, run, histogram, valueUnit: "ms", count, hgrm}.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> result.json > pool-c8.hgrm',
    '<%= config.bin %> <%= command.id %> result.json --run 2 --histogram corrected --out open-loop.hgrm',
    '<%= config.bin %> <%= command.id %> result.json --histogram op:find',
  ]

  static override args = {
    file: Args.string({required: true, description: 'A bench result (bench --json or --out, or report merge).'}),
  }

  static override flags = {
    run: Flags.integer({default: 0, min: 0, summary: "Which run: its index in the file's runs[] (0 is the first)."}),
    histogram: Flags.string({default: 'latency', summary: 'latency, corrected (open loop) or op:NAME (per operation).'}),
    out: Flags.string({summary: 'Write the .hgrm to this file (absent or a regular file; written atomically) instead of stdout.'}),
  }

  async run(): Promise<HgrmResult> {
    const {flags} = this
    // Before the result is read: --out naming it would replace the result with one of its histograms.
    await checkOutputFiles([{flag: '--out', file: flags.out}], [{flag: 'input file', file: this.args.file}])
    // Imported once the flags are checked: oclif loads this file for a usage error, which must not load zod and the reports.
    const [{loadBenchResult}, {toHgrm}] = await Promise.all([import('../../src/report/load.js'), import('../../src/report/hgrm.js')])
    const {file, result} = await loadBenchResult(this.args.file)
    const hgrm = toHgrm(file, result, flags.run, flags.histogram)
    if (flags.out !== undefined) {
      await writeTextAtomically(flags.out, hgrm.hgrm)
      this.logText(() => `${hgrm.run}: ${hgrm.histogram} histogram, ${hgrm.count.toLocaleString('en-US')} values, written to ${flags.out} (values in ms)`)
    } else if (!this.jsonEnabled() && !(await writeStdout(hgrm.hgrm))) {
      // The reader went away before the whole histogram was out: as a shell reports SIGPIPE.
      process.exitCode = EXIT_CODES.brokenPipe
    }
    return hgrm
  }
}
