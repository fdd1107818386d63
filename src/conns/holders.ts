/**
 * Who holds a host's connections: `$currentOp` with idle connections and every
 * user's operations (facts §3.4), projected to the three fields we group by
 * (appName, client host, driver name) and counted here. On a mongos
 * `localOps: true` reports the router's own client connections instead of the
 * shards' operations. Documents without a client (internal threads) are skipped.
 */
import type {Document} from '../mongo/driver.js'
import type {Holder} from './types.js'

export function holdersPipeline(isMongos: boolean): Document[] {
  const currentOp: Document = {idleConnections: true, allUsers: true, idleSessions: false}
  if (isMongos) currentOp.localOps = true
  return [
    {$currentOp: currentOp},
    {$project: {appName: 1, client: 1, client_s: 1, 'clientMetadata.driver.name': 1, 'clientMetadata.application.name': 1}},
  ]
}

/** "10.0.0.5:53412" → "10.0.0.5"; "[::1]:5000" → "::1". */
export function clientHost(client: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(client)
  if (v6) return v6[1]!
  const colon = client.lastIndexOf(':')
  if (colon > 0 && client.indexOf(':') === colon && /^\d+$/.test(client.slice(colon + 1))) return client.slice(0, colon)
  return client
}

/** Group $currentOp documents; biggest holders first. `ownAppName` marks pooltool's own polling connections. */
export function groupHolders(docs: readonly Document[], ownAppName?: string): Holder[] {
  const groups = new Map<string, Holder>()
  for (const doc of docs) {
    const client = typeof doc.client === 'string' ? doc.client : typeof doc.client_s === 'string' ? doc.client_s : undefined
    if (client === undefined) continue
    const metadata = doc.clientMetadata as Document | undefined
    const appName =
      typeof doc.appName === 'string' && doc.appName !== ''
        ? doc.appName
        : typeof metadata?.application?.name === 'string'
          ? (metadata.application.name as string)
          : '(none)'
    const driver = typeof metadata?.driver?.name === 'string' ? (metadata.driver.name as string) : '(unknown)'
    const host = clientHost(client)
    const key = `${appName}\u0000${host}\u0000${driver}`
    const entry = groups.get(key)
    if (entry) entry.count += 1
    else groups.set(key, {appName, client: host, driver, count: 1, ...(ownAppName !== undefined && appName === ownAppName ? {own: true} : {})})
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.appName.localeCompare(b.appName) || a.client.localeCompare(b.client))
}
