/**
 * The measured connections of `pooltool auth`. Per path (driver-free first when
 * plain TCP allows it, then the driver): `connections` new connections one at a
 * time, then again in storms of `parallel`, for every mechanism. Mechanisms take
 * turns in small blocks so a change of load on the machine hits all of them
 * alike, and the server's counters are read after every block (CounterLedger)
 * so each mechanism's delta stays exact. Stops at the next block once `signal`
 * is aborted.
 */
import {performance} from 'node:perf_hooks'

import {recordMs} from '../metrics/histograms.js'
import {splitHostPort, type ScramCredentials} from '../wire/client.js'
import {driverConnection, driverFreeConnection, type DriverFreeTarget} from './connections.js'
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

/** Every pass of every path over `states`, recording into them. */
export async function runPasses(states: readonly MechanismState[], setup: PassSetup): Promise<void> {
  const runner = new PassRunner(states, setup)
  const paths: Path[] = setup.driverFree ? ['driverFree', 'driver'] : ['driver']
  for (const path of paths) {
    await runner.oneAtATime(path)
    await runner.storms(path)
  }
}

class PassRunner {
  private readonly freeTarget: DriverFreeTarget
  private readonly none: MechanismState[]
  private readonly scram: MechanismState[]

  constructor(
    private readonly states: readonly MechanismState[],
    private readonly setup: PassSetup,
  ) {
    const {host, port} = splitHostPort(setup.host)
    this.freeTarget = {host, port, timeoutMs: setup.settings.timeoutMs, appName: setup.settings.appName, signal: setup.signal}
    this.none = states.filter((s) => !s.scram)
    this.scram = states.filter((s) => s.scram)
  }

  /**
   * Rounds; in each, the unauthenticated connections, then the SCRAM mechanisms
   * taking turns connection by connection (the order flips every turn) so that a
   * change of load on the machine hits them alike. Counter deltas stay exact:
   * one counter per mechanism.
   */
  async oneAtATime(path: Path): Promise<void> {
    for (const size of splitEvenly(this.setup.config.connections, SEQUENTIAL_ROUNDS)) {
      if (this.setup.signal.aborted) return
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
        if (this.setup.signal.aborted) return
        await this.storm(state, path, size)
      }
    }
  }

  /** Connections one after another (the block's order), then the counters. */
  private async sequentialBlock(block: readonly MechanismState[], path: Path): Promise<void> {
    for (const state of block) {
      if (this.setup.signal.aborted) break
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
        await driverConnection({uri: this.setup.driverUris.get(state.mechanism)!, ...this.setup.settings}, {
          telemetry: sequential ? state.driverSeq : state.driverStorm,
          onSetup: (ms) => {
            recordMs(sequential ? state.driverSeqSetup : state.driverStormSetup, ms)
            if (firstOne && state.driverFirstCold) state.driverFirstSetupUs = Math.max(1, Math.round(ms * 1000))
          },
        })
        if (mode === 'storm') state.driverStormOk += 1
      }
    } catch (error) {
      state.error(path, mode, error)
    } finally {
      state.done[path][mode] += 1
    }
  }

  /** The progress line after a connection or a storm. */
  private label(path: Path, mode: Mode, state: MechanismState): string {
    const pathName = path === 'driverFree' ? 'driver-free' : 'driver'
    const modeName = mode === 'sequential' ? 'one at a time' : `storms of ${this.setup.config.parallel}`
    return `${pathName} · ${modeName} · ${state.mechanism} · ${state.done[path][mode]}/${this.setup.config.connections}`
  }
}
