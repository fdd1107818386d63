/**
 * hello / isMaster / ismaster: the handshake (client metadata, saslSupportedMechs,
 * speculativeAuthenticate) and the awaitable form used by streaming monitors.
 */
import {Long, ObjectId, type Document} from 'bson'
import {isExhaustAllowed} from '../../wire/index.js'
import {CommandError} from '../errors.js'
import type {SimProcess} from '../process.js'
import {oplogOf} from '../repl/oplog.js'
import {isNumeric, isPlainObject, toNumber} from '../storage/values.js'
import type {ClientConnection} from '../server/connection.js'
import {speculativeSaslStart} from './auth.js'
import type {CommandContext, CommandSpec} from './registry.js'

export const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024
export const MAX_MESSAGE_SIZE_BYTES = 48_000_000
export const MAX_WRITE_BATCH_SIZE = 100_000

export function topologyVersionDoc(proc: SimProcess): Document {
  return {processId: proc.topologyVersion.processId, counter: Long.fromNumber(proc.topologyVersion.counter)}
}

function sameTopology(proc: SimProcess, tv: unknown): boolean {
  if (!isPlainObject(tv)) return false
  const pid = tv.processId
  const same = pid instanceof ObjectId ? pid.equals(proc.topologyVersion.processId) : false
  return same && isNumeric(tv.counter) && toNumber(tv.counter) === proc.topologyVersion.counter
}

/** The hello reply body (without handshake extras). */
export function helloFields(proc: SimProcess, conn: ClientConnection, modern: boolean): Document {
  const doc: Document = {}
  const writable = proc.isWritablePrimary
  if (modern) doc.isWritablePrimary = writable
  else doc.ismaster = writable
  doc.topologyVersion = topologyVersionDoc(proc)
  const rs = proc.replSet
  if (rs) {
    Object.assign(doc, proc.replSetHelloLists())
    doc.setName = rs.setName
    doc.setVersion = rs.setVersion
    doc.secondary = proc.isSecondaryMember
    const primary = proc.primaryHost()
    if (primary) doc.primary = primary
    Object.assign(doc, proc.selfMemberFields())
    doc.me = proc.hostPort
    if (proc.isPrimaryMember) doc.electionId = rs.electionId
    // The manual's hello `lastWrite`: the set's last oplog entry; replication is instant, so it is also the majority's.
    const last = oplogOf(proc.data)?.last()
    const now = new Date()
    doc.lastWrite = last
      ? {opTime: last.opTime, lastWriteDate: last.wall, majorityOpTime: last.opTime, majorityWriteDate: last.wall}
      : {lastWriteDate: now, majorityWriteDate: now}
  }
  if (proc.role === 'mongos') doc.msg = 'isdbgrid'
  // A config-server replica set member says so (mongod's hello: `configsvr: 2`, the CSRS value).
  if (proc.role === 'config') doc.configsvr = 2
  doc.maxBsonObjectSize = MAX_BSON_OBJECT_SIZE
  doc.maxMessageSizeBytes = MAX_MESSAGE_SIZE_BYTES
  doc.maxWriteBatchSize = MAX_WRITE_BATCH_SIZE
  doc.localTime = new Date()
  doc.logicalSessionTimeoutMinutes = 30
  doc.connectionId = conn.id
  doc.minWireVersion = 0
  doc.maxWireVersion = proc.profile.maxWireVersion
  doc.readOnly = false
  return doc
}

async function hello(ctx: CommandContext): Promise<Document> {
  const {proc, conn, cmd} = ctx
  if (!conn.handshakeDone) {
    conn.handshakeDone = true
    if (isPlainObject(cmd.client)) conn.clientMetadata = cmd.client
  } else if (cmd.client !== undefined) {
    throw new CommandError(186, 'The client metadata document may only be sent in the first hello')
  }

  if (cmd.topologyVersion !== undefined && cmd.maxAwaitTimeMS !== undefined) {
    // A streaming monitor: counted under exhaustHello / exhaustIsMaster from its first awaitable request.
    if (isExhaustAllowed(ctx.flags)) conn.exhaust = ctx.spec.name === 'hello' ? 'hello' : 'isMaster'
    if (!isNumeric(cmd.maxAwaitTimeMS) || toNumber(cmd.maxAwaitTimeMS) < 0) {
      throw new CommandError(2, 'maxAwaitTimeMS must be a non-negative integer')
    }
    if (sameTopology(proc, cmd.topologyVersion)) {
      await proc.waitForTopologyChange(conn, toNumber(cmd.maxAwaitTimeMS))
    }
  }

  const reply = helloFields(proc, conn, ctx.spec.name === 'hello')
  if (cmd.helloOk === true) reply.helloOk = true

  if (typeof cmd.saslSupportedMechs === 'string') {
    if (proc.profile.saslSupportedMechsReceived) proc.counters.saslSupportedMechsReceived++
    const dot = cmd.saslSupportedMechs.indexOf('.')
    if (dot > 0) {
      const user = proc.users.get(cmd.saslSupportedMechs.slice(0, dot), cmd.saslSupportedMechs.slice(dot + 1))
      if (user) reply.saslSupportedMechs = Object.keys(user.credentials)
    }
  }
  if (isPlainObject(cmd.speculativeAuthenticate) && proc.profile.speculativeAuth) {
    const spec = speculativeSaslStart(ctx, cmd.speculativeAuthenticate)
    if (spec) reply.speculativeAuthenticate = spec
  }
  reply.ok = 1
  return reply
}

export const helloCommands: CommandSpec[] = [
  {name: 'hello', handler: hello, noAuth: true, monitoring: true, sensitiveFields: ['speculativeAuthenticate']},
  {name: 'isMaster', aliases: ['ismaster'], handler: hello, noAuth: true, monitoring: true, sensitiveFields: ['speculativeAuthenticate']},
]
