/**
 * What `pooltool auth` asks the server besides the measured connections:
 * - discovery, on an unauthenticated driver connection (so it neither warms
 *   the driver's PBKDF2 cache nor moves the auth counters): the host to measure
 *   (a replica set's primary), wire version, server version, and the user's
 *   mechanisms (hello saslSupportedMechs);
 * - an admin channel, authenticated once before the first counter snapshot:
 *   getParameter (iteration counts, authenticationMechanisms) and serverStatus
 *   auth counters. It is a driver-free connection when plain TCP is possible,
 *   so the driver's cache stays cold; under TLS a driver client.
 */
import {createClient, type MongoClient} from '../mongo/client.js'
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import {redactText} from '../redact.js'
import {type AuthMechanismCounters, parseAuthCounters, toNumber} from '../probes/server-status.js'
import {openAuthenticated, type ScramCredentials, splitHostPort, type WireConnection} from '../wire/client.js'
import type {ScramMechanism} from '../wire/scram.js'

export interface Discovery {
  host: string
  maxWireVersion: number | null
  serverVersion: string
  /** hello saslSupportedMechs for the URI's user; undefined when the server did not say (unknown user, old server, no credentials). */
  userMechanisms?: string[]
}

export interface ProbeSettings {
  appName: string
  timeoutMs: number
}

/** Hello (+ saslSupportedMechs) and buildInfo on `seedHost` without credentials (`uriWithoutCredentials` targets that host). */
export async function discover(
  uriWithoutCredentials: string,
  seedHost: string,
  credentials: ScramCredentials | undefined,
  settings: ProbeSettings,
): Promise<Discovery> {
  const client = createClient({uri: uriWithoutCredentials, appName: `${settings.appName}-probe`, timeoutMs: settings.timeoutMs, pool: {maxPoolSize: 1}, extra: {serverMonitoringMode: 'poll'}})
  try {
    const admin = client.db('admin')
    const hello = await admin.command({
      isMaster: 1,
      ...(credentials ? {saslSupportedMechs: `${credentials.source}.${credentials.username}`} : {}),
    })
    let serverVersion = 'unknown'
    try {
      serverVersion = String((await admin.command({buildInfo: 1})).version ?? 'unknown')
    } catch {
      // Some deployments refuse buildInfo before auth: the version is only informative.
    }
    const host = typeof hello.primary === 'string' ? hello.primary : typeof hello.me === 'string' ? hello.me : seedHost
    const mechs = Array.isArray(hello.saslSupportedMechs) ? hello.saslSupportedMechs.map(String) : undefined
    return {host, maxWireVersion: toNumber(hello.maxWireVersion) ?? null, serverVersion, userMechanisms: mechs}
  } finally {
    await client.close().catch(() => undefined)
  }
}

/** A few admin commands on one authenticated connection. */
export interface AdminChannel {
  readonly kind: 'driver-free' | 'driver'
  /** The SCRAM mechanism it authenticated with (undefined: none, or chosen by the driver from a non-SCRAM URI). */
  readonly mechanism?: ScramMechanism
  command(doc: Document): Promise<Document>
  close(): Promise<void>
}

export async function openAdminChannel(options: {
  driverFree: boolean
  host: string
  /** One-host URI with the credentials, for the driver variant (authMechanism already set when `mechanism` is). */
  driverUri: string
  credentials?: ScramCredentials
  mechanism?: ScramMechanism
  settings: ProbeSettings
}): Promise<AdminChannel> {
  const appName = `${options.settings.appName}-probe`
  if (options.driverFree) {
    const {host, port} = splitHostPort(options.host)
    const {conn} = await openAuthenticated({
      host,
      port,
      timeoutMs: options.settings.timeoutMs,
      appName,
      credentials: options.credentials,
      mechanism: options.credentials ? options.mechanism : undefined,
    })
    return wireChannel(conn, options.mechanism)
  }
  const client = createClient({uri: options.driverUri, appName, timeoutMs: options.settings.timeoutMs, pool: {maxPoolSize: 1}, extra: {serverMonitoringMode: 'poll'}})
  try {
    await client.connect()
  } catch (error) {
    await client.close().catch(() => undefined)
    throw error
  }
  return driverChannel(client, options.mechanism)
}

function wireChannel(conn: WireConnection, mechanism?: ScramMechanism): AdminChannel {
  return {
    kind: 'driver-free',
    mechanism,
    command: (doc) => conn.command('admin', doc),
    close: async () => conn.close(),
  }
}

function driverChannel(client: MongoClient, mechanism?: ScramMechanism): AdminChannel {
  return {
    kind: 'driver',
    mechanism,
    command: (doc) => client.db('admin').command(doc),
    close: () => client.close(),
  }
}

export interface ServerAuthSettings {
  scramIterationCount?: number
  scramSHA256IterationCount?: number
  authenticationMechanisms?: string[]
  unavailable?: string
}

/** getParameter for the iteration counts and mechanisms; a refusal becomes `unavailable` (the reason), never a failure. */
export async function readAuthParameters(channel: AdminChannel, secrets: readonly string[]): Promise<ServerAuthSettings> {
  try {
    const reply = await channel.command({getParameter: 1, scramIterationCount: 1, scramSHA256IterationCount: 1, authenticationMechanisms: 1})
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
export async function readAuthCounters(channel: AdminChannel, secrets: readonly string[]): Promise<{counters?: CounterSnapshot; unavailable?: string}> {
  let status: Document
  try {
    status = await channel.command({serverStatus: 1, repl: 0, metrics: 0, locks: 0, wiredTiger: 0, tcmalloc: 0, transactions: 0, network: 0, opcounters: 0})
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
