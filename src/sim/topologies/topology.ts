/**
 * What a topology builder receives and returns. A builder creates SimProcess objects
 * (not yet listening) sharing stores as the topology requires; cluster.ts starts them.
 *
 * Sharded: `sharded.ts` creates a config server replica set (its own DataStore holding
 * the `config` database), one replica set and DataStore per shard (members share it),
 * and `mongos` processes whose registry is
 * `mongosCommands()` (mongod's table with routed commands overridden); mongos forwards to
 * shards over its own outbound pools (connPoolStats reads them).
 */
import type {UserStore} from '../auth/users.js'
import type {SimProcess} from '../process.js'
import type {VersionProfile} from '../profile.js'
import type {DataStore} from '../storage/collection.js'
import type {FiredScenario, SimOptions} from '../types.js'

export interface TopologyContext {
  options: SimOptions
  profile: VersionProfile
  /** The default data store (standalone / replica set share it between members). */
  data: DataStore
  /** Users visible to every process of the topology. */
  users: UserStore
}

export interface BuiltTopology {
  processes: SimProcess[]
  /** Connection string; `creds` is "" or "user:pass@". */
  uri(creds: string): string
  /** Called once every listener is up (e.g. to start background tasks and set up scenarios, each announced as it fires). */
  started?(announce: (event: FiredScenario) => void): void | Promise<void>
  /** Called before the processes stop. */
  stopping?(): void | Promise<void>
}
