/**
 * `pooltool bench` end to end: seed pooltool's own namespace, run every cell
 * of the matrix (model × concurrency × maxPoolSize) through the engine with
 * client and server telemetry, find the knee, check thresholds, and drop the
 * namespace again (also after Ctrl-C or a failure).
 */
import {encodeHistogram, type Histogram, summarize} from '../metrics/histograms.js'
import {type ClientSettings, createClient} from '../mongo/client.js'
import {errorClass, MAX_TIME_EXPIRED_CLASS, TIMEOUT_CLASS} from '../mongo/errors.js'
import {PoolTelemetry, type PoolTelemetrySnapshot} from '../mongo/pool-telemetry.js'
import {clockSkewNote} from '../probes/server-clock-skew.js'
import {discoverCluster} from '../probes/discovery.js'
import {type ClusterTopology, readServerVersion, refuseReplay} from '../probes/topology.js'
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import type {EngineTick} from './engine.js'
import {checkThresholds, type Threshold} from './fail-on.js'
import {findKnee} from './knee.js'
import {InProcessLoad, type LoadGenerator, type LoadOutcome} from './load-generator.js'
import {effectiveMaxPoolSize} from './models.js'
import {WorkerThreadsLoad} from './worker-load.js'
import {LockObserver} from './lock-observer.js'
import {achievedRatePerSec, rateShortfallOf} from './rate-shortfall.js'
import {newRunId, OwnedNamespace} from './namespace.js'
import {type SeriesGauges, seriesGauges} from './series-gauges.js'
import {rateShareOf, shareOf, stagesShareOf, START_ALL_READY} from './segment.js'
import {waitForAllReady} from './start-barrier.js'
import {SAMPLER_PURPOSE, ServerSampler} from './server-sampler.js'
import {toStageResults} from './stages.js'
import {StopBudget} from './stop-budget.js'
import type {BenchConfig, BenchResult, PoolModel, RunResult, ServerHostResult, TimeoutResult} from './types.js'
import {toRunWarmup} from './warmup.js'
import type {WorkloadFile} from './workload-file.js'
import {collectionsOf, createWorkload} from './workloads.js'

/** What the caller controls besides the target (which carries appName and timeoutMs) and the config. */
export interface BenchHooks {
  /** A stop request (first signal): measuring stops, what was measured is reported, the namespace dropped. */
  signal: AbortSignal
  /** A second stop request: cleanup is skipped and the result returned at once. */
  forceSignal?: AbortSignal
  thresholds?: readonly Threshold[]
  /** A run of the matrix starts (index from 0). */
  onRunStart?(cell: BenchCell, index: number, total: number): void
  onTick?(cell: BenchCell, tick: BenchTick): void
  /** Called after every finished run with the result so far, so an interrupted matrix loses nothing. */
  onPartialResult?(result: BenchResult): Promise<void> | void
}

export interface BenchTick extends EngineTick {
  /** Connections checked out of the client pool(s) now. */
  inUse: number
}

export interface BenchCell {
  model: PoolModel
  concurrency: number
  maxPoolSize?: number
}

export function matrixOf(config: BenchConfig): BenchCell[] {
  const cells: BenchCell[] = []
  for (const model of config.models) {
    for (const concurrency of config.concurrencies) {
      // maxPoolSize only varies the `pool` and `fixed` models; the others are defined by it.
      const sizes = model === 'pool' || model === 'fixed' ? config.maxPoolSizes : [undefined]
      for (const maxPoolSize of sizes) cells.push({model, concurrency, maxPoolSize})
    }
  }
  return cells
}

const TICK_INTERVAL_MS = 1000
/** A start this much past --start-at is said in a note: segments' intervals no longer line up. */
const START_LATE_NOTE_MS = 1000

/** Resolves at `at` on this machine's clock (or at a stop request): how late it is by then, in ms (0 if early). */
function waitUntil(at: Date, signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve(Math.max(0, Date.now() - at.getTime()))
    }
    const timer = setTimeout(done, Math.max(0, at.getTime() - Date.now()))
    signal.addEventListener('abort', done, {once: true})
  })
}

export async function runBench(target: Target, config: BenchConfig, hooks: BenchHooks): Promise<BenchResult> {
  // The load clients: the target's appName as it is (the sampler's and the admin client's are suffixed).
  const settings = withClientTimeout(target.clientSettings(undefined, config.pool), config)
  // This run's own collections: bench_<runId> in pooltool's database (see namespace.ts).
  const runId = config.runId ?? newRunId()
  const runConfig: BenchConfig = Object.freeze({...config, collection: `bench_${runId}`})
  const budget = new StopBudget(hooks.signal, hooks.forceSignal)
  // bench's own data (its namespace) goes through a driver client; server state through the read layer.
  const admin = createClient(target.clientSettings('admin', {maxPoolSize: 2}))
  const result: BenchResult = {
    target: targetSummary(target),
    cluster: {topology: 'unknown', serverVersion: 'unknown', hosts: []},
    config: {
      workload: config.workload,
      mix: config.workload === 'mixed' ? {...config.mix} : undefined,
      ...(config.workloadFile ? {workloadFile: workloadFileReport(config.workloadFile)} : {}),
      docSizeBytes: config.docSizeBytes,
      keyDist: config.keyDist,
      ...(target.simulated ? {simLatencyMS: config.simLatencyMs ?? 0} : {}),
      // What else changes the figures, so that `report compare` can tell two configurations apart.
      seedDocs: config.seedDocs,
      poolOptions: {...config.pool},
      ...(config.opTimeout ? {opTimeout: {...config.opTimeout}} : {}),
      db: config.db,
      ...(config.warmupRule ? {} : {warmupMS: config.warmupMs}),
      warmup: warmupSetting(config),
      durationMS: config.durationMs,
      ops: config.ops,
      sampleIntervalMS: config.sampleIntervalMs,
      seriesIntervalMS: config.seriesIntervalMs,
      ...(config.segment ? {segment: {...config.segment, runId}} : {}),
      ...(config.startAt instanceof Date ? {startAt: config.startAt.toISOString()} : {}),
      ...(config.workers > 1 ? {workers: config.workers} : {}),
      ...(config.stages ? {stages: config.stages.map(({durationMs, ...level}) => ({durationMS: durationMs, ...level}))} : {}),
    },
    runs: [],
    knee: null,
    failOn: hooks.thresholds ? {expressions: hooks.thresholds.map((t) => t.expression), breaches: []} : null,
    cleanedUp: false,
    namespace: null,
    abandoned: budget.abandoned,
    notes: [],
    interrupted: false,
  }
  let namespace: OwnedNamespace | undefined
  /** Aborted when the heartbeat finds the run's namespace reclaimed: the runs stop like on a stop request, then the run fails. */
  const lost = new AbortController()
  const runHooks: BenchHooks = {...hooks, signal: AbortSignal.any([hooks.signal, lost.signal])}
  try {
    await admin.connect()
    const topology = await readCluster(target, result, hooks.signal)
    const db = admin.db(config.db)
    namespace = await OwnedNamespace.claim(db, {runId, collections: collectionsOf(runConfig), keep: config.keep, segment: config.segment})
    // Reclaimed under us (this process paused past the reclaim age): measuring stops as on a stop request.
    namespace.startHeartbeat(undefined, () => lost.abort('namespace lost'))
    result.namespace = {
      database: namespace.database,
      runId,
      collections: namespace.namespaces,
      reclaimed: namespace.reclaimed,
      dropped: [],
      leftBehind: namespace.namespaces,
      databaseDropped: false,
    }
    await createWorkload(runConfig).seed(db, hooks.signal)
    if (config.startAt === START_ALL_READY && config.segment) {
      const start = await waitForAllReady(db, {markerId: namespace.marker._id, runId, count: config.segment.count}, hooks.signal)
      if (start) {
        result.config.startAt = start.at.toISOString()
        const others = config.segment.count - 1
        const together = others === 0 ? 'started' : `started with the other ${others} segment${others === 1 ? '' : 's'}`
        result.notes.push(`${together} at ${start.at.toISOString()} (server clock), ${(start.at.getTime() - start.lastReadyAt.getTime()) / 1000} s after the last was set up (--start-at all-ready; this clock ${Math.round(start.clockOffsetMs)} ms off the server's)`)
        const lateMs = await waitUntil(new Date(start.at.getTime() + start.clockOffsetMs), hooks.signal)
        if (lateMs > START_LATE_NOTE_MS) result.notes.push(`started ${Math.round(lateMs)} ms after the agreed start: this process's measured interval does not line up with the other segments'`)
      }
    } else if (config.startAt instanceof Date) {
      const lateMs = await waitUntil(config.startAt, hooks.signal)
      if (lateMs > START_LATE_NOTE_MS) {
        result.notes.push(`started ${Math.round(lateMs)} ms after --start-at ${config.startAt.toISOString()} (set-up took longer): this process's measured interval does not line up with the other segments'`)
      }
    }

    // finalize() derives the runs' notes afresh after every run; these stay in front of them.
    const setupNotes = [...result.notes]
    const cells = matrixOf(config)
    for (const [index, cell] of cells.entries()) {
      if (runHooks.signal.aborted) break
      hooks.onRunStart?.(cell, index, cells.length)
      const run = await runCell({target, settings, config: runConfig, hooks: runHooks, topology, budget}, cell)
      result.runs.push(run)
      // A run cut short by the lost namespace was not interrupted by the user: its end is the failure below.
      result.interrupted = run.interrupted && hooks.signal.aborted
      finalize(result, config, hooks, setupNotes)
      await hooks.onPartialResult?.(result)
    }
    result.interrupted ||= hooks.signal.aborted
    finalize(result, config, hooks, setupNotes)
    if (namespace.lostReason) {
      result.namespaceLost = namespace.lostReason
      result.notes.push(`stopped: ${namespace.lostReason}; what the run measured after the pause is not a measurement of its own collections`)
    }
    return result
  } catch (error) {
    // A stop request while bench was still setting up (discovery, seeding): report what there is, as for any stop.
    if (!hooks.signal.aborted) throw error
    result.interrupted = true
    return result
  } finally {
    result.interrupted ||= hooks.signal.aborted
    if (namespace && result.namespace) await releaseNamespace(namespace, result, budget)
    await budget.step('closing the admin client', () => admin.close(), undefined)
  }
}

function workloadFileReport(file: WorkloadFile): NonNullable<BenchResult['config']['workloadFile']> {
  const read = file.readNamespace
  return {...file.summary, ...(read ? {readNamespace: `${read.db}.${read.collection}`} : {})}
}

/**
 * --timeout-side client: the load clients' socketTimeoutMS, the driver's client-side timeout (a read
 * that waits longer fails with MongoNetworkTimeoutError and the connection is closed). Not timeoutMS:
 * driver 7 ignores it ("timeoutMS has no effect", lib/connection_string.js). Only the load clients:
 * the sampler and the admin client keep their own limits.
 */
function withClientTimeout(settings: ClientSettings, config: BenchConfig): ClientSettings {
  if (config.opTimeout?.side !== 'client') return settings
  return {...settings, extra: {...settings.extra, socketTimeoutMS: config.opTimeout.ms}}
}

/**
 * Client-side timeouts that closed more connections than they failed operations: the driver retried
 * them (retryable reads and writes retry once after a network error, on another connection) and the
 * retry timed out too, so each failed operation cost two connections.
 */
function retriedTimeoutNote(run: RunResult, index: number): string[] {
  const t = run.timeouts
  if (!t || t.clientGaveUp === 0 || t.connectionsClosedOnError <= t.clientGaveUp) return []
  return [
    `run ${index + 1}: ${t.clientGaveUp} client-side timeouts closed ${t.connectionsClosedOnError} connections: the driver retries a read or write ` +
      'once after a network error (retryReads/retryWrites), on a new connection, and the retry timed out too',
  ]
}

/** What the time limit did in a run, from its error classes and the pool's closes (TimeoutResult). */
function timeoutsOf(config: BenchConfig, errorsByClass: Record<string, number>, pool: PoolTelemetrySnapshot): TimeoutResult | undefined {
  if (!config.opTimeout) return undefined
  const answeredByServer = errorsByClass[MAX_TIME_EXPIRED_CLASS] ?? 0
  const clientGaveUp = errorsByClass[TIMEOUT_CLASS] ?? 0
  return {
    side: config.opTimeout.side,
    opTimeoutMS: config.opTimeout.ms,
    total: answeredByServer + clientGaveUp,
    answeredByServer,
    clientGaveUp,
    connectionsClosedOnError: pool.closed.error ?? 0,
    connectionsCreated: pool.created,
  }
}

/**
 * The one discovery (every host, as conns, locks and auth see them) and the
 * server version, both through the read layer; what discovery could not read
 * becomes a note.
 */
async function readCluster(target: Target, result: BenchResult, signal: AbortSignal): Promise<ClusterTopology> {
  const topology = await discoverCluster(target, {purpose: SAMPLER_PURPOSE, signal})
  refuseReplay(topology, 'bench', 'bench writes into its own namespace and measures the server under load')
  result.cluster.topology = topology.kind
  result.cluster.hosts = topology.hosts
  result.notes.push(...topology.warnings.map((warning) => `discovery: ${warning}`))
  for (const router of topology.staleRouters) {
    result.notes.push(`router ${router.host} has not pinged the config server since ${router.lastPing ?? 'ever'}: listed in config.mongos, not sampled`)
  }
  const {reader, close} = target.openReader(undefined, SAMPLER_PURPOSE)
  try {
    result.cluster.serverVersion = await readServerVersion(reader, {signal})
  } finally {
    await close()
  }
  return topology
}

/** A host's clock that is off this machine's by more than a few seconds, said once per host (from its first run). */
function clockSkewNotes(runs: readonly RunResult[]): string[] {
  const skewByHost = new Map<string, number | undefined>()
  for (const run of runs) for (const host of run.server) if (!skewByHost.has(host.host) && host.clockSkewMS !== undefined) skewByHost.set(host.host, host.clockSkewMS)
  return [...skewByHost].map(([host, skew]) => clockSkewNote(host, skew)).filter((note): note is string => note !== undefined)
}

/** Drop what this run created (unless --keep), within the stop budget; say what stays behind and why. */
async function releaseNamespace(namespace: OwnedNamespace, result: BenchResult, budget: StopBudget): Promise<void> {
  const report = result.namespace!
  namespace.stopHeartbeat()
  if (budget.forced) {
    report.reason = 'a second signal skipped cleanup'
    budget.markAbandoned('dropping the namespace')
    return
  }
  try {
    const release = await budget.step('dropping the namespace', () => namespace.release(), undefined)
    if (!release) {
      report.reason = budget.forced ? 'a second signal skipped cleanup' : 'the server did not answer within the stop budget'
      return
    }
    Object.assign(report, release)
    result.cleanedUp = release.leftBehind.length === 0
  } catch (error) {
    // The run's figures stand; the report says what is left and why.
    report.reason = `cleanup failed: ${errorClass(error)}`
  }
}

/** Knee, thresholds and the notes the runs so far call for (after the setup's notes, each said once). */
function finalize(result: BenchResult, config: BenchConfig, hooks: BenchHooks, setupNotes: readonly string[]): void {
  result.notes = [...setupNotes, ...clockSkewNotes(result.runs), ...result.runs.flatMap(retriedTimeoutNote)]
  result.knee = findKnee(result.runs, config.sloUs)
  if (result.failOn && hooks.thresholds) result.failOn.breaches = checkThresholds(hooks.thresholds, result.runs)
}

/** What every run of one bench shares. */
interface BenchContext {
  target: Target
  settings: ClientSettings
  config: BenchConfig
  hooks: BenchHooks
  topology: ClusterTopology
  budget: StopBudget
}

async function runCell({target, settings, config, hooks, topology, budget}: BenchContext, cell: BenchCell): Promise<RunResult> {
  // --segment: this process drives its share; the run keeps the totals (segment.ts).
  const share = {concurrency: shareOf(cell.concurrency, config.segment), rate: rateShareOf(config.rate, config.segment), ops: config.ops === undefined ? undefined : shareOf(config.ops, config.segment)}
  const loadCell = {model: cell.model, concurrency: share.concurrency, maxPoolSize: cell.maxPoolSize}
  const load: LoadGenerator = config.workers > 1 ? new WorkerThreadsLoad({settings, config, cell: loadCell}, config.workers) : new InProcessLoad({settings, config, cell: loadCell})
  const sampler = await ServerSampler.open(target, topology.hosts)
  let measureStartSample: Promise<void> | undefined
  // ddl on a sharded cluster: watch the bench database's locks while the workload runs.
  const lockObserver = config.workload === 'ddl' && topology.kind === 'sharded' ? await LockObserver.start(target, config.db) : null
  try {
    await load.open()
    // No warm-up: the servers' baseline is read before the load begins.
    if (config.warmupMs <= 0) await (measureStartSample = sampler.markMeasureStart())
    sampler.startPolling(config.sampleIntervalMs)
    const measurement = await load.run(
      {
        concurrency: share.concurrency,
        rate: share.rate,
        durationMs: config.durationMs,
        ops: share.ops,
        warmupMs: config.warmupMs,
        settle: config.warmupRule,
        drainTimeoutMs: Math.max(5000, target.connection.timeoutMs),
        tickIntervalMs: TICK_INTERVAL_MS,
        seriesIntervalMs: config.seriesIntervalMs,
        stages: stagesShareOf(config.stages, config.segment),
      },
      {
        signal: hooks.signal,
        onMeasureStart: config.warmupMs > 0 ? () => (measureStartSample = sampler.markMeasureStart()) : undefined,
        onTick: (tick) => hooks.onTick?.(cell, tick),
        serverConnections: () => sampler.currentConnections(),
      },
    )
    // After a stop request every step below shares the stop budget: a stalled server cannot hold the exit.
    await budget.step('reading the servers at the end of the run', async () => {
      await measureStartSample
      await sampler.markEnd()
    }, undefined)
    const locks = lockObserver ? await budget.step('reading the locks at the end of the run', () => lockObserver.stop(measurement.errorsByClass), undefined) : undefined
    const outcome = load.outcome()
    await budget.step('closing the load clients', () => load.close(), undefined)
    await budget.step('reading the servers after the run', () => sampler.sampleAfter(), undefined)
    const server = sampler.results()
    return toRunResult({cell, share, config, outcome, server, locks})
  } finally {
    await budget.step('closing the load clients', () => load.close(), undefined)
    await budget.step('closing the server sampler', () => sampler.close(), undefined)
    if (lockObserver) await budget.step('closing the lock observer', () => lockObserver.close(), undefined)
  }
}

/** The JSON contract of one run, from what the run measured. Pure. */
function toRunResult(parts: {
  cell: BenchCell
  share: {concurrency: number; rate: number | undefined}
  config: BenchConfig
  outcome: LoadOutcome
  server: ServerHostResult[]
  locks: RunResult['locks'] | undefined
}): RunResult {
  const {cell, share, config, server, locks} = parts
  const {measurement, telemetry, pool, clients, workers} = parts.outcome
  const bounds = (histogram: Histogram) => {
    const {p50, p99, max} = summarize(histogram)
    return {p50, p99, max}
  }
  return {
    model: cell.model,
    workload: config.workload,
    concurrency: cell.concurrency,
    rate: config.rate ?? null,
    maxPoolSize: effectiveMaxPoolSize(cell.model, cell.maxPoolSize, share.concurrency),
    ...(config.segment ? {segment: {...config.segment, concurrency: share.concurrency, rate: share.rate ?? null}} : {}),
    ...(workers ? {workers: {count: workers.perWorker.length, startSkewMS: workers.startSkewMS, perWorker: workers.perWorker}} : {}),
    ops: measurement.ops,
    errors: measurement.errors,
    scheduled: measurement.scheduled,
    missed: measurement.missed,
    missedByReason: {...measurement.missedByReason},
    aborted: measurement.aborted,
    durationMS: Math.round(measurement.durationMs),
    ...(Number.isFinite(measurement.measureStartEpochMs) ? {startedAt: new Date(measurement.measureStartEpochMs).toISOString()} : {}),
    opsPerSec: measurement.durationMs > 0 ? Math.round((measurement.ops * 1000 * 10) / measurement.durationMs) / 10 : 0,
    achievedRatePerSec: achievedRatePerSec(measurement),
    rateShortfall: rateShortfallOf(measurement, share.rate ?? null, share.concurrency, summarize(measurement.latencyUs).mean),
    latencyUs: summarize(measurement.latencyUs),
    latencyByOpUs: Object.fromEntries(Object.entries(measurement.latencyByOpUs).map(([name, histogram]) => [name, summarize(histogram)])),
    latencyCorrectedUs: measurement.latencyCorrectedUs ? summarize(measurement.latencyCorrectedUs) : null,
    scheduleLagUs: measurement.scheduleLagUs ? summarize(measurement.scheduleLagUs) : null,
    checkoutWaitUs: bounds(telemetry.checkoutWaitUs),
    checkoutWaitDriverMS: bounds(telemetry.checkoutWaitDriverMS),
    pool: {
      created: pool.created,
      closed: pool.closed,
      peakTotal: pool.peakTotal,
      peakInUse: pool.peakInUse,
      checkOutFailed: pool.checkOutFailed,
      cleared: pool.cleared,
      clients,
      setupUs: bounds(telemetry.setupUs),
      setupDriverMS: bounds(telemetry.setupDriverMS),
    },
    server,
    series: measurement.series,
    errorsByClass: {...measurement.errorsByClass},
    // A segment's file carries each stage's whole concurrency and rate, as it carries the run's (report merge sums the rest).
    ...(config.stages ? {stages: toStageResults(measurement.stages).map((stage) => (config.segment ? {...stage, concurrency: config.stages![stage.index]!.concurrency ?? cell.concurrency, rate: config.stages![stage.index]!.rate ?? null} : stage))} : {}),
    ...(locks ? {locks} : {}),
    ...(config.opTimeout ? {timeouts: timeoutsOf(config, measurement.errorsByClass, pool)} : {}),
    histograms: {
      latencyUs: encodeHistogram(measurement.latencyUs),
      latencyCorrectedUs: measurement.latencyCorrectedUs ? encodeHistogram(measurement.latencyCorrectedUs) : null,
      latencyByOpUs: Object.fromEntries(Object.entries(measurement.latencyByOpUs).map(([name, histogram]) => [name, encodeHistogram(histogram)])),
    },
    warmup: toRunWarmup(measurement.warmup, config.warmupRule),
    interrupted: measurement.interrupted,
  }
}

/** config.warmup: how each run's warm-up was chosen. */
function warmupSetting(config: BenchConfig): NonNullable<BenchResult['config']['warmup']> {
  const rule = config.warmupRule
  if (rule) return {mode: 'auto', windowMS: rule.windowMs, windows: rule.windows, tolerance: rule.tolerance, spread: rule.spread, confirmations: rule.confirmations, floorMS: rule.floorMs, capMS: rule.capMs}
  if (config.warmupMs <= 0) return {mode: 'off'}
  return {mode: 'fixed', ms: config.warmupMs, ...(config.warmupFallback ? {fallback: config.warmupFallback} : {})}
}
