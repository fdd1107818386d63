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
 * All connections go to one host, named by the one discovery: the primary of a
 * replica set, the standalone, or the router the URI names (measured-host.ts).
 *
 * This file is the order of events; the parts live in measured-host.ts (which
 * host, read without credentials), probe.ts (pooltool's own authenticated
 * connection and its reads), mechanisms.ts (what to measure), counters.ts (the counter deltas), passes.ts (the connections),
 * pooled-pings.ts (the unit) and result.ts (the `--json` result).
 */
import {PoolToolError} from '../errors.js'
import type {Histogram} from '../metrics/histograms.js'
import {serverErrorCode, toPoolToolError} from '../mongo/errors.js'
import type {Target} from '../target.js'
import {isScramMechanism, type ScramCredentials} from '../wire/index.js'
import {CounterLedger} from './counters.js'
import {unlessAborted} from './deadline.js'
import {HostWatch} from './host-watch.js'
import {MechanismState} from './mechanism-state.js'
import {chooseMechanisms, probeMechanism} from './mechanisms.js'
import {runPasses} from './passes.js'
import {pooledPings} from './pooled-pings.js'
import {discoverMeasuredHost, type MeasuredHost} from './measured-host.js'
import {openProbeConnection, type ProbeConnection, readAuthParameters, type ServerAuthSettings} from './probe.js'
import {interruptedBeforeStart, toAuthResult} from './result.js'
import type {AuthConfig, AuthResult} from './types.js'
import {credentialsFromUri, hostUri, resolveSeedHosts, type SeedHosts, tlsRequested} from './uri.js'

/** appName and --timeout-ms come from `target.connection`. */
export interface AuthHooks {
  signal: AbortSignal
  /** A short line on what runs now (for the progress spinner). */
  onProgress?(text: string): void
}

export async function measureAuth(target: Target, config: AuthConfig, hooks: AuthHooks): Promise<AuthResult> {
  // The measured connections and the pooled pings carry the plain appName; pooltool's own reads are `<appName>-probe`.
  const settings = {appName: target.connection.appName, timeoutMs: target.connection.timeoutMs}
  const notes: string[] = []
  const progress = (text: string) => hooks.onProgress?.(text)

  // ---- what the URI says
  progress('discovering the target')
  const seeds = await seedHostsOf(target)
  const uriCredentials = credentialsFromUri(target.uri, seeds.txt)
  const uriMechanism = uriCredentials?.mechanism
  const nonScramUriMechanism = uriMechanism !== undefined && !isScramMechanism(uriMechanism) ? uriMechanism : undefined
  const scramCredentials: ScramCredentials | undefined = uriCredentials && !nonScramUriMechanism ? uriCredentials : undefined
  const driverFree = driverFreeAvailability(target.uri)
  if (!driverFree.available) notes.push(`driver-free split unavailable: ${driverFree.reason}`)

  // Requested mechanisms that cannot work without asking the server: fail before connecting.
  if (config.mechanisms) chooseMechanisms(config.mechanisms, {credentials: scramCredentials, nonScramUriMechanism})

  // ---- which host (the one discovery, without credentials), then pooltool's probe connection (authenticated once)
  let measured: MeasuredHost
  try {
    measured = await discoverMeasuredHost(target, {credentials: scramCredentials, txt: seeds.txt, signal: hooks.signal})
  } catch (error) {
    // Ctrl-C during discovery: nothing measured yet, an interrupted result rather than a failure.
    if (hooks.signal.aborted) return interruptedBeforeStart(target, config, driverFree, notes)
    throw error
  }
  notes.push(...measured.notes)
  const host = measured.host
  const probeMech = probeMechanism(scramCredentials, uriMechanism, measured)
  progress(`authenticating pooltool's probe connection to ${host}`)
  const opening = openProbeConnection(target, {
    // Driver-free keeps the driver's PBKDF2 cache cold; a non-SCRAM URI (X.509, PLAIN …) needs the driver to log in.
    driverFree: driverFree.available && !nonScramUriMechanism,
    host,
    driverUri: hostUri(target.uri, host, {mechanism: probeMech, txt: seeds.txt}),
    credentials: scramCredentials,
    mechanism: probeMech,
  }).catch((error: unknown) => {
    throw mechanismNotOffered(error, uriMechanism, measured.userMechanisms) ?? error
  })
  // Ctrl-C while a stalled host holds the probe's login: stop now (the connection is closed whenever it opens).
  const probe = await unlessAborted(opening, hooks.signal)
  if (!probe) {
    void opening.then((late) => late.close(), () => undefined)
    return interruptedBeforeStart(target, config, driverFree, [...notes, `stopped while pooltool's probe connection to ${host} was opening: nothing was measured`])
  }

  const states: MechanismState[] = []
  const counters = new CounterLedger(probe.reader, target.secrets, hooks.signal)
  let pooledPing: Histogram | undefined
  let interrupted = false
  let stoppedBy: PoolToolError | undefined
  let parameters: ServerAuthSettings = {}
  try {
    parameters = (await unlessAborted(readAuthParameters(probe.reader, target.secrets), hooks.signal)) ?? {unavailable: 'stopped before they were read'}
    const choice = chooseMechanisms(config.mechanisms, {
      credentials: scramCredentials,
      nonScramUriMechanism,
      userMechanisms: measured.userMechanisms,
      serverMechanisms: parameters.authenticationMechanisms,
    })
    notes.push(...choice.notes)
    for (const m of choice.mechanisms) states.push(new MechanismState(m))
    notes.push(...markCacheWarmedByProbe(probe, states))

    // ---- the passes, counters read before the first block and after every block
    await counters.takeBaseline()
    const outcome = await runPasses(states, {
      config,
      host,
      driverFree: driverFree.available,
      plainTcp: driverFree.available,
      driverUris: new Map(states.map((s) => [s.mechanism, hostUri(target.uri, host, {mechanism: s.mechanism, txt: seeds.txt})])),
      credentials: scramCredentials,
      settings,
      counters,
      signal: hooks.signal,
      progress,
    })
    interrupted = hooks.signal.aborted
    if (counters.uncredited) notes.push(counters.uncredited)
    stoppedBy = outcome.stoppedBy
    if (stoppedBy) notes.push(`stopped early: ${stoppedBy.message}`)

    // ---- the unit: pooled pings through one warm client, same host (pointless once the host or the credentials are gone)
    if (!interrupted && !stoppedBy && config.pings > 0) {
      progress(`${config.pings} pooled pings`)
      try {
        pooledPing = await pooledPings(hostUri(target.uri, host, {txt: seeds.txt}), settings, config.pings, hooks.signal)
      } catch (error) {
        const failure = toPoolToolError(error, {target: host, secrets: target.secrets})
        notes.push(`pooled pings failed, so no cost in pooled pings: ${failure.message}`)
        // Unreachable during the pings: if the host has gone (it stays silent for --timeout-ms, as in the passes) the run is
        // incomplete; a host that is there but refused (e.g. at its connection limit) leaves the note only.
        if (failure.code === 'UNREACHABLE' || isTimeout(error)) {
          const hostWatch = new HostWatch({host, ...settings, plainTcp: driverFree.available, signal: hooks.signal})
          hostWatch.noteFailure('network')
          stoppedBy = await hostWatch.confirm().then(
            () => undefined,
            (lost: PoolToolError) => new PoolToolError('UNREACHABLE', `during the pooled pings: ${lost.message}`, lost.hint, {cause: error}),
          )
        }
      }
      interrupted = hooks.signal.aborted
    }
  } finally {
    await probe.close().catch(() => undefined)
  }

  return toAuthResult({target, config, measured, states, pooledPing, parameters, counters, driverFree, uriMechanism, notes, interrupted, stoppedBy})
}

/**
 * The URI's authMechanism is one the server does not enable (it answers BadValue,
 * "mechanism … unknown or not enabled"): a usage error naming what the server offers,
 * as for --mechanisms, not a server error.
 */
function mechanismNotOffered(error: unknown, uriMechanism: string | undefined, offered: string[] | undefined): PoolToolError | undefined {
  const message = String((error as {message?: string})?.message ?? '')
  if (uriMechanism === undefined || serverErrorCode(error) !== BAD_VALUE_CODE || !/mechanism/i.test(message)) return undefined
  return new PoolToolError(
    'USAGE',
    `the server does not offer authMechanism=${uriMechanism} from the URI`,
    offered && offered.length > 0 ? `use one of ${offered.join(', ')} (or drop authMechanism to let the driver choose)` : 'drop authMechanism from the URI to let the driver choose a SCRAM mechanism',
    {cause: error},
  )
}

/** A ping cut by its --timeout-ms AbortSignal (the driver names it MongoOperationTimeoutError). */
function isTimeout(error: unknown): boolean {
  const name = (error as {name?: string} | null)?.name
  return name === 'MongoOperationTimeoutError' || name === 'TimeoutError'
}

/** The server's BadValue: here, an authentication mechanism it does not know or enable. */
const BAD_VALUE_CODE = 2

async function seedHostsOf(target: Target): Promise<SeedHosts> {
  try {
    return await resolveSeedHosts(target.uri)
  } catch (error) {
    throw new PoolToolError('UNREACHABLE', `cannot resolve the SRV record of ${target.redactedUri}: ${(error as Error).message}`, 'check the host name and DNS', {cause: error})
  }
}

function driverFreeAvailability(uri: string): AuthResult['driverFree'] {
  return tlsRequested(uri)
    ? {available: false, reason: 'the URI asks for TLS: the driver-free timing speaks plain TCP only, so TCP connect / handshake / auth are not split'}
    : {available: true}
}

/**
 * A driver probe connection (under TLS) already derived its mechanism's key in
 * this process, so no driver connection of the run pays PBKDF2 for that
 * mechanism: its first-connection figure would be a lie. Returns the note saying so, if any.
 */
function markCacheWarmedByProbe(probe: ProbeConnection, states: readonly MechanismState[]): string[] {
  if (probe.kind !== 'driver' || !probe.mechanism) return []
  const warmed = states.find((s) => s.mechanism === probe.mechanism)
  if (!warmed) return []
  warmed.driverFirstCold = false
  return [`pooltool's probe connection is a driver connection (TLS) and already derived the ${probe.mechanism} key: no driver connection of this run pays its PBKDF2`]
}
