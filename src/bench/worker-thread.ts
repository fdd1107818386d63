/**
 * A bench worker thread (`--workers N`): its own event loop, its own driver clients and pool, its
 * share of the run's concurrency and rate; it runs the same engine as a run without workers and
 * hands back what it measured, histograms encoded (worker-protocol.ts). It never prints.
 */
import {parentPort, workerData} from 'node:worker_threads'

import {toBucketCounts, toPortable} from '../metrics/histograms.js'
import {errorClass} from '../mongo/errors.js'
import {PoolTelemetry} from '../mongo/pool-telemetry.js'
import {type EngineMeasurement, type EnginePlan, runEngine} from './engine.js'
import {createClientModel} from './models.js'
import type {SeriesInterval} from './series.js'
import {checkoutWaitIntervals} from './series-gauges.js'
import type {BenchConfig} from './types.js'
import {epochNowMs, type FromWorker, type ToWorker, toWorkerError, type WorkerJob, type WorkerOutcome, type WorkerSeriesPoint} from './worker-protocol.js'
import {RelayedGate} from './warmup.js'
import {loadWorkloadFile} from './workload-file.js'
import {createRandom, createWorkload} from './workloads.js'

const port = parentPort!
const job = workerData as WorkerJob
const send = (message: FromWorker): void => port.postMessage(message)

const telemetry = new PoolTelemetry()
// A workload file: this thread's own compiled operations, from the file the parent checked.
const config: BenchConfig = job.workloadFile ? {...job.config, workloadFile: await loadWorkloadFile(job.workloadFile.path, job.workloadFile.readNamespace)} : (job.config as BenchConfig)
const model = createClientModel({...job.cell, settings: job.settings, config, telemetry})
// Each worker its own draws: the same seed would have every worker pick the same keys in step.
const workload = createWorkload(config, createRandom(0x5eed + job.index))
const stop = new AbortController()
let closing: Promise<void> | undefined
let startAt: ((start: {atEpochMs: number; plan: EnginePlan}) => void) | undefined
const started = new Promise<{atEpochMs: number; plan: EnginePlan}>((resolve) => (startAt = resolve))

/** --warmup auto: the parent decides for every worker (warmup.ts); this thread reports its windows. */
let warmupGate: RelayedGate | undefined
port.on('message', (message: ToWorker) => {
  if (message.type === 'start') startAt?.(message)
  else if (message.type === 'warmup-end') warmupGate?.decided(message.outcome)
  else if (message.type === 'stop') stop.abort()
  else if (message.type === 'close') closing ??= close()
})

async function close(): Promise<void> {
  stop.abort()
  await model.close().catch(() => undefined)
  send({type: 'closed'})
  port.close()
}

function outcomeOf(m: EngineMeasurement<Omit<WorkerSeriesPoint, keyof SeriesInterval>>, startedAtEpochMs: number): WorkerOutcome {
  return {
    ops: m.ops,
    errors: m.errors,
    errorsByClass: m.errorsByClass,
    scheduled: m.scheduled,
    missed: m.missed,
    missedByReason: m.missedByReason as Record<string, number>,
    aborted: m.aborted,
    durationMs: m.durationMs,
    measureStartEpochMs: m.measureStartEpochMs,
    interrupted: m.interrupted,
    latencyUs: toPortable(m.latencyUs),
    latencyCorrectedUs: m.latencyCorrectedUs ? toPortable(m.latencyCorrectedUs) : null,
    scheduleLagUs: m.scheduleLagUs ? toPortable(m.scheduleLagUs) : null,
    latencyByOpUs: Object.fromEntries(Object.entries(m.latencyByOpUs).map(([name, h]) => [name, toPortable(h)])),
    series: m.series,
    seriesLatencyUs: m.seriesLatencyUs ?? [],
    pool: telemetry.snapshot(),
    telemetry: {
      checkoutWaitUs: toPortable(telemetry.checkoutWaitUs),
      checkoutWaitDriverMS: toPortable(telemetry.checkoutWaitDriverMS),
      setupUs: toPortable(telemetry.setupUs),
      setupDriverMS: toPortable(telemetry.setupDriverMS),
    },
    clients: model.clientsOpened,
    warmup: m.warmup,
    stages: m.stages.map((stage) => ({...stage, latencyUs: toPortable(stage.latencyUs), latencyCorrectedUs: stage.latencyCorrectedUs ? toPortable(stage.latencyCorrectedUs) : null})),
    startedAtEpochMs,
  }
}

async function main(): Promise<void> {
  try {
    await model.open()
  } catch (error) {
    send({type: 'failed', error: toWorkerError(error)})
    await close()
    return
  }
  send({type: 'ready'})
  const {atEpochMs, plan} = await started
  // Every worker starts at the same instant: the parent chose it once all were ready.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, atEpochMs - epochNowMs())))
  if (plan.warmupMs <= 0) {
    telemetry.resetCounters()
    send({type: 'measure-start'})
  }
  const checkoutWait = checkoutWaitIntervals(telemetry)
  if (plan.settle && plan.warmupMs > 0) {
    warmupGate = new RelayedGate(plan.settle.windowMs, () => telemetry.total, (window, index, startPool) =>
      send({type: 'warmup-window', index, window, ...(startPool === undefined ? {} : {startPool})}),
    )
  }
  const startedAtEpochMs = epochNowMs()
  try {
    const measurement = await runEngine(plan, {
      nextOperation: workload.pick,
      execute: (name) => model.run(workload.operation(name!)),
      sampleSeries: () => {
        const interval = checkoutWait()
        return {poolInUse: telemetry.inUse, poolTotal: telemetry.total, ...(interval.totalCount > 0 ? {checkoutWaitUs: toPortable(interval)} : {})}
      },
      classifyError: errorClass,
      signal: stop.signal,
      ...(warmupGate ? {warmupGate} : {}),
      onMeasureStart:
        plan.warmupMs > 0
          ? () => {
              telemetry.resetCounters()
              send({type: 'measure-start'})
            }
          : undefined,
      onTick: (tick) =>
        send({type: 'tick', elapsedMs: tick.elapsedMs, ops: tick.ops, errors: tick.errors, opsPerSecLastTick: tick.opsPerSecLastTick, inUse: telemetry.inUse, latencyUs: toBucketCounts(tick.latencyUs)}),
    })
    send({type: 'done', outcome: outcomeOf(measurement, startedAtEpochMs)})
  } catch (error) {
    send({type: 'failed', error: toWorkerError(error)})
    closing ??= close()
  }
}

void main()
