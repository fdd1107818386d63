/**
 * One client socket of a simulated process: frames bytes into messages and runs them
 * strictly in order (the reply to request N is written before request N+1 starts).
 */
import type {Socket} from 'node:net'
import type {Document} from 'bson'
import {MessageFramer} from '../../wire/index.js'
import type {ScramServerConversation} from '../auth/scram-conversation.js'
import type {CommandSpec, CurrentOpType} from '../commands/registry.js'
import type {SimProcess} from '../process.js'
import {handleMessage} from './dispatch.js'

/** The operation a connection is running (for currentOp, killOp and connections.active). */
export interface ActiveOp {
  opid: number
  type: CurrentOpType
  ns: string
  cmd: Document
  spec: CommandSpec
  startedAt: Date
  startedHr: bigint
  killed: boolean
  /** Waiting for a lock (the lock table, or sharded DDL locks); shown as currentOp's waitingForLock. */
  waitingForLock?: boolean
  /** In-memory DDL locks this operation holds (sharded topology, 7.0 profile). */
  ddlLocks?: Array<{resource: string; reason: string}>
}

export interface AuthenticatedUser {
  user: string
  db: string
}

export class ClientConnection {
  readonly createdAt = new Date()
  /** "ip:port" of the peer, as currentOp's `client`. */
  readonly remote: string
  clientMetadata: Document | undefined
  readonly users: AuthenticatedUser[] = []
  readonly conversations = new Map<number, ScramServerConversation>()
  nextConversationId = 1
  op: ActiveOp | null = null
  /** Set once the connection streams hello/isMaster replies (exhaust). */
  exhaust: 'hello' | 'isMaster' | null = null
  /** Wakes an awaitable hello early (topology change or close). */
  wake: (() => void) | null = null
  setupPending = true
  handshakeDone = false
  closed = false
  private readonly framer = new MessageFramer()
  private readonly queue: Buffer[] = []
  private running = false

  constructor(
    readonly proc: SimProcess,
    readonly id: number,
    readonly socket: Socket,
  ) {
    this.remote = `${socket.remoteAddress ?? '127.0.0.1'}:${socket.remotePort ?? 0}`
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', () => {
      /* 'close' follows */
    })
    socket.on('close', () => this.onClose())
  }

  get appName(): string | undefined {
    const name = this.clientMetadata?.application?.name
    return typeof name === 'string' ? name : undefined
  }

  private onData(chunk: Buffer): void {
    try {
      this.framer.push(chunk, (m) => this.queue.push(m))
    } catch {
      this.destroy()
      return
    }
    if (!this.running && this.queue.length > 0) void this.run()
  }

  private async run(): Promise<void> {
    this.running = true
    try {
      while (this.queue.length > 0 && !this.closed) {
        await handleMessage(this, this.queue.shift()!)
      }
    } catch {
      this.destroy()
    } finally {
      this.running = false
    }
  }

  send(bytes: Buffer): void {
    if (this.closed) return
    this.proc.counters.bytesOut += bytes.length
    this.socket.write(bytes)
  }

  destroy(): void {
    if (!this.socket.destroyed) this.socket.destroy()
    this.onClose()
  }

  private onClose(): void {
    if (this.closed) return
    this.closed = true
    this.queue.length = 0
    this.conversations.clear()
    const wake = this.wake
    this.wake = null
    wake?.()
    this.proc.connectionClosed(this)
  }
}
