/**
 * Who holds a host's connections: `$currentOp` with idle connections and every
 * user's operations (facts §3.4), grouped on the server by appName, client
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
import type {Holder} from './types.js'

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

/** The holders' groups (`holdersCurrentOp`'s answer) by client host; biggest holders first. `ownAppName` marks pooltool's own polling connections. */
export function holdersFromGroups(groups: readonly Document[], ownAppName?: string): Holder[] {
  const holders = new Map<string, Holder>()
  for (const group of groups) {
    const id = group._id as Document | undefined
    const client = nonEmpty(id?.client)
    if (client === undefined) continue
    const appName = nonEmpty(id?.appName) ?? nonEmpty(id?.application) ?? '(none)'
    const driver = nonEmpty(id?.driver) ?? '(unknown)'
    const host = clientHost(client)
    const count = toNumber(group.count) ?? 0
    const key = `${appName}\u0000${host}\u0000${driver}`
    const entry = holders.get(key)
    if (entry) entry.count += count
    else holders.set(key, {appName, client: host, driver, count, ...(ownAppName !== undefined && appName === ownAppName ? {own: true} : {})})
  }
  return [...holders.values()].sort((a, b) => b.count - a.count || a.appName.localeCompare(b.appName) || a.client.localeCompare(b.client))
}
