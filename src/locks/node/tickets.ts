/**
 * Execution tickets beside the global lock queue (pure), with "exhausted" only where the version's
 * semantics say so.
 *
 * - Before 7.0: `wiredTiger.concurrentTransactions.{read,write}.{out, available, totalTickets}`
 *   (WiredTigerKVEngine::appendGlobalStats), 128 each by default; 6.1+ adds queue figures
 *   (`queueLength` …, DOCS-16407). The manual (includes/7.0-concurrent-transactions.rst): "6.0 and
 *   prior: a ticket availability of 0 for a prolonged period of time likely indicates an overload".
 * - 7.0+: the server sizes tickets dynamically; the same manual page: "availability of 0 for a
 *   prolonged period of time does not indicate an overload", only "a large number of queued
 *   operations that persists" does. 7.x still reports them in `wiredTiger.concurrentTransactions`
 *   (the 7.0–7.3 manuals' serverStatus pages have no `queues` section), with the queue figures beside
 *   out/available/totalTickets; 8.0 in `queues.execution.{read,write}` with them under `normalPriority`
 *   (TicketHolder::_appendCommonQueueImplStats: addedToQueue, removedFromQueue, queueLength …). Either
 *   source is read; the version decides the semantics. An operation waiting for a ticket is not `waitingForLock`.
 * - `globalLock.currentQueue` / `activeClients` {total, readers, writers}: all versions.
 *
 * One sample cannot tell "prolonged": a verdict is about this sample, and the text says so.
 */
import {toNumber} from '../../probes/server-status.js'
import {versionAtLeast} from '../parse.js'
import type {TicketPool, TicketPoolView, TicketsView, TicketVerdict} from './types.js'

type Doc = Record<string, unknown>
const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v)
const n = (v: unknown): number | null => toNumber(v) ?? null

function poolOf(v: unknown): TicketPool | null {
  if (!isDoc(v)) return null
  const queueLength = n(v.queueLength) ?? (isDoc(v.normalPriority) ? n(v.normalPriority.queueLength) : null)
  return {out: n(v.out), available: n(v.available), totalTickets: n(v.totalTickets), queueLength}
}

function trio(v: unknown): {total: number | null; readers: number | null; writers: number | null} | null {
  return isDoc(v) ? {total: n(v.total), readers: n(v.readers), writers: n(v.writers)} : null
}

function verdictOf(pool: TicketPool, queued: number | null, dynamic: boolean | null): TicketVerdict {
  if (pool.available === null) return 'unknown'
  if (dynamic === true) {
    if ((queued ?? 0) > 0) return 'queued'
    return pool.available === 0 ? 'throttled' : 'ok'
  }
  if (dynamic === null) return pool.available === 0 ? 'unknown' : 'ok'
  if (pool.available > 0) return 'ok'
  return (queued ?? 0) > 0 ? 'exhausted' : 'all-in-use'
}

/** Tickets of one serverStatus; `version` is serverStatus.version unless given. */
export function ticketsFromServerStatus(serverStatus: Doc, version: string | null = typeof serverStatus.version === 'string' ? serverStatus.version : null): TicketsView {
  const queues = isDoc(serverStatus.queues) && isDoc(serverStatus.queues.execution) ? serverStatus.queues.execution : null
  const wt = isDoc(serverStatus.wiredTiger) && isDoc(serverStatus.wiredTiger.concurrentTransactions) ? serverStatus.wiredTiger.concurrentTransactions : null
  const source: TicketsView['source'] = queues ? 'queues.execution' : wt ? 'wiredTiger.concurrentTransactions' : 'none'
  const from = queues ?? wt
  const dynamicSizing = version === null ? null : versionAtLeast(version, 7, 0)
  const currentQueue = isDoc(serverStatus.globalLock) ? trio(serverStatus.globalLock.currentQueue) : null
  const activeClients = isDoc(serverStatus.globalLock) ? trio(serverStatus.globalLock.activeClients) : null
  const view = (pool: TicketPool | null, queuedByGlobalLock: number | null): TicketPoolView | null =>
    pool ? {...pool, verdict: verdictOf(pool, pool.queueLength ?? queuedByGlobalLock, dynamicSizing)} : null
  const read = view(from ? poolOf(from.read) : null, currentQueue?.readers ?? null)
  const write = view(from ? poolOf(from.write) : null, currentQueue?.writers ?? null)

  let explanation: string
  if (source === 'none') explanation = 'no ticket figures in serverStatus (a router, or a storage engine without them)'
  else if (dynamicSizing === null) explanation = 'server version unknown: whether 0 available means exhaustion (before 7.0) or throttling (7.0+) cannot be said'
  else if (dynamicSizing)
    explanation =
      '7.0+ sizes tickets dynamically: 0 available is the server throttling, not exhaustion; only a queue that persists ' +
      'over several samples means overload (manual, 7.0 concurrent transactions)'
  else explanation = 'before 7.0 tickets are fixed: 0 available with operations queued is exhaustion (manual: likely an overload if it lasts)'
  return {source, dynamicSizing, read, write, currentQueue, activeClients, explanation}
}
