/**
 * Whose connections a never-shrank host holds, because the fix depends on it:
 * application drivers keep idle connections until their maxIdleTimeMS; the cluster's own pools
 * (a router's NetworkInterfaceTL pools to each shard member, members' replication clients) follow
 * the ShardingTaskExecutorPool* parameters of the process that holds them (server parameters, read
 * with getParameter), not any driver setting.
 */
import {INTERNAL_DRIVERS} from './holders.js'
import type {ConnsVerdict, Holder, NeverShrankDetail} from './types.js'

/** The parameters behind a router's pools to a host, as getParameter names them. */
export const ROUTER_POOL_PARAMETERS = [
  'ShardingTaskExecutorPoolMinSize',
  'ShardingTaskExecutorPoolMaxSize',
  'ShardingTaskExecutorPoolMaxConnecting',
  'ShardingTaskExecutorPoolHostTimeoutMS',
  'ShardingTaskExecutorPoolRefreshRequirementMS',
  'ShardingTaskExecutorPoolRefreshTimeoutMS',
] as const

/**
 * Connections by who holds them; pooltool's own polling connections count for neither. Undefined: holders not read.
 * The applications' are split (holders.ts) into monitoring connections, which maxIdleTimeMS never closes, and
 * pooled ones; the biggest monitoring holder is named with the MongoClient instances its parked monitors imply.
 */
export function heldBy(holders: readonly Holder[] | undefined): NeverShrankDetail['heldBy'] {
  if (holders === undefined) return undefined
  let applications = 0
  let cluster = 0
  let monitoring: number | undefined = 0
  let top: Holder | undefined
  for (const holder of holders) {
    if (holder.own) continue
    if (INTERNAL_DRIVERS.has(holder.driver)) {
      cluster += holder.count
      continue
    }
    applications += holder.count
    if (holder.monitors === undefined || monitoring === undefined) monitoring = undefined
    else {
      monitoring += holder.monitors + (holder.rttPingers ?? 0)
      if (top === undefined || holder.monitors > top.monitors!) top = holder
    }
  }
  const out: NonNullable<NeverShrankDetail['heldBy']> = {applications, cluster}
  if (monitoring !== undefined) {
    out.applicationMonitoring = monitoring
    if (top !== undefined && top.monitors! > 0) out.topMonitoring = {appName: top.appName, client: top.client, driver: top.driver, clients: top.monitors!}
  }
  return out
}

/** Whether the applications' connections are mostly monitoring ones: clients, not idle pooled connections, are what stays. */
export function heldByMonitoring(held: NeverShrankDetail['heldBy']): boolean {
  return held !== undefined && held.applicationMonitoring !== undefined && held.applicationMonitoring * 2 > held.applications
}

/** Whether the router's pool parameters are the advice: the cluster's pools hold most of the connections. */
export function heldByCluster(held: NeverShrankDetail['heldBy']): boolean {
  return held !== undefined && held.cluster > held.applications
}

/** "12" → the router's parameter as it gave it, or "unknown". */
function parameterValue(d: NeverShrankDetail, name: string): string {
  const pools = d.routerPools
  if (!pools || !('parameters' in pools)) return 'unknown'
  const value = pools.parameters[name]
  return value === undefined ? 'unknown' : value.toLocaleString('en-US')
}

/**
 * The fix for a never-shrank host by who holds its connections, with the figures it rests on:
 * application clients' monitoring connections (clients created per request: maxIdleTimeMS never
 * closes those), applications' idle pooled connections (maxIdleTimeMS), or the cluster's own pools
 * (a router's ShardingTaskExecutorPool* parameters).
 */
export function neverShrankVerdict(host: string, d: NeverShrankDetail): ConnsVerdict {
  const held = d.heldBy
  const stayed = `${d.levelAtQuiet} connections on ${host} still open ${Math.round(d.quietForMS / 1000)} s after creation stopped (${d.baseline} before the growth)`
  if (held === undefined) {
    return {
      kind: 'idle-pool',
      host,
      verdict:
        'who holds them was not read (--no-holders, or $currentOp refused): application clients close idle connections after maxIdleTimeMS; a router keeps its pools per ShardingTaskExecutorPool*',
      evidence: stayed,
    }
  }
  const of = `${Math.max(held.applications, held.cluster)} of ${held.applications + held.cluster} held`
  if (held.cluster > held.applications) {
    const pools = d.routerPools
    const where = pools === undefined ? 'no router polled to read them from' : 'unavailable' in pools ? `not read from ${pools.router}: ${pools.unavailable}` : `on ${pools.router}`
    return {
      kind: 'router-pools',
      host,
      verdict:
        `${of} by the cluster's own pools (routers' and members' NetworkInterfaceTL): a router drops its pool to a host idle for ShardingTaskExecutorPoolHostTimeoutMS ` +
        `(${parameterValue(d, 'ShardingTaskExecutorPoolHostTimeoutMS')} ms) and keeps ShardingTaskExecutorPoolMinSize (${parameterValue(d, 'ShardingTaskExecutorPoolMinSize')}) per pool while in use ` +
        `(${where}); lower them with setParameter on the routers, not maxIdleTimeMS in the applications`,
      evidence: `${stayed}; ${held.cluster} held by NetworkInterfaceTL / MongoDB Internal Client connections, ${held.applications} by applications`,
    }
  }
  const top = held.topMonitoring
  if (heldByMonitoring(held) && top !== undefined) {
    return {
      kind: 'client-per-request',
      host,
      holder: {appName: top.appName, client: top.client, driver: top.driver},
      impliedClients: top.clients,
      verdict: `≈${top.clients} MongoClient instances from ${top.appName}@${top.client} monitor ${host}: create one client per process and reuse it (maxIdleTimeMS never closes monitoring connections)`,
      evidence: `${stayed}; ${held.applicationMonitoring} of the applications' ${held.applications} are monitoring connections (parked awaitable hellos and their RTT connections), ${top.clients} parked hellos from ${top.appName}@${top.client}`,
    }
  }
  return {
    kind: 'idle-pool',
    host,
    verdict: `${of} by application clients: set maxIdleTimeMS on them so idle connections close`,
    evidence: `${stayed}${held.applicationMonitoring === undefined ? '' : `; ${held.applications - held.applicationMonitoring} of the applications' ${held.applications} are pooled (the rest monitoring)`}`,
  }
}
