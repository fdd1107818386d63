/**
 * Whether a command may run on this member, as mongod's command dispatch decides it before
 * running anything (`service_entry_point_common.cpp`, 4.4 – 7.0: `commandCanRunHere` and the
 * checks after it):
 * - a writable primary, a standalone and a router run everything; so does any member for the
 *   `local` database (`canAcceptWritesForDatabase` is always true for `local`, so
 *   `rs.printReplicationInfo()` reads a secondary's oplog without a read preference);
 * - otherwise a command's `secondaryAllowed()` decides: `kAlways` runs (hello, serverStatus,
 *   getMore, …), `kOptIn` runs only if the request's read preference can run on a secondary,
 *   else NotPrimaryNoSecondaryOk (13435); `kNever` (writes, DDL) is NotWritablePrimary (10107).
 * The messages say "primary" to clients that support hello (sent `hello`, or `isMaster` with
 * `helloOk: true`; `Client::supportsHello`) and "master" to the others.
 */
import type {Document} from 'bson'
import {CommandError} from '../errors.js'
import type {SimProcess} from '../process.js'
import type {ClientConnection} from '../server/connection.js'

/** `Command::AllowedOnSecondary` (src/mongo/db/commands.h). */
export type AllowedOnSecondary = 'always' | 'optIn' | 'never'

/** OP_QUERY's SecondaryOk flag bit (`QueryOption_SecondaryOk`, bit 2). */
export const OP_QUERY_SECONDARY_OK = 1 << 2

/** Connections whose client said it supports hello. */
const supportsHello = new WeakSet<ClientConnection>()

/**
 * Records what a handshake says of the client: `hello` itself, or `isMaster` with `helloOk`
 * (hello.cpp: "Clients that specify 'helloOk' do not rely on "not master" error message parsing").
 */
export function noteHandshake(conn: ClientConnection, name: string, cmd: Document): void {
  if (name === 'hello' || cmd.helloOk === true) supportsHello.add(conn)
  else if (cmd.helloOk === false) supportsHello.delete(conn)
}

/**
 * The read preference mode a request carries: OP_MSG's `$readPreference` (absent: primary,
 * `ReadPreferenceSetting::fromContainingBSON`); OP_QUERY's `$readPreference` in a wrapped query,
 * else the SecondaryOk bit upconverted to `secondaryPreferred` (`rpc::upconvertRequest`).
 */
export function readPreferenceMode(readPreference: unknown, opQueryFlags?: number): string {
  if (readPreference !== null && typeof readPreference === 'object' && typeof (readPreference as Document).mode === 'string') {
    return (readPreference as Document).mode as string
  }
  if (opQueryFlags !== undefined && (opQueryFlags & OP_QUERY_SECONDARY_OK) !== 0) return 'secondaryPreferred'
  return 'primary'
}

/** Throws what mongod answers when the command cannot run on this member. */
export function checkCanRunHere(
  proc: SimProcess,
  conn: ClientConnection,
  db: string,
  allowed: AllowedOnSecondary,
  readPreferenceMode: string,
): void {
  if (proc.isWritablePrimary || db === 'local') return
  if (allowed === 'always') return
  const hello = supportsHello.has(conn)
  if (allowed === 'optIn') {
    if (readPreferenceMode !== 'primary') return // ReadPreferenceSetting::canRunOnSecondary
    throw CommandError.of('NotPrimaryNoSecondaryOk', hello ? 'not primary and secondaryOk=false' : 'not master and slaveOk=false')
  }
  throw CommandError.of('NotWritablePrimary', hello ? 'not primary' : 'not master')
}
