/**
 * What `pooltool auth` gathers about one mechanism while the passes run: the
 * histograms of each path and pass, the facts the connections report (round
 * trips, speculative auth, iteration count), failures by class, and the
 * server's counter deltas credited to it. Mutable on purpose: the passes fill
 * it in, result.ts reads it once at the end.
 */
import {createHistogram, recordMs} from '../metrics/histograms.js'
import {PoolTelemetry} from '../mongo/pool-telemetry.js'
import {connectionErrorClass, type DriverFreeSample} from './connections.js'
import type {AuthMechanismName} from './types.js'

/** How a connection is opened: raw TCP timed step by step, or through the official driver. */
export type Path = 'driverFree' | 'driver'
/** One connection at a time, or `parallel` at once. */
export type Mode = 'sequential' | 'storm'

export interface CounterDelta {
  received: number
  successful: number
  speculativeReceived: number
  speculativeSuccessful: number
}

const zeroDelta = (): CounterDelta => ({received: 0, successful: 0, speculativeReceived: 0, speculativeSuccessful: 0})

export class MechanismState {
  readonly free = {tcp: createHistogram(), hello: createHistogram(), auth: createHistogram(), kdf: createHistogram(), setup: createHistogram()}
  readonly freeStorm = {setup: createHistogram(), auth: createHistogram(), wallMs: 0, ok: 0}
  /** CMAP telemetry of the driver connections (counts; durationMS in whole ms). */
  readonly driverSeq = new PoolTelemetry()
  readonly driverStorm = new PoolTelemetry()
  /** connectionCreated → connectionReady timed by pooltool's listeners. */
  readonly driverSeqSetup = createHistogram()
  readonly driverStormSetup = createHistogram()
  driverStormWallMs = 0
  driverStormOk = 0
  roundTrips: number | null = null
  speculative: boolean | null = null
  iterationCount: number | null = null
  freeOk = 0
  driverFirstSetupUs: number | null = null
  /** The driver's first connection with this mechanism may still pay PBKDF2 (false once the cache is known warm). */
  driverFirstCold = true
  opened = 0
  /** Connections that completed (set-up and ping), either path. */
  succeeded = 0
  /** Connections cut short by Ctrl-C (neither succeeded nor failed). */
  aborted = 0
  readonly errors: Record<Path, Record<Mode, Record<string, number>>> = {
    driverFree: {sequential: {}, storm: {}},
    driver: {sequential: {}, storm: {}},
  }
  readonly counters = zeroDelta()
  readonly done: Record<Path, Record<Mode, number>> = {driverFree: {sequential: 0, storm: 0}, driver: {sequential: 0, storm: 0}}

  constructor(readonly mechanism: AuthMechanismName) {}

  get scram(): boolean {
    return this.mechanism !== 'none'
  }

  recordFree(sample: DriverFreeSample, mode: Mode): void {
    this.freeOk += 1
    if (mode === 'sequential') {
      recordMs(this.free.tcp, sample.tcpConnectMs)
      recordMs(this.free.hello, sample.handshakeMs)
      if (this.scram) recordMs(this.free.auth, sample.authMs)
      if (sample.keyDerivationMs !== null) recordMs(this.free.kdf, sample.keyDerivationMs)
      recordMs(this.free.setup, sample.setupMs)
    } else {
      recordMs(this.freeStorm.setup, sample.setupMs)
      if (this.scram) recordMs(this.freeStorm.auth, sample.authMs)
      this.freeStorm.ok += 1
    }
    this.roundTrips = Math.max(this.roundTrips ?? 0, sample.roundTrips)
    this.speculative = (this.speculative ?? true) && sample.speculative
    if (sample.iterationCount !== null) this.iterationCount = sample.iterationCount
  }

  error(path: Path, mode: Mode, error: unknown): void {
    const cls = connectionErrorClass(error)
    const bucket = this.errors[path][mode]
    bucket[cls] = (bucket[cls] ?? 0) + 1
  }

  /** Successful authentications pooltool completed with this mechanism. */
  get authentications(): number {
    if (!this.scram) return 0
    return this.freeOk + this.driverSeqSetup.totalCount + this.driverStormSetup.totalCount
  }
}
