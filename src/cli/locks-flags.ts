/**
 * Flags shared by `pooltool locks list | pings | watch`. What their values
 * mean (the filter, the expiry check) is src/parse/lock-filter.ts.
 */
import {Flags} from '@oclif/core'

import {LOCK_STATE_FILTERS} from '../locks/parse.js'
import {LIST_TOP_ROWS} from '../reporters/locks.js'
import {durationFlag} from './flags.js'

export const lockFilterFlags = {
  db: Flags.string({summary: 'Only locks on this database and its namespaces.', helpGroup: 'FILTER'}),
  ns: Flags.string({summary: 'Only the lock on this namespace (db.collection).', helpGroup: 'FILTER'}),
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
