/**
 * One outbound connection of a simulated process (mongos → shard, config server → shard,
 * mongos → config server): a real TCP socket speaking OP_MSG through src/wire/codec.ts,
 * with the internal handshake (hello) and, when the cluster requires it, SCRAM-SHA-256
 * as the cluster's root user (the simulated stand-in for keyfile auth).
 */
import {connect, type Socket} from 'node:net'
import type {Document} from 'bson'
import {MessageFramer, OP_MSG, decodeOpMsg, encodeOpMsg, nextRequestId} from '../../wire/codec.js'
import {ScramClient} from '../../wire/scram.js'
import {CommandError} from '../errors.js'

export interface InternalCredentials {
  username: string
  password: string
  source: string
}

export class WireConnectionError extends Error {
  override name = 'WireConnectionError'
}

let nextConnectionNumber = 1

export class WireConnection {
  readonly id = nextConnectionNumber++
  readonly createdAt = Date.now()
  lastUsed = Date.now()
  closed = false
  private readonly framer = new MessageFramer()
  private pending: {requestId: number; resolve: (d: Document) => void; reject: (e: Error) => void} | null = null

  private constructor(
    readonly host: string,
    private readonly socket: Socket,
  ) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => {
      try {
        this.framer.push(chunk, (m) => this.onMessage(Buffer.from(m)))
      } catch (e) {
        this.fail(new WireConnectionError(`bad reply from ${host}: ${String(e)}`))
      }
    })
    socket.on('error', (e) => this.fail(new WireConnectionError(`connection to ${host} failed: ${e.message}`)))
    socket.on('close', () => this.fail(new WireConnectionError(`connection to ${host} closed`)))
  }

  /** Opens, says hello (internal client metadata) and authenticates when credentials are given. */
  static async open(host: string, appName: string, credentials?: InternalCredentials, timeoutMs = 10_000): Promise<WireConnection> {
    const idx = host.lastIndexOf(':')
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({host: host.slice(0, idx), port: Number(host.slice(idx + 1))})
      const timer = setTimeout(() => {
        s.destroy()
        reject(new WireConnectionError(`connecting to ${host} timed out`))
      }, timeoutMs)
      s.once('connect', () => {
        clearTimeout(timer)
        s.removeAllListeners('error')
        resolve(s)
      })
      s.once('error', (e) => {
        clearTimeout(timer)
        reject(new WireConnectionError(`connection to ${host} failed: ${e.message}`))
      })
    })
    const conn = new WireConnection(host, socket)
    try {
      await conn.command('admin', {hello: 1, client: {driver: {name: 'NetworkInterfaceTL', version: 'pooltool-sim'}, application: {name: appName}, os: {type: 'Linux'}}})
      if (credentials) await conn.authenticate(credentials)
    } catch (e) {
      conn.close()
      throw e
    }
    return conn
  }

  private async authenticate(c: InternalCredentials): Promise<void> {
    const scram = new ScramClient('SCRAM-SHA-256', c.username, c.password)
    const start = await this.checked(c.source, {saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: Buffer.from(scram.first()), autoAuthorize: 1, options: {skipEmptyExchange: true}})
    const serverFirst = Buffer.from(start.payload.buffer ?? start.payload).toString()
    const fin = await this.checked(c.source, {saslContinue: 1, conversationId: start.conversationId, payload: Buffer.from(scram.final(serverFirst))})
    if (!fin.done) await this.checked(c.source, {saslContinue: 1, conversationId: start.conversationId, payload: Buffer.alloc(0)})
  }

  private async checked(db: string, body: Document): Promise<Document> {
    const reply = await this.command(db, body)
    if (reply.ok !== 1) throw new CommandError(typeof reply.code === 'number' ? reply.code : 1, String(reply.errmsg ?? 'internal command failed'))
    return reply
  }

  private onMessage(m: Buffer): void {
    const p = this.pending
    if (!p) return
    if (m.readInt32LE(12) !== OP_MSG || m.readInt32LE(8) !== p.requestId) {
      this.fail(new WireConnectionError(`unexpected reply from ${this.host}`))
      return
    }
    this.pending = null
    try {
      p.resolve(decodeOpMsg(m, {promoteLongs: false}).body)
    } catch (e) {
      p.reject(e as Error)
    }
  }

  private fail(e: Error): void {
    this.closed = true
    if (!this.socket.destroyed) this.socket.destroy()
    const p = this.pending
    this.pending = null
    p?.reject(e)
  }

  /** Sends one command and waits for its reply (one at a time per connection). */
  command(db: string, body: Document): Promise<Document> {
    if (this.closed) return Promise.reject(new WireConnectionError(`connection to ${this.host} is closed`))
    if (this.pending) return Promise.reject(new Error('internal: concurrent use of one wire connection'))
    this.lastUsed = Date.now()
    const requestId = nextRequestId()
    return new Promise<Document>((resolve, reject) => {
      this.pending = {requestId, resolve, reject}
      this.socket.write(encodeOpMsg({requestID: requestId, body: {...body, $db: db}}))
    })
  }

  close(): void {
    this.fail(new WireConnectionError(`connection to ${this.host} closed`))
  }
}
