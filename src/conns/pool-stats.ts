/**
 * `connPoolStats` (the manual's connPoolStats output): a node's outgoing pools (a
 * mongos's to the shards and the config server; a shard or config member's
 * sharding pools; any replica-set member's `NetworkInterfaceTL-ReplNetwork`).
 * Totals come from the top-level `total*` fields; per-shard figures sum the
 * top-level `hosts` map (every pool's connections to that host), or the
 * per-pool host entries when `hosts` is missing, and attribute each host to its
 * shard by the discovered topology, else by the `replicaSets` section.
 *
 * In full besides: each pool by name (`byPool`, with its hosts) and each remote
 * host over every pool (`byHost`), with the newer fields where the server sends
 * them (`leased`, `refreshed` 7.x, `wasNeverUsed`, the `acquisitionWaitTimes`
 * histogram 6.3+); a field the version lacks stays absent.
 */
import type {Document} from '../mongo/driver.js'
import {toNumber} from '../probes/server-status.js'
import type {AcquisitionWaitTimes, ClusterHost, ConnPoolStatsSummary, PoolCounts, PoolDetail, PoolHostDetail} from './types.js'

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
  const neverUsed = toNumber(doc[key('wasNeverUsed')])
  if (neverUsed !== undefined) counts.wasNeverUsed = neverUsed
  return counts
}

/** "[50ms, 100ms)" → {fromMS: 50, toMS: 100}; "(-inf, 0ms)" → {toMS: 0}; "[1000ms, inf)" → {fromMS: 1000}. */
function bucketBounds(range: string): {fromMS?: number; toMS?: number} | undefined {
  const m = /^[[(]\s*(-inf|\d+(?:\.\d+)?ms)\s*,\s*(inf|\d+(?:\.\d+)?ms)\s*[)\]]$/.exec(range)
  if (!m) return undefined
  const ms = (text: string) => (text.endsWith('ms') ? Number(text.slice(0, -2)) : undefined)
  const fromMS = ms(m[1]!)
  const toMS = ms(m[2]!)
  return {...(fromMS === undefined ? {} : {fromMS}), ...(toMS === undefined ? {} : {toMS})}
}

/**
 * `acquisitionWaitTimes` (6.3+): how long each connection acquisition waited, as a histogram of
 * `{"[0ms, 50ms)": {count}, …, totalCount}`. Buckets kept in the server's order, empty ones dropped.
 */
export function parseAcquisitionWaitTimes(value: unknown): AcquisitionWaitTimes | undefined {
  if (!value || typeof value !== 'object') return undefined
  const doc = value as Document
  const buckets: AcquisitionWaitTimes['buckets'] = []
  let sum = 0
  for (const [range, entry] of Object.entries(doc)) {
    if (range === 'totalCount') continue
    const count = toNumber((entry as Document | undefined)?.count)
    const bounds = bucketBounds(range)
    if (count === undefined || bounds === undefined) continue
    sum += count
    if (count > 0) buckets.push({range, ...bounds, count})
  }
  const totalCount = toNumber(doc.totalCount) ?? sum
  const waitedAtLeast50 = buckets.filter((b) => b.fromMS !== undefined && b.fromMS >= 50).reduce((n, b) => n + b.count, 0)
  return {totalCount, buckets, waitedAtLeast50MS: waitedAtLeast50}
}

function hostDetail(host: string, stats: Document): PoolHostDetail | undefined {
  const counts = countsOf(stats, '')
  if (!counts) return undefined
  const out: PoolHostDetail = {host, ...counts}
  const waits = parseAcquisitionWaitTimes(stats.acquisitionWaitTimes)
  if (waits) out.acquisitionWaitTimes = waits
  return out
}

/**
 * pools: {name: {poolInUse…, "<host:port>": {inUse…}}} → one entry per pool name (sorted by name), its hosts in the
 * server's order (host names are not sorted: a replay or --redact-hosts renames them, the order stays).
 */
function byPool(doc: Document): PoolDetail[] {
  const out: PoolDetail[] = []
  const pools = doc.pools as Document | undefined
  if (!pools || typeof pools !== 'object') return out
  for (const [pool, raw] of Object.entries(pools)) {
    if (!raw || typeof raw !== 'object') continue
    const stats = raw as Document
    const hosts: PoolHostDetail[] = []
    for (const [key, value] of Object.entries(stats)) {
      if (!isHostKey(key) || !value || typeof value !== 'object') continue
      const detail = hostDetail(key, value as Document)
      if (detail) hosts.push(detail)
    }
    let counts = countsOf(stats, 'pool')
    if (!counts) {
      // The "global" DBClient pool of older servers lists hosts without pool* totals: sum them.
      if (hosts.length === 0) continue
      counts = {inUse: 0, available: 0, created: 0, refreshing: 0}
      for (const h of hosts) addCounts(counts, h)
    }
    const entry: PoolDetail = {pool, ...counts, hosts}
    const waits = parseAcquisitionWaitTimes(stats.acquisitionWaitTimes)
    if (waits) entry.acquisitionWaitTimes = waits
    out.push(entry)
  }
  return out.sort((a, b) => a.pool.localeCompare(b.pool, undefined, {numeric: true}))
}

function addCounts(into: PoolCounts, add: PoolCounts): void {
  into.inUse += add.inUse
  into.available += add.available
  into.created += add.created
  into.refreshing += add.refreshing
  if (add.leased !== undefined) into.leased = (into.leased ?? 0) + add.leased
  if (add.refreshed !== undefined) into.refreshed = (into.refreshed ?? 0) + add.refreshed
  if (add.wasNeverUsed !== undefined) into.wasNeverUsed = (into.wasNeverUsed ?? 0) + add.wasNeverUsed
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
  summary.byPool = byPool(doc)
  summary.byHost = [...hosts].map(([host, counts]) => {
    const raw = (doc.hosts as Document | undefined)?.[host] as Document | undefined
    const detail: PoolHostDetail = {host, ...counts}
    const waits = raw && typeof raw === 'object' ? parseAcquisitionWaitTimes(raw.acquisitionWaitTimes) : undefined
    if (waits) detail.acquisitionWaitTimes = waits
    return detail
  })
  const waits = parseAcquisitionWaitTimes(doc.acquisitionWaitTimes)
  if (waits) summary.acquisitionWaitTimes = waits
  const numClient = toNumber(doc.numClientConnections)
  if (numClient !== undefined) summary.numClientConnections = numClient
  const numScoped = toNumber(doc.numAScopedConnections)
  if (numScoped !== undefined) summary.numAScopedConnections = numScoped
  if (typeof doc.replicaSetMatchingStrategy === 'string') summary.replicaSetMatchingStrategy = doc.replicaSetMatchingStrategy
  return summary
}
