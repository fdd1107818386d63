/**
 * A driver client as the read layer's CommandChannel (reader.ts):
 * commands on a database, and queries and aggregations drained to arrays.
 * Reads prefer the primary but accept a secondary, as monitoring tools do.
 */
import type {Document, MongoClient} from '../mongo/driver.js'
import type {ChannelReadOptions, CommandChannel} from './reader.js'

const READ_PREFERENCE = 'primaryPreferred' as const

const bounds = (options?: ChannelReadOptions) => ({
  readPreference: READ_PREFERENCE,
  ...(options?.typed ? {promoteValues: false, promoteLongs: false} : {}),
  ...(options?.signal ? {signal: options.signal} : {}),
  ...(options?.maxTimeMS === undefined ? {} : {maxTimeMS: options.maxTimeMS}),
})

/**
 * A server error decoded from a typed reply carries `code` as an Int32 object: every caller
 * (error classification, a recorder) expects the number the driver normally gives.
 */
function withNumericCode(error: unknown): never {
  const e = error as {code?: unknown} | undefined
  if (e && typeof e.code === 'object' && e.code !== null) e.code = Number(e.code)
  throw error
}

/**
 * What the client's monitor has heard from the host: whether it ever answered (a check or a connection's
 * handshake), and its last failed check. A read cut by its deadline before the host ever answered ends with
 * that failure (connect ECONNREFUSED, a connection the host closed) rather than the bare abort: a host where
 * nothing listens, or one that closes every connection, is not a host that is slow to answer.
 */
export interface MonitorHearing {
  /** Whether the host answered this client at least once. */
  answered(): boolean
  /** The error a failed read ends with: the last failed check where its deadline cut it before any answer. */
  readFailure(error: unknown, options?: ChannelReadOptions): unknown
}

/** Listens to the client's monitoring and pool events for the MonitorHearing above; one per client. */
export function hearMonitor(client: MongoClient): MonitorHearing {
  let answered = false
  let lastFailure: unknown
  const heard = (): void => {
    answered = true
  }
  client.once('serverHeartbeatSucceeded', heard)
  client.once('connectionReady', heard)
  client.on('serverHeartbeatFailed', (event) => {
    lastFailure = event.failure
  })
  return {
    answered: () => answered,
    readFailure: (error, options) => (options?.signal?.aborted && !answered && lastFailure !== undefined ? lastFailure : error),
  }
}

/** `hearing`: the client's, when the caller also asks it whether the host answered (src/target.ts). */
export function driverChannel(client: MongoClient, host: string, hearing: MonitorHearing = hearMonitor(client)): CommandChannel {
  const failed = (error: unknown, options?: ChannelReadOptions): never => withNumericCode(hearing.readFailure(error, options))
  return {
    host,
    command: (db, command, options) => client.db(db).command(command, bounds(options)).catch((error: unknown) => failed(error, options)),
    find: (db, collection, filter, options) =>
      client.db(db).collection(collection).find(filter, bounds(options)).toArray().catch((error: unknown) => failed(error, options)),
    aggregate: (db, pipeline, options) => client.db(db).aggregate<Document>(pipeline, bounds(options)).toArray().catch((error: unknown) => failed(error, options)),
  }
}
