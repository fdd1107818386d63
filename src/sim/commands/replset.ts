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
  return p.isPrimaryMember ? {state: 1, stateStr: 'PRIMARY'} : {state: 2, stateStr: 'SECONDARY'}
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
      syncSourceHost: m.role === 'secondary' ? ctx.proc.primaryHost() ?? '' : '',
      syncSourceId: m.role === 'secondary' ? 0 : -1,
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
    majorityVoteCount: Math.floor(rs.members.length / 2) + 1,
    writeMajorityCount: Math.floor(rs.members.length / 2) + 1,
    votingMembersCount: rs.members.length,
    writableVotingMembersCount: rs.members.length,
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
      members: rs.members.map((m, i) => ({_id: i, host: m.hostPort, arbiterOnly: false, buildIndexes: true, hidden: false, priority: i === 0 ? 2 : 1, tags: {}, secondaryDelaySecs: Long.fromNumber(0), votes: 1})),
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
