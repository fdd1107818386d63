import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base-command.js'
import {checkOutputFiles, writeTextAtomically} from '../../src/output.js'

export interface HtmlReportResult {
  out: string
  files: string[]
  runs: number
  charts: string[]
}

export default class ReportHtml extends BaseCommand<typeof ReportHtml> {
  static override summary = 'Write an HTML report of bench results: latency spectrum, throughput and connections over time, the sweep.'

  static override description =
    'One self-contained file (the chart library and the data inside it: nothing is fetched when it is opened): each ' +
    "run's latency by percentile from its own HDR histogram (HdrHistogram's plot: 1/(1−p) on a log axis; in open loop " +
    'the corrected latency beside the measured; one chart while the curves fit its 12 colours, else a panel per run), ' +
    'then one small panel per run for each of: ops/s and p99, checkout wait p99, the client pool (in use, total) and ' +
    "the busiest hosts' server connections, errors per interval (a metric no run has is a line, not an empty chart). " +
    "Each panel's time axis is its run's own wall clock (UTC, from the run's start); the panels of a metric share " +
    'their y scale. A sweep as a concurrency × pool-size grid with the knee and the SLO, and the runs side by side. ' +
    'Several files: their runs together, labelled by file; the title names the files.\n\n' +
    'JSON (--json): {out, files, runs, charts} (charts: the chart groups drawn).'

  static override examples = [
    '<%= config.bin %> <%= command.id %> result.json --out report.html',
    '<%= config.bin %> <%= command.id %> base.json new.json --out compare.html',
  ]

  static override strict = false

  static override args = {
    file: Args.string({required: true, description: 'Bench result files (bench --json or --out, or report merge), one or more.'}),
  }

  static override flags = {
    out: Flags.string({required: true, summary: 'The HTML file to write (absent or a regular file; written atomically).'}),
  }

  async run(): Promise<HtmlReportResult> {
    const {flags} = this
    const files = this.positional
    // Before any file is read: --out naming one of the results would replace it with its own report.
    await checkOutputFiles([{flag: '--out', file: flags.out}], files.map((file) => ({flag: 'input file', file})))
    // Imported once the flags are checked: oclif loads this file for a usage error, which must not load zod and the reports.
    const [{loadChartLibrary}, {reportData}, {loadBenchResult}, {benchChartGroups, renderBenchHtml}] = await Promise.all([
      import('../../src/report/html-assets.js'),
      import('../../src/report/html-data.js'),
      import('../../src/report/load.js'),
      import('../../src/reporters/html.js'),
    ])
    const results = await Promise.all(files.map((file) => loadBenchResult(file)))
    const data = reportData(results)
    await writeTextAtomically(flags.out, renderBenchHtml(data, await loadChartLibrary()))
    const charts = benchChartGroups(data)
    this.logText(() => `wrote ${flags.out}: ${data.runs.length} run(s) from ${files.join(', ')}; charts: ${charts.join(', ')}${data.sweeps.length > 0 ? ', sweep grid' : ''}`)
    return {out: flags.out, files, runs: data.runs.length, charts}
  }
}
