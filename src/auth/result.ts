/**
 * The `--json` result of `pooltool auth` (types.ts is the contract) from what
 * the run gathered: per-mechanism figures, the headline in pooled pings, and
 * the notes that explain what the figures cannot say on their own.
 */
import type {PoolToolError} from '../errors.js'
import {type Histogram, summarize} from '../metrics/histograms.js'
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import type {CounterLedger} from './counters.js'
import type {MechanismState} from './mechanism-state.js'
import {headlineMechanism} from './mechanisms.js'
import type {MeasuredHost} from './measured-host.js'
import type {ServerAuthSettings} from './probe.js'
import type {AuthConfig, AuthResult, MechanismResult, PercentilesUs, SetupPercentilesUs, StormResult} from './types.js'

/** Everything a finished (or interrupted) run knows. */
export interface AuthRun {
  target: Target
  config: AuthConfig
  measured: MeasuredHost
  states: readonly MechanismState[]
  /** undefined when the pings did not run or failed. */
  pooledPing: Histogram | undefined
  parameters: ServerAuthSettings
  counters: CounterLedger
  driverFree: AuthResult['driverFree']
  /** authMechanism as written in the URI. */
  uriMechanism: string | undefined
  /** Notes gathered during the run, in order; the result's notes follow them. */
  notes: readonly string[]
  interrupted: boolean
  /** Why the run stopped before its last connection: the host went away, or the credentials stopped working. */
  stoppedBy?: PoolToolError
}

export function toAuthResult(run: AuthRun): AuthResult {
  const {config, parameters, measured} = run
  const countersUnavailable = run.counters.unavailable
  const driverFreeAvailable = run.driverFree.available
  const pingSummary = run.pooledPing && run.pooledPing.totalCount > 0 ? summarize(run.pooledPing) : undefined
  const mechanisms = run.states.map((s) => toMechanismResult(s, config, pingSummary?.p50, driverFreeAvailable, countersUnavailable))
  const headline = headlineMechanism(run.states.map((s) => s.mechanism), run.uriMechanism)
  const headlineResult = mechanisms.find((m) => m.mechanism === headline)
  const notes = [...run.notes, ...runNotes(mechanisms, parameters, countersUnavailable, driverFreeAvailable)]
  const foreign = run.counters.foreign
  if (!countersUnavailable && foreign > 0) notes.push(`${foreign} authentications on the host under mechanisms pooltool was not measuring at the time (other clients)`)
  return {
    target: targetSummary(run.target),
    measuredHost: {host: measured.host, ...(measured.clusterName ? {clusterName: measured.clusterName} : {}), role: measured.role, topology: measured.topology, serverVersion: measured.serverVersion, maxWireVersion: measured.maxWireVersion},
    config: configSummary(config),
    mechanisms,
    pooledPingUs: pingSummary ? {p50: pingSummary.p50, p99: pingSummary.p99, count: pingSummary.count} : null,
    costInPooledOps: headlineResult?.costInPooledOps ?? null,
    costInPooledOpsDriverFree: headlineResult?.costInPooledOpsDriverFree ?? null,
    headlineMechanism: headlineResult ? headline : null,
    serverIterationCounts: {
      ...(parameters.scramIterationCount !== undefined ? {scramIterationCount: parameters.scramIterationCount} : {}),
      ...(parameters.scramSHA256IterationCount !== undefined ? {scramSHA256IterationCount: parameters.scramSHA256IterationCount} : {}),
      ...(parameters.unavailable ? {unavailable: parameters.unavailable} : {}),
    },
    driverFree: run.driverFree,
    serverCounters: countersUnavailable ? {available: false, reason: countersUnavailable} : {available: true},
    notes,
    interrupted: run.interrupted,
    ...(run.stoppedBy ? {error: run.stoppedBy.toJSON()} : {}),
  }
}

const configSummary = (config: AuthConfig): AuthResult['config'] => ({
  connections: config.connections,
  parallel: config.parallel,
  pings: config.pings,
  mechanismsRequested: config.mechanisms ? [...config.mechanisms] : 'default',
})

/** Ctrl-C before discovery had named the host: nothing was measured, the envelope says so. */
export function interruptedBeforeStart(target: Target, config: AuthConfig, driverFree: AuthResult['driverFree'], notes: readonly string[]): AuthResult {
  return {
    target: targetSummary(target),
    measuredHost: null,
    config: configSummary(config),
    mechanisms: [],
    pooledPingUs: null,
    costInPooledOps: null,
    costInPooledOpsDriverFree: null,
    headlineMechanism: null,
    serverIterationCounts: {},
    driverFree,
    serverCounters: {available: false, reason: 'interrupted before the host was known'},
    notes: [...notes],
    interrupted: true,
  }
}

function percentiles(h: Histogram): PercentilesUs | null {
  if (h.totalCount === 0) return null
  const s = summarize(h)
  return {p50: s.p50, p99: s.p99}
}

function setupPercentiles(h: Histogram): SetupPercentilesUs | null {
  if (h.totalCount === 0) return null
  const s = summarize(h)
  return {p50: s.p50, p99: s.p99, max: s.max}
}

/** The driver's whole-millisecond durationMS percentiles, in µs beside pooltool's own clock. */
function driverMSAsUs(ms: SetupPercentilesUs | null): SetupPercentilesUs | null {
  return ms && {p50: ms.p50 * 1000, p99: ms.p99 * 1000, max: ms.max * 1000}
}

const round1 = (n: number) => Math.round(n * 10) / 10

function perSec(count: number, wallMs: number): number | null {
  return count > 0 && wallMs > 0 ? round1((count * 1000) / wallMs) : null
}

function ratio(numerator: number | undefined, denominator: number | undefined): number | null {
  return numerator !== undefined && denominator !== undefined && denominator > 0 ? round1(numerator / denominator) : null
}

function mergeErrors(...records: Array<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const record of records) for (const [k, n] of Object.entries(record)) out[k] = (out[k] ?? 0) + n
  return out
}

/** One mechanism's figures; `setupUs` and `driverSetupUs` are the same figure (the contract name and the explicit one). */
function toMechanismResult(
  s: MechanismState,
  config: AuthConfig,
  pingP50: number | undefined,
  driverFreeAvailable: boolean,
  countersUnavailable: string | undefined,
): MechanismResult {
  const driverSetup = setupPercentiles(s.driverSeqSetup)
  const freeSetup = setupPercentiles(s.free.setup)
  const freeOkSequential = s.free.setup.totalCount > 0
  const stormDriver: StormResult = {
    connectionsPerSec: perSec(s.driverStormOk, s.driverStormWallMs),
    setupUs: setupPercentiles(s.driverStormSetup),
    errors: s.errors.driver.storm,
  }
  const stormFree: StormResult | null = driverFreeAvailable
    ? {
        connectionsPerSec: perSec(s.freeStorm.ok, s.freeStorm.wallMs),
        setupUs: setupPercentiles(s.freeStorm.setup),
        authUs: s.scram ? percentiles(s.freeStorm.auth) : s.freeStorm.ok > 0 ? {p50: 0, p99: 0} : null,
        errors: s.errors.driverFree.storm,
      }
    : null
  const result: MechanismResult = {
    mechanism: s.mechanism,
    connections: config.connections,
    parallel: config.parallel,
    connectionsOpened: s.opened,
    connectionsSucceeded: s.succeeded,
    connectionsFailed: Object.values(s.errors).flatMap((byMode) => Object.values(byMode)).flatMap((byClass) => Object.values(byClass)).reduce((a, b) => a + b, 0),
    connectionsAborted: s.aborted,
    setupUs: driverSetup,
    driverSetupUs: driverSetup,
    connectionReadyDurationUs: driverMSAsUs(setupPercentiles(s.driverSeq.setupDriverMS)),
    driverFirstSetupUs: s.scram ? s.driverFirstSetupUs : null,
    driverFreeSetupUs: freeSetup,
    tcpConnectUs: percentiles(s.free.tcp),
    handshakeUs: percentiles(s.free.hello),
    authUs: s.scram ? percentiles(s.free.auth) : freeOkSequential ? {p50: 0, p99: 0} : null,
    keyDerivationUs: percentiles(s.free.kdf),
    roundTrips: s.roundTrips,
    speculative: s.scram ? s.speculative : null,
    iterationCount: s.iterationCount,
    connectionsPerSec: stormDriver.connectionsPerSec,
    storm: {driver: stormDriver, driverFree: stormFree},
    serverAuthCounters: countersUnavailable ? null : {...s.counters},
    authenticationsExpected: s.authentications,
    costInPooledOps: ratio(driverSetup?.p50, pingP50),
    costInPooledOpsDriverFree: ratio(freeSetup?.p50, pingP50),
    errors: mergeErrors(s.errors.driverFree.sequential, s.errors.driverFree.storm, s.errors.driver.sequential, s.errors.driver.storm),
  }
  if (countersUnavailable) result.serverAuthCountersUnavailable = countersUnavailable
  return result
}

/** Why figures may look off: the driver's PBKDF2 cache, missing server data, stale iteration counts, counter mismatches, failures. */
function runNotes(
  mechanisms: readonly MechanismResult[],
  parameters: ServerAuthSettings,
  countersUnavailable: string | undefined,
  driverFreeAvailable: boolean,
): string[] {
  const notes: string[] = []
  const scram = mechanisms.filter((m) => m.mechanism !== 'none')
  if (scram.length > 0) {
    notes.push(
      'the driver caches PBKDF2 per process (keyed by password, salt and iteration count): only its first connection per ' +
        'mechanism pays the iteration count (driverFirstSetupUs); its setupUs p50 is round trips and server work. ' +
        (driverFreeAvailable ? 'The driver-free figures derive the key every time: what a fresh process (a CLI, a serverless function) pays.' : ''),
    )
  }
  if (countersUnavailable) notes.push(`server auth counters missing: ${countersUnavailable}`)
  if (parameters.unavailable) notes.push(`server iteration counts missing: ${parameters.unavailable}`)
  for (const m of scram) {
    const configured = m.mechanism === 'SCRAM-SHA-1' ? parameters.scramIterationCount : parameters.scramSHA256IterationCount
    if (m.iterationCount !== null && configured !== undefined && configured !== m.iterationCount) {
      notes.push(
        `${m.mechanism}: the user's credential uses i=${m.iterationCount}, the server now creates new passwords with ${configured}; ` +
          'the count only changes when the password is set again',
      )
    }
    if (m.serverAuthCounters && m.serverAuthCounters.received !== m.authenticationsExpected) {
      notes.push(`${m.mechanism}: the server counted ${m.serverAuthCounters.received} authentications, pooltool completed ${m.authenticationsExpected}`)
    }
    if (m.speculative === false) notes.push(`${m.mechanism}: no speculative authentication (servers before 4.4): the handshake did not carry the first SCRAM step`)
  }
  const none = mechanisms.find((m) => m.mechanism === 'none')
  if (none?.serverAuthCounters && none.serverAuthCounters.received > 0) {
    notes.push(`none: ${none.serverAuthCounters.received} authentications on the host while unauthenticated connections ran (other clients)`)
  }
  for (const m of mechanisms) {
    const total = Object.values(m.errors).reduce((a, b) => a + b, 0)
    if (total > 0) notes.push(`${m.mechanism}: ${total} of ${m.connectionsOpened} connections failed (${Object.entries(m.errors).map(([k, n]) => `${k} ${n}`).join(', ')})`)
  }
  return notes
}
