/** One mongod. */
import {mongodCommands} from '../commands/index.js'
import {SimProcess} from '../process.js'
import type {BuiltTopology, TopologyContext} from './topology.js'

export function buildStandalone(ctx: TopologyContext): BuiltTopology {
  const proc = new SimProcess({
    role: 'standalone',
    options: ctx.options,
    profile: ctx.profile,
    data: ctx.data,
    users: ctx.users,
    registry: mongodCommands(),
    port: ctx.options.basePort,
  })
  return {
    processes: [proc],
    uri: (creds) => `mongodb://${creds}${proc.listenAddress}/${ctx.options.auth ? '?authSource=admin' : ''}`,
  }
}
