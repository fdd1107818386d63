/**
 * The request path: decode → look up the command → authenticate/authorize → fault delays
 * and locks → handler → reply (OP_REPLY for the legacy OP_QUERY hello, OP_MSG otherwise,
 * streaming hello replies with moreToCome when the client allowed exhaust).
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {Double, type Document} from 'bson'
import {
  MSG_FLAG_MORE_TO_COME,
  OP_MSG,
  OP_QUERY,
  commandFromOpMsg,
  decodeOpMsg,
  decodeOpQuery,
  encodeOpMsg,
  encodeOpReply,
  isExhaustAllowed,
  isMoreToCome,
  nextRequestId,
} from '../../wire/index.js'
import {grants} from '../auth/roles.js'
import {allowedOnSecondary, commandNamespace, type CommandContext, type CommandSpec} from '../commands/registry.js'
import {nonNegative} from '../commands/util.js'
import {CommandError, errorDocument} from '../errors.js'
import {serviceTimeWithin, waitOutStall} from '../faults.js'
import {renderValue} from '../storage/collection.js'
import type {SimProcess} from '../process.js'
import {withClusterTime} from '../repl/optime.js'
import {checkCanRunHere, noteHandshake, readPreferenceMode} from '../repl/secondary-ok.js'
import {EXACT_DECODE, toExactForm} from '../storage/numbers.js'
import type {Release} from '../storage/locks.js'
import {acquireLocks, addCollectionQueueWait, lockPlan, takeFlowControlTicket} from '../status/op-locks.js'
import type {ActiveOp, ClientConnection} from './connection.js'

export async function handleMessage(conn: ClientConnection, message: Buffer): Promise<void> {
  const proc = conn.proc
  proc.counters.bytesIn += message.length
  proc.counters.numRequests++
  const requestID = message.readInt32LE(4)
  const opCode = message.readInt32LE(12)
  let cmd: Document
  let db: unknown
  let flags = 0
  let legacy = false
  /** The request's read preference mode (decides whether a secondary may answer an opt-in read). */
  let readPref = 'primary'
  try {
    if (opCode === OP_MSG) {
      // Numbers keep their BSON type end to end (5.0 stays a double, int64 a Long): see storage/numbers.ts.
      const msg = decodeOpMsg(message, EXACT_DECODE)
      cmd = toExactForm(commandFromOpMsg(msg))
      flags = msg.flags
      db = cmd.$db
      readPref = readPreferenceMode(cmd.$readPreference)
    } else if (opCode === OP_QUERY) {
      const q = decodeOpQuery(message, EXACT_DECODE)
      if (!q.fullCollectionName.endsWith('.$cmd')) {
        conn.destroy()
        return
      }
      legacy = true
      const wrapped = q.query.$query && typeof q.query.$query === 'object'
      cmd = toExactForm(wrapped ? q.query.$query : q.query)
      readPref = readPreferenceMode(wrapped ? q.query.$readPreference : undefined, q.flags)
      db = q.fullCollectionName.slice(0, -5)
    } else {
      // OP_COMPRESSED is never negotiated; anything else is a protocol error.
      conn.destroy()
      return
    }
  } catch {
    conn.destroy()
    return
  }

  let reply: Document
  let spec: CommandSpec | undefined
  if (typeof db !== 'string' || db.length === 0) {
    reply = new CommandError(40571, 'OP_MSG requests require a $db argument').toDocument()
  } else {
    ;({reply, spec} = await execute(conn, cmd, db, flags, legacy, readPref))
  }
  if (conn.closed) return
  if (proc.faults.stallUntil > Date.now()) {
    await waitOutStall(proc.faults)
    if (conn.closed) return
  }

  if (legacy) {
    conn.send(encodeOpReply({responseTo: requestID, documents: [onTheWire(reply, proc)]}))
    return
  }
  if (isMoreToCome(flags)) return // fire-and-forget request (w:0): no reply

  const streaming =
    spec?.monitoring === true &&
    isExhaustAllowed(flags) &&
    reply.ok === 1 &&
    cmd.topologyVersion !== undefined &&
    cmd.maxAwaitTimeMS !== undefined
  let rid = nextRequestId()
  conn.send(encodeOpMsg({requestID: rid, responseTo: requestID, flags: streaming ? MSG_FLAG_MORE_TO_COME : 0, body: onTheWire(reply, proc)}))
  if (!streaming || !spec) return

  // Exhaust: keep answering the same awaitable hello until the socket closes.
  conn.exhaust = spec.name === 'hello' ? 'hello' : 'isMaster'
  while (!conn.closed) {
    cmd.topologyVersion = reply.topologyVersion
    ;({reply} = await execute(conn, cmd, db as string, flags, false, readPref))
    if (conn.closed) return
    if (proc.faults.stallUntil > Date.now()) {
      await waitOutStall(proc.faults)
      if (conn.closed) return
    }
    const more = reply.ok === 1
    const prev = rid
    rid = nextRequestId()
    conn.send(encodeOpMsg({requestID: rid, responseTo: prev, flags: more ? MSG_FLAG_MORE_TO_COME : 0, body: onTheWire(reply, proc)}))
    if (!more) {
      conn.exhaust = null
      return
    }
  }
}

/**
 * The reply as mongod writes it: `ok` is a double (1.0 / 0.0, CommandHelpers::appendSimpleCommandStatus
 * in src/mongo/db/commands.cpp). Handlers keep writing `ok: 1`, which the rest of the sim compares.
 */
function onTheWire(reply: Document, proc: SimProcess): Document {
  const out = typeof reply.ok === 'number' ? {...reply, ok: new Double(reply.ok)} : reply
  // Replica-set members and routers gossip the cluster time on every reply; a standalone does not.
  return proc.replSet !== undefined || proc.role === 'mongos' ? withClusterTime(out) : out
}

function unauthorized(ctx: CommandContext): CommandError {
  const value = ctx.cmd[ctx.name]
  return new CommandError(
    13,
    `not authorized on ${ctx.db} to execute command { ${ctx.name}: ${renderValue(value)}, $db: "${ctx.db}" }`,
  )
}

function isAuthorized(ctx: CommandContext): boolean {
  const req = ctx.spec.authz?.(ctx)
  if (!req) return true
  for (const u of ctx.conn.users) {
    const record = ctx.proc.users.get(u.db, u.user)
    if (record && grants(record.roles, req)) return true
  }
  return false
}

/**
 * What 5.1+ still accepts over legacy OP_QUERY: the handshake, and for old drivers the deprecated
 * buildInfo / authentication commands (checkAllowedOpQueryCommand, src/mongo/rpc/check_allowed_op_query_cmd.cpp).
 */
const OP_QUERY_ALLOWED = new Set(['hello', 'isMaster', 'ismaster', '_isSelf', 'authenticate', 'buildinfo', 'buildInfo', 'saslContinue', 'saslStart'])

/** Runs one command and never throws: failures become mongod-shaped error documents. */
export async function execute(
  conn: ClientConnection,
  cmd: Document,
  db: string,
  flags: number,
  legacy: boolean,
  readPref = 'primary',
): Promise<{reply: Document; spec?: CommandSpec}> {
  const proc = conn.proc
  const name = Object.keys(cmd)[0] ?? ''
  if (legacy && !proc.profile.opQueryCommands && !OP_QUERY_ALLOWED.has(name)) {
    // 5.1+ refuses the name before looking it up, so an unknown command is 352 too.
    return {
      reply: new CommandError(352, `Unsupported OP_QUERY command: ${name}. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal`).toDocument(),
    }
  }
  const found = proc.registry.lookup(name)
  const spec = found && (!found.availableOn || found.availableOn(proc)) ? found : undefined
  if (!spec) {
    proc.counters.unknownCommands++
    proc.counters.opcounters.command++
    return {reply: new CommandError(59, `no such command: '${name}'`).toDocument()}
  }
  const startedAt = performance.now()
  const ctx: CommandContext = {proc, conn, cmd, db, name, spec, flags}
  const ns = spec.lock === 'write' || spec.lock === 'read' || spec.currentOpType ? commandNamespace(ctx) : `${db}.$cmd`
  const op: ActiveOp = {
    opid: proc.nextOpId++,
    type: spec.currentOpType ?? 'command',
    ns,
    cmd,
    spec,
    startedAt: new Date(),
    startedHr: process.hrtime.bigint(),
    killed: false,
  }
  conn.op = op
  let reply: Document
  let release: Release | undefined
  try {
    if (conn.setupPending) {
      conn.setupPending = false
      if (proc.faults.setupCostMs > 0) await sleep(proc.faults.setupCostMs)
    }
    if (proc.authEnabled && !spec.noAuth) {
      if (conn.users.length === 0) throw new CommandError(13, `command ${name} requires authentication`)
      if (!isAuthorized(ctx)) throw unauthorized(ctx)
    }
    if (spec.monitoring) noteHandshake(conn, name, cmd)
    // after authorization, before locks and the handler, as mongod's dispatch checks it
    checkCanRunHere(proc, conn, db, allowedOnSecondary(spec), readPref)
    // currentOp's locks / lockStats of this operation (a mongod's; a router has no lock manager)
    const lockKind = proc.role === 'mongos' ? undefined : spec.lock === 'read' || spec.lock === 'global' || spec.lock === 'dbExclusive' ? spec.lock : spec.write || spec.lock === 'write' ? 'write' : undefined
    // The locks go through the lock table (storage/lock-table.ts): the op waits where mongod's would,
    // behind the fsyncLockWorker's Global S or an index build's Collection X, with waitingForLock: true.
    if (lockKind) {
      if (lockKind !== 'read' && proc.replSet !== undefined) takeFlowControlTicket(op)
      const queue = lockKind === 'read' || lockKind === 'global' ? 'readers' : 'writers'
      await acquireLocks(proc.locks, op, lockPlan(lockKind, proc.profile, ns), queue, (w) => (op.waitingForLock = w))
      if (conn.closed) throw new CommandError(6, 'connection closed')
    }
    if (spec.lock === 'write') {
      // A mongod's write counted its acquisitions when acquireLocks requested them: the queue adds its wait only.
      const r = proc.locks.acquireWrite(ns, lockKind !== undefined)
      if (typeof r === 'function') release = r
      else {
        const waitStarted = process.hrtime.bigint()
        // the sim's per-collection write queue (its way to make writes contend): counted as a
        // Collection wait, as storage/locks.ts counts it for serverStatus
        release = await r
        if (lockKind) addCollectionQueueWait(op, Number((process.hrtime.bigint() - waitStarted) / 1000n))
      }
    }
    if (!spec.monitoring && proc.faults.latencyMs > 0) await serviceTimeWithin(proc.faults.latencyMs, nonNegative(cmd, 'maxTimeMS'), startedAt)
    if (op.killed) throw new CommandError(11601, 'operation was interrupted')
    if (conn.closed) throw new CommandError(6, 'connection closed')
    // A mongod counted these acquisitions when acquireLocks requested them (before any wait, as
    // LockerImpl::_lockBegin does); only a process without a lock table (a router) counts them here.
    if (!lockKind) switch (spec.lock) {
      case 'read':
        proc.locks.read()
        break
      case 'global':
        proc.locks.globalRead()
        break
      case 'dbExclusive':
        proc.locks.databaseExclusive()
        break
      default:
        break
    }
    const result = spec.handler(ctx)
    reply = result instanceof Promise ? await result : result
  } catch (e) {
    reply = errorDocument(e)
  } finally {
    release?.()
    proc.locks.table.releaseAll(op)
    if (conn.op === op) conn.op = null
  }
  proc.counters.command(spec.name, reply.ok !== 1)
  const counter = spec.opCounter ?? 'command'
  if (counter !== 'self') proc.counters.opcounters[counter]++
  return {reply, spec}
}
