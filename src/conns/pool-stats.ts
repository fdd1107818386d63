/**
 * `connPoolStats` (mongodb-server-facts.md §3.1): a mongos's outgoing pools to
 * the shards and the config server. Totals come from the top-level `total*`
 * fields; per-shard figures sum the top-level `hosts` map (every pool's
 * connections to that host), or the per-pool host entries when `hosts` is
 * missing, and attribute each host to its shard by the discovered topology,
 * else by the `replicaSets` section.
 */
import type {Document} from '../mongo/driver.js'
import {toNumber} from '../probes/server-status.js'
import type {ClusterHost, ConnPoolStatsSummary, PoolCounts} from './types.js'

const num = (value: unknown): number => toNumber(value) ?? 0

function countsOf(doc: Document, prefix: '' | 'total' | 'pool'): PoolCounts | undefined {
  const key = (name: string) => (prefix === '' ? name : `${prefix}${name[0]!.toUpperCase()}${name.slice(1)}`)
  const inUse = toNumber(doc[key('inUse')])
  const available = toNumber(doc[key('available')])
  const created = toNumber(doc[key('created')])
  if (inUse === undefined && available === undefined && created === undefined) return undefined
  const counts: PoolCounts = {inUse: inUse ?? 0, available: available ?? 0, created: created ?? 0, refreshing: num(doc[key('refreshing')])}
  const leased = toNumber(doc[key('leased')])
  if (leased !== undefined) counts.leased = leased
  const refreshed = toNumber(doc[key('refreshed')])
  if (refreshed !== undefined) counts.refreshed = refreshed
  return counts
}

function addCounts(into: PoolCounts, add: PoolCounts): void {
  into.inUse += add.inUse
  into.available += add.available
  into.created += add.created
  into.refreshing += add.refreshing
  if (add.leased !== undefined) into.leased = (into.leased ?? 0) + add.leased
  if (add.refreshed !== undefined) into.refreshed = (into.refreshed ?? 0) + add.refreshed
}

const isHostKey = (key: string) => /:\d+$/.test(key)

/** host:port → its counts over every pool. */
function perHost(doc: Document): Map<string, PoolCounts> {
  const out = new Map<string, PoolCounts>()
  const hosts = doc.hosts as Document | undefined
  if (hosts && typeof hosts === 'object' && Object.keys(hosts).length > 0) {
    for (const [host, stats] of Object.entries(hosts)) {
      const counts = stats && typeof stats === 'object' ? countsOf(stats as Document, '') : undefined
      if (counts) out.set(host, counts)
    }
    return out
  }
  const pools = doc.pools as Document | undefined
  for (const pool of Object.values(pools ?? {})) {
    if (!pool || typeof pool !== 'object') continue
    for (const [key, stats] of Object.entries(pool as Document)) {
      if (!isHostKey(key) || !stats || typeof stats !== 'object') continue
      const counts = countsOf(stats as Document, '')
      if (!counts) continue
      const sum = out.get(key) ?? {inUse: 0, available: 0, created: 0, refreshing: 0}
      addCounts(sum, counts)
      out.set(key, sum)
    }
  }
  return out
}

/** replicaSets: {rsName: {hosts: [{addr}]}} → addr → rsName. */
function setOfHost(doc: Document): Map<string, string> {
  const out = new Map<string, string>()
  const sets = doc.replicaSets as Document | undefined
  for (const [setName, info] of Object.entries(sets ?? {})) {
    const members = (info as Document | undefined)?.hosts
    if (!Array.isArray(members)) continue
    for (const m of members) if (typeof m?.addr === 'string') out.set(m.addr, setName)
  }
  return out
}

export function parseConnPoolStats(doc: Document, topology: readonly ClusterHost[] = []): ConnPoolStatsSummary | undefined {
  if (!doc || typeof doc !== 'object') return undefined
  const hosts = perHost(doc)
  let totals = countsOf(doc, 'total')
  if (!totals) {
    if (hosts.size === 0) return undefined
    totals = {inUse: 0, available: 0, created: 0, refreshing: 0}
    for (const counts of hosts.values()) addCounts(totals, counts)
  }
  const shardOfHost = new Map<string, string>()
  const shardOfSet = new Map<string, string>()
  for (const h of topology) {
    const name = h.role === 'config' ? 'config' : h.shard
    if (name === undefined) continue
    shardOfHost.set(h.host, name)
    if (h.setName) shardOfSet.set(h.setName, name)
  }
  const sets = setOfHost(doc)
  const byShard = new Map<string, PoolCounts & {shard: string; hosts: number}>()
  for (const [host, counts] of hosts) {
    const set = sets.get(host)
    const shard = shardOfHost.get(host) ?? (set === undefined ? undefined : shardOfSet.get(set) ?? set) ?? host
    const entry = byShard.get(shard) ?? {shard, hosts: 0, inUse: 0, available: 0, created: 0, refreshing: 0}
    addCounts(entry, counts)
    entry.hosts += 1
    byShard.set(shard, entry)
  }
  const summary: ConnPoolStatsSummary = {totals, shards: [...byShard.values()].sort((a, b) => a.shard.localeCompare(b.shard))}
  const numClient = toNumber(doc.numClientConnections)
  if (numClient !== undefined) summary.numClientConnections = numClient
  const numScoped = toNumber(doc.numAScopedConnections)
  if (numScoped !== undefined) summary.numAScopedConnections = numScoped
  if (typeof doc.replicaSetMatchingStrategy === 'string') summary.replicaSetMatchingStrategy = doc.replicaSetMatchingStrategy
  return summary
}
