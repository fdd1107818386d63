/**
 * `pooltool auth` end to end: what one new (authenticated) connection costs.
 *
 * For each mechanism (none, SCRAM-SHA-1, SCRAM-SHA-256) it opens `connections`
 * new connections one at a time, then again in storms of `parallel`, each
 * doing handshake, auth, one ping, close; first driver-free (raw TCP, PBKDF2
 * every time, every step timed), then through the official driver (a
 * MongoClient per connection, connectionReady.durationMS). Mechanisms take
 * turns in small blocks so a load change on the machine hits all of them
 * alike, and the server's auth counters are read between blocks so each
 * mechanism's delta is exact. Finally pooled pings through one warm client
 * give the unit of the headline ("one new connection costs K pooled pings").
 * All connections go to one host: the primary of a replica set.
 */
import {performance} from 'node:perf_hooks'

import {PoolToolError, usageError} from '../errors.js'
import {createHistogram, type Histogram, recordMs, summarize} from '../metrics/histograms.js'
import {createClient} from '../mongo/client.js'
import {toPoolToolError} from '../mongo/errors.js'
import {PoolTelemetry} from '../mongo/pool-telemetry.js'
import type {Target} from '../target.js'
import {splitHostPort, type ScramCredentials} from '../wire/client.js'
import {isScramMechanism, type ScramMechanism} from '../wire/scram.js'
import {connectionErrorClass, driverConnection, driverFreeConnection, type DriverFreeSample, type DriverFreeTarget} from './connections.js'
import {
  type AdminChannel,
  type CounterSnapshot,
  discover,
  openAdminChannel,
  readAuthCounters,
  readAuthParameters,
  type ServerAuthSettings,
} from './probe.js'
import type {AuthConfig, AuthMechanismName, AuthResult, MechanismResult, PercentilesUs, SetupPercentilesUs, StormResult} from './types.js'
import {credentialsFromUri, hostUri, resolveSeedHosts, tlsRequested, type UriCredentials} from './uri.js'

export interface AuthHooks {
  appName: string
  timeoutMs: number
  signal: AbortSignal
  /** A short line on what runs now (for the progress spinner). */
  onProgress?(text: string): void
}

/** The one-at-a-time pass runs in this many rounds (counters read after each block of a round). */
const SEQUENTIAL_ROUNDS = 5
const PING_WARMUP = 20

type Path = 'driverFree' | 'driver'
type Mode = 'sequential' | 'storm'

interface CounterDelta {
  received: number
  successful: number
  speculativeReceived: number
  speculativeSuccessful: number
}

const zeroDelta = (): CounterDelta => ({received: 0, successful: 0, speculativeReceived: 0, speculativeSuccessful: 0})

class MechanismState {
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

const round1 = (n: number) => Math.round(n * 10) / 10

function perSec(count: number, wallMs: number): number | null {
  return count > 0 && wallMs > 0 ? round1((count * 1000) / wallMs) : null
}

function ratio(numerator: number | undefined, denominator: number | undefined): number | null {
  return numerator !== undefined && denominator !== undefined && denominator > 0 ? round1(numerator / denominator) : null
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

interface MechanismChoice {
  mechanisms: AuthMechanismName[]
  notes: string[]
}

/** Which mechanisms to measure: the ones asked for (each checked), else none + what the server offers and the user has. */
export function chooseMechanisms(
  requested: readonly AuthMechanismName[] | undefined,
  ctx: {credentials?: UriCredentials; nonScramUriMechanism?: string; userMechanisms?: string[]; serverMechanisms?: string[]},
): MechanismChoice {
  const notes: string[] = []
  const scram: ScramMechanism[] = ['SCRAM-SHA-1', 'SCRAM-SHA-256']
  if (requested === undefined) {
    const mechanisms: AuthMechanismName[] = ['none']
    if (ctx.nonScramUriMechanism) {
      notes.push(`the URI authenticates with ${ctx.nonScramUriMechanism}: pooltool auth measures SCRAM only, so only 'none' ran`)
    } else if (!ctx.credentials) {
      notes.push('the URI has no credentials: only unauthenticated connections (none) were measured; add user:password to measure SCRAM')
    } else {
      for (const m of scram) {
        if (ctx.serverMechanisms && !ctx.serverMechanisms.includes(m)) continue
        if (ctx.userMechanisms && !ctx.userMechanisms.includes(m)) continue
        mechanisms.push(m)
      }
      if (!ctx.userMechanisms) notes.push('the server did not list the user\'s mechanisms (hello saslSupportedMechs): both SCRAM mechanisms were tried')
      const skipped = scram.filter((m) => !mechanisms.includes(m))
      if (skipped.length > 0) notes.push(`${skipped.join(', ')} not measured: not offered by the server or no such credentials for the user`)
    }
    return {mechanisms, notes}
  }
  for (const m of requested) {
    if (!isScramMechanism(m)) continue
    if (ctx.nonScramUriMechanism) {
      throw usageError(
        `${m} cannot be measured: the URI authenticates with ${ctx.nonScramUriMechanism}`,
        'give a URI with a SCRAM user (user:password@, no authMechanism or a SCRAM one), or measure --mechanisms none',
      )
    }
    if (!ctx.credentials) {
      throw usageError(`${m} needs credentials: the URI has no user name and password`, 'put user:password@ in the URI, or measure --mechanisms none')
    }
    if (ctx.serverMechanisms && !ctx.serverMechanisms.includes(m)) {
      throw usageError(
        `the server does not offer ${m} (authenticationMechanisms: ${ctx.serverMechanisms.join(', ')})`,
        `drop ${m} from --mechanisms`,
      )
    }
    if (ctx.userMechanisms && !ctx.userMechanisms.includes(m)) {
      throw usageError(
        `the URI's user has no ${m} credentials (the server lists ${ctx.userMechanisms.join(', ') || 'none'} for it)`,
        `drop ${m} from --mechanisms, or give the user ${m} credentials (updateUser with mechanisms and pwd)`,
      )
    }
  }
  return {mechanisms: [...requested], notes}
}

export async function measureAuth(target: Target, config: AuthConfig, hooks: AuthHooks): Promise<AuthResult> {
  const settings = {appName: hooks.appName, timeoutMs: hooks.timeoutMs}
  const notes: string[] = []
  const progress = (text: string) => hooks.onProgress?.(text)

  // ---- what the URI says
  progress('discovering the target')
  let seeds
  try {
    seeds = await resolveSeedHosts(target.uri)
  } catch (error) {
    throw new PoolToolError('UNREACHABLE', `cannot resolve the SRV record of ${target.redactedUri}: ${(error as Error).message}`, 'check the host name and DNS', {cause: error})
  }
  const uriCredentials = credentialsFromUri(target.uri, seeds.txt)
  const uriMechanism = uriCredentials?.mechanism
  const nonScramUriMechanism = uriMechanism !== undefined && !isScramMechanism(uriMechanism) ? uriMechanism : undefined
  const scramCredentials: ScramCredentials | undefined = uriCredentials && !nonScramUriMechanism ? uriCredentials : undefined
  const tls = tlsRequested(target.uri)
  const driverFreeAvailable = !tls
  const driverFree: AuthResult['driverFree'] = driverFreeAvailable
    ? {available: true}
    : {available: false, reason: 'the URI asks for TLS: the driver-free timing speaks plain TCP only, so TCP connect / handshake / auth are not split'}
  if (!driverFreeAvailable) notes.push(`driver-free split unavailable: ${driverFree.reason}`)

  // Requested mechanisms that cannot work without asking the server: fail before connecting.
  if (config.mechanisms) chooseMechanisms(config.mechanisms, {credentials: scramCredentials, nonScramUriMechanism})

  // ---- discovery (unauthenticated) and the admin channel (authenticated once)
  const seedHost = seeds.hosts[0]!
  const discovery = await discover(hostUri(target.uri, seedHost, {mechanism: 'none', txt: seeds.txt}), seedHost, scramCredentials, settings)
  const host = discovery.host
  const probeMechanism: ScramMechanism | undefined = !scramCredentials
    ? undefined
    : uriMechanism !== undefined && isScramMechanism(uriMechanism)
      ? uriMechanism
      : discovery.userMechanisms?.includes('SCRAM-SHA-256')
        ? 'SCRAM-SHA-256'
        : discovery.userMechanisms?.includes('SCRAM-SHA-1')
          ? 'SCRAM-SHA-1'
          : (discovery.maxWireVersion ?? 0) >= 7
            ? 'SCRAM-SHA-256'
            : 'SCRAM-SHA-1'
  progress(`authenticating pooltool's probe connection to ${host}`)
  const channel: AdminChannel = await openAdminChannel({
    // Driver-free keeps the driver's PBKDF2 cache cold; a non-SCRAM URI (X.509, PLAIN …) needs the driver to log in.
    driverFree: driverFreeAvailable && !nonScramUriMechanism,
    host,
    driverUri: hostUri(target.uri, host, {mechanism: probeMechanism, txt: seeds.txt}),
    credentials: scramCredentials,
    mechanism: probeMechanism,
    settings,
  })

  const states: MechanismState[] = []
  let pooledPing: Histogram | undefined
  let interrupted = false
  let parameters: ServerAuthSettings = {}
  let countersUnavailable: string | undefined
  /** Counter moves no measured connection explains: other clients authenticating on the host. */
  let foreign = 0
  try {
    parameters = await readAuthParameters(channel, target.secrets)
    const choice = chooseMechanisms(config.mechanisms, {
      credentials: scramCredentials,
      nonScramUriMechanism,
      userMechanisms: discovery.userMechanisms,
      serverMechanisms: parameters.authenticationMechanisms,
    })
    notes.push(...choice.notes)
    for (const m of choice.mechanisms) states.push(new MechanismState(m))
    if (channel.kind === 'driver' && channel.mechanism) {
      const warmed = states.find((s) => s.mechanism === channel.mechanism)
      if (warmed) {
        warmed.driverFirstCold = false
        notes.push(`pooltool's probe connection is a driver connection (TLS) and already derived the ${channel.mechanism} key: no driver connection of this run pays its PBKDF2`)
      }
    }

    // ---- counters between blocks
    let last: CounterSnapshot | undefined
    const first = await readAuthCounters(channel, target.secrets)
    if (first.counters) last = first.counters
    else countersUnavailable = first.unavailable

    /**
     * Read the counters after a block and credit each mechanism's delta to the
     * block's connection of that mechanism; a block of unauthenticated (none)
     * connections is credited with every delta (it should see none). Anything
     * else moved because of other clients on the host.
     */
    const account = async (block: readonly MechanismState[]): Promise<void> => {
      if (!last) return
      const now = await readAuthCounters(channel, target.secrets)
      if (!now.counters) {
        countersUnavailable = `${now.unavailable} (during the run)`
        last = undefined
        return
      }
      const none = block.find((s) => !s.scram)
      for (const [mech, after] of Object.entries(now.counters)) {
        const before = last[mech] ?? {received: 0, successful: 0}
        const received = after.received - before.received
        const owner = block.find((s) => s.mechanism === mech) ?? none
        if (!owner) {
          foreign += received
          continue
        }
        owner.counters.received += received
        owner.counters.successful += after.successful - before.successful
        owner.counters.speculativeReceived += (after.speculativeReceived ?? 0) - (before.speculativeReceived ?? 0)
        owner.counters.speculativeSuccessful += (after.speculativeSuccessful ?? 0) - (before.speculativeSuccessful ?? 0)
      }
      last = now.counters
    }

    // ---- the passes
    const {host: hostName, port} = splitHostPort(host)
    const freeTarget: DriverFreeTarget = {host: hostName, port, timeoutMs: hooks.timeoutMs, appName: hooks.appName, signal: hooks.signal}
    const driverUris = new Map(states.map((s) => [s.mechanism, hostUri(target.uri, host, {mechanism: s.mechanism, txt: seeds.txt})]))
    const N = config.connections
    const label = (path: Path, mode: Mode, state: MechanismState) =>
      `${path === 'driverFree' ? 'driver-free' : 'driver'} · ${mode === 'sequential' ? 'one at a time' : `storms of ${config.parallel}`} · ${state.mechanism} · ${state.done[path][mode]}/${N}`

    const one = async (state: MechanismState, path: Path, mode: Mode): Promise<void> => {
      state.opened += 1
      try {
        if (path === 'driverFree') {
          state.recordFree(await driverFreeConnection(freeTarget, state.mechanism, scramCredentials), mode)
        } else {
          const sequential = mode === 'sequential'
          const firstOne = sequential && state.driverSeq.created === 0
          await driverConnection({uri: driverUris.get(state.mechanism)!, ...settings}, {
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

    /** Connections one after another (the block's order), then the counters. */
    const sequentialBlock = async (block: readonly MechanismState[], path: Path): Promise<void> => {
      for (const state of block) {
        if (hooks.signal.aborted) break
        await one(state, path, 'sequential')
        progress(label(path, 'sequential', state))
      }
      await account(block)
    }

    /** `size` connections of one mechanism at once, then the counters. */
    const storm = async (state: MechanismState, path: Path, size: number): Promise<void> => {
      const started = performance.now()
      await Promise.all(Array.from({length: size}, () => one(state, path, 'storm')))
      const wall = performance.now() - started
      if (path === 'driverFree') state.freeStorm.wallMs += wall
      else state.driverStormWallMs += wall
      progress(label(path, 'storm', state))
      await account([state])
    }

    const none = states.filter((s) => !s.scram)
    const scram = states.filter((s) => s.scram)
    const paths: Path[] = driverFreeAvailable ? ['driverFree', 'driver'] : ['driver']
    outer: for (const path of paths) {
      // One at a time: rounds; in each, the unauthenticated connections, then the SCRAM mechanisms
      // taking turns connection by connection (the order flips every turn) so that a change of
      // load on the machine hits them alike. Counter deltas stay exact: one counter per mechanism.
      for (const size of splitEvenly(N, SEQUENTIAL_ROUNDS)) {
        if (hooks.signal.aborted) break outer
        if (none.length > 0) await sequentialBlock(Array.from({length: size}, () => none[0]!), path)
        if (scram.length > 0) {
          const turns = Array.from({length: size}, (_, i) => (i % 2 === 0 ? scram : [...scram].reverse())).flat()
          await sequentialBlock(turns, path)
        }
      }
      for (const size of chunksOf(N, config.parallel)) {
        for (const state of states) {
          if (hooks.signal.aborted) break outer
          await storm(state, path, size)
        }
      }
    }
    interrupted = hooks.signal.aborted

    // ---- the unit: pooled pings through one warm client, same host
    if (!interrupted && config.pings > 0) {
      progress(`${config.pings} pooled pings`)
      try {
        pooledPing = await pooledPings(hostUri(target.uri, host, {txt: seeds.txt}), settings, config.pings, hooks.signal)
      } catch (error) {
        notes.push(`pooled pings failed, so no cost in pooled pings: ${toPoolToolError(error, {target: host, secrets: target.secrets}).message}`)
      }
      interrupted = hooks.signal.aborted
    }
  } finally {
    await channel.close().catch(() => undefined)
  }

  // ---- the result
  const pingSummary = pooledPing && pooledPing.totalCount > 0 ? summarize(pooledPing) : undefined
  const mechanisms = states.map((s) => toMechanismResult(s, config, pingSummary?.p50, driverFreeAvailable, countersUnavailable))
  const headline = headlineMechanism(states.map((s) => s.mechanism), uriMechanism)
  const headlineResult = mechanisms.find((m) => m.mechanism === headline)
  notes.push(...runNotes(mechanisms, parameters, countersUnavailable, driverFreeAvailable))
  if (!countersUnavailable && foreign > 0) notes.push(`${foreign} authentications on the host under mechanisms pooltool was not measuring at the time (other clients)`)
  return {
    target: {uri: target.redactedUri, simulated: target.simulated, host, serverVersion: discovery.serverVersion, maxWireVersion: discovery.maxWireVersion},
    config: {connections: config.connections, parallel: config.parallel, pings: config.pings, mechanismsRequested: config.mechanisms ? [...config.mechanisms] : 'default'},
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
    driverFree,
    serverCounters: countersUnavailable ? {available: false, reason: countersUnavailable} : {available: true},
    notes,
    interrupted,
  }
}

async function pooledPings(uri: string, settings: {appName: string; timeoutMs: number}, pings: number, signal: AbortSignal): Promise<Histogram> {
  const client = createClient({uri, ...settings, pool: {maxPoolSize: 1}, extra: {serverMonitoringMode: 'poll'}})
  const histogram = createHistogram()
  try {
    const admin = client.db('admin')
    await client.connect()
    for (let i = 0; i < PING_WARMUP && !signal.aborted; i++) await admin.command({ping: 1})
    for (let i = 0; i < pings && !signal.aborted; i++) {
      const started = performance.now()
      await admin.command({ping: 1})
      recordMs(histogram, performance.now() - started)
    }
  } finally {
    await client.close().catch(() => undefined)
  }
  return histogram
}

/** The mechanism the URI's own client would use. */
export function headlineMechanism(measured: readonly AuthMechanismName[], uriMechanism: string | undefined): AuthMechanismName {
  if (uriMechanism !== undefined && isScramMechanism(uriMechanism) && measured.includes(uriMechanism)) return uriMechanism
  if (measured.includes('SCRAM-SHA-256')) return 'SCRAM-SHA-256'
  if (measured.includes('SCRAM-SHA-1')) return 'SCRAM-SHA-1'
  return 'none'
}

function mergeErrors(...records: Array<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const record of records) for (const [k, n] of Object.entries(record)) out[k] = (out[k] ?? 0) + n
  return out
}

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
    setupUs: driverSetup,
    driverSetupUs: driverSetup,
    connectionReadyDurationUs: setupPercentiles(s.driverSeq.setupUs),
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
