/**
 * `pooltool bench` end to end: seed pooltool's own namespace, run every cell
 * of the matrix (model × concurrency × maxPoolSize) through the engine with
 * client and server telemetry, find the knee, check thresholds, and drop the
 * namespace again (also after Ctrl-C or a failure).
 */
import {encodeHistogram, summarize} from '../metrics/histograms.js'
import {type ClientSettings, createClient} from '../mongo/client.js'
import type {Db} from '../mongo/driver.js'
import {errorClass, serverErrorCode, UNAUTHORIZED_CODE} from '../mongo/errors.js'
import {PoolTelemetry, type PoolTelemetrySnapshot} from '../mongo/pool-telemetry.js'
import {type EntryTopology, readEntryTopology, readServerVersion} from '../probes/topology.js'
import type {Target} from '../target.js'
import {type EngineMeasurement, type EngineTick, runEngine} from './engine.js'
import {checkThresholds, type Threshold} from './fail-on.js'
import {findKnee} from './knee.js'
import {createClientModel, effectiveMaxPoolSize} from './models.js'
import {LockObserver} from './lock-observer.js'
import {achievedRatePerSec, rateShortfallOf} from './rate-shortfall.js'
import {ServerSampler} from './server-sampler.js'
import type {BenchConfig, BenchResult, PoolModel, RunResult, ServerHostResult} from './types.js'
import {createWorkload} from './workloads.js'

export interface BenchHooks {
  appName: string
  timeoutMs: number
  signal: AbortSignal
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

export async function runBench(target: Target, config: BenchConfig, hooks: BenchHooks): Promise<BenchResult> {
  const settings: ClientSettings = {
    uri: target.uri,
    appName: hooks.appName,
    timeoutMs: hooks.timeoutMs,
    pool: config.pool,
  }
  const admin = createClient({...settings, appName: `${hooks.appName}-admin`, pool: {maxPoolSize: 2}})
  const result: BenchResult = {
    target: {uri: target.redactedUri, simulated: target.simulated, topology: 'unknown', serverVersion: 'unknown'},
    config: {
      workload: config.workload,
      mix: config.workload === 'mixed' ? {...config.mix} : undefined,
      docSizeBytes: config.docSizeBytes,
      db: config.db,
      warmupMs: config.warmupMs,
      durationMs: config.durationMs,
      ops: config.ops,
    },
    runs: [],
    knee: null,
    failOn: hooks.thresholds ? {expressions: hooks.thresholds.map((t) => t.expression), breaches: []} : null,
    interrupted: false,
    cleanedUp: false,
  }
  let seeded = false
  try {
    await admin.connect()
    const topology = await readEntryTopology(admin, target.seedHosts)
    result.target.topology = topology.kind
    result.target.serverVersion = await readServerVersion(admin)
    const db = admin.db(config.db)
    await dropNamespace(db)
    seeded = true
    await createWorkload(config).seed(db)

    const cells = matrixOf(config)
    for (const [index, cell] of cells.entries()) {
      if (hooks.signal.aborted) break
      hooks.onRunStart?.(cell, index, cells.length)
      const run = await runCell({target, settings, config, hooks, topology}, cell)
      result.runs.push(run)
      result.interrupted = run.interrupted
      finalize(result, config, hooks)
      await hooks.onPartialResult?.(result)
    }
    result.interrupted ||= hooks.signal.aborted
    finalize(result, config, hooks)
    return result
  } finally {
    if (seeded && !config.keep) {
      try {
        await dropNamespace(admin.db(config.db))
        result.cleanedUp = true
      } catch {
        // Reported through cleanedUp=false; the run's figures stand.
      }
    }
    await admin.close()
  }
}

/**
 * Empty pooltool's database. dropDatabase needs dbAdmin; a user who may only
 * write there (readWrite) can still drop the collections one by one.
 */
async function dropNamespace(db: Db): Promise<void> {
  try {
    await db.dropDatabase()
  } catch (error) {
    if (serverErrorCode(error) !== UNAUTHORIZED_CODE) throw error
    for (const {name} of await db.listCollections({}, {nameOnly: true}).toArray()) await db.collection(name).drop()
  }
}

function finalize(result: BenchResult, config: BenchConfig, hooks: BenchHooks): void {
  result.knee = findKnee(result.runs, config.sloUs)
  if (result.failOn && hooks.thresholds) result.failOn.breaches = checkThresholds(hooks.thresholds, result.runs)
}

/** What every run of one bench shares. */
interface BenchContext {
  target: Target
  settings: ClientSettings
  config: BenchConfig
  hooks: BenchHooks
  topology: EntryTopology
}

async function runCell({target, settings, config, hooks, topology}: BenchContext, cell: BenchCell): Promise<RunResult> {
  const telemetry = new PoolTelemetry()
  const model = createClientModel({
    model: cell.model,
    settings,
    config,
    concurrency: cell.concurrency,
    maxPoolSize: cell.maxPoolSize,
    telemetry,
  })
  const workload = createWorkload(config)
  const sampler = await ServerSampler.open(settings, topology.hosts.map((h) => h.host), target.secrets)
  let measureStartSample: Promise<void> | undefined
  const startMeasuring = (): void => {
    telemetry.resetCounters()
    measureStartSample = sampler.markMeasureStart()
  }
  // ddl on a sharded cluster: watch the bench database's locks while the workload runs.
  const lockObserver = config.workload === 'ddl' && topology.kind === 'sharded' ? await LockObserver.start(target, settings, config.db) : null
  try {
    await model.open()
    if (config.warmupMs <= 0) {
      startMeasuring()
      await measureStartSample
    }
    sampler.startPolling(config.sampleIntervalMs)
    const measurement = await runEngine(
      {
        concurrency: cell.concurrency,
        rate: config.rate,
        durationMs: config.durationMs,
        ops: config.ops,
        warmupMs: config.warmupMs,
        drainTimeoutMs: Math.max(5000, hooks.timeoutMs),
        tickIntervalMs: TICK_INTERVAL_MS,
      },
      {
        execute: () => model.run(workload.next()),
        classifyError: errorClass,
        signal: hooks.signal,
        onMeasureStart: config.warmupMs > 0 ? startMeasuring : undefined,
        onTick: (tick) => hooks.onTick?.(cell, {...tick, inUse: telemetry.inUse}),
      },
    )
    await measureStartSample
    await sampler.markEnd()
    const locks = await lockObserver?.stop(measurement.errorsByClass)
    const pool = telemetry.snapshot()
    await model.close()
    const server = await sampler.finish()
    return toRunResult({cell, config, measurement, telemetry, pool, clients: model.clientsOpened, server, locks})
  } finally {
    await model.close()
    await sampler.close()
    await lockObserver?.close()
  }
}

/** The JSON contract of one run, from what the run measured. Pure. */
function toRunResult(parts: {
  cell: BenchCell
  config: BenchConfig
  measurement: EngineMeasurement
  telemetry: PoolTelemetry
  pool: PoolTelemetrySnapshot
  clients: number
  server: ServerHostResult[]
  locks: RunResult['locks'] | undefined
}): RunResult {
  const {cell, config, measurement, telemetry, pool, clients, server, locks} = parts
  const setup = summarize(telemetry.setupUs)
  const checkout = summarize(telemetry.checkoutWaitUs)
  return {
    model: cell.model,
    workload: config.workload,
    concurrency: cell.concurrency,
    rate: config.rate ?? null,
    maxPoolSize: effectiveMaxPoolSize(cell.model, cell.maxPoolSize, cell.concurrency),
    ops: measurement.ops,
    errors: measurement.errors,
    scheduled: measurement.scheduled,
    missed: measurement.missed,
    missedByReason: {...measurement.missedByReason},
    aborted: measurement.aborted,
    durationMS: Math.round(measurement.durationMs),
    opsPerSec: measurement.durationMs > 0 ? Math.round((measurement.ops * 1000 * 10) / measurement.durationMs) / 10 : 0,
    achievedRatePerSec: achievedRatePerSec(measurement),
    rateShortfall: rateShortfallOf(measurement, config.rate ?? null, cell.concurrency, summarize(measurement.latencyUs).mean),
    latencyUs: summarize(measurement.latencyUs),
    latencyCorrectedUs: measurement.latencyCorrectedUs ? summarize(measurement.latencyCorrectedUs) : null,
    scheduleLagUs: measurement.scheduleLagUs ? summarize(measurement.scheduleLagUs) : null,
    checkoutWaitUs: {p50: checkout.p50, p99: checkout.p99, max: checkout.max},
    pool: {
      created: pool.created,
      closed: pool.closed,
      peakTotal: pool.peakTotal,
      peakInUse: pool.peakInUse,
      checkOutFailed: pool.checkOutFailed,
      cleared: pool.cleared,
      clients,
      setupUs: {p50: setup.p50, p99: setup.p99, max: setup.max},
    },
    server,
    errorsByClass: {...measurement.errorsByClass},
    ...(locks ? {locks} : {}),
    histograms: {
      latencyUs: encodeHistogram(measurement.latencyUs),
      latencyCorrectedUs: measurement.latencyCorrectedUs ? encodeHistogram(measurement.latencyCorrectedUs) : null,
    },
    interrupted: measurement.interrupted,
  }
}
