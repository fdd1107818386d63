/**
 * The client metadata a server's own outbound connections send in their first hello, so
 * `$currentOp` (idleConnections) and the server log label them as a real cluster's do:
 * - NetworkInterfaceTL connections (task executor pools, the ShardRegistry, replication
 *   heartbeats, replica set monitors): `ConnectionPool` setup calls
 *   `initWireVersion("NetworkInterfaceTL", hook)` (src/mongo/executor/connection_pool_tl.cpp),
 *   which serializes `ClientMetadata::serialize(appName, <server version>)`
 *   (src/mongo/client/async_client.cpp `_buildHelloRequest`): the name goes in `driver.name`,
 *   the server's version in `driver.version`, and there is no `application`.
 * - DBClientConnection clients (the secondary's oplog fetcher): `ClientMetadata::serialize(
 *   "MongoDB Internal Client", <version>, applicationName)` (src/mongo/client/dbclient_connection.cpp),
 *   the oplog fetcher connecting as `_conn->connect(_source, "OplogFetcher")`
 *   (src/mongo/db/repl/oplog_fetcher.cpp).
 * Both also send `os` (ProcessInfo); the sim says Linux.
 */
import type {Document} from 'bson'

const OS = {type: 'Linux', name: 'Linux', architecture: 'x86_64', version: 'pooltool-sim'}

export const NETWORK_INTERFACE_TL = 'NetworkInterfaceTL'
export const INTERNAL_CLIENT = 'MongoDB Internal Client'
export const OPLOG_FETCHER_APP = 'OplogFetcher'

/** `client` of a NetworkInterfaceTL connection of a server at `version`. */
export function networkInterfaceMetadata(version: string): Document {
  return {driver: {name: NETWORK_INTERFACE_TL, version}, os: {...OS}}
}

/** `client` of a DBClientConnection opened by the server component `application`. */
export function internalClientMetadata(version: string, application: string): Document {
  return {application: {name: application}, driver: {name: INTERNAL_CLIENT, version}, os: {...OS}}
}
