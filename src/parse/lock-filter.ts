/**
 * Flag values of `pooltool locks list | pings | watch` → a LockFilter and the
 * stale-verdict expiry, with usage errors that say what to write instead. Pure.
 */
import {usageError} from '../errors.js'
import type {LockFilter} from '../locks/parse.js'

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

/** `--lock-expiry` in milliseconds (already parsed by the duration flag), or undefined for the server's 15 min. */
export function expiryMsOf(flags: {'lock-expiry'?: number}): number | undefined {
  const ms = flags['lock-expiry']
  // 0 would call every held lock stale.
  if (ms !== undefined && ms <= 0) throw usageError('--lock-expiry must be above zero', "the server's expiry is 15m; e.g. --lock-expiry 15m")
  return ms
}
