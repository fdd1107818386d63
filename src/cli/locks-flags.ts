/** Flags shared by `pooltool locks list | pings | watch`. */
import {Flags} from '@oclif/core'

import {LOCK_STATE_FILTERS, type LockFilter} from '../locks/parse.js'
import {usageError} from '../errors.js'
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

/** A database name as the server accepts it: not empty, none of / \\ . " $ space, at most 64 bytes. */
function checkDb(db: string, flag: string): void {
  if (db.trim() === '') throw usageError(`${flag} is empty`, `name a database, e.g. ${flag} orders, or leave ${flag} out for every lock`)
  if (/[/\\. "$]/.test(db) || Buffer.byteLength(db) > 64) {
    throw usageError(`${flag} '${db}' is not a database name`, 'a database name has no / \\ . " $ or space and at most 64 bytes')
  }
}

export function toLockFilter(flags: {db?: string; ns?: string; state?: string}): LockFilter {
  const filter: LockFilter = {}
  if (flags.db !== undefined) {
    checkDb(flags.db, '--db')
    filter.db = flags.db
  }
  if (flags.ns !== undefined) {
    const dot = flags.ns.indexOf('.')
    if (dot <= 0 || dot === flags.ns.length - 1) {
      throw usageError(`--ns '${flags.ns}' is not a namespace`, 'write it as database.collection, e.g. --ns orders.items (or --db orders for a whole database)')
    }
    checkDb(flags.ns.slice(0, dot), '--ns')
    filter.ns = flags.ns
  }
  if (flags.state !== undefined) filter.state = flags.state
  return filter
}

export function expiryMsOf(flags: {'lock-expiry'?: string}): number | undefined {
  if (flags['lock-expiry'] === undefined) return undefined
  const ms = parseDurationMs(flags['lock-expiry'], 'lock-expiry')
  // 0 would call every held lock stale.
  if (ms <= 0) throw usageError(`--lock-expiry ${flags['lock-expiry']} must be above zero`, 'the server\'s expiry is 15m; e.g. --lock-expiry 15m')
  return ms
}
