/**
 * Counters that cannot be true, flagged with their known cause (pure).
 *
 * `connections.awaitingTopologyChanges` counts clients parked in an awaitable hello/isMaster
 * (streaming monitors). Each such client holds a connection, so the count can never exceed
 * `connections.current`. On 4.4 and 5.0 the counter was only decremented on error paths
 * (SERVER-62082, https://jira.mongodb.org/browse/SERVER-62082) and climbs for the life of the
 * process: a value above `current` is that defect, never waiters. The releases carrying the fix are
 * the ticket's "Fix Version/s"; pooltool does not judge by version, only by the impossibility.
 */
import type {ConnectionsStatus} from '../probes/server-status.js'

export interface CounterDefect {
  /** The serverStatus.connections field that cannot be true. */
  field: 'awaitingTopologyChanges'
  value: number
  /** What bounds it: connections.current. */
  current: number
  /** The known cause, e.g. the ticket. */
  ticket: string
  cause: string
}

export const AWAITING_TOPOLOGY_TICKET = 'SERVER-62082'

export function counterDefects(c: Partial<Pick<ConnectionsStatus, 'current' | 'awaitingTopologyChanges'>> | undefined): CounterDefect[] {
  if (!c || c.current === undefined || c.awaitingTopologyChanges === undefined) return []
  if (c.awaitingTopologyChanges <= c.current) return []
  return [
    {
      field: 'awaitingTopologyChanges',
      value: c.awaitingTopologyChanges,
      current: c.current,
      ticket: AWAITING_TOPOLOGY_TICKET,
      cause: `awaitingTopologyChanges ${c.awaitingTopologyChanges} > current ${c.current}: a counter only decremented on error paths in 4.4/5.0 (${AWAITING_TOPOLOGY_TICKET}), not clients waiting`,
    },
  ]
}
