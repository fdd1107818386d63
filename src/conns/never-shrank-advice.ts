/**
 * Whose connections a never-shrank host holds, because the fix depends on it (seeds-digest §1):
 * application drivers keep idle connections until their maxIdleTimeMS; the cluster's own pools
 * (a router's NetworkInterfaceTL pools to each shard member, members' replication clients) follow
 * the ShardingTaskExecutorPool* parameters of the process that holds them (facts §3.3).
 */
import type {Holder, NeverShrankDetail} from './types.js'

/** The parameters behind a router's pools to a host, as getParameter names them (facts §3.3). */
export const ROUTER_POOL_PARAMETERS = [
  'ShardingTaskExecutorPoolMinSize',
  'ShardingTaskExecutorPoolMaxSize',
  'ShardingTaskExecutorPoolMaxConnecting',
  'ShardingTaskExecutorPoolHostTimeoutMS',
  'ShardingTaskExecutorPoolRefreshRequirementMS',
  'ShardingTaskExecutorPoolRefreshTimeoutMS',
] as const

/**
 * The server's own clients say so in their handshake: `NetworkInterfaceTL` (task executor and
 * replication pools) or `MongoDB Internal Client` (DBClient connections: the oplog fetcher).
 */
const CLUSTER_DRIVERS = new Set(['NetworkInterfaceTL', 'MongoDB Internal Client'])

/** Connections by who holds them; pooltool's own polling connections count for neither. Undefined: holders not read. */
export function heldBy(holders: readonly Holder[] | undefined): NeverShrankDetail['heldBy'] {
  if (holders === undefined) return undefined
  let applications = 0
  let cluster = 0
  for (const holder of holders) {
    if (holder.own) continue
    if (CLUSTER_DRIVERS.has(holder.driver)) cluster += holder.count
    else applications += holder.count
  }
  return {applications, cluster}
}

/** Whether the router's pool parameters are the advice: the cluster's pools hold most of the connections. */
export function heldByCluster(held: NeverShrankDetail['heldBy']): boolean {
  return held !== undefined && held.cluster > held.applications
}
