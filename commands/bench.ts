import {Flags} from '@oclif/core'

import {DEFAULT_SERIES_INTERVAL_MS, toBenchConfig} from '../src/bench/config.js'
import {parseFailOn} from '../src/bench/fail-on.js'
import {runBench} from '../src/bench/run-bench.js'
import {type BenchResult, POOL_MODELS, WORKLOADS} from '../src/bench/types.js'
import {TargetCommand} from '../src/cli/base-command.js'
import {failureLine} from '../src/cli/failures.js'
import {durationFlag} from '../src/cli/flags.js'
import {BENCH_DEFAULTS} from '../src/defaults.js'
import {EXIT_CODES, PoolToolError} from '../src/errors.js'
import {percentileUs} from '../src/metrics/histograms.js'
import {checkOutputPath, writeJsonAtomically, writeTextAtomically} from '../src/output.js'
import {formatDuration} from '../src/parse/durations.js'
import {renderBench, renderBenchTick, renderSeriesCsv} from '../src/reporters/bench.js'
import {renderNamespaceNotes} from '../src/reporters/namespace.js'
import {createProgress} from '../src/reporters/progress.js'

export default class Bench extends TargetCommand<typeof Bench> {
  static override summary = 'Drive load through a pool model and measure latency, the client pool and the server side.'

  static override description =
    'Runs a workload in its own collections of pooltool\'s database (seeded first, dropped afterwards unless --keep; a ' +
    '--db that holds anything pooltool did not create is refused before any write) through one of four ' +
    'ways of spreading operations over connections: pool (one client, the driver pool), single (maxPoolSize 1), ' +
    'per-op (a new client, handshake and auth per operation) and fixed (N dedicated connections, round robin). ' +
    'Comma lists on --model, --concurrency and --max-pool-size run the matrix and name the knee: the highest ' +
    'throughput whose p99 stays within --slo. Closed loop by default; --rate R runs open loop with scheduled start ' +
    'times and reports latency corrected for coordinated omission beside the uncorrected one.\n\n' +
    '--json (and --out) adds, per run: runs[].series, one entry per --series-interval from the start of the measured ' +
    'interval: {tMS, durationMS, ops, errors, opsPerSec, latencyP50Us, latencyP99Us, latencyMaxUs, poolInUse, poolTotal, ' +
    'checkoutWaitP99Us, serverConnections: {"host:port": n}} (latency send → reply, uncorrected in open loop, from that interval\'s own histogram; a figure that ' +
    'could not be read is absent; every counted operation is in exactly one interval, so the ops add up to the run\'s); ' +
    'and runs[].latencyByOpUs: {find: {p50, p90, p99, p999, max, mean, count}, update: …}, one histogram per operation ' +
    'name (a mixed workload\'s mix, else the workload\'s own name), whose counts add up to ops. --csv FILE writes the ' +
    'same series as CSV: a header row, then one row per interval per run (runIndex = the index in runs[]), one ' +
    'connections:<host> column per sampled host.\n\n' +
    '--stages 10s:8,30s:64,10s:8 ramps the load in one run (one per model and pool size): each stage\'s duration and ' +
    'concurrency (closed loop), or 10s:500/s,30s:2000/s, its rate (open loop; --concurrency stays the in-flight cap). The measured ' +
    'interval is the stages\' sum; excludes --duration, --ops, --rate and a --concurrency list. At each boundary, closed-loop ' +
    'workers beyond the stage\'s concurrency finish their current operation and stop, new ones start when it grows; open-loop ' +
    'slots follow each stage\'s rate from its boundary. The run\'s figures cover the whole run (its concurrency: the largest ' +
    'stage\'s; its rate: the stages\' mean); runs[].stages adds one entry per stage: {index, startMS, durationMS, concurrency, ' +
    'rate, ops, errors, scheduled, missed, opsPerSec, inFlightPeak, inFlightMean, latencyUs, latencyCorrectedUs, histograms: ' +
    '{latencyUs, latencyCorrectedUs}} (inFlight: operations in flight during the stage\'s window, the most at once and the ' +
    'time-weighted mean: the concurrency the client really kept up; the previous stage\'s count while they finish). ' +
    'An operation belongs to the stage in which it started (closed loop) or was scheduled (open loop): the stages add up to ' +
    'the run, and scheduled = ops + errors + missed holds per stage.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --duration 10s',
    '<%= config.bin %> <%= command.id %> --model pool,single,per-op,fixed --concurrency 32 --sim-latency 2ms',
    '<%= config.bin %> <%= command.id %> --concurrency 1,8,64,512 --max-pool-size 5,20,100 --slo 20ms',
    '<%= config.bin %> <%= command.id %> --workload mixed --mix find=80,insert=20 --rate 2000 --duration 30s',
    '<%= config.bin %> <%= command.id %> --duration 2m --series-interval 5s --csv series.csv',
    '<%= config.bin %> <%= command.id %> --stages 10s:8,30s:64,10s:8 --series-interval 1s',
    "<%= config.bin %> <%= command.id %> --uri mongodb://db1:27017 --fail-on 'p99>50ms,errors>0' --out result.json",
  ]

  static override flags = {
    workload: Flags.string({default: BENCH_DEFAULTS.workload, summary: `Operation to drive: ${WORKLOADS.join(', ')}.`, helpGroup: 'WORKLOAD'}),
    mix: Flags.string({summary: `Weights for --workload mixed, adding up to 100 (default ${BENCH_DEFAULTS.mix}).`, helpGroup: 'WORKLOAD'}),
    'doc-size': Flags.integer({default: BENCH_DEFAULTS.docSizeBytes, min: 0, max: 16_000_000, summary: 'Payload bytes per document.', helpGroup: 'WORKLOAD'}),
    'seed-docs': Flags.integer({default: BENCH_DEFAULTS.seedDocs, min: 1, max: 10_000_000, summary: 'Documents seeded for find and update.', helpGroup: 'WORKLOAD'}),
    db: Flags.string({
      default: BENCH_DEFAULTS.db,
      summary: "pooltool's own database: absent, or created and marked by pooltool. A database holding anything else, admin, local and config are refused.",
      description: 'Each run writes only its own collections (bench_<runId>) and drops them afterwards; concurrent runs share the database and never touch each other\'s data.',
      helpGroup: 'WORKLOAD',
    }),
    keep: Flags.boolean({default: false, summary: "Keep this run's collections afterwards (the report says how to drop them).", helpGroup: 'WORKLOAD'}),
    model: Flags.string({default: BENCH_DEFAULTS.model, summary: `Pool model(s), comma list: ${POOL_MODELS.join(', ')}.`, helpGroup: 'LOAD'}),
    concurrency: Flags.string({default: String(BENCH_DEFAULTS.concurrency), summary: 'Concurrent operations (closed loop) or the in-flight cap (open loop); comma list sweeps.', helpGroup: 'LOAD'}),
    rate: Flags.integer({min: 1, summary: 'Open loop: scheduled operations per second.', helpGroup: 'LOAD'}),
    duration: durationFlag({summary: `Measured time per run, e.g. 30s, 2m (default ${formatDuration(BENCH_DEFAULTS.durationMS)}).`, helpGroup: 'LOAD'}),
    ops: Flags.integer({min: 1, summary: 'Measured operations per run (closed loop), instead of --duration.', helpGroup: 'LOAD'}),
    stages: Flags.string({summary: 'Ramp the load in one run: DURATION:CONCURRENCY stages (10s:8,30s:64,10s:8), or DURATION:RATE/s in open loop (10s:500/s,30s:2000/s); instead of --duration.', helpGroup: 'LOAD'}),
    warmup: durationFlag({default: BENCH_DEFAULTS.warmupMS, summary: 'Unmeasured warm-up before each run, e.g. 2s.', helpGroup: 'LOAD'}),
    'max-pool-size': Flags.string({summary: 'maxPoolSize (pool model) or N connections (fixed model); comma list sweeps. Default: the driver\'s 100 / fixed: the concurrency.', helpGroup: 'POOL'}),
    'min-pool-size': Flags.integer({min: 0, summary: 'minPoolSize.', helpGroup: 'POOL'}),
    'max-connecting': Flags.integer({min: 1, summary: 'maxConnecting: connections established at once per pool (driver default 2).', helpGroup: 'POOL'}),
    'max-idle-time-ms': Flags.integer({min: 0, summary: 'maxIdleTimeMS: close connections idle this long.', helpGroup: 'POOL'}),
    'wait-queue-timeout-ms': Flags.integer({min: 0, summary: 'waitQueueTimeoutMS: fail a checkout that waits this long.', helpGroup: 'POOL'}),
    slo: durationFlag({summary: 'p99 bound for the knee, e.g. 20ms (default: 2x the lowest p99 seen).', helpGroup: 'REPORT'}),
    'fail-on': Flags.string({summary: "Exit 8 when a threshold is crossed, e.g. 'p99>50ms,errors>0,checkoutWaitP99>10ms'.", helpGroup: 'REPORT'}),
    out: Flags.string({summary: 'Also write the JSON result to this file: absent or a regular file (checked before the load starts); written atomically after every run and on interrupt.', helpGroup: 'REPORT'}),
    'sample-interval': durationFlag({default: BENCH_DEFAULTS.sampleIntervalMS, summary: 'How often serverStatus is polled on each host, e.g. 250ms, 1s.', helpGroup: 'REPORT'}),
    'series-interval': durationFlag({default: DEFAULT_SERIES_INTERVAL_MS, summary: 'Length of one interval of the time series (runs[].series, --csv), e.g. 1s, 250ms; at least 10ms.', helpGroup: 'REPORT'}),
    csv: Flags.string({summary: 'Also write the time series as CSV to this file: absent or a regular file (checked before the load starts); written atomically after every run.', helpGroup: 'REPORT'}),
    'sim-latency': durationFlag({summary: 'Embedded cluster only: per-operation service time, e.g. 2ms.', helpGroup: 'CONNECTION'}),
  }

  async run(): Promise<BenchResult> {
    const {flags} = this
    const config = toBenchConfig(flags)
    const thresholds = flags['fail-on'] === undefined ? undefined : parseFailOn(flags['fail-on'])
    const simLatencyMs = flags['sim-latency'] ?? 0
    // Refuse a file we must not write before any load starts (and before the embedded cluster starts).
    if (flags.out !== undefined) await checkOutputPath(flags.out)
    if (flags.csv !== undefined) await checkOutputPath(flags.csv, '--csv')
    const target = await this.openTarget({latencyMs: simLatencyMs})
    const progress = createProgress({json: this.jsonEnabled()})
    let label = ''
    let outFailure: string | undefined
    // A failed write never loses the measurement: it is printed anyway, and the failure said after it.
    const writeOut = async (value: BenchResult): Promise<void> => {
      const failures: string[] = []
      const write = async (flag: string, file: string | undefined, writeFile: (file: string) => Promise<void>): Promise<void> => {
        if (file === undefined) return
        try {
          await writeFile(file)
        } catch (error) {
          failures.push(`could not write ${flag} ${file}: ${(error as Error).message}`)
        }
      }
      await write('--out', flags.out, (file) => writeJsonAtomically(file, value))
      await write('--csv', flags.csv, (file) => writeTextAtomically(file, renderSeriesCsv(value), '--csv'))
      outFailure = failures.length === 0 ? undefined : failures.join('; ')
    }
    let result: BenchResult
    try {
      result = await runBench(target, config, {
        signal: this.interruptSignal,
        forceSignal: this.forceSignal,
        thresholds,
        onRunStart: (cell, index, total) => {
          label = `${total > 1 ? `[${index + 1}/${total}] ` : ''}${cell.model} c=${cell.concurrency}${cell.maxPoolSize === undefined ? '' : ` pool=${cell.maxPoolSize}`}`
          progress.update(`${label} · starting`)
        },
        onTick: (_cell, tick) =>
          progress.update(renderBenchTick(label, {...tick, p99Us: percentileUs(tick.latencyUs, 99)})),
        onPartialResult: writeOut,
      })
    } finally {
      progress.stop()
    }
    await writeOut(result)
    this.log(renderBench(result))
    // On stderr even under --json: what bench left on a cluster must never go unsaid.
    for (const line of renderNamespaceNotes(result)) process.stderr.write(`${line}\n`)
    if (result.interrupted) process.exitCode = this.interruptedExitCode
    else if (result.failOn && result.failOn.breaches.length > 0) process.exitCode = EXIT_CODES.thresholdBreached
    if (outFailure !== undefined) {
      const failure = new PoolToolError('OUTPUT_FAILED', outFailure, 'the result above is complete; check the disk and the directory, then write it again')
      process.stderr.write(`${failureLine(failure)}\n`)
      process.exitCode = failure.exitCode
    }
    return result
  }
}
