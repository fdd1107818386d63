/**
 * `replSetHeartbeat`, what members send each other every `heartbeatIntervalMillis` (2 s) over the
 * ReplNetwork executor (src/mongo/db/repl/replication_coordinator_impl_heartbeat.cpp,
 * `_scheduleHeartbeatToTarget`; request fields `replSetHeartbeat: <set>`, `configVersion`,
 * `configTerm`, `from`, `fromId`, `term`, `hbv: 1`). The reply carries what
 * `TopologyCoordinator::prepareHeartbeatResponseV1` puts in it that the sim knows: the set, the
 * member's state, config version and term, the sync source. Internal-only (the __system user):
 * the sim lets any authenticated user run it.
 */
import {Long, type Document} from 'bson'
import type {CommandSpec} from '../commands/registry.js'
import {CommandError} from '../errors.js'
import type {SimProcess} from '../process.js'

/** MemberState codes (src/mongo/db/repl/member_state.h). */
function stateCode(p: SimProcess): number {
  if (p.isArbiter) return 7
  return p.isPrimaryMember ? 1 : 2
}

export const replSetHeartbeatCommand: CommandSpec = {
  name: 'replSetHeartbeat',
  handler: (ctx) => {
    const rs = ctx.proc.replSet
    if (!rs) throw CommandError.of('NoReplicationEnabled', 'not running with --replSet')
    if (ctx.cmd.replSetHeartbeat !== rs.setName) throw new CommandError(93, `Our set name of ${rs.setName} does not match name ${String(ctx.cmd.replSetHeartbeat)} reported by remote node`)
    const doc: Document = {
      ok: 1,
      set: rs.setName,
      state: stateCode(ctx.proc),
      v: rs.setVersion,
      configTerm: Long.fromNumber(rs.term),
      term: Long.fromNumber(rs.term),
    }
    const primary = ctx.proc.primaryHost()
    if (ctx.proc.isSecondaryMember && primary) doc.syncingTo = primary
    return doc
  },
}

/** The heartbeat `from` sends to a member of its set. */
export function heartbeatRequest(from: SimProcess): Document {
  const rs = from.replSet!
  return {
    replSetHeartbeat: rs.setName,
    configVersion: rs.setVersion,
    configTerm: Long.fromNumber(rs.term),
    hbv: 1,
    from: from.hostPort,
    fromId: rs.members.indexOf(from),
    term: Long.fromNumber(rs.term),
  }
}
