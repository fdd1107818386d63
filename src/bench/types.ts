/**
 * `pooltool bench`: its validated configuration and its result (the `--json`
 * contract; names fixed by the issue, units in field names).
 */
import type {RunWarmup, SettleRule} from './warmup.js'
import type {LatencySummaryUs} from '../metrics/histograms.js'
import type {KeyDistribution} from './key-dist.js'
import type {WorkloadFile, WorkloadFileSummary} from './workload-file.js'
import type {LockObservation} from './lock-observer.js'
import type {NamespaceReport} from './namespace.js'
import type {SeriesInterval} from './series.js'
import type {SeriesGauges} from './series-gauges.js'
import type {PoolOptions} from '../mongo/client.js'
import type {ClusterHost} from '../probes/topology.js'
import type {ResultEnvelope} from '../result.js'

export const POOL_MODELS = ['pool', 'single', 'per-op', 'fixed'] as const
export type PoolModel = (typeof POOL_MODELS)[number]

export const WORKLOADS = ['ping', 'find', 'insert', 'update', 'mixed', 'ddl'] as const
export type WorkloadName = (typeof WORKLOADS)[number]
/** What a run drove: a built-in workload, or `file` for --workload-file. */
export type WorkloadKind = WorkloadName | 'file'

/** Operations a mixed workload can draw from. */
export const MIXABLE_OPS = ['ping', 'find', 'insert', 'update'] as const
export type MixableOp = (typeof MIXABLE_OPS)[number]

/** `--segment i/n`: which share of a distributed run this process drives (segment.ts). */
export interface Segment {
  /** From 0, as a Kubernetes Indexed Job's JOB_COMPLETION_INDEX. */
  index: number
  count: number
}

/** One stage of the load: closed loop sets `concurrency` (workers), open loop `rate` (ops/s). */
export interface LoadStage {
  durationMs: number
  concurrency?: number
  rate?: number
}

export interface BenchConfig {
  readonly workload: WorkloadKind
  /** --workload-file, validated and compiled (workload is then `file`). */
  readonly workloadFile?: WorkloadFile
  /** Weights in percent, summing to 100 (mixed workload only). */
  readonly mix: Readonly<Partial<Record<MixableOp, number>>>
  readonly docSizeBytes: number
  readonly seedDocs: number
  /** Which seeded id find and update pick (key-dist.ts). */
  readonly keyDist: KeyDistribution
  /** --workers: worker threads driving the load, each with its own clients (1: this thread alone). */
  readonly workers: number
  /** --sim-latency: the embedded cluster's per-operation service time (recorded in the result; it changes every figure). */
  readonly simLatencyMs?: number
  /** --segment: this process drives one share of the run (segment.ts); the run's figures stay the totals. */
  readonly segment?: Readonly<Segment>
  /** With --segment: the id the segments share (their collections are bench_<runId>). */
  readonly runId?: string
  /** --start-at: measuring (warm-up first) begins at this instant, after set-up; all-ready: when every segment is set up (start-barrier.ts). */
  readonly startAt?: Date | 'all-ready'
  /** --op-timeout / --timeout-side: a time limit on every operation, enforced by the client (the driver's timeoutMS) or the server (maxTimeMS). */
  readonly opTimeout?: Readonly<OpTimeout>
  readonly db: string
  readonly collection: string
  readonly keep: boolean
  /** The matrix: one run per combination. */
  readonly models: readonly PoolModel[]
  readonly concurrencies: readonly number[]
  /** undefined: the driver's default (100); for `fixed`, N connections = concurrency. */
  readonly maxPoolSizes: readonly (number | undefined)[]
  /** Open loop: scheduled operations per second; undefined = closed loop. */
  readonly rate?: number
  readonly durationMs?: number
  readonly ops?: number
  /** A fixed warm-up's length (0: none); with `warmupRule`, the adaptive warm-up's cap. */
  readonly warmupMs: number
  /** --warmup auto: warm-up lasts until throughput has settled by this rule (warmup.ts). */
  readonly warmupRule?: Readonly<SettleRule>
  /** --warmup auto where it cannot be decided during the load (--segment, open-loop --stages): why warmupMs is fixed instead. */
  readonly warmupFallback?: string
  readonly pool: Readonly<Omit<PoolOptions, 'maxPoolSize'>>
  /** p99 bound for the knee; undefined: 2x the lowest p99 seen. */
  readonly sloUs?: number
  /** How often the server side is polled. */
  readonly sampleIntervalMs: number
  /** The length of one interval of each run's time series. */
  readonly seriesIntervalMs: number
  /** --stages: the load changes at each stage's end (durationMs is their sum); absent: one level for the whole run. */
  readonly stages?: readonly LoadStage[]
}

/** One worker thread's part of a run, for the report (bench --workers). */
export interface WorkerSummary {
  index: number
  concurrency: number
  rate: number | null
  ops: number
  errors: number
  opsPerSec: number
  latencyP99Us: number
  poolCreated: number
  poolPeakInUse: number
}

export const TIMEOUT_SIDES = ['client', 'server'] as const
export type TimeoutSide = (typeof TIMEOUT_SIDES)[number]

export interface OpTimeout {
  ms: number
  /**
   * client: the load clients' socketTimeoutMS: the driver gives up on a reply that takes longer and closes
   * the connection it was reading from; the server never hears of it and finishes the work. (Driver 7's
   * timeoutMS would also send maxTimeMS, but it is deprecated there and has no effect.)
   * server: maxTimeMS on every operation: the server stops the operation and answers MaxTimeMSExpired; the
   * connection stays.
   */
  side: TimeoutSide
}

/**
 * What the time limit did in one run (--op-timeout). Timeouts are also in errorsByClass:
 * `MaxTimeMSExpired` (the server answered that the limit passed) and `timeout` (the client gave up).
 */
export interface TimeoutResult {
  side: TimeoutSide
  opTimeoutMS: number
  /** Measured operations that failed on the limit: answeredByServer + clientGaveUp. */
  total: number
  /** The server answered MaxTimeMSExpired: the connection stayed in the pool. */
  answeredByServer: number
  /** The client's deadline passed first (class `timeout`). */
  clientGaveUp: number
  /**
   * Connections the pool closed with reason "error" in the measured interval (CMAP connectionClosed): a
   * timed-out read closes its connection; a network error would count here too.
   */
  connectionsClosedOnError: number
  /** Connections the pool created in the measured interval, replacements included (as pool.created). */
  connectionsCreated: number
}

/**
 * One interval of a run's time series (`runs[].series`), from the start of
 * the measured interval on the run's monotonic clock. Every counted operation
 * falls in exactly one interval (the one it was counted in; those drained
 * after the end in the last one): the series' ops and errors add up to the run's.
 */
export type SeriesPoint = SeriesInterval & SeriesGauges

/** One host of the cluster (as the one discovery found it) over one run. */
export interface ServerHostResult {
  host: string
  role: ClusterHost['role']
  setName?: string
  shard?: string
  /** Before pooltool's load clients connected. */
  connectionsBefore?: number
  connectionsPeak?: number
  /** At the end of the measured interval, before pooltool closed its clients. */
  connectionsAtEnd?: number
  /** After pooltool closed its clients. */
  connectionsAfter?: number
  /** serverStatus.connections.totalCreated growth over the measured interval. */
  totalCreatedDelta?: number
  /** serverStatus.locks waits over the measured interval. */
  lockWaits?: {acquireWaitCount: number; timeAcquiringMicros: number; byResource: Record<string, {acquireWaitCount: number; timeAcquiringMicros: number}>}
  /** Why figures are missing (e.g. the user may not run serverStatus). */
  unavailable?: string
  /** The host's clock (serverStatus.localTime) minus this machine's, from its first answer; absent when it never answered. */
  clockSkewMS?: number
}

export interface PoolResult {
  created: number
  closed: Record<string, number>
  peakTotal: number
  peakInUse: number
  checkOutFailed: Record<string, number>
  cleared: number
  /** Driver clients opened in this run (per-op opens one per operation). */
  clients: number
  /** Connection set-up, connectionCreated → connectionReady, on pooltool's own monotonic clock (µs). */
  setupUs: {p50: number; p99: number; max: number}
  /** The same connections' connectionReady.durationMS: the driver's whole milliseconds (both ends floored). */
  setupDriverMS: {p50: number; p99: number; max: number}
}

export interface RunResult {
  model: PoolModel
  workload: WorkloadKind
  concurrency: number
  rate: number | null
  maxPoolSize: number | null
  /** Measured operations that completed. */
  ops: number
  /** Measured operations that failed: always the sum of errorsByClass (`aborted` and `unfinished` included). */
  errors: number
  /**
   * Open loop: operations scheduled inside the measured interval; each one is
   * completed, failed or missed: scheduled === ops + errors + missed.
   * Closed loop: null (every started measured operation is ops or errors).
   */
  scheduled: number | null
  /** Open loop: scheduled operations that never started (closed loop: 0). */
  missed: number
  /**
   * Open loop, always all three reasons (closed loop: {}):
   * - `inFlightCapFull`: its time had come but --concurrency operations were
   *   in flight until the run ended; it waited in line and never started.
   * - `runEnded`: the cap was not full, but the load generator had not reached
   *   it when the run ended (its timers ran behind the schedule).
   * - `interrupted`: a free slot was about to start it when a stop request
   *   (Ctrl-C, SIGTERM) came; a stop starts nothing new.
   * A stop request ends the measured interval at the signal: operations
   * scheduled after it are not scheduled in the interval at all.
   * Missed operations count in latencyCorrectedUs with the time from their
   * scheduled start to when the run stopped waiting: a lower bound of what a
   * user would have waited.
   */
  missedByReason: Record<string, number>
  /** Measured operations still in flight when a stop request (signal) cut the wait short: errors of class `aborted`. */
  aborted: number
  durationMS: number
  /**
   * When the measured interval started, on this machine's wall clock (ISO 8601): the HTML report's time axes
   * are clock times from it. Absent in files written before it existed.
   */
  startedAt?: string
  /** Completed operations per second of the measured interval. */
  opsPerSec: number
  /** Open loop: operations started (completed or failed) per second of the measured interval; closed loop: null. */
  achievedRatePerSec: number | null
  /** Open loop: set when fewer than 99% of the scheduled operations started (--rate was not delivered); else null. */
  rateShortfall: RateShortfall | null
  /** Closed loop: from send to reply. Open loop: from actual send (uncorrected). */
  latencyUs: LatencySummaryUs
  /**
   * Per operation name (a mixed workload's mix; others their own name): completed operations, as latencyUs
   * measures them; counts add up to ops. bench always sets it; absent in results that do not carry it (files
   * written before it existed, or merged without it).
   */
  latencyByOpUs?: Record<string, LatencySummaryUs>
  /** Open loop only: from the scheduled start (corrected for coordinated omission); missed operations included (count = ops + missed). */
  latencyCorrectedUs: LatencySummaryUs | null
  /** Open loop only: how late operations started against their schedule. */
  scheduleLagUs: LatencySummaryUs | null
  /** Successful checkouts, connectionCheckOutStarted → connectionCheckedOut, on pooltool's own monotonic clock (µs). */
  checkoutWaitUs: {p50: number; p99: number; max: number}
  /** The same checkouts' connectionCheckedOut.durationMS: the driver's whole milliseconds (a 0 is anything below ~1 ms). */
  checkoutWaitDriverMS: {p50: number; p99: number; max: number}
  pool: PoolResult
  server: ServerHostResult[]
  /** One entry per --series-interval of the measured interval (see SeriesPoint). bench always sets it; absent as latencyByOpUs. */
  series?: SeriesPoint[]
  errorsByClass: Record<string, number>
  /**
   * --segment: this process's share of the run (concurrency, rate, pool sizes are per process). The run's
   * concurrency and rate above are the whole run's, so every segment's run has the same key and
   * `report merge` adds them up.
   */
  segment?: {index: number; count: number; concurrency: number; rate: number | null}
  /** With --op-timeout: what the time limit did (see TimeoutResult). */
  timeouts?: TimeoutResult
  /**
   * --workers N > 1: each worker thread's part (its concurrency and rate share; its own pool: maxPoolSize is per
   * worker) and how far apart the workers' engines started. The run's figures above are the workers' merged:
   * histograms added, counts and pool figures summed (peaks: sums of each worker's peak, an upper bound).
   */
  workers?: {count: number; startSkewMS: number; perWorker: WorkerSummary[]}
  /** --stages only: one entry per stage (see StageResult); the run's own figures cover the whole run. */
  stages?: StageResult[]
  /** ddl workload on a sharded cluster: LockBusy / ConflictingOperationInProgress counts and lock hold times seen meanwhile. */
  locks?: LockObservation
  /** Compressed HDR histogram of latencyUs (and the corrected one), mergeable across runs. */
  histograms: {
    latencyUs: string
    latencyCorrectedUs: string | null
    /** The histograms behind latencyByOpUs, by operation name, so segments' per-operation latency merges exactly. */
    latencyByOpUs?: Record<string, string>
  }
  /** True when Ctrl-C cut this run short. */
  /** What this run's warm-up was and why it ended (absent in older files). */
  warmup?: RunWarmup
  interrupted: boolean
}

/**
 * One stage of a staged run (`runs[].stages`, --stages), on the run's clock
 * from the start of the measured interval. An operation belongs to the stage in
 * which it started (closed loop) or was scheduled (open loop): the stages' ops,
 * errors, missed and scheduled add up to the run's, and in open loop
 * scheduled === ops + errors + missed holds per stage.
 */
export interface StageResult {
  index: number
  startMS: number
  durationMS: number
  /** Closed loop: the stage's workers; open loop: the in-flight cap (--concurrency). */
  concurrency: number
  /** Open loop: the stage's scheduled ops/s; closed loop: null. */
  rate: number | null
  ops: number
  errors: number
  /** Open loop: operations scheduled in the stage; closed loop: null. */
  scheduled: number | null
  missed: number
  opsPerSec: number
  /**
   * The concurrency the client really kept up in the stage's time window: the most operations in flight at once, and
   * their time-weighted mean (to 0.01). Operations of the stage before count while they finish (a closed-loop worker
   * beyond a smaller stage's concurrency stops after its current operation).
   */
  inFlightPeak: number
  inFlightMean: number
  latencyUs: LatencySummaryUs
  latencyCorrectedUs: LatencySummaryUs | null
  /** Encoded as runs[].histograms, so stages can be merged exactly. */
  histograms: {latencyUs: string; latencyCorrectedUs: string | null}
}

export interface RateShortfall {
  targetPerSec: number
  achievedPerSec: number
  /** --concurrency: the most operations in flight at once. */
  inFlightCap: number
  /** One line for people, e.g. "achieved 2,606 of 3,000 ops/s: the in-flight cap --concurrency 10 was full; raise it". */
  message: string
}

export interface KneeResult {
  model: PoolModel
  concurrency: number
  maxPoolSize: number | null
  opsPerSec: number
  p99Us: number
  sloUs: number
  /** How the SLO was chosen. */
  sloSource: '--slo' | '2x lowest p99'
}

export interface ThresholdBreach {
  /** The --fail-on expression breached, or "no operations measured" for a run that completed no operation (any --fail-on then fails). */
  expression: string
  run: string
  /** The run's value: µs for latency metrics (unit 'us'), else a plain number. */
  actual: number
  unit: 'us' | ''
}

/** What bench found behind the target: the one discovery's hosts (the ones sampled), and the server version. */
export interface BenchCluster {
  /** standalone, replset or sharded; `unknown` when the run stopped before discovery answered. */
  topology: string
  serverVersion: string
  hosts: ClusterHost[]
}

/** The `--json` result: the shared envelope ({target, notes, interrupted}, src/result.ts) plus bench's own fields. */
export interface BenchResult extends ResultEnvelope {
  cluster: BenchCluster
  config: {
    workload: WorkloadKind
    mix?: Partial<Record<MixableOp, number>>
    /** --workload-file: its path and operations (name, kind, weight, namespace), and --read-namespace. */
    workloadFile?: WorkloadFileSummary & {readNamespace?: string}
    docSizeBytes: number
    keyDist: KeyDistribution
    /** Embedded cluster only: --sim-latency, the service time added to every operation (0: none). Absent on a real cluster and in older files. */
    simLatencyMS?: number
    /** --seed-docs and the pool options besides maxPoolSize (--min-pool-size, --max-connecting, …; unset: the driver's default). Absent in older files. */
    seedDocs?: number
    poolOptions?: {minPoolSize?: number; maxConnecting?: number; maxIdleTimeMS?: number; waitQueueTimeoutMS?: number}
    opTimeout?: {ms: number; side: TimeoutSide}
    db: string
    /** A fixed warm-up (0: none); absent with `warmup.mode` auto. */
    warmupMS?: number
    /** How the warm-up was chosen: auto (its rule), fixed (--warmup 10s, or auto where it cannot apply: `fallback` says why) or off. */
    warmup?: {mode: 'auto'; windowMS: number; windows: number; tolerance: number; spread: number; confirmations: number; floorMS: number; capMS: number} | {mode: 'fixed'; ms: number; fallback?: string} | {mode: 'off'}
    durationMS?: number
    ops?: number
    sampleIntervalMS: number
    seriesIntervalMS: number
    /** --segment / --run-id: which share of which distributed run this file holds (a merged file: `indices`, every share in it). */
    segment?: {index: number; count: number; runId: string; indices?: number[]}
    /** --start-at, as given; with all-ready, the instant the segments agreed on (server clock). */
    startAt?: string
    /** --workers, when above 1. */
    workers?: number
    /** --stages: each stage's duration and concurrency (closed loop) or rate (open loop). */
    stages?: Array<{durationMS: number; concurrency?: number; rate?: number}>
  }
  runs: RunResult[]
  knee: KneeResult | null
  failOn: {expressions: string[]; breaches: ThresholdBreach[]} | null
  /** Whether everything this bench created was dropped after the run. */
  cleanedUp: boolean
  /**
   * Set when a later run reclaimed this run's namespace while it was paused (its marker gone or taken
   * over): measuring stopped there and the command exits 9, what was measured printed as it stood.
   */
  namespaceLost?: string
  /** bench's owned namespace: where it wrote, what it dropped, what it left behind and why. */
  namespace: NamespaceReport | null
  /** Steps cut short by a stop request (the server did not answer within the stop budget, or a second signal). */
  abandoned: string[]
}
