/**
 * Which cluster a command talks to: `--uri`, else POOLTOOL_URI, else
 * MONGODB_URI, else the embedded simulated cluster started for this run (with
 * a one-line notice on stderr). The URI is validated here so a malformed one
 * fails before any connection attempt.
 *
 * Explicit means explicit: an empty or blank `--uri` (typically
 * `--uri "$MONGODB_URI"` with the variable unset) is a usage error, never a
 * silent run against the embedded cluster that would pass a CI gate. So is a
 * POOLTOOL_URI or MONGODB_URI that is set but empty or blank (a CI secret that
 * did not resolve): the first source that is set decides, and an empty one is
 * refused, never skipped. Only sources that are not set at all fall through.
 *
 * `--sim` (bench) asks for the embedded cluster explicitly: no variable is
 * read, and `--uri` beside it is refused. A command whose result must not come
 * from the simulator unless asked for (a `--fail-on` gate) passes
 * `refuseImplicitEmbedded`: with no source set and no `--sim`, that is a usage
 * error instead of the embedded cluster.
 */
import {accessSync, constants, statSync} from 'node:fs'

import {ConnectionString} from 'mongodb-connection-string-url'

import {CONNECTION_DEFAULTS} from './defaults.js'
import {PoolToolError, usageError} from './errors.js'
import {whyUnreadable} from './input.js'
import {driverChannel, hearMonitor} from './probes/driver-channel.js'
import type {OpenReader, OpenReaderOptions} from './probes/host-connection.js'
import {checkDriverAcceptsUri, CLOSE_GRACE_MS, closeWithin, createClient, createHostClient, type ClientSettings, type PoolOptions} from './mongo/client.js'
import {toPoolToolError} from './mongo/errors.js'
import {type ReadRecorder, ServerReader} from './probes/reader.js'
import {redactText, redactUri, secretsOfUri} from './redact.js'
import type {SimCluster, SimOptions} from './sim/index.js'

export type TargetSource = '--uri' | 'POOLTOOL_URI' | 'MONGODB_URI' | 'embedded'

/** What every client pooltool opens for a target shares (`--app-name`, `--timeout-ms`). */
export interface TargetConnection {
  /** Handshake appName; clients for one purpose add a suffix (`pooltool-admin`, `pooltool-conns`). */
  appName: string
  /** serverSelectionTimeoutMS and connectTimeoutMS, unless the URI sets them. */
  timeoutMs: number
}

export const DEFAULT_CONNECTION: TargetConnection = {...CONNECTION_DEFAULTS}

export interface Target {
  /** The URI with credentials, for the driver only. Never print it: use `redactedUri`. */
  readonly uri: string
  readonly redactedUri: string
  readonly source: TargetSource
  readonly simulated: boolean
  /** Hosts named in the URI ("host:port"). */
  readonly seedHosts: readonly string[]
  /** `directConnection=true`: the user addresses one node (a port-forward, a tunnel), not the deployment. */
  readonly directConnection: boolean
  /** Literal secrets to scrub from any text we print (password from the URI). */
  readonly secrets: readonly string[]
  /** The embedded cluster, when we started one. */
  readonly sim?: SimCluster
  readonly connection: TargetConnection
  /** Sees every read of every reader opened through this target (a snapshot capture sets it). */
  readonly recorder?: ReadRecorder
  /** Driver client settings for this target; `purpose` suffixes the appName (`admin` → `pooltool-admin`). */
  clientSettings(purpose?: string, pool?: PoolOptions): ClientSettings
  /** A reader over a direct connection to `host`, or over the whole deployment when `host` is omitted. */
  openReader(host?: string, purpose?: string, options?: OpenReaderOptions): OpenReader
  /** Stops the embedded cluster, if any. Safe to call twice. */
  close(): Promise<void>
}

export interface ResolveTargetInput {
  flagUri?: string
  env?: NodeJS.ProcessEnv
  /** `--sim`: the embedded cluster, asked for explicitly; the variables are not read and `--uri` is refused. */
  sim?: boolean
  /** The usage error to raise when the target would be the embedded cluster without `sim` (e.g. a --fail-on gate). */
  refuseImplicitEmbedded?: {message: string; hint: string}
  /** Shape of the embedded cluster when no URI is given (e.g. sharded for `locks`). */
  embedded?: Partial<SimOptions>
  /** Where the "using the embedded cluster" notice goes. */
  notice?: (line: string) => void
  connection?: TargetConnection
  recorder?: ReadRecorder
}

const URI_SHAPE_HINT = 'expected mongodb://[user:password@]host[:port][,host…]/[db][?options] or mongodb+srv://…'

/** URI options naming files the driver reads before it connects. */
const TLS_FILE_OPTIONS = ['tlsCAFile', 'tlsCertificateKeyFile', 'tlsCRLFile']

/** Parse and check a connection string; throws INVALID_URI with a hint (or USAGE for an unreadable TLS file). */
export function parseTargetUri(uri: string): ConnectionString {
  let cs: ConnectionString
  try {
    cs = new ConnectionString(uri)
  } catch (error) {
    throw new PoolToolError('INVALID_URI', `invalid connection string '${redactUri(uri)}': ${redactText((error as Error).message, secretsOfUri(uri))}`, URI_SHAPE_HINT)
  }
  for (const host of cs.hosts) checkHost(host, uri)
  checkTlsFiles(cs)
  try {
    checkDriverAcceptsUri(uri)
  } catch (error) {
    throw toPoolToolError(error, {target: redactUri(uri), secrets: secretsOfUri(uri)})
  }
  return cs
}

/** The driver parses each host with WHATWG URL (and fails with a MongoRuntimeError that reads like a bug): do it first. */
function checkHost(host: string, uri: string): void {
  let valid = true
  try {
    new URL(`mongodb://${host}`)
  } catch {
    valid = false
  }
  if (!valid) {
    throw new PoolToolError(
      'INVALID_URI',
      `invalid connection string '${redactUri(uri)}': host '${host}' is not a host name, IPv4 or [IPv6] address with a port 0-65535`,
      URI_SHAPE_HINT,
    )
  }
}

/** A missing or unreadable TLS file is a usage error the driver would only report at connect time. */
function checkTlsFiles(cs: ConnectionString): void {
  for (const [key, file] of cs.searchParams) {
    const option = TLS_FILE_OPTIONS.find((name) => name.toLowerCase() === key.toLowerCase())
    if (!option) continue
    const problem = unreadableFileProblem(file)
    if (problem) {
      throw usageError(`${option} '${file}' in the connection string ${problem}`, `fix the path in the URI (relative paths start at ${process.cwd()})`)
    }
  }
}

function unreadableFileProblem(file: string): string | undefined {
  try {
    if (!statSync(file).isFile()) return 'is not a file'
    accessSync(file, constants.R_OK)
    return undefined
  } catch (error) {
    return whyUnreadable(error)
  }
}

interface TargetParts {
  uri: string
  source: TargetSource
  connection: TargetConnection
  recorder?: ReadRecorder
  sim?: SimCluster
}

function targetFromUri({uri, source, connection, recorder, sim}: TargetParts): Target {
  const cs = parseTargetUri(uri)
  let closed = false
  const clientSettings = (purpose?: string, pool?: PoolOptions): ClientSettings => ({
    uri,
    appName: purpose ? `${connection.appName}-${purpose}` : connection.appName,
    timeoutMs: connection.timeoutMs,
    ...(pool ? {pool} : {}),
  })
  return {
    uri,
    redactedUri: redactUri(uri),
    source,
    simulated: sim !== undefined,
    seedHosts: cs.hosts,
    directConnection: [...cs.searchParams].some(([key, value]) => key.toLowerCase() === 'directconnection' && value.toLowerCase() === 'true'),
    secrets: secretsOfUri(uri),
    sim,
    connection,
    recorder,
    clientSettings,
    openReader(host, purpose, options = {}) {
      const settings: ClientSettings = {
        ...clientSettings(purpose, options.pool),
        ...(options.timeoutMs === undefined ? {} : {timeoutMs: options.timeoutMs}),
        ...(options.pollMonitoring ? {extra: {serverMonitoringMode: 'poll'}} : {}),
      }
      const client = host === undefined ? createClient(settings) : createHostClient(settings, host)
      const hearing = hearMonitor(client)
      return {
        reader: new ServerReader(driverChannel(client, host ?? cs.hosts.join(','), hearing), recorder),
        answered: hearing.answered,
        close: () => closeWithin(client, CLOSE_GRACE_MS),
      }
    },
    async close() {
      if (closed || !sim) return
      closed = true
      await sim.stop()
    },
  }
}

/** Where the target comes from: a URI and its source, or the embedded cluster. Pure; throws the usage errors. */
export type TargetChoice = {source: Exclude<TargetSource, 'embedded'>; uri: string} | {source: 'embedded'; ignored: Array<'POOLTOOL_URI' | 'MONGODB_URI'>}

export function chooseTarget(input: Pick<ResolveTargetInput, 'flagUri' | 'env' | 'sim' | 'refuseImplicitEmbedded'>): TargetChoice {
  const env = input.env ?? process.env
  if (input.sim && input.flagUri !== undefined) {
    throw usageError('--sim and --uri cannot be combined', 'pass --uri to measure that cluster, or --sim (without --uri) for the embedded simulated one')
  }
  if (input.flagUri !== undefined && input.flagUri.trim() === '') {
    throw usageError(
      '--uri is empty',
      'pass a connection string (an unset variable in --uri "$VAR" expands to nothing), or leave out --uri to use the embedded cluster',
    )
  }
  if (input.flagUri !== undefined) return {source: '--uri', uri: input.flagUri.trim()}
  const variables = ['POOLTOOL_URI', 'MONGODB_URI'] as const
  // --sim is the explicit choice: the variables around it (a developer's shell, a CI job) do not count.
  if (input.sim) return {source: 'embedded', ignored: variables.filter((name) => env[name] !== undefined && env[name]!.trim() !== '')}
  for (const name of variables) {
    const value = env[name]
    if (value === undefined) continue
    // Set but empty is a CI secret or template that did not resolve: a run on the embedded cluster would pass the gate.
    if (value.trim() === '') {
      throw usageError(
        `${name} is set but empty`,
        `set ${name} to a connection string, or unset it${input.refuseImplicitEmbedded ? ' and pass --sim' : ''} to use the embedded simulated cluster`,
      )
    }
    return {source: name, uri: value.trim()}
  }
  if (input.refuseImplicitEmbedded) throw usageError(input.refuseImplicitEmbedded.message, input.refuseImplicitEmbedded.hint)
  return {source: 'embedded', ignored: []}
}

export async function resolveTarget(input: ResolveTargetInput): Promise<Target> {
  const choice = chooseTarget(input)
  const connection = input.connection ?? DEFAULT_CONNECTION
  if (choice.source !== 'embedded') return targetFromUri({uri: choice.uri, source: choice.source, connection, recorder: input.recorder})
  // The embedded cluster's door loads only here, where one starts: a run against --uri never needs it.
  const {startSimCluster} = await import('./sim/index.js')
  const sim = await startSimCluster(input.embedded ?? {})
  const target = targetFromUri({uri: sim.info.uri, source: 'embedded', connection, recorder: input.recorder, sim})
  const ignored = choice.ignored.length > 0 ? ` (${choice.ignored.join(' and ')} ignored)` : ''
  const why = input.sim ? `--sim${ignored}` : 'no --uri, POOLTOOL_URI or MONGODB_URI'
  input.notice?.(
    `pooltool: ${why}: using the embedded simulated ${sim.info.topology} ` +
      `(${target.redactedUri})${input.sim ? '' : '; point at a real cluster with --uri mongodb://…'}`,
  )
  return target
}
