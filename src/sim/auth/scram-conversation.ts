/** Server side of one SCRAM conversation (saslStart → saslContinue [→ empty saslContinue]). */
import {CommandError} from '../errors.js'
import {
  authMessage,
  buildServerFinal,
  buildServerFirst,
  generateNonce,
  parseClientFinal,
  parseClientFirst,
  verifyClientProof,
  ScramError,
  type ScramCredential,
  type ScramMechanism,
} from '../../wire/index.js'
import type {UserStore} from './users.js'

export function authFailed(): CommandError {
  return new CommandError(18, 'Authentication failed.')
}

export interface ScramStep {
  payload: string
  done: boolean
}

export class ScramServerConversation {
  private clientFirstBare = ''
  private serverFirst = ''
  private nonce = ''
  private credential: ScramCredential | null = null
  private stage: 'new' | 'first-sent' | 'final-sent' | 'done' = 'new'
  user = ''

  constructor(
    readonly conversationId: number,
    readonly mechanism: ScramMechanism,
    readonly db: string,
    readonly speculative: boolean,
    private readonly skipEmptyExchange: boolean,
  ) {}

  get finished(): boolean {
    return this.stage === 'done'
  }

  /** client-first → server-first. Unknown users and missing credentials fail as mongod does (code 18). */
  start(payload: string, users: UserStore): ScramStep {
    if (this.stage !== 'new') throw new CommandError(17, 'SCRAM conversation already started')
    let first
    try {
      first = parseClientFirst(payload)
    } catch (e) {
      throw new CommandError(17, e instanceof ScramError ? e.message : 'malformed SCRAM message')
    }
    this.user = first.username
    const record = users.get(this.db, first.username)
    const credential = record?.credentials[this.mechanism]
    if (!credential) throw authFailed()
    this.credential = credential
    this.clientFirstBare = first.bare
    this.nonce = first.nonce + generateNonce()
    this.serverFirst = buildServerFirst(this.nonce, credential.salt, credential.iterationCount)
    this.stage = 'first-sent'
    return {payload: this.serverFirst, done: false}
  }

  /** client-final → server-final (done unless the client wants the legacy empty exchange). */
  continue(payload: string): ScramStep {
    if (this.stage === 'final-sent') {
      // Legacy third round trip: empty payload from the client, empty reply, done.
      this.stage = 'done'
      return {payload: '', done: true}
    }
    if (this.stage !== 'first-sent' || !this.credential) throw authFailed()
    let final
    try {
      final = parseClientFinal(payload)
    } catch {
      throw authFailed()
    }
    if (final.nonce !== this.nonce || final.channelBinding !== 'biws') throw authFailed()
    const msg = authMessage(this.clientFirstBare, this.serverFirst, final.withoutProof)
    const signature = verifyClientProof(this.mechanism, this.credential, msg, final.proof)
    if (!signature) throw authFailed()
    const done = this.skipEmptyExchange
    this.stage = done ? 'done' : 'final-sent'
    return {payload: buildServerFinal(signature), done}
  }
}
