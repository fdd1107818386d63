/** A replica set "rs0": member 0 primary, the others secondaries, one shared data store (instant replication). */
import {ObjectId} from 'bson'
import {mongodCommands} from '../commands/index.js'
import {SimProcess, type ReplSetState} from '../process.js'
import type {BuiltTopology, TopologyContext} from './topology.js'

export const REPLSET_NAME = 'rs0'

export function buildReplSet(ctx: TopologyContext, setName = REPLSET_NAME): BuiltTopology {
  const n = ctx.options.members
  if (!Number.isInteger(n) || n < 1 || n > 50) throw new Error(`members must be an integer between 1 and 50 (got ${n})`)
  const state: ReplSetState = {setName, members: [], setVersion: 1, term: 1, electionId: new ObjectId('7fffffff0000000000000001')}
  for (let i = 0; i < n; i++) {
    state.members.push(
      new SimProcess({
        role: i === 0 ? 'primary' : 'secondary',
        options: ctx.options,
        profile: ctx.profile,
        data: ctx.data,
        users: ctx.users,
        registry: mongodCommands(),
        replSet: state,
        port: ctx.options.basePort === 0 ? 0 : ctx.options.basePort + i,
      }),
    )
  }
  return {
    processes: state.members,
    uri: (creds) =>
      ctx.options.advertiseHost === undefined
        ? `mongodb://${creds}${state.members.map((m) => m.listenAddress).join(',')}/?replicaSet=${setName}${ctx.options.auth ? '&authSource=admin' : ''}`
        : // Members named by names that do not resolve here are reached one at a time, as through a port-forward.
          `mongodb://${creds}${state.members[0]!.listenAddress}/?directConnection=true${ctx.options.auth ? '&authSource=admin' : ''}`,
  }
}
