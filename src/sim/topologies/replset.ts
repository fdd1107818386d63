/**
 * A replica set "rs0": the members `SimOptions.memberOptions` describe (priorities, hidden, arbiters;
 * the first member with the highest priority is primary, the others secondaries), the data-bearing
 * ones sharing one data store (instant replication). Also builds the sets of a sharded cluster.
 */
import {ObjectId} from 'bson'
import {mongodCommands} from '../commands/index.js'
import type {CommandRegistry, CommandSpec} from '../commands/registry.js'
import {CommandError} from '../errors.js'
import {SimProcess, type ReplSetState} from '../process.js'
import type {VersionProfile} from '../profile.js'
import {DataStore} from '../storage/collection.js'
import type {UserStore} from '../auth/users.js'
import type {SimMemberOption, SimOptions, SimProcessRole} from '../types.js'
import {resolveMembers} from './members.js'
import type {BuiltTopology, TopologyContext} from './topology.js'

export const REPLSET_NAME = 'rs0'

/** Commands that read or write user data: an arbiter has none and refuses them as mongod does (13436). */
const DATA_COMMANDS = ['find', 'insert', 'update', 'delete', 'findAndModify', 'count', 'distinct', 'getMore', 'aggregate']

function arbiterRegistry(base: CommandRegistry): CommandRegistry {
  const t = base.clone()
  for (const name of DATA_COMMANDS) {
    const spec = t.lookup(name)
    if (!spec) continue
    const refuse: CommandSpec = {
      ...spec,
      handler: (ctx) => {
        // $currentOp reads no collection: an arbiter answers it like any member.
        const first = Array.isArray(ctx.cmd.pipeline) ? ctx.cmd.pipeline[0] : undefined
        if (name === 'aggregate' && first !== null && typeof first === 'object' && '$currentOp' in first) return spec.handler(ctx)
        throw CommandError.of('NotPrimaryOrSecondary', 'node is not in primary or recovering state')
      },
    }
    t.override(refuse)
  }
  return t
}

export interface ReplSetSpec {
  setName: string
  options: SimOptions
  profile: VersionProfile
  users: UserStore
  /** The data store the data-bearing members share. */
  data: DataStore
  count: number
  memberOptions?: readonly SimMemberOption[]
  /** Role of every member; undefined: the member's state ('primary' / 'secondary' / 'arbiter'), as a replset's. */
  role?: SimProcessRole
  registry: () => CommandRegistry
  /** Port of member i (0: ephemeral). */
  port: (i: number) => number
  /** Distinguishes the electionIds of the sets of one cluster. */
  index?: number
}

/** The members of one replica set, not yet listening. */
export function buildMembers(spec: ReplSetSpec): ReplSetState {
  const configs = resolveMembers(spec.count, spec.memberOptions)
  const electionId = new ObjectId(`7fffffff${(spec.index ?? 0).toString(16).padStart(16, '0')}`)
  const state: ReplSetState = {setName: spec.setName, members: [], setVersion: 1, term: 1, electionId}
  for (const [i, member] of configs.entries()) {
    const arbiter = member.state === 'arbiter'
    state.members.push(
      new SimProcess({
        role: spec.role ?? member.state,
        options: spec.options,
        profile: spec.profile,
        data: arbiter ? new DataStore() : spec.data,
        users: spec.users,
        registry: arbiter ? arbiterRegistry(spec.registry()) : spec.registry(),
        replSet: state,
        member,
        port: spec.port(i),
      }),
    )
  }
  return state
}

export function buildReplSet(ctx: TopologyContext, setName = REPLSET_NAME): BuiltTopology {
  const n = ctx.options.members
  if (!Number.isInteger(n) || n < 1 || n > 50) throw new Error(`members must be an integer between 1 and 50 (got ${n})`)
  const state = buildMembers({
    setName,
    options: ctx.options,
    profile: ctx.profile,
    users: ctx.users,
    data: ctx.data,
    count: n,
    memberOptions: ctx.options.memberOptions,
    registry: mongodCommands,
    port: (i) => (ctx.options.basePort === 0 ? 0 : ctx.options.basePort + i),
    index: 1,
  })
  return {
    processes: state.members,
    uri: (creds) =>
      ctx.options.advertiseHost === undefined
        ? `mongodb://${creds}${state.members.map((m) => m.listenAddress).join(',')}/?replicaSet=${setName}${ctx.options.auth ? '&authSource=admin' : ''}`
        : // Members named by names that do not resolve here are reached one at a time, as through a port-forward.
          `mongodb://${creds}${state.members[0]!.listenAddress}/?directConnection=true${ctx.options.auth ? '&authSource=admin' : ''}`,
  }
}
