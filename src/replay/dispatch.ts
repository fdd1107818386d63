/**
 * The replay's own dispatcher (the simulated cluster's is not involved): one
 * command in, one reply out, from the captured reads of one host. Pure apart
 * from the clock it is given, so it is tested without sockets.
 */
import {Long, type Document} from 'bson'

import type {SnapshotRead} from '../snapshot/format.js'
import {currentOpKind, matchRead, readNameOf} from './match.js'

/** What one listener serves: one captured host's reads (names already rewritten to listeners). */
export interface ReplayHostState {
  /** The listener's "127.0.0.1:port" (the host's name inside every served document). */
  listener: string
  reads: readonly SnapshotRead[]
}

export interface ReplayContext {
  /** The snapshot file, named in "not captured" errors. */
  file: string
  capturedAt: Date
  /** The file's formatVersion (1 kept node locks on a sharded cluster only): named when node locks were not captured. */
  formatVersion?: number
  /**
   * Milliseconds since the replay started (plus a test's clock offset, see ReplayOptions): every captured
   * clock moves forward by this much, real time as it passes (the capture's own time scale shrinks its
   * intervals, not its clock), so ages computed against them stay the capture's.
   */
  elapsedMS(): number
}

const AUTH_COMMANDS = new Set(['saslstart', 'saslcontinue', 'authenticate', 'getnonce', 'speculativeauthenticate'])

/** Commands that change something: a replay only serves what was read. */
const WRITE_COMMANDS = new Set(
  [
    'insert', 'update', 'delete', 'findAndModify', 'bulkWrite', 'create', 'drop', 'dropDatabase', 'createIndexes', 'dropIndexes',
    'renameCollection', 'collMod', 'convertToCapped', 'compact', 'reIndex', 'createUser', 'dropUser', 'updateUser', 'grantRolesToUser',
    'revokeRolesFromUser', 'createRole', 'dropRole', 'enableSharding', 'shardCollection', 'moveChunk', 'moveRange', 'split',
    'balancerStart', 'balancerStop', 'killOp', 'fsync', 'fsyncUnlock', 'setParameter', 'setFeatureCompatibilityVersion',
    'replSetStepDown', 'replSetReconfig', 'shutdown', 'commitTransaction', 'abortTransaction', 'mapReduce',
  ].map((name) => name.toLowerCase()),
)

export const REPLAY_AUTH_MESSAGE = 'a replay serves reads without authentication: leave credentials out of the URI'

function errorReply(code: number, codeName: string, errmsg: string): Document {
  return {ok: 0, errmsg, code, codeName}
}

/** The captured error as the server sent it (a driver-side failure has no code: its message is kept). */
function capturedError(error: NonNullable<SnapshotRead['error']>): Document {
  return {
    ok: 0,
    errmsg: error.message,
    ...(error.code === undefined ? {} : {code: error.code}),
    ...(error.codeName === undefined ? {} : {codeName: error.codeName}),
  }
}

/**
 * Every clock in a reply moves with the replay, by the same amount: `localTime` (hello, serverStatus),
 * config.lockpings / config.mongos `ping`, config.locks `when`, a write's date, … — every BSON Date in
 * the document. Ages a command computes from two of them (a ping against the server's clock, a lock
 * held since `when`) are the capture's however long the replay has run, so the verdicts stay as
 * captured (a holder is not declared dead because the replay ran on); the clock the views print is
 * the capture's plus the time since the replay began.
 */
export function shiftDates<T>(value: T, byMS: number): T {
  if (byMS === 0) return value
  const shift = (v: unknown): unknown => {
    if (v instanceof Date) return new Date(v.getTime() + byMS)
    if (Array.isArray(v)) return v.map(shift)
    // Plain documents only: BSON values (Long, Timestamp, ObjectId, Binary …) are kept as they are.
    if (v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, shift(x)]))
    }
    return v
  }
  return shift(value) as T
}

function shiftClock(reply: Document, context: ReplayContext): Document {
  return shiftDates(reply, context.elapsedMS())
}

/** What a driver sends to connect or monitor (never the read layer's own `{hello: 1}`). */
function isDriverHandshake(command: Document, legacy: boolean): boolean {
  return legacy || 'helloOk' in command || 'client' in command || 'topologyVersion' in command || 'maxAwaitTimeMS' in command
}

function helloReply(read: SnapshotRead, host: ReplayHostState, command: Document, context: ReplayContext): Document {
  // No topologyVersion: the driver's monitor polls instead of streaming. No compression, no auth: the replay speaks neither.
  const {topologyVersion: _streamed, compression: _compression, speculativeAuthenticate: _auth, ...captured} = read.reply as Document
  const reply: Document = shiftClock(captured, context)
  const writable = reply.isWritablePrimary ?? reply.ismaster
  if (writable !== undefined) {
    // Answer in the vocabulary asked: the legacy handshake reads `ismaster`, hello `isWritablePrimary`.
    reply.ismaster = writable
    reply.isWritablePrimary = writable
  }
  // helloOk lets the driver monitor with `hello`: only when this host answered a hello at capture.
  if (command.helloOk === true && host.reads.some((r) => r.name === 'hello' && r.error === undefined)) reply.helloOk = true
  reply.ok ??= 1
  reply.pooltoolReplay = {capturedAt: context.capturedAt}
  return reply
}

function hello(host: ReplayHostState, command: Document, db: string, legacy: boolean, context: ReplayContext): Document {
  let read = matchRead(host.reads, command, db)
  if (isDriverHandshake(command, legacy) && (read === undefined || read.error !== undefined)) {
    // The driver's handshake and monitor need an answer whatever the read layer saw first (a 4.2 server's CommandNotFound to hello).
    read = [...host.reads].reverse().find((r) => (r.name === 'hello' || r.name === 'isMaster') && r.error === undefined && !Array.isArray(r.reply))
  }
  if (read === undefined) return notCaptured('hello', context)
  if (read.error !== undefined) return capturedError(read.error)
  return helloReply(read, host, command, context)
}

function notCaptured(name: string, context: ReplayContext): Document {
  return errorReply(59, 'CommandNotFound', `${name} was not captured in ${context.file}: a replay answers only the reads its capture made`)
}

/**
 * The operation documents behind node locks were not captured on this host: the message says what that means
 * (unknown, not "no locks"), since `locks list` prints it as the node's reason.
 */
function operationsNotCaptured(context: ReplayContext): Document {
  const older = context.formatVersion !== undefined && context.formatVersion < 2 ? ' (a format-1 snapshot holds them on a sharded cluster\'s shard and config primaries only)' : ''
  return errorReply(
    59,
    'CommandNotFound',
    `$currentOp operations were not captured in ${context.file}: this node's locks and operations are unknown, not none${older}; a replay answers only the reads its capture made`,
  )
}

function cursorReply(ns: string, documents: Document[]): Document {
  return {cursor: {id: Long.fromNumber(0), ns, firstBatch: documents}, ok: 1}
}

/** One command from a client of `host`'s listener → the reply document. */
export function dispatchReplay(host: ReplayHostState, command: Document, db: string, legacy: boolean, context: ReplayContext): Document {
  const verb = Object.keys(command)[0] ?? ''
  const lower = verb.toLowerCase()
  if (lower === 'hello' || lower === 'ismaster') return hello(host, command, db, legacy, context)
  if (lower === 'ping') return {ok: 1}
  if (lower === 'endsessions') return {ok: 1}
  if (lower === 'killcursors') {
    const cursors = Array.isArray(command.cursors) ? command.cursors : []
    return {cursorsKilled: [], cursorsNotFound: cursors, cursorsAlive: [], cursorsUnknown: [], ok: 1}
  }
  if (lower === 'getmore') return errorReply(43, 'CursorNotFound', `cursor id ${String(command.getMore)} not found: a replay returns every cursor whole`)
  if (AUTH_COMMANDS.has(lower)) return errorReply(18, 'AuthenticationFailed', REPLAY_AUTH_MESSAGE)
  // CommandNotFound, not IllegalOperation: the driver rewrites code 20 on a write into advice about retryable writes.
  if (WRITE_COMMANDS.has(lower)) return errorReply(59, 'CommandNotFound', `${verb} was not run: a replay is read only (it serves the reads captured in ${context.file})`)
  const name = readNameOf(command, db)
  const read = matchRead(host.reads, command, db)
  if (read === undefined && name === '$currentOp' && currentOpKind(command) === 'raw') return operationsNotCaptured(context)
  if (read === undefined) return notCaptured(name ?? verb, context)
  if (read.error !== undefined) return capturedError(read.error)
  const reply = read.reply
  if (Array.isArray(reply)) {
    const ns = lower === 'find' ? `${db}.${String(command.find)}` : `${db}.$cmd.aggregate`
    return cursorReply(ns, shiftDates(reply, context.elapsedMS()))
  }
  if (reply === undefined) return notCaptured(name ?? verb, context)
  // A published document assembled into a fixture may come without its `ok`.
  return shiftClock(reply.ok === undefined ? {...reply, ok: 1} : reply, context)
}
