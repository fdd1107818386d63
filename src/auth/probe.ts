/**
 * pooltool's own authenticated connection in an auth run, and what it reads
 * through the read layer (src/probes/reader.ts): getParameter (iteration
 * counts, authenticationMechanisms) and the serverStatus `security` section
 * (the auth counters). It authenticates once, before the first counter
 * snapshot, so its own login is never in a delta.
 *
 * It is a driver-free wire connection when plain TCP is possible, so the
 * driver's PBKDF2 cache stays cold for the measured driver connections; under
 * TLS (or a non-SCRAM URI) it is a driver client. Either way reads go through a
 * ServerReader, which tells the target's recorder.
 *
 * Which host it connects to, and the unauthenticated hello before it, are in
 * measured-host.ts.
 */
import {closeWithin, CLOSE_GRACE_MS, createClient} from '../mongo/client.js'
import type {Document} from '../mongo/driver.js'
import {driverChannel} from '../probes/driver-channel.js'
import {toPoolToolError} from '../mongo/errors.js'
import {ServerReader} from '../probes/reader.js'
import {type AuthMechanismCounters, parseAuthCounters, toNumber} from '../probes/server-status.js'
import {redactText} from '../redact.js'
import type {Target} from '../target.js'
import {wireChannel} from '../probes/wire-channel.js'
import {openAuthenticated, type ScramCredentials, type ScramMechanism, splitHostPort} from '../wire/index.js'
import {PROBE_PURPOSE} from './measured-host.js'

/** pooltool's one authenticated connection to the measured host, as a reader. */
export interface ProbeConnection {
  readonly kind: 'driver-free' | 'driver'
  /** The SCRAM mechanism it authenticated with (undefined: none, or chosen by the driver from a non-SCRAM URI). */
  readonly mechanism?: ScramMechanism
  readonly reader: ServerReader
  /** Closes the connection, waiting at most CLOSE_GRACE_MS for a stalled server. */
  close(): Promise<void>
}

export async function openProbeConnection(
  target: Target,
  options: {
    driverFree: boolean
    host: string
    /** One-host URI with the credentials, for the driver variant (authMechanism already set when `mechanism` is). */
    driverUri: string
    credentials?: ScramCredentials
    mechanism?: ScramMechanism
  },
): Promise<ProbeConnection> {
  const settings = target.clientSettings(PROBE_PURPOSE)
  if (options.driverFree) {
    const {host, port} = splitHostPort(options.host)
    const {conn} = await openAuthenticated({
      host,
      port,
      timeoutMs: settings.timeoutMs,
      appName: settings.appName,
      credentials: options.credentials,
      mechanism: options.credentials ? options.mechanism : undefined,
    })
    return {
      kind: 'driver-free',
      mechanism: options.mechanism,
      reader: new ServerReader(wireChannel(conn, options.host), target.recorder),
      close: async () => conn.close(),
    }
  }
  const client = createClient({...settings, uri: options.driverUri, pool: {maxPoolSize: 1}, extra: {serverMonitoringMode: 'poll'}})
  try {
    await client.connect()
  } catch (error) {
    await closeWithin(client, CLOSE_GRACE_MS)
    throw error
  }
  return {
    kind: 'driver',
    mechanism: options.mechanism,
    reader: new ServerReader(driverChannel(client, options.host), target.recorder),
    // Bounded: a driver client on a stalled host would wait for the stall to end.
    close: () => closeWithin(client, CLOSE_GRACE_MS),
  }
}

export interface ServerAuthSettings {
  scramIterationCount?: number
  scramSHA256IterationCount?: number
  authenticationMechanisms?: string[]
  unavailable?: string
}

/** getParameter for the iteration counts and mechanisms; a refusal becomes `unavailable` (the reason), never a failure. */
export async function readAuthParameters(reader: ServerReader, secrets: readonly string[]): Promise<ServerAuthSettings> {
  try {
    const reply = (await reader.getParameter(['scramIterationCount', 'scramSHA256IterationCount', 'authenticationMechanisms'])).value
    const out: ServerAuthSettings = {}
    const sha1 = toNumber(reply.scramIterationCount)
    const sha256 = toNumber(reply.scramSHA256IterationCount)
    if (sha1 !== undefined) out.scramIterationCount = sha1
    if (sha256 !== undefined) out.scramSHA256IterationCount = sha256
    if (Array.isArray(reply.authenticationMechanisms)) out.authenticationMechanisms = reply.authenticationMechanisms.map(String)
    return out
  } catch (error) {
    return {unavailable: `getParameter: ${reason(error, secrets)}`}
  }
}

export type CounterSnapshot = Record<string, AuthMechanismCounters>

/** serverStatus.security.authentication.mechanisms now, or the reason it cannot be read. */
export async function readAuthCounters(reader: ServerReader, secrets: readonly string[]): Promise<{counters?: CounterSnapshot; unavailable?: string}> {
  let status: Document
  try {
    status = (await reader.serverStatus(['security'])).value
  } catch (error) {
    return {unavailable: `serverStatus: ${reason(error, secrets)}`}
  }
  const counters = parseAuthCounters(status)
  if (!counters) return {unavailable: 'serverStatus has no security.authentication.mechanisms counters (they exist on MongoDB 4.4+)'}
  return {counters}
}

function reason(error: unknown, secrets: readonly string[]): string {
  const failure = toPoolToolError(error, {target: 'the target', secrets})
  if (failure.code !== 'UNAUTHORIZED') return failure.message
  const raw = redactText(String((error as {message?: string})?.message ?? failure.message), secrets).split('\n')[0]!.trim()
  return `${raw} (the user needs the clusterMonitor role)`
}
