/** saslStart / saslContinue (SCRAM-SHA-1, SCRAM-SHA-256), speculative authentication, logout, connectionStatus. */
import {randomBytes} from 'node:crypto'
import {Binary, type Document} from 'bson'
import {authFailed, ScramServerConversation} from '../auth/scram-conversation.js'
import {CommandError} from '../errors.js'
import {isPlainObject, toNumber} from '../storage/values.js'
import {isScramMechanism, type ScramMechanism} from '../../wire/index.js'
import type {CommandContext, CommandSpec} from './registry.js'

function payloadText(payload: unknown): string {
  if (payload instanceof Binary) return Buffer.from(payload.buffer.subarray(0, payload.position)).toString('utf8')
  if (payload instanceof Uint8Array) return Buffer.from(payload).toString('utf8')
  if (typeof payload === 'string') return payload
  throw new CommandError(14, "BSON field 'payload' is the wrong type, expected type 'binData'")
}

function binary(text: string): Binary {
  return new Binary(Buffer.from(text, 'utf8'))
}

function mechanismOf(cmd: Document): ScramMechanism {
  const m = cmd.mechanism
  if (typeof m !== 'string') throw new CommandError(40414, "BSON field 'saslStart.mechanism' is missing but a required field")
  if (!isScramMechanism(m)) {
    throw new CommandError(2, `Received authentication for mechanism ${m} which is unknown or not enabled`)
  }
  return m
}

/** Runs a saslStart step; counts per mechanism. Returns the reply body (without ok). */
function startConversation(ctx: CommandContext, cmd: Document, db: string, speculative: boolean): Document {
  const {proc, conn} = ctx
  const mech = mechanismOf(cmd)
  const counters = proc.counters.auth[mech]
  counters.authenticate.received++
  if (speculative) counters.speculativeAuthenticate.received++
  const options = isPlainObject(cmd.options) ? cmd.options : {}
  const skipEmpty = proc.profile.skipEmptyExchange && options.skipEmptyExchange === true
  const id = conn.nextConversationId++
  const conversation = new ScramServerConversation(id, mech, db, speculative, skipEmpty)
  const step = conversation.start(payloadText(cmd.payload), proc.users)
  conn.conversations.set(id, conversation)
  return {conversationId: id, done: step.done, payload: binary(step.payload)}
}

/** For hello's speculativeAuthenticate: the saslStart reply, or undefined (silently) on failure. */
export function speculativeSaslStart(ctx: CommandContext, embedded: Document): Document | undefined {
  if (embedded.saslStart === undefined) return undefined // X.509 `authenticate` is not simulated
  const db = typeof embedded.db === 'string' ? embedded.db : 'admin'
  try {
    return startConversation(ctx, embedded, db, true)
  } catch {
    return undefined
  }
}

function saslStart(ctx: CommandContext): Document {
  return {...startConversation(ctx, ctx.cmd, ctx.db, false), ok: 1}
}

function saslContinue(ctx: CommandContext): Document {
  const {proc, conn, cmd} = ctx
  const id = toNumber(cmd.conversationId)
  const conversation = conn.conversations.get(id)
  if (!conversation) throw new CommandError(17, 'No SASL session state found')
  let step
  try {
    step = conversation.continue(payloadText(cmd.payload))
  } catch (e) {
    conn.conversations.delete(id)
    throw e instanceof CommandError && e.code === 18 ? e : authFailed()
  }
  if (step.done) {
    conn.conversations.delete(id)
    if (!conn.users.some((u) => u.user === conversation.user && u.db === conversation.db)) {
      conn.users.push({user: conversation.user, db: conversation.db})
    }
    const counters = proc.counters.auth[conversation.mechanism]
    counters.authenticate.successful++
    if (conversation.speculative) counters.speculativeAuthenticate.successful++
  }
  return {conversationId: id, done: step.done, payload: binary(step.payload), ok: 1}
}

function authenticate(ctx: CommandContext): Document {
  const mech = ctx.cmd.mechanism
  throw new CommandError(334, `Received authentication for mechanism ${String(mech)} which is not enabled`)
}

/**
 * The pre-SCRAM nonce (MONGODB-CR's first step). 4.x still answers it — mgo-based tools send it
 * before anything else — with 64 random bits in hex (`CmdGetNonce`, authentication_commands.cpp).
 */
function getnonce(): Document {
  return {nonce: randomBytes(8).toString('hex'), ok: 1}
}

function logout(ctx: CommandContext): Document {
  const users = ctx.conn.users
  for (let i = users.length - 1; i >= 0; i--) if (users[i].db === ctx.db) users.splice(i, 1)
  return {ok: 1}
}

function connectionStatus(ctx: CommandContext): Document {
  const users = ctx.conn.users.map((u) => ({user: u.user, db: u.db}))
  // __system@local holds its privileges directly, not through roles (authorization_manager_impl.cpp): it reports none.
  const roles = ctx.conn.users.flatMap((u) => {
    const record = ctx.proc.users.get(u.db, u.user)
    return record && !record.internal ? record.roles : []
  })
  return {authInfo: {authenticatedUsers: users, authenticatedUserRoles: roles.map((r) => ({role: r.role, db: r.db}))}, ok: 1}
}

export const authCommands: CommandSpec[] = [
  {name: 'saslStart', handler: saslStart, noAuth: true, sensitiveFields: ['payload']},
  {name: 'saslContinue', handler: saslContinue, noAuth: true, sensitiveFields: ['payload']},
  {name: 'authenticate', handler: authenticate, noAuth: true},
  {name: 'logout', handler: logout, noAuth: true},
  {name: 'getnonce', handler: getnonce, noAuth: true, availableOn: (proc) => proc.profile.getnonce},
  {name: 'connectionStatus', handler: connectionStatus, noAuth: true},
]
