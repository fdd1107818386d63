/**
 * How pooltool opens driver clients: the user's URI untouched, our appName and
 * timeouts only where the URI does not set them, pool options from flags.
 *
 * The driver's own logger is always pointed at `driverLogSink`: off unless a
 * sink is set (`--debug`), whatever the MONGODB_LOG_* variables say, so its
 * lines never reach stdout (MONGODB_LOG_PATH=stdout would corrupt --json) and
 * always pass through the caller's redaction.
 */
import {inspect} from 'node:util'

import {ConnectionString} from 'mongodb-connection-string-url'

import {MongoClient, type MongoClientOptions} from './driver.js'

/** The driver's pool options, named as in the CMAP spec. */
export interface PoolOptions {
  maxPoolSize?: number
  minPoolSize?: number
  maxConnecting?: number
  maxIdleTimeMS?: number
  waitQueueTimeoutMS?: number
}

export interface ClientSettings {
  uri: string
  appName: string
  timeoutMs: number
  pool?: PoolOptions
  /** Extra driver options (e.g. directConnection for per-host probes). */
  extra?: MongoClientOptions
}

function uriSets(uri: string, option: string): boolean {
  try {
    const params = new ConnectionString(uri).searchParams
    for (const key of params.keys()) if (key.toLowerCase() === option.toLowerCase()) return true
  } catch {
    // The driver reports an unparsable URI itself, with a better message.
  }
  return false
}

/** Receives each driver log record as one line; set by `--debug`, which redacts it before printing. */
let driverLogSink: ((line: string) => void) | undefined

export function setDriverLogSink(sink: ((line: string) => void) | undefined): void {
  driverLogSink = sink
}

const DRIVER_LOG_COMPONENTS = ['default', 'command', 'topology', 'serverSelection', 'connection', 'client'] as const

function driverLogOptions(): MongoClientOptions {
  const sink = driverLogSink
  const severity = sink ? 'debug' : 'off'
  return {
    mongodbLogPath: {write: (log) => sink?.(inspect(log, {compact: true, breakLength: Infinity}))},
    mongodbLogComponentSeverities: Object.fromEntries(DRIVER_LOG_COMPONENTS.map((component) => [component, severity])),
  }
}

export function clientOptions(settings: ClientSettings): MongoClientOptions {
  const options: MongoClientOptions = {...driverLogOptions(), ...settings.extra}
  if (!uriSets(settings.uri, 'appName')) options.appName = settings.appName
  if (!uriSets(settings.uri, 'serverSelectionTimeoutMS')) options.serverSelectionTimeoutMS = settings.timeoutMs
  if (!uriSets(settings.uri, 'connectTimeoutMS')) options.connectTimeoutMS = settings.timeoutMs
  for (const [key, value] of Object.entries(settings.pool ?? {})) {
    if (value !== undefined) (options as Record<string, unknown>)[key] = value
  }
  return options
}

/**
 * Let the driver read the connection string as it will when connecting (all
 * its options, credentials against the mechanism) without connecting, so a
 * URI it refuses fails before any work, and before pooltool's own options
 * (maxPoolSize, appName …) could mask a bad value in it. Throws the driver's error.
 */
export function checkDriverAcceptsUri(uri: string): void {
  // Constructing a client opens nothing: connections start with connect() or the first operation.
  void new MongoClient(uri, driverLogOptions())
}

/** A client that is not connected yet (operations connect it, or call connect()). */
export function createClient(settings: ClientSettings): MongoClient {
  return new MongoClient(settings.uri, clientOptions(settings))
}

/** A client for one host only (directConnection), used to poll that host's own counters. */
export function createHostClient(settings: Omit<ClientSettings, 'pool'>, host: string): MongoClient {
  const cs = new ConnectionString(settings.uri)
  cs.hosts = [host]
  cs.searchParams.delete('replicaSet')
  cs.searchParams.set('directConnection', 'true')
  return new MongoClient(cs.toString(), clientOptions({...settings, pool: {maxPoolSize: 1}}))
}

/**
 * How long closing a client may take. The driver's close first ends the server
 * sessions it pooled (endSessions) and waits for its monitor, so against a stalled
 * router it waits for the stall to end; past this we stop waiting (the server expires
 * the sessions itself) and the command ends regardless (BaseCommand exits shortly after the report).
 */
export const CLOSE_GRACE_MS = 500

/** Close, waiting at most `ms`: a stalled server must not hold a command's end. */
export async function closeWithin(client: MongoClient, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
  })
  try {
    await Promise.race([client.close().catch(() => undefined), grace])
  } finally {
    clearTimeout(timer)
  }
}

export type {MongoClient}
