/**
 * A driver client as the read layer's CommandChannel (src/probes/reader.ts):
 * commands on a database, and queries and aggregations drained to arrays.
 * Reads prefer the primary but accept a secondary, as monitoring tools do.
 */
import type {CommandChannel, ReadOptions} from '../probes/reader.js'
import type {Document, MongoClient} from './driver.js'

const READ_PREFERENCE = 'primaryPreferred' as const

const bounds = (options?: ReadOptions) => ({
  readPreference: READ_PREFERENCE,
  ...(options?.signal ? {signal: options.signal} : {}),
  ...(options?.maxTimeMS === undefined ? {} : {maxTimeMS: options.maxTimeMS}),
})

export function driverChannel(client: MongoClient, host: string): CommandChannel {
  return {
    host,
    command: (db, command, options) => client.db(db).command(command, bounds(options)),
    find: (db, collection, filter, options) => client.db(db).collection(collection).find(filter, bounds(options)).toArray(),
    aggregate: (db, pipeline, options) => client.db(db).aggregate<Document>(pipeline, bounds(options)).toArray(),
  }
}
