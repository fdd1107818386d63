/**
 * A sharded cluster: `mongos` routers, `shards` shard replica sets of `shardMembers` members each
 * (role 'shard', one DataStore per set, the first member primary) and a config server replica set
 * "configRepl" of `configMembers` members (role 'config', one DataStore holding the `config`
 * database). Routers forward to each shard's primary over their own pools; the lock model follows
 * the version profile (see sharding/state.ts). Ports with a base port: routers first, then the
 * shards' members (shard by shard), then the config server's members.
 */
import {mongodCommands} from '../commands/index.js'
import {configServerDdlCommands, shardDdlCommands} from '../sharding/ddl.js'
import {mongosCommands, shardConnPoolStats} from '../sharding/mongos.js'
import {DEAD_LOCK_HOLDER, runDeadLockHolder, type ScenarioOutcome, seedUpgradedFrom34, UPGRADED_FROM_34, validateScenarios} from '../sharding/scenario.js'
import {CONFIG_REPL_SET, ShardedCluster} from '../sharding/state.js'
import {DataStore} from '../storage/collection.js'
import {SimProcess} from '../process.js'
import {InternalTraffic} from '../internal/traffic.js'
import type {InternalCredentials} from '../sharding/wire-client.js'
import {buildMembers, memberCommands} from './replset.js'
import type {BuiltTopology, TopologyContext} from './topology.js'

/** Limits of one cluster (one child process): cluster.ts checks them too, as usage errors. */
export const MAX_MONGOS = 16
export const MAX_SHARDS = 128
export const MAX_SET_MEMBERS = 7

/** Username/password of the root user the cluster's internal connections authenticate as (auth on). */
export interface ShardedBuildOptions {
  internalCredentials?: InternalCredentials
}

function memberRegistry(kind: 'shard' | 'config') {
  const t = memberCommands(mongodCommands(), shardConnPoolStats)
  for (const spec of kind === 'shard' ? shardDdlCommands : configServerDdlCommands) t.override(spec)
  return t
}

export function buildSharded(ctx: TopologyContext, extra: ShardedBuildOptions = {}): BuiltTopology {
  const o = ctx.options
  const limits = [['mongos', o.mongos, MAX_MONGOS], ['shards', o.shards, MAX_SHARDS], ['shardMembers', o.shardMembers, MAX_SET_MEMBERS], ['configMembers', o.configMembers, MAX_SET_MEMBERS]] as const
  for (const [name, n, max] of limits) {
    if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} must be an integer between 1 and ${max} (got ${n})`)
  }
  validateScenarios(o.scenarios, o.topology, o.versionProfile)
  const port = (i: number) => (o.basePort === 0 ? 0 : o.basePort + i)
  const cluster = new ShardedCluster(o, ctx.profile, new DataStore(), o.auth ? extra.internalCredentials : undefined)
  const mongos: SimProcess[] = []
  const routerTable = mongosCommands()
  for (let i = 0; i < o.mongos; i++) {
    const p = new SimProcess({role: 'mongos', options: o, profile: ctx.profile, data: new DataStore(), users: ctx.users, registry: routerTable, port: port(i)})
    cluster.register('mongos', p)
    mongos.push(p)
  }
  // One table per kind, shared by its members: a large cluster builds two, not hundreds.
  const shardTable = memberRegistry('shard')
  const configTable = memberRegistry('config')
  const common = {options: o, profile: ctx.profile, users: ctx.users}
  const shards: SimProcess[] = []
  for (let i = 0; i < o.shards; i++) {
    const name = `shard${String(i + 1).padStart(2, '0')}`
    const first = o.mongos + i * o.shardMembers
    const rs = buildMembers({...common, setName: name, data: new DataStore(), count: o.shardMembers, role: 'shard', registry: () => shardTable, port: (m) => port(first + m), index: i + 1})
    for (const p of rs.members) cluster.register('shard', p, name)
    shards.push(...rs.members)
  }
  const firstConfig = o.mongos + o.shards * o.shardMembers
  const configRs = buildMembers({...common, setName: CONFIG_REPL_SET, data: cluster.configData, count: o.configMembers, role: 'config', registry: () => configTable, port: (m) => port(firstConfig + m), index: o.shards + 1})
  for (const p of configRs.members) cluster.register('config', p)
  const traffic = shardedTraffic(cluster, o.auth ? extra.internalCredentials : undefined)
  return {
    processes: [...mongos, ...shards, ...configRs.members],
    // Where the routers listen: with advertiseHost their names resolve only outside (a driver needs no discovery for mongos).
    uri: (creds) => `mongodb://${creds}${mongos.map((m) => m.listenAddress).join(',')}/${o.auth ? '?authSource=admin' : ''}`,
    started: async (announce) => {
      await cluster.started()
      await traffic.start()
      const fired = (scenario: string, outcome: ScenarioOutcome) => announce({at: new Date().toISOString(), scenario, ...outcome})
      if (o.scenarios.includes(UPGRADED_FROM_34)) fired(UPGRADED_FROM_34, seedUpgradedFrom34(cluster, new Date()))
      if (o.scenarios.includes(DEAD_LOCK_HOLDER)) fired(DEAD_LOCK_HOLDER, await runDeadLockHolder(cluster))
    },
    stopping: () => {
      traffic.stop()
      return cluster.stop()
    },
  }
}

/**
 * What the processes of a sharded cluster hold to each other at rest (internal/traffic.ts): every set's
 * heartbeats and oplog fetchers; routers monitor every shard and the config server (their
 * ShardRegistry targets each shard and the config shard through a replica set monitor), shard members
 * monitor the config server, config members every shard (the config server's ShardRegistry). Shard
 * members monitor other shards only once they talk to them (migrations, DDL), not at rest.
 */
function shardedTraffic(cluster: ShardedCluster, credentials: ShardedBuildOptions['internalCredentials']): InternalTraffic {
  const traffic = new InternalTraffic({version: cluster.profile.version, credentials, timeScale: cluster.options.timeScale, poolsOf: (p) => cluster.runtime(p).pools})
  for (const s of cluster.shards) traffic.addReplicaSet(s.members)
  traffic.addReplicaSet(cluster.configMembers)
  const allShardMembers = cluster.shards.flatMap((s) => s.members)
  for (const m of cluster.mongos) {
    for (const s of cluster.shards) traffic.addMonitor(m, s.members)
    traffic.addMonitor(m, cluster.configMembers)
  }
  for (const p of allShardMembers) traffic.addMonitor(p, cluster.configMembers)
  for (const c of cluster.configMembers) traffic.addMonitor(c, allShardMembers)
  return traffic
}
