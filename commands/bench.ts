import {Flags} from '@oclif/core'

// Only what the flags below need is imported here: oclif loads this file to parse the flags, so a
// usage error or `--help` must not load the engine, the driver, zod or yaml. run() imports the rest.
import type {K8sJobPlan} from '../src/bench/k8s-job.js'
import {MAX_SEGMENTS} from '../src/bench/segment.js'
import {KEY_DISTRIBUTIONS} from '../src/bench/key-dist.js'
import {type BenchResult, POOL_MODELS, TIMEOUT_SIDES, WORKLOADS} from '../src/bench/types.js'
import {TargetCommand} from '../src/cli/base-command.js'
import {durationFlag, durationOrAutoFlag} from '../src/cli/flags.js'
import {BENCH_DEFAULTS, DEFAULT_CPU_PER_WORKER, DEFAULT_MEMORY_MIB_PER_WORKER, DEFAULT_SERIES_INTERVAL_MS, DEFAULT_URI_SECRET, MAX_WORKERS} from '../src/defaults.js'
import {EXIT_CODES, PoolToolError, usageError} from '../src/errors.js'
import {formatDuration} from '../src/parse/durations.js'
import type {MatrixClock} from '../src/reporters/eta.js'

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
    'Each run first drives its load unmeasured (--warmup, default auto: until its ops/s has settled and the pool stopped ' +
    'growing, 5–30 s; every cell of a sweep): nothing done then is in any figure, and the report says how long it was and ' +
    'why it ended (runs[].warmup: {mode, durationMS, endedBy: settled, cap, fixed, off or interrupted, windowsOpsPerSec, ' +
    'halvesOpsPerSec, poolTotal}; config.warmup: how it was chosen). The result ' +
    'names its target (target: {uri (redacted), source: --uri, POOLTOOL_URI, MONGODB_URI or embedded, simulated}; cluster: ' +
    'topology, server version, the hosts sampled). --fail-on without a URI is refused unless --sim asks for the embedded cluster.\n\n' +
    '--json (and --out) adds, per run: runs[].series, one entry per --series-interval from the start of the measured ' +
    'interval: {tMS, durationMS, ops, errors, opsPerSec, latencyP50Us, latencyP99Us, latencyMaxUs, poolInUse, poolTotal, ' +
    'checkoutWaitP99Us, serverConnections: {"host:port": n}} (latency send → reply, uncorrected in open loop, from that interval\'s own histogram; a figure that ' +
    'could not be read is absent; every counted operation is in exactly one interval, so the ops add up to the run\'s); ' +
    'and runs[].latencyByOpUs: {find: {p50, p90, p99, p999, max, mean, count}, update: …}, one histogram per operation ' +
    'name (a mixed workload\'s mix, else the workload\'s own name), whose counts add up to ops. --csv FILE writes the ' +
    'same series as CSV: a header row, then one row per interval per run (runIndex = the index in runs[]), one ' +
    'connections:<host> column per sampled host.\n\n' +
    '--workload-file FILE (JSON or YAML): {operations: [{name, weight (default 1), namespace: own|read, and one of ' +
    'find: {filter, projection, sort, limit}, aggregate: {pipeline}, insert: {document}, update: {filter, update, upsert, multi}, ' +
    'command: {ping: 1} (read-only commands only)}]}. A string that is a template is replaced per operation: {{int 0 999}}, ' +
    '{{double 0 1}}, {{string 16}}, {{choice a b c}}, {{seededId}} (a seeded _id drawn by --key-dist), {{now}}, {{objectId}}. ' +
    'insert and update go only to pooltool\'s own collection (seeded with --seed-docs documents {_id: 0…, n: 0, payload}); ' +
    'namespace: read operations find and aggregate (no $out/$merge) in --read-namespace db.coll. A file that would write ' +
    'anywhere else is refused before anything is written. Latency is kept per operation name (runs[].latencyByOpUs).\n\n' +
    '--workers N runs the load on N worker threads (one event loop each: one loop is what limits one process), each ' +
    'with its own driver clients: the concurrency, the rate (each worker\'s slots offset so the schedules interleave) and ' +
    '--ops are split over them; a pool model\'s maxPoolSize is per worker (pool c=64 --max-pool-size 100 on 4 workers is 4 pools of ' +
    'up to 100). The run\'s figures are the workers\' merged exactly (HDR histograms added, per interval too; counts summed; ' +
    'pool peaks summed, an upper bound); runs[].workers: {count, startSkewMS, perWorker: [{index, concurrency, rate, ops, ' +
    'errors, opsPerSec, latencyP99Us, poolCreated, poolPeakInUse}]}. --model single cannot be split (refused).\n\n' +
    'With --op-timeout, each run has runs[].timeouts: {side, opTimeoutMS, total, answeredByServer (MaxTimeMSExpired: ' +
    'the server stopped the operation, the connection stayed), clientGaveUp (class timeout: the client\'s deadline passed ' +
    'and the driver closed the connection), connectionsClosedOnError (CMAP connectionClosed reason "error"), ' +
    'connectionsCreated}. The client side is the load clients\' socketTimeoutMS (driver 7 ignores timeoutMS): the ' +
    'server goes on with work nobody waits for, and each timeout costs a connection; the server side stops the work.' +
    '\n\n' +
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
    '<%= config.bin %> <%= command.id %> --workload find --key-dist zipfian --concurrency 64',
    '<%= config.bin %> <%= command.id %> --workload-file shop.yaml --read-namespace shop.orders --key-dist zipfian',
    '<%= config.bin %> <%= command.id %> --op-timeout 50ms --timeout-side server --sim-latency 100ms',
  ]

  static override flags = {
    workload: Flags.string({summary: `Operation to drive: ${WORKLOADS.join(', ')} (default ${BENCH_DEFAULTS.workload}).`, helpGroup: 'WORKLOAD'}),
    'workload-file': Flags.string({
      summary: 'Your own operations from a JSON or YAML file (find, aggregate, insert, update, read-only commands) with weights and generated values; see the description.',
      helpGroup: 'WORKLOAD',
    }),
    'read-namespace': Flags.string({summary: "db.coll that a workload file's operations marked namespace: read may find and aggregate in (never written).", helpGroup: 'WORKLOAD'}),
    mix: Flags.string({summary: `Weights for --workload mixed, adding up to 100 (default ${BENCH_DEFAULTS.mix}).`, helpGroup: 'WORKLOAD'}),
    'doc-size': Flags.integer({default: BENCH_DEFAULTS.docSizeBytes, min: 0, max: 16_000_000, summary: 'Payload bytes per document.', helpGroup: 'WORKLOAD'}),
    'seed-docs': Flags.integer({default: BENCH_DEFAULTS.seedDocs, min: 1, max: 10_000_000, summary: 'Documents seeded for find and update.', helpGroup: 'WORKLOAD'}),
    'key-dist': Flags.string({
      options: [...KEY_DISTRIBUTIONS],
      default: 'uniform',
      summary: 'Which seeded document find and update pick: uniform, zipfian (a few ids take most operations, as YCSB) or latest (the last seeded ids are the most popular).',
      helpGroup: 'WORKLOAD',
    }),
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
    workers: Flags.integer({
      min: 1,
      max: MAX_WORKERS,
      summary: 'Worker threads driving the load, each with its own clients and pool (default 1): concurrency, rate and --ops are split over them.',
      helpGroup: 'LOAD',
    }),
    duration: durationFlag({summary: `Measured time per run, e.g. 30s, 2m (default ${formatDuration(BENCH_DEFAULTS.durationMS)}).`, helpGroup: 'LOAD'}),
    ops: Flags.integer({min: 1, summary: 'Measured operations per run (closed loop), instead of --duration.', helpGroup: 'LOAD'}),
    'op-timeout': durationFlag({summary: 'Time limit on every operation, e.g. 50ms (whole milliseconds); --timeout-side says who enforces it.', helpGroup: 'LOAD'}),
    'timeout-side': Flags.string({
      options: [...TIMEOUT_SIDES],
      dependsOn: ['op-timeout'],
      summary: "Who enforces --op-timeout: client (default: the driver's socketTimeoutMS; a reply that comes too late closes its connection) or server (maxTimeMS: the server answers MaxTimeMSExpired and the connection stays).",
      helpGroup: 'LOAD',
    }),
    stages: Flags.string({summary: 'Ramp the load in one run: DURATION:CONCURRENCY stages (10s:8,30s:64,10s:8), or DURATION:RATE/s in open loop (10s:500/s,30s:2000/s); instead of --duration.', helpGroup: 'LOAD'}),
    warmup: durationOrAutoFlag({
      default: 'auto',
      summary: 'Unmeasured warm-up before each run (every cell of a sweep): auto (until ops/s settles, 5–30 s), or a fixed length, e.g. 10s; 0s measures the cold start.',
      description:
        'The same load as the run, before measuring starts: the pool fills (connections are set up, up to maxConnecting at ' +
        'a time) and the JIT of the client and of the embedded cluster settles. Without it the first seconds measure that, ' +
        'not the steady state. auto (the default) warms up until the last 4 s of ops/s are level (their first and second ' +
        'half within 5 %, each second within 15 %) and the pool has stopped growing, at two successive seconds: at least 5 s, at most 30 s; a run that did not settle by then is ' +
        'measured anyway and says so (report compare names it). With --workers the parent decides for all workers at once; ' +
        'with --segment and open-loop --stages auto is a fixed 5 s (their intervals are planned in advance). Nothing done ' +
        'in the warm-up is in any figure; the report says how long it was and why it ended (runs[].warmup).',
      helpGroup: 'LOAD',
    }),
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
    html: Flags.string({summary: 'Also write an HTML report (latency spectrum, series, sweep grid; self-contained) to this file: absent or a regular file (checked before the load starts); written atomically at the end.', helpGroup: 'REPORT'}),
    sim: Flags.boolean({
      default: false,
      summary: 'Run against the embedded simulated cluster, on purpose: POOLTOOL_URI and MONGODB_URI are not read; not with --uri. Needed for --fail-on without a URI.',
      helpGroup: 'CONNECTION',
    }),
    'sim-latency': durationFlag({summary: 'Embedded cluster only: per-operation service time, e.g. 2ms.', helpGroup: 'CONNECTION'}),
    segment: Flags.string({summary: 'Drive the INDEX-th of COUNT shares of this run, e.g. 0/3 (INDEX from 0); needs --run-id. One cell, no matrix.', helpGroup: 'DISTRIBUTED'}),
    'run-id': Flags.string({summary: "The id every segment of one run shares (8 hex digits): their one namespace, bench_<id>.", helpGroup: 'DISTRIBUTED'}),
    'start-at': Flags.string({summary: 'Begin (warm-up, then measuring) at this instant after set-up, e.g. 2026-11-23T21:00:00Z, so segments line up; all-ready: when every segment is set up (the --emit default).', helpGroup: 'DISTRIBUTED'}),
    emit: Flags.string({options: ['k8s-job'], summary: 'Print a Kubernetes Indexed Job that runs this bench as --parallelism segments, instead of running it.', helpGroup: 'DISTRIBUTED'}),
    parallelism: Flags.integer({min: 1, max: MAX_SEGMENTS, dependsOn: ['emit'], summary: 'With --emit k8s-job (required there): how many pods (segments).', helpGroup: 'DISTRIBUTED'}),
    image: Flags.string({dependsOn: ['emit'], summary: `With --emit k8s-job: the pooltool image the pods run (build it from the Dockerfile; default pooltool:<version>).`, helpGroup: 'DISTRIBUTED'}),
    'uri-secret': Flags.string({dependsOn: ['emit'], summary: `With --emit k8s-job: the Secret NAME/KEY holding the connection string (POOLTOOL_URI in the pods; default ${DEFAULT_URI_SECRET.name}/${DEFAULT_URI_SECRET.key}).`, helpGroup: 'DISTRIBUTED'}),
    'k8s-cpu': Flags.string({dependsOn: ['emit'], summary: `With --emit k8s-job: each pod's CPU request and limit, a Kubernetes quantity, e.g. 2 or 500m (default ${DEFAULT_CPU_PER_WORKER} per --workers).`, helpGroup: 'DISTRIBUTED'}),
    'k8s-memory': Flags.string({dependsOn: ['emit'], summary: `With --emit k8s-job: each pod's memory request and limit, e.g. 1Gi (default ${DEFAULT_MEMORY_MIB_PER_WORKER}Mi per --workers).`, helpGroup: 'DISTRIBUTED'}),
  }

  async run(): Promise<BenchResult | K8sJobPlan> {
    const {flags} = this
    if (flags.emit === 'k8s-job') return this.emitK8sJob()
    const [{loadBenchConfig}, {GATE_NEEDS_EXPLICIT_TARGET, parseFailOn}, {checkOutputFiles, outputFailed, writeJsonAtomically, writeTextAtomically}] = await Promise.all([
      import('../src/bench/config.js'),
      import('../src/bench/fail-on.js'),
      import('../src/output.js'),
    ])
    // Refuse a file we must not write before anything is read or started: an output that names the
    // workload file or another output would destroy it, and the run would still end with exit 0.
    await checkOutputFiles(
      [{flag: '--out', file: flags.out}, {flag: '--csv', file: flags.csv}, {flag: '--html', file: flags.html}],
      [{flag: '--workload-file', file: flags['workload-file']}],
    )
    const config = await loadBenchConfig(flags)
    const thresholds = flags['fail-on'] === undefined ? undefined : parseFailOn(flags['fail-on'])
    // The engine, the driver and the reporters load once the flags have been checked: a usage error stays cheap.
    const [{runBench}, {percentileUs}, {loadChartLibrary}, {reportData}, {renderBench, renderBenchTick, renderSeriesCsv}, {matrixProgress}, {renderBenchHtml}, {renderNamespaceNotes}, {createProgress}] = await Promise.all([
      import('../src/bench/run-bench.js'),
      import('../src/metrics/histograms.js'),
      import('../src/report/html-assets.js'),
      import('../src/report/html-data.js'),
      import('../src/reporters/bench.js'),
      import('../src/reporters/eta.js'),
      import('../src/reporters/html.js'),
      import('../src/reporters/namespace.js'),
      import('../src/reporters/progress.js'),
    ])
    const simLatencyMs = flags['sim-latency'] ?? 0
    // A gate runs on the embedded cluster only when --sim asks for it (fail-on.ts).
    const target = await this.openTarget({latencyMs: simLatencyMs}, {sim: flags.sim, ...(thresholds ? {refuseImplicitEmbedded: GATE_NEEDS_EXPLICIT_TARGET} : {})})
    const progress = createProgress()
    let label = ''
    // An adaptive warm-up's length is known only once a cell has run: the clock learns it from the cells done.
    const plannedCellMs = config.durationMs === undefined || config.warmupRule ? undefined : config.warmupMs + config.durationMs
    let matrix: MatrixClock | undefined
    let outFailure: string | undefined
    // A failed write never loses the measurement: it is printed anyway, and the failure said after it.
    const writeOut = async (value: BenchResult, final = false): Promise<void> => {
      const failures: string[] = []
      const write = async (flag: string, file: string | undefined, writeFile: (file: string) => Promise<void>): Promise<void> => {
        if (file === undefined) return
        try {
          await writeFile(file)
        } catch (error) {
          failures.push(outputFailed(flag, file, error).message)
        }
      }
      await write('--out', flags.out, (file) => writeJsonAtomically(file, value, '--out'))
      await write('--csv', flags.csv, (file) => writeTextAtomically(file, renderSeriesCsv(value), '--csv'))
      // The HTML report is drawn once, from the whole result: every run is in by then.
      if (final) await write('--html', flags.html, async (file) => writeTextAtomically(file, renderBenchHtml(reportData([{file: 'this run', result: value}]), await loadChartLibrary()), '--html'))
      outFailure = failures.length === 0 ? undefined : failures.join('; ')
    }
    let result: BenchResult
    try {
      result = await runBench(target, {...config, simLatencyMs}, {
        signal: this.interruptSignal,
        forceSignal: this.forceSignal,
        thresholds,
        onRunStart: (cell, index, total) => {
          const now = performance.now()
          matrix = total > 1 ? {startedAt: matrix?.startedAt ?? now, cellStartedAt: now, index, cells: total, ...(plannedCellMs === undefined ? {} : {plannedCellMs})} : undefined
          label = `${total > 1 ? `[${index + 1}/${total}] ` : ''}${cell.model} c=${cell.concurrency}${cell.maxPoolSize === undefined ? '' : ` pool=${cell.maxPoolSize}`}`
          // Ticks begin with the measured interval: until then the line says the warm-up is on.
          const warmup = config.warmupRule ? `warming up until ops/s settles, at most ${formatDuration(config.warmupMs)} (not measured)` : `warming up ${formatDuration(config.warmupMs)} (not measured)`
          progress.update(`${label} · ${config.warmupMs > 0 ? warmup : 'starting'}`)
        },
        onTick: (_cell, tick) => {
          const line = renderBenchTick(label, {...tick, p99Us: percentileUs(tick.latencyUs, 99)})
          progress.update(matrix ? `${line} · ${matrixProgress(matrix, performance.now())}` : line)
        },
        onPartialResult: writeOut,
      })
    } finally {
      progress.stop()
    }
    await writeOut(result, true)
    this.logText((layout) => renderBench(result, layout))
    // On stderr even under --json: what bench left on a cluster must never go unsaid.
    for (const line of renderNamespaceNotes(result)) this.stderrText(line)
    if (result.interrupted) process.exitCode = this.interruptedExitCode
    else if (result.namespaceLost) {
      // Not the user's flags (usage) nor a host out of reach: the cluster's state changed under the run (another
      // run reclaimed its collections), which the run cannot work around; running it again can. Exit 9.
      const failure = new PoolToolError(
        'SERVER_ERROR',
        `bench stopped: ${result.namespaceLost}`,
        'keep the machine awake during a run (a run paused for 60 s or more counts as dead to the next bench); run it again: it claims a fresh namespace',
      )
      this.sayFailureAfterResult(failure)
    } else if (result.failOn && result.failOn.breaches.length > 0) process.exitCode = EXIT_CODES.thresholdBreached
    if (outFailure !== undefined) {
      this.sayFailureAfterResult(new PoolToolError('OUTPUT_FAILED', outFailure, 'the result above is complete; check the disk and the directory, then write it again'))
    }
    return result
  }

  /** --emit k8s-job: check the flags as every pod will see them, then print the Job (YAML; JSON under --json). */
  private async emitK8sJob(): Promise<K8sJobPlan> {
    const {flags} = this
    // A boolean, so not in k8s-job.ts's NOT_IN_PODS (which checks for flags that are set at all).
    if (flags.sim) throw usageError('--sim cannot go into the emitted Job', 'the pods load a real cluster, not the embedded one')
    const [{stringify: stringifyYaml}, {emitK8sJob, MIN_KUBERNETES}, {passThroughArgs}, {terminalSafe}] = await Promise.all([
      import('yaml'),
      import('../src/bench/k8s-job.js'),
      import('../src/cli/pass-through.js'),
      import('../src/reporters/escape.js'),
    ])
    const plan = await emitK8sJob(flags, {
      benchArgs: passThroughArgs(this.argv, {booleans: booleanFlags(Bench)}, EMIT_ONLY_FLAGS),
      defaultImage: `pooltool:${this.config.version}`,
    })
    if (!this.jsonEnabled()) {
      // No anchors/aliases (&a1 … *a1) for the labels used twice: the manifest reads as Kubernetes' own docs write one.
      this.log(stringifyYaml(plan.manifest, {aliasDuplicateObjects: false}).trimEnd())
      // The collect lines quote the invocation (a URI's host names): escaped like every other text view.
      const start = plan.startAt === 'all-ready' ? 'together once all are set up' : `at ${plan.startAt}`
      process.stderr.write(terminalSafe(['', `# run ${plan.runId}: ${plan.segments} pods (Kubernetes ${MIN_KUBERNETES}+, ${plan.resources.cpu} CPU and ${plan.resources.memory} each) start ${start}; the steps (docs/kubernetes.md):`, ...plan.collect.map((line) => `#   ${line}`), ''].join('\n')))
    }
    return plan
  }
}

/** Flags of the emitting command only, or set per pod by the manifest: never passed to the pods. */
const EMIT_ONLY_FLAGS = new Set(['emit', 'parallelism', 'image', 'uri-secret', 'k8s-cpu', 'k8s-memory', 'json', 'start-at'])

function booleanFlags(command: {flags: Record<string, {type: string}>; baseFlags?: Record<string, {type: string}>}): Set<string> {
  const all = {...command.baseFlags, ...command.flags}
  return new Set(Object.entries(all).filter(([, flag]) => flag.type === 'boolean').map(([name]) => name))
}
