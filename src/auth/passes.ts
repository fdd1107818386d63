/**
 * The measured connections of `pooltool auth`. Per path (driver-free first when
 * plain TCP allows it, then the driver): `connections` new connections one at a
 * time, then again in storms of `parallel`, for every mechanism. Mechanisms take
 * turns in small blocks so a change of load on the machine hits all of them
 * alike, and the server's counters are read after every block (CounterLedger)
 * so each mechanism's delta stays exact. Stops at the next connection once
 * `signal` is aborted, when the credentials stop working (exit 5) or when the
 * host stops answering for --timeout-ms (exit 4, see host-watch.ts): what was
 * measured until then is kept.
 */
import {performance} from 'node:perf_hooks'

import {recordMs} from '../metrics/histograms.js'
import {splitHostPort, type ScramCredentials} from '../wire/index.js'
import {PoolToolError} from '../errors.js'
import {ConnectionAbortedError} from './deadline.js'
import {connectionErrorClass, driverConnection, driverFreeConnection, type DriverFreeTarget} from './connections.js'
import {HostWatch} from './host-watch.js'
import type {CounterLedger} from './counters.js'
import type {MechanismState, Mode, Path} from './mechanism-state.js'
import type {AuthConfig, AuthMechanismName} from './types.js'

/** The one-at-a-time pass runs in this many rounds (counters read after each block of a round). */
const SEQUENTIAL_ROUNDS = 5

export interface PassSetup {
  config: AuthConfig
  /** The host every connection goes to ("host:port"). */
  host: string
  /** Whether the driver-free path runs (it speaks plain TCP only). */
  driverFree: boolean
  /** One-host URI per mechanism for the driver path, built once so storms time connections, not URI parsing. */
  driverUris: ReadonlyMap<AuthMechanismName, string>
  credentials: ScramCredentials | undefined
  settings: {appName: string; timeoutMs: number}
  /** Whether the host speaks plain TCP (the host check can then send a hello). */
  plainTcp: boolean
  counters: CounterLedger
  signal: AbortSignal
  progress(text: string): void
}

/** n split into `parts` sizes as even as possible (no zero sizes). */
export function splitEvenly(n: number, parts: number): number[] {
  const count = Math.max(1, Math.min(parts, n))
  return Array.from({length: count}, (_, i) => Math.floor(n / count) + (i < n % count ? 1 : 0))
}

/** n in chunks of `size` (the last one smaller). */
export function chunksOf(n: number, size: number): number[] {
  const out: number[] = []
  for (let left = n; left > 0; left -= size) out.push(Math.min(size, left))
  return out
}

/** Why the passes ended before their last connection (besides Ctrl-C). */
export interface PassesOutcome {
  /** The host went away (UNREACHABLE) or refused the credentials (AUTH_FAILED) mid-run. */
  stoppedBy?: PoolToolError
}

/** Every pass of every path over `states`, recording into them. */
export async function runPasses(states: readonly MechanismState[], setup: PassSetup): Promise<PassesOutcome> {
  const runner = new PassRunner(states, setup)
  const paths: Path[] = setup.driverFree ? ['driverFree', 'driver'] : ['driver']
  for (const path of paths) {
    await runner.oneAtATime(path)
    await runner.storms(path)
  }
  return runner.stoppedBy ? {stoppedBy: runner.stoppedBy} : {}
}

class PassRunner {
  private readonly freeTarget: DriverFreeTarget
  private readonly none: MechanismState[]
  private readonly scram: MechanismState[]
  private readonly hostWatch: HostWatch
  stoppedBy: PoolToolError | undefined

  constructor(
    private readonly states: readonly MechanismState[],
    private readonly setup: PassSetup,
  ) {
    const {host, port} = splitHostPort(setup.host)
    this.freeTarget = {host, port, timeoutMs: setup.settings.timeoutMs, appName: setup.settings.appName, signal: setup.signal}
    this.none = states.filter((s) => !s.scram)
    this.scram = states.filter((s) => s.scram)
    this.hostWatch = new HostWatch({host: setup.host, timeoutMs: setup.settings.timeoutMs, appName: setup.settings.appName, plainTcp: setup.plainTcp, signal: setup.signal})
  }

  /** Ctrl-C, or a failure that makes every further connection pointless. */
  private get halted(): boolean {
    return this.setup.signal.aborted || this.stoppedBy !== undefined
  }

  /** Before the next connection: after an unreachable failure, the host must answer again (else the run stops). */
  private async hostStillThere(): Promise<boolean> {
    try {
      await this.hostWatch.confirm()
    } catch (error) {
      if (!(error instanceof PoolToolError)) throw error
      this.stoppedBy ??= error
    }
    return !this.halted
  }

  /**
   * Rounds; in each, the unauthenticated connections, then the SCRAM mechanisms
   * taking turns connection by connection (the order flips every turn) so that a
   * change of load on the machine hits them alike. Counter deltas stay exact:
   * one counter per mechanism.
   */
  async oneAtATime(path: Path): Promise<void> {
    for (const size of splitEvenly(this.setup.config.connections, SEQUENTIAL_ROUNDS)) {
      if (this.halted) return
      if (this.none.length > 0) await this.sequentialBlock(Array.from({length: size}, () => this.none[0]!), path)
      if (this.scram.length > 0) {
        const turns = Array.from({length: size}, (_, i) => (i % 2 === 0 ? this.scram : [...this.scram].reverse())).flat()
        await this.sequentialBlock(turns, path)
      }
    }
  }

  /** Storms of `parallel`, the mechanisms taking turns storm by storm. */
  async storms(path: Path): Promise<void> {
    for (const size of chunksOf(this.setup.config.connections, this.setup.config.parallel)) {
      for (const state of this.states) {
        if (!(await this.hostStillThere())) return
        await this.storm(state, path, size)
      }
    }
  }

  /** Connections one after another (the block's order), then the counters. */
  private async sequentialBlock(block: readonly MechanismState[], path: Path): Promise<void> {
    for (const state of block) {
      if (!(await this.hostStillThere())) break
      await this.one(state, path, 'sequential')
      this.setup.progress(this.label(path, 'sequential', state))
    }
    await this.setup.counters.creditBlock(block)
  }

  /** `size` connections of one mechanism at once, then the counters. */
  private async storm(state: MechanismState, path: Path, size: number): Promise<void> {
    const started = performance.now()
    await Promise.all(Array.from({length: size}, () => this.one(state, path, 'storm')))
    const wall = performance.now() - started
    if (path === 'driverFree') state.freeStorm.wallMs += wall
    else state.driverStormWallMs += wall
    this.setup.progress(this.label(path, 'storm', state))
    await this.setup.counters.creditBlock([state])
  }

  /** One new connection; a failure is counted by class, never thrown. */
  private async one(state: MechanismState, path: Path, mode: Mode): Promise<void> {
    state.opened += 1
    try {
      if (path === 'driverFree') {
        state.recordFree(await driverFreeConnection(this.freeTarget, state.mechanism, this.setup.credentials), mode)
      } else {
        const sequential = mode === 'sequential'
        const firstOne = sequential && state.driverSeq.created === 0
        await driverConnection(
          {uri: this.setup.driverUris.get(state.mechanism)!, ...this.setup.settings},
          {
            telemetry: sequential ? state.driverSeq : state.driverStorm,
            onSetup: (ms) => {
              recordMs(sequential ? state.driverSeqSetup : state.driverStormSetup, ms)
              if (firstOne && state.driverFirstCold) state.driverFirstSetupUs = Math.max(1, Math.round(ms * 1000))
            },
          },
          this.setup.signal,
        )
        if (mode === 'storm') state.driverStormOk += 1
      }
      state.succeeded += 1
    } catch (error) {
      this.failed(state, path, mode, error)
    } finally {
      state.done[path][mode] += 1
    }
  }

  /** Count the failure; a refusal of the credentials or a silent host changes what happens next. */
  private failed(state: MechanismState, path: Path, mode: Mode, error: unknown): void {
    // Cut short by Ctrl-C: neither a success nor the server's failure.
    if (error instanceof ConnectionAbortedError || this.setup.signal.aborted) {
      state.aborted += 1
      return
    }
    state.error(path, mode, error)
    const cls = connectionErrorClass(error)
    if (cls === 'auth' && state.scram) {
      this.stoppedBy ??= new PoolToolError(
        'AUTH_FAILED',
        `the server refused the URI's credentials (${state.mechanism}) during the run, after accepting them at the start; the figures measured until then follow`,
        'was the user dropped or its password changed meanwhile? check the username, password and authSource',
      )
      return
    }
    this.hostWatch.noteFailure(cls)
  }

  /** The progress line after a connection or a storm. */
  private label(path: Path, mode: Mode, state: MechanismState): string {
    const pathName = path === 'driverFree' ? 'driver-free' : 'driver'
    const modeName = mode === 'sequential' ? 'one at a time' : `storms of ${this.setup.config.parallel}`
    return `${pathName} · ${modeName} · ${state.mechanism} · ${state.done[path][mode]}/${this.setup.config.connections}`
  }
}
