/**
 * A sharded cluster: `mongos` routers, `shards` one-member shard replica sets (role 'shard',
 * each with its own DataStore) and a config server (role 'config', replica set
 * "configRepl", its own DataStore holding the `config` database). Routers forward to
 * shards over their own pools; the lock model follows the version profile (see
 * sharding/state.ts). Ports with a base port: routers first, then shards, then the config server.
 */
import {ObjectId} from 'bson'
import {mongodCommands} from '../commands/index.js'
import {SimProcess, type ReplSetState} from '../process.js'
import {configServerDdlCommands, shardDdlCommands} from '../sharding/ddl.js'
import {mongosCommands, shardConnPoolStats} from '../sharding/mongos.js'
import {DEAD_LOCK_HOLDER, runDeadLockHolder, validateScenarios} from '../sharding/scenario.js'
import {CONFIG_REPL_SET, ShardedCluster} from '../sharding/state.js'
import {DataStore} from '../storage/collection.js'
import type {BuiltTopology, TopologyContext} from './topology.js'

/** Username/password of the root user the cluster's internal connections authenticate as (auth on). */
export interface ShardedBuildOptions {
  internalCredentials?: {username: string; password: string; source: string}
}

function memberRegistry(kind: 'shard' | 'config') {
  const t = mongodCommands().clone()
  for (const spec of kind === 'shard' ? shardDdlCommands : configServerDdlCommands) t.override(spec)
  t.override(shardConnPoolStats)
  return t
}

export function buildSharded(ctx: TopologyContext, extra: ShardedBuildOptions = {}): BuiltTopology {
  const o = ctx.options
  for (const [name, n] of [['mongos', o.mongos], ['shards', o.shards]] as const) {
    if (!Number.isInteger(n) || n < 1 || n > 16) throw new Error(`${name} must be an integer between 1 and 16 (got ${n})`)
  }
  validateScenarios(o.scenarios, o.topology)
  const port = (i: number) => (o.basePort === 0 ? 0 : o.basePort + i)
  const cluster = new ShardedCluster(o, ctx.profile, new DataStore(), o.auth ? extra.internalCredentials : undefined)
  const oneMemberSet = (setName: string, i: number): ReplSetState => ({
    setName,
    members: [],
    setVersion: 1,
    term: 1,
    electionId: new ObjectId(`7fffffff00000000000000${(i + 1).toString(16).padStart(2, '0')}`),
  })
  const mongos: SimProcess[] = []
  for (let i = 0; i < o.mongos; i++) {
    const p = new SimProcess({role: 'mongos', options: o, profile: ctx.profile, data: new DataStore(), users: ctx.users, registry: mongosCommands(), port: port(i)})
    cluster.register('mongos', p)
    mongos.push(p)
  }
  const shards: SimProcess[] = []
  for (let i = 0; i < o.shards; i++) {
    const name = `shard${String(i + 1).padStart(2, '0')}`
    const rs = oneMemberSet(name, i)
    const p = new SimProcess({role: 'shard', options: o, profile: ctx.profile, data: new DataStore(), users: ctx.users, registry: memberRegistry('shard'), replSet: rs, port: port(o.mongos + i)})
    rs.members.push(p)
    cluster.register('shard', p, name)
    shards.push(p)
  }
  const configRs = oneMemberSet(CONFIG_REPL_SET, o.shards)
  const config = new SimProcess({role: 'config', options: o, profile: ctx.profile, data: cluster.configData, users: ctx.users, registry: memberRegistry('config'), replSet: configRs, port: port(o.mongos + o.shards)})
  configRs.members.push(config)
  cluster.register('config', config)
  return {
    processes: [...mongos, ...shards, config],
    uri: (creds) => `mongodb://${creds}${mongos.map((m) => m.hostPort).join(',')}/${o.auth ? '?authSource=admin' : ''}`,
    started: async () => {
      await cluster.started()
      if (o.scenarios.includes(DEAD_LOCK_HOLDER)) await runDeadLockHolder(cluster)
    },
    stopping: () => cluster.stop(),
  }
}
