/** Flags shared by `pooltool locks list | pings | watch`. */
import {Flags} from '@oclif/core'

import {LOCK_STATE_FILTERS, type LockFilter} from '../locks/parse.js'
import {parseDurationMs} from './parse.js'

export const lockFilterFlags = {
  db: Flags.string({summary: 'Only locks on this database and its namespaces.', helpGroup: 'FILTER'}),
  ns: Flags.string({summary: 'Only the lock on this namespace (db.collection).', helpGroup: 'FILTER'}),
}

export const lockExpiryFlag = {
  'lock-expiry': Flags.string({
    summary: 'Expiry behind the stale verdict (default 15m, the server\'s; on the embedded cluster 15m × its time scale).',
    helpGroup: 'LOCKS',
  }),
}

export const lockStateFlag = {
  state: Flags.string({options: [...LOCK_STATE_FILTERS], summary: 'Only locks with this verdict (free, held, stale, no-ping, balancer) or state (locked, unlocked).', helpGroup: 'FILTER'}),
}

export function toLockFilter(flags: {db?: string; ns?: string; state?: string}): LockFilter {
  const filter: LockFilter = {}
  if (flags.db !== undefined) filter.db = flags.db
  if (flags.ns !== undefined) filter.ns = flags.ns
  if (flags.state !== undefined) filter.state = flags.state
  return filter
}

export function expiryMsOf(flags: {'lock-expiry'?: string}): number | undefined {
  return flags['lock-expiry'] === undefined ? undefined : parseDurationMs(flags['lock-expiry'], 'lock-expiry')
}
