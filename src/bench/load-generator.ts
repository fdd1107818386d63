/**
 * What drives one run's load: the client model, the workload and the engine, with the client
 * pool's telemetry. In this thread (`InProcessLoad`), or split over worker threads
 * (worker-load.ts, `bench --workers N`): either way the run gets one measurement, one pool
 * snapshot and one set of telemetry histograms, merged exactly where there are several.
 */
import type {ClientSettings} from '../mongo/client.js'
import {errorClass} from '../mongo/errors.js'
import {PoolTelemetry, type PoolTelemetrySnapshot} from '../mongo/pool-telemetry.js'
import {type EngineMeasurement, type EnginePlan, type EngineTick, runEngine} from './engine.js'
import {createClientModel} from './models.js'
import {type SeriesGauges, seriesGauges} from './series-gauges.js'
import type {BenchConfig, PoolModel, WorkerSummary} from './types.js'
import {createWorkload} from './workloads.js'

export type {WorkerSummary}

/** The pool telemetry's histograms a run reports (µs on pooltool's clock, and the driver's whole ms). */
export type TelemetryHistograms = Pick<PoolTelemetry, 'checkoutWaitUs' | 'checkoutWaitDriverMS' | 'setupUs' | 'setupDriverMS'>

export interface LoadOutcome {
  measurement: EngineMeasurement<SeriesGauges>
  pool: PoolTelemetrySnapshot
  telemetry: TelemetryHistograms
  clients: number
  /** With worker threads: each one's part, and how far apart their engines started (ms). */
  workers?: {perWorker: WorkerSummary[]; startSkewMS: number}
}

export interface LoadCell {
  model: PoolModel
  /** This process's concurrency (a segment's share). */
  concurrency: number
  maxPoolSize?: number
}

export interface LoadRunHooks {
  signal: AbortSignal
  /** Measuring begins (after the warm-up); the load's own telemetry has been reset. */
  onMeasureStart?(): void
  onTick?(tick: EngineTick & {inUse: number}): void
  /** The server side of the series (connections per host at the latest poll). */
  serverConnections(): Record<string, number>
}

export interface LoadGenerator {
  /** Opens the clients (all workers' when there are several): errors here fail the run before any load. */
  open(): Promise<void>
  /** Runs the engine plan (telemetry restarts when measuring begins) and resolves with what it measured. */
  run(plan: EnginePlan, hooks: LoadRunHooks): Promise<EngineMeasurement<SeriesGauges>>
  /** The measurement with the pool as it is now (snapshot) and the telemetry; after run(). */
  outcome(): LoadOutcome
  /** Closes the load clients; safe twice. */
  close(): Promise<void>
}

export interface LoadInput {
  settings: ClientSettings
  config: BenchConfig
  cell: LoadCell
}

/** The load in this thread: one client model, one engine. */
export class InProcessLoad implements LoadGenerator {
  private readonly telemetry = new PoolTelemetry()
  private readonly model
  private readonly workload
  private measurement?: EngineMeasurement<SeriesGauges>

  constructor(private readonly input: LoadInput) {
    this.model = createClientModel({...input.cell, settings: input.settings, config: input.config, telemetry: this.telemetry})
    this.workload = createWorkload(input.config)
  }

  open(): Promise<void> {
    return this.model.open()
  }

  async run(plan: EnginePlan, hooks: LoadRunHooks): Promise<EngineMeasurement<SeriesGauges>> {
    const telemetry = this.telemetry
    const startMeasuring = (): void => {
      telemetry.resetCounters()
      hooks.onMeasureStart?.()
    }
    if (plan.warmupMs <= 0) telemetry.resetCounters()
    this.measurement = await runEngine<SeriesGauges>(plan, {
      nextOperation: this.workload.pick,
      execute: (name) => this.model.run(this.workload.operation(name!)),
      sampleSeries: seriesGauges(telemetry, hooks.serverConnections),
      classifyError: errorClass,
      signal: hooks.signal,
      poolTotal: () => telemetry.total,
      onMeasureStart: plan.warmupMs > 0 ? startMeasuring : undefined,
      onTick: (tick) => hooks.onTick?.({...tick, inUse: telemetry.inUse}),
    })
    return this.measurement
  }

  outcome(): LoadOutcome {
    if (!this.measurement) throw new Error('InProcessLoad: outcome() before run()')
    return {measurement: this.measurement, pool: this.telemetry.snapshot(), telemetry: this.telemetry, clients: this.model.clientsOpened}
  }

  close(): Promise<void> {
    return this.model.close()
  }
}
