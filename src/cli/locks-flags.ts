/**
 * Flags shared by `pooltool locks list | pings | watch`. What their values
 * mean (the filter, the expiry check) is src/parse/lock-filter.ts.
 */
import {Flags} from '@oclif/core'

import {usageError} from '../errors.js'
import {LOCK_STATE_FILTERS} from '../locks/parse.js'
import {LIST_TOP_ROWS} from '../reporters/locks.js'
import {DEFAULT_SIM_OPTIONS, SCENARIOS, SIM_VERSION_PROFILES, type SimOptions, type SimVersionProfile, UPGRADED_FROM_34} from '../sim/index.js'
import {durationFlag} from './flags.js'

export const lockFilterFlags = {
  db: Flags.string({summary: 'Only locks on this database and its namespaces: distributed locks, and node-lock chains that touch it (kept whole, root blocker included).', helpGroup: 'FILTER'}),
  ns: Flags.string({summary: 'Only the locks on this namespace (db.collection): its distributed lock, and node-lock chains that touch it.', helpGroup: 'FILTER'}),
}

export const lockExpiryFlag = {
  'lock-expiry': durationFlag({
    summary: "Expiry behind the stale verdict, e.g. 15m (default: the server's 15m; on the embedded cluster 15m × its time scale).",
    helpGroup: 'LOCKS',
  }),
}

export const lockStateFlag = {
  state: Flags.string({options: [...LOCK_STATE_FILTERS], summary: 'Only locks with this verdict (free, held, stale, no-ping, balancer) or state (locked, unlocked).', helpGroup: 'FILTER'}),
}

export const listAllFlag = {
  all: Flags.boolean({
    default: false,
    summary: `Print every row: a list longer than ${LIST_TOP_ROWS} shows counts and the ${LIST_TOP_ROWS} rows that need a look first (--json always has all).`,
    helpGroup: 'FILTER',
  }),
}

/** The embedded cluster the locks commands start when no URI is given (like conns' --sim-topology). */
export const embeddedLocksFlags = {
  'sim-profile': Flags.string({
    options: [...SIM_VERSION_PROFILES],
    default: DEFAULT_SIM_OPTIONS.versionProfile,
    summary: 'Embedded cluster only (no --uri): the MongoDB version it behaves like; 4.4, 5.0 and 6.0 keep locks in config.locks, 7.0 and 8.0 in memory.',
    helpGroup: 'CONNECTION',
  }),
  'sim-scenario': Flags.string({
    options: [...SCENARIOS],
    multiple: true,
    default: [],
    summary: `Embedded cluster only: a canned situation, e.g. ${SCENARIOS[0]} (a shard died holding a lock); ${UPGRADED_FROM_34} needs --sim-profile 4.4.`,
    helpGroup: 'CONNECTION',
  }),
}

/** The embedded sharded cluster those flags ask for; a scenario the profile cannot hold is a usage error. */
export function embeddedLocksCluster(flags: {'sim-profile': string; 'sim-scenario': string[]}): Partial<SimOptions> {
  const versionProfile = flags['sim-profile'] as SimVersionProfile
  if (flags['sim-scenario'].includes(UPGRADED_FROM_34) && versionProfile !== '4.4') {
    throw usageError(`--sim-scenario ${UPGRADED_FROM_34} needs --sim-profile 4.4`, 'the 3.4 balancer lock lives in config.locks, which 4.4 still uses: add --sim-profile 4.4')
  }
  return {topology: 'sharded', versionProfile, scenarios: flags['sim-scenario']}
}
