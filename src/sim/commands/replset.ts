/** replSetGetStatus / replSetGetConfig for replica-set members (instant replication). */
import {Long, Timestamp, type Document} from 'bson'
import {CommandError} from '../errors.js'
import {oplogOf} from '../repl/oplog.js'
import {exactDouble} from '../storage/numbers.js'
import type {SimProcess} from '../process.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {clusterMonitor} from './util.js'

function requireReplSet(proc: SimProcess) {
  if (!proc.replSet) throw new CommandError(76, 'not running with --replSet')
  return proc.replSet
}

function stateOf(p: SimProcess): {state: number; stateStr: string} {
  if (p.isArbiter) return {state: 7, stateStr: 'ARBITER'}
  return p.isPrimaryMember ? {state: 1, stateStr: 'PRIMARY'} : {state: 2, stateStr: 'SECONDARY'}
}

/** Voting and data-bearing counts (every member votes; arbiters bear no data), as replSetGetStatus reports them. */
function voteCounts(members: SimProcess[]): Document {
  const voting = members.length
  const writable = members.filter((m) => !m.isArbiter).length
  const majority = Math.floor(voting / 2) + 1
  return {majorityVoteCount: majority, writeMajorityCount: Math.min(majority, writable), votingMembersCount: voting, writableVotingMembersCount: writable}
}

function replSetGetStatus(ctx: CommandContext): Document {
  const rs = requireReplSet(ctx.proc)
  const now = new Date()
  const secs = Math.floor(now.getTime() / 1000)
  const optime = oplogOf(ctx.proc.data)?.last().opTime ?? {ts: new Timestamp({t: secs, i: 1}), t: Long.fromNumber(rs.term)}
  const members = rs.members.map((m, i) => {
    const up = m.port > 0
    const doc: Document = {
      _id: i,
      name: m.hostPort,
      // A double in topology_coordinator.cpp (`bb.append("health", 1.0)`); state, uptime are ints.
      health: exactDouble(up ? 1 : 0),
      ...stateOf(m),
      uptime: Math.floor((Date.now() - m.counters.startedAt) / 1000),
      optime,
      optimeDate: now,
      lastHeartbeatMessage: '',
      syncSourceHost: m.isSecondaryMember ? ctx.proc.primaryHost() ?? '' : '',
      syncSourceId: m.isSecondaryMember ? rs.members.findIndex((x) => x.isPrimaryMember) : -1,
      configVersion: rs.setVersion,
      configTerm: rs.term,
    }
    if (m === ctx.proc) doc.self = true
    if (m.isPrimaryMember) doc.electionDate = new Date(m.counters.startedAt)
    return doc
  })
  return {
    set: rs.setName,
    date: now,
    myState: stateOf(ctx.proc).state,
    term: Long.fromNumber(rs.term),
    heartbeatIntervalMillis: Long.fromNumber(2000),
    ...voteCounts(rs.members),
    members,
    ok: 1,
  }
}

function replSetGetConfig(ctx: CommandContext): Document {
  const rs = requireReplSet(ctx.proc)
  return {
    config: {
      _id: rs.setName,
      version: rs.setVersion,
      term: rs.term,
      members: rs.members.map((m, i) => ({
        _id: i,
        host: m.hostPort,
        arbiterOnly: m.isArbiter,
        buildIndexes: true,
        hidden: m.member?.hidden ?? false,
        // MemberConfig::_priority is a double.
        priority: exactDouble(m.member?.priority ?? 1),
        tags: {},
        secondaryDelaySecs: Long.fromNumber(0),
        votes: 1,
      })),
      protocolVersion: Long.fromNumber(1),
      settings: {heartbeatIntervalMillis: 2000, electionTimeoutMillis: 10000},
    },
    ok: 1,
  }
}

export const replSetCommands: CommandSpec[] = [
  {name: 'replSetGetStatus', handler: replSetGetStatus, authz: clusterMonitor},
  {name: 'replSetGetConfig', handler: replSetGetConfig, authz: clusterMonitor},
]
