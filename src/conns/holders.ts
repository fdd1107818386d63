/**
 * Who holds a host's connections: `$currentOp` with idle connections and every
 * user's operations (`$currentOp` with idleConnections and allUsers), grouped on the server by appName, client
 * address and driver name, then folded here by client host (the port is
 * dropped: one application's pool is many ports). On a mongos `localOps: true`
 * reports the router's own client connections instead of the shards'
 * operations. Documents without a client (internal threads) are skipped.
 *
 * The grouping stays within what every supported server (4.4+) and the
 * embedded cluster evaluate: `$match`, `$group` with `$ifNull` and `$sum`.
 */
import type {Document} from '../mongo/driver.js'
import type {CurrentOpOptions} from '../probes/reader.js'
import {toNumber} from '../probes/server-status.js'
import type {Holder, HolderKind} from './types.js'

/**
 * A driver monitor's parked check: an awaitable `hello` / `isMaster` carries `topologyVersion` and
 * `maxAwaitTimeMS` (SDAM spec, streaming protocol; the node driver's monitor.ts sends both on its
 * monitoring connection, exhaust or not). The server shows it as an active operation while parked.
 */
const AWAITABLE_HELLO = {
  $and: [
    {$eq: ['$active', true]},
    {$ne: [{$ifNull: ['$command.topologyVersion', null]}, null]},
    {$ne: [{$ifNull: ['$command.maxAwaitTimeMS', null]}, null]},
  ],
}

/** The `$currentOp` read of the holders: one document per (appName, application name, client address, driver). */
export function holdersCurrentOp(isMongos: boolean): CurrentOpOptions {
  return {
    idleConnections: true,
    allUsers: true,
    idleSessions: false,
    ...(isMongos ? {localOps: true} : {}),
    pipeline: [
      {$match: {$or: [{client: {$exists: true}}, {client_s: {$exists: true}}]}},
      {
        $group: {
          _id: {
            appName: '$appName',
            application: '$clientMetadata.application.name',
            client: {$ifNull: ['$client', '$client_s']},
            driver: '$clientMetadata.driver.name',
          },
          count: {$sum: 1},
          // Parked awaitable hellos (driver monitors) and idle connections: the classification's two facts.
          monitors: {$sum: {$cond: [AWAITABLE_HELLO, 1, 0]}},
          idle: {$sum: {$cond: [{$eq: ['$active', true]}, 0, 1]}},
        },
      },
    ],
  }
}

/** "10.0.0.5:53412" → "10.0.0.5"; "[::1]:5000" → "::1". */
export function clientHost(client: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(client)
  if (v6) return v6[1]!
  const colon = client.lastIndexOf(':')
  if (colon > 0 && client.indexOf(':') === colon && /^\d+$/.test(client.slice(colon + 1))) return client.slice(0, colon)
  return client
}

const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)

/**
 * The server's own clients say so in their handshake: `NetworkInterfaceTL` (task executor, sharding
 * and replication pools, heartbeats) or `MongoDB Internal Client` (DBClient connections: the oplog
 * fetcher, appName `OplogFetcher`).
 */
export const INTERNAL_DRIVERS: ReadonlySet<string> = new Set(['NetworkInterfaceTL', 'MongoDB Internal Client'])

export function holderKind(driver: string, own: boolean): HolderKind {
  if (own) return 'pooltool'
  return INTERNAL_DRIVERS.has(driver) ? 'internal' : 'application'
}

/**
 * Splits an application holder's connections on one host into monitoring and pool connections.
 * `monitors`: parked awaitable hellos, one per MongoClient monitoring this host. A monitor that
 * streams (it parks awaitable hellos: the server is 4.4+) has a second, dedicated connection for
 * round-trip-time pings (SDAM spec "Measuring RTT"; node driver `RTTPinger`): a plain `hello`
 * every heartbeat, idle in between and, like the monitor, never authenticated nor pooled. It
 * cannot be told from an idle pooled connection by what `$currentOp` shows, so it is counted,
 * one per streaming monitor, out of the holder's idle connections. What is left is the pool.
 */
export function splitHolder(count: number, monitors: number, idle: number): {monitors: number; rttPingers: number; pool: number} {
  const rttPingers = Math.max(0, Math.min(monitors, idle))
  return {monitors, rttPingers, pool: Math.max(0, count - monitors - rttPingers)}
}

/** The holders' groups (`holdersCurrentOp`'s answer) by client host; biggest holders first. `ownAppName` marks pooltool's own polling connections. */
export function holdersFromGroups(groups: readonly Document[], ownAppName?: string): Holder[] {
  const holders = new Map<string, Holder>()
  const partsOf = new Map<string, {monitors: number; idle: number; known: boolean}>()
  for (const group of groups) {
    const id = group._id as Document | undefined
    const client = nonEmpty(id?.client)
    if (client === undefined) continue
    const appName = nonEmpty(id?.appName) ?? nonEmpty(id?.application) ?? '(none)'
    const driver = nonEmpty(id?.driver) ?? '(unknown)'
    const host = clientHost(client)
    const count = toNumber(group.count) ?? 0
    // Absent in a group read without them (a replayed snapshot of an older pooltool): unknown, not 0.
    const monitors = toNumber(group.monitors)
    const idle = toNumber(group.idle)
    const key = `${appName}\u0000${host}\u0000${driver}`
    const entry = holders.get(key)
    const parts = entry ? (partsOf.get(key) ?? {monitors: 0, idle: 0, known: false}) : {monitors: 0, idle: 0, known: monitors !== undefined && idle !== undefined}
    if (monitors === undefined || idle === undefined) parts.known = false
    else {
      parts.monitors += monitors
      parts.idle += idle
    }
    partsOf.set(key, parts)
    if (entry) entry.count += count
    else {
      const own = ownAppName !== undefined && appName === ownAppName
      holders.set(key, {appName, client: host, driver, count, ...(own ? {own: true} : {}), kind: holderKind(driver, own)})
    }
  }
  for (const [key, holder] of holders) {
    const parts = partsOf.get(key)!
    if (parts.known) Object.assign(holder, splitHolder(holder.count, parts.monitors, parts.idle))
  }
  return [...holders.values()].sort((a, b) => b.count - a.count || a.appName.localeCompare(b.appName) || a.client.localeCompare(b.client))
}
