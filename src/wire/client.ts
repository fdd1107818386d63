/**
 * A driver-free MongoDB client over one plain TCP socket, built on the wire
 * codec and the SCRAM primitives: connect, the handshake (legacy OP_QUERY
 * `isMaster`, as the Node driver sends it, optionally carrying
 * `speculativeAuthenticate`), OP_MSG commands, and a SCRAM conversation that
 * derives the key with PBKDF2 every time (no cache).
 *
 * Nothing here measures or prints: callers time the steps (the `on*` hooks
 * and return values carry what a timing needs). TLS is not supported.
 */
import {connect, type Socket} from 'node:net'
import os from 'node:os'
import {performance} from 'node:perf_hooks'

import {Binary, type DeserializeOptions, type Document} from 'bson'

import {MessageFramer, MSG_FLAG_EXHAUST_ALLOWED, OP_MSG, OP_REPLY, decodeOpMsg, decodeOpReply, encodeOpMsg, encodeOpQuery, isMoreToCome, readHeader} from './codec.js'
import {hiAsync, ScramClient, scramPassword, type ScramMechanism} from './scram.js'

/** A server reply with ok: 0, shaped like the driver's MongoServerError (code, codeName). */
export class WireCommandError extends Error {
  override name = 'WireCommandError'
  readonly code?: number
  readonly codeName?: string
  constructor(reply: Document) {
    super(typeof reply.errmsg === 'string' ? reply.errmsg : 'command failed')
    if (typeof reply.code === 'number') this.code = reply.code
    if (typeof reply.codeName === 'string') this.codeName = reply.codeName
  }
}

/** The socket failed, closed or timed out (message names which). */
export class WireNetworkError extends Error {
  override name = 'WireNetworkError'
}

export interface WireConnectOptions {
  host: string
  port: number
  /** Bounds the TCP connect, and every request unless requestTimeoutMs says otherwise. */
  timeoutMs: number
  /** Bounds every request; 0 waits for ever (a router forwarding to a stalled shard must). */
  requestTimeoutMs?: number
  signal?: AbortSignal
}

/** "host:port" (IPv6 in brackets) → {host, port}; 27017 when no port is given. */
export function splitHostPort(hostPort: string): {host: string; port: number} {
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(hostPort)
  if (bracket) return {host: bracket[1]!, port: bracket[2] ? Number(bracket[2]) : 27017}
  const colon = hostPort.lastIndexOf(':')
  if (colon < 0) return {host: hostPort, port: 27017}
  return {host: hostPort.slice(0, colon), port: Number(hostPort.slice(colon + 1))}
}

export class WireConnection {
  private readonly framer = new MessageFramer()
  private readonly pending = new Map<number, {resolve: (m: Buffer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout | undefined}>()
  private failure: Error | null = null

  private constructor(
    private readonly socket: Socket,
    private readonly requestTimeoutMs: number,
  ) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => {
      try {
        this.framer.push(chunk, (message) => this.deliver(Buffer.from(message)))
      } catch (error) {
        this.fail(error as Error)
      }
    })
    socket.on('error', (error) => this.fail(new WireNetworkError(`${error.message}`)))
    socket.on('close', () => this.fail(new WireNetworkError('connection closed by the server')))
  }

  /** Opens the TCP connection; resolves once it is established. */
  static open(options: WireConnectOptions): Promise<WireConnection> {
    return new Promise((resolve, reject) => {
      if (options.signal?.aborted) return reject(new WireNetworkError('interrupted'))
      const socket = connect({host: options.host, port: options.port})
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new WireNetworkError(`connect to ${options.host}:${options.port} timed out after ${options.timeoutMs} ms`))
      }, options.timeoutMs)
      socket.once('error', (error) => {
        clearTimeout(timer)
        reject(new WireNetworkError(`connect to ${options.host}:${options.port}: ${error.message}`))
      })
      socket.once('connect', () => {
        clearTimeout(timer)
        socket.removeAllListeners('error')
        resolve(new WireConnection(socket, options.requestTimeoutMs ?? options.timeoutMs))
      })
    })
  }

  private deliver(message: Buffer): void {
    const {responseTo} = readHeader(message)
    const waiter = this.pending.get(responseTo)
    if (!waiter) return
    this.pending.delete(responseTo)
    clearTimeout(waiter.timer)
    waiter.resolve(message)
  }

  private fail(error: Error): void {
    if (!this.failure) this.failure = error
    for (const [id, waiter] of this.pending) {
      clearTimeout(waiter.timer)
      waiter.reject(this.failure)
      this.pending.delete(id)
    }
  }

  private request(requestID: number, bytes: Buffer): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure)
    return new Promise((resolve, reject) => {
      const timer =
        this.requestTimeoutMs > 0
          ? setTimeout(() => {
              this.pending.delete(requestID)
              reject(new WireNetworkError(`no reply within ${this.requestTimeoutMs} ms`))
              this.socket.destroy()
            }, this.requestTimeoutMs)
          : undefined
      this.pending.set(requestID, {resolve, reject, timer})
      this.socket.write(bytes)
    })
  }

  /** The first handshake as the Node driver sends it: OP_QUERY on admin.$cmd. Returns the reply even when ok: 0. */
  async legacyCommand(body: Document): Promise<Document> {
    const bytes = encodeOpQuery({fullCollectionName: 'admin.$cmd', query: body, numberToReturn: -1})
    const reply = await this.request(readHeader(bytes).requestID, bytes)
    if (readHeader(reply).opCode !== OP_REPLY) throw new WireNetworkError('expected an OP_REPLY to the handshake')
    const doc = decodeOpReply(reply).documents[0]
    if (!doc) throw new WireNetworkError('empty OP_REPLY to the handshake')
    return doc
  }

  /** One OP_MSG command; throws WireCommandError when the server answers ok: 0. */
  async command(db: string, body: Document): Promise<Document> {
    const doc = await this.commandReply(db, body)
    if (Number(doc.ok) !== 1) throw new WireCommandError(doc)
    return doc
  }

  /** One OP_MSG command; the reply as it came, ok: 0 included (for callers that forward replies). */
  async commandReply(db: string, body: Document, decode?: DeserializeOptions): Promise<Document> {
    const bytes = encodeOpMsg({body: {...body, $db: db}})
    const reply = await this.request(readHeader(bytes).requestID, bytes)
    if (readHeader(reply).opCode !== OP_MSG) throw new WireNetworkError('expected an OP_MSG reply')
    return decodeOpMsg(reply, decode).body
  }

  /**
   * An exhaust command (OP_MSG exhaustAllowed, e.g. a streaming awaitable hello): the server keeps
   * answering with moreToCome, each reply answering the previous one. `onReply` gets every body; resolves
   * with the first reply without moreToCome, rejects when the connection fails. No request timeout.
   */
  exhaust(db: string, body: Document, onReply: (doc: Document) => void, decode?: DeserializeOptions): Promise<Document> {
    if (this.failure) return Promise.reject(this.failure)
    const bytes = encodeOpMsg({body: {...body, $db: db}, flags: MSG_FLAG_EXHAUST_ALLOWED})
    return new Promise((resolve, reject) => {
      const next = (message: Buffer): void => {
        let msg: ReturnType<typeof decodeOpMsg>
        try {
          msg = decodeOpMsg(message, decode)
        } catch (error) {
          reject(error as Error)
          return
        }
        // Waits for the next reply before the framer hands over another message of the same chunk.
        if (isMoreToCome(msg.flags)) this.pending.set(msg.requestID, {resolve: next, reject, timer: undefined})
        else resolve(msg.body)
        onReply(msg.body)
      }
      this.pending.set(readHeader(bytes).requestID, {resolve: next, reject, timer: undefined})
      this.socket.write(bytes)
    })
  }

  /** True once the socket failed or was closed: the connection cannot be used again. */
  get closed(): boolean {
    return this.failure !== null || this.socket.destroyed
  }

  close(): void {
    this.failure ??= new WireNetworkError('connection closed by the client')
    this.socket.destroy()
  }
}

// ---------------------------------------------------------------- handshake

/** Client metadata like a driver's, so the server (and `conns`) can tell these connections apart. */
export function clientMetadata(appName: string): Document {
  return {
    application: {name: appName},
    driver: {name: 'pooltool-wire', version: '1'},
    os: {type: os.type(), name: process.platform, architecture: process.arch, version: os.release()},
    platform: `Node.js ${process.version}`,
  }
}

export interface ScramCredentials {
  username: string
  password: string
  /** The authentication database (authSource). */
  source: string
  /**
   * Salted passwords by mechanism, salt and iteration count, for a client that authenticates many connections
   * as one user (a server's internal client caches them the same way, src/mongo/client/scram_client_cache.h).
   * Absent: PBKDF2 on every connection, as a driver does.
   */
  saltedPasswordCache?: Map<string, Buffer>
}

/** The handshake document: `isMaster` + helloOk + metadata, and speculativeAuthenticate when given (`extra` may replace `client`). */
export function handshakeDocument(appName: string, extra: Document = {}): Document {
  return {isMaster: 1, helloOk: true, client: clientMetadata(appName), ...extra}
}

const text = (payload: unknown): string => {
  if (payload instanceof Binary) return Buffer.from(payload.buffer.subarray(0, payload.position)).toString('utf8')
  if (payload instanceof Uint8Array) return Buffer.from(payload).toString('utf8')
  if (typeof payload === 'string') return payload
  throw new WireNetworkError('SCRAM payload of an unexpected type')
}

/** What a SCRAM conversation used: round trips after the handshake, the iteration count the credential uses, PBKDF2 time. */
export interface ScramOutcome {
  /** Request/reply exchanges after the handshake (saslStart unless speculative, saslContinue, the empty one on old servers). */
  roundTrips: number
  /** `i=` of the server-first message: the count the user's stored credential was made with. */
  iterationCount: number
  /** Client-side key derivation (PBKDF2, computed fresh), ms. */
  keyDerivationMs: number
  speculative: boolean
}

/**
 * A SCRAM client conversation ready to start: `speculative()` is the document to
 * embed in the handshake; `finish()` completes it over the connection, from the
 * handshake's speculativeAuthenticate reply when the server gave one, else
 * with a saslStart.
 */
export class ScramSession {
  private readonly client: ScramClient
  private readonly firstMessage: string

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly credentials: ScramCredentials,
  ) {
    this.client = new ScramClient(mechanism, credentials.username, credentials.password)
    this.firstMessage = this.client.first()
  }

  private saslStart(): Document {
    return {
      saslStart: 1,
      mechanism: this.mechanism,
      payload: new Binary(Buffer.from(this.firstMessage, 'utf8')),
      autoAuthorize: 1,
      options: {skipEmptyExchange: true},
    }
  }

  /** For the handshake's `speculativeAuthenticate` field. */
  speculative(): Document {
    return {...this.saslStart(), db: this.credentials.source}
  }

  async finish(conn: WireConnection, speculativeReply: Document | undefined): Promise<ScramOutcome> {
    let roundTrips = 0
    let first = speculativeReply
    const speculative = first !== undefined
    if (!first) {
      first = await conn.command(this.credentials.source, this.saslStart())
      roundTrips += 1
    }
    const serverFirst = text(first.payload)
    const conversationId = first.conversationId
    const started = performance.now()
    // Parse the salt and count first (final() checks the nonce and the minimum count again).
    const {salt, iterationCount} = parseSaltAndCount(serverFirst)
    const cacheKey = `${this.mechanism}:${salt.toString('base64')}:${iterationCount}`
    const cache = this.credentials.saltedPasswordCache
    const salted =
      cache?.get(cacheKey) ??
      (await hiAsync(this.mechanism, scramPassword(this.mechanism, this.credentials.username, this.credentials.password), salt, iterationCount))
    cache?.set(cacheKey, salted)
    const keyDerivationMs = performance.now() - started
    const clientFinal = this.client.final(serverFirst, salted)
    let reply = await conn.command(this.credentials.source, {
      saslContinue: 1,
      conversationId,
      payload: new Binary(Buffer.from(clientFinal, 'utf8')),
    })
    roundTrips += 1
    if (!this.client.verify(text(reply.payload))) {
      throw new WireCommandError({ok: 0, code: 18, codeName: 'AuthenticationFailed', errmsg: 'the server signature does not match (SCRAM)'})
    }
    // Servers before 4.4 ignore skipEmptyExchange and want one more, empty, exchange.
    while (reply.done !== true) {
      reply = await conn.command(this.credentials.source, {saslContinue: 1, conversationId, payload: new Binary(Buffer.alloc(0))})
      roundTrips += 1
      if (roundTrips > 5) throw new WireNetworkError('SCRAM conversation did not finish')
    }
    return {roundTrips, iterationCount, keyDerivationMs, speculative}
  }
}

function parseSaltAndCount(serverFirst: string): {salt: Buffer; iterationCount: number} {
  const attrs = new Map(serverFirst.split(',').map((part) => [part.slice(0, 1), part.slice(2)] as const))
  const iterationCount = Number(attrs.get('i'))
  const salt = attrs.get('s')
  if (!salt || !Number.isInteger(iterationCount)) throw new WireNetworkError('malformed SCRAM server-first message')
  return {salt: Buffer.from(salt, 'base64'), iterationCount}
}

/**
 * A connection for a few admin commands (no timing): handshake, then SCRAM with
 * `mechanism` when credentials are given. Returns the handshake reply too.
 */
export async function openAuthenticated(
  options: WireConnectOptions & {appName: string; credentials?: ScramCredentials; mechanism?: ScramMechanism; handshake?: Document},
): Promise<{conn: WireConnection; hello: Document}> {
  const conn = await WireConnection.open(options)
  try {
    const session = options.credentials && options.mechanism ? new ScramSession(options.mechanism, options.credentials) : undefined
    const extra = {...options.handshake, ...(session ? {speculativeAuthenticate: session.speculative()} : {})}
    const hello = await conn.legacyCommand(handshakeDocument(options.appName, extra))
    if (Number(hello.ok) !== 1) throw new WireCommandError(hello)
    if (session) await session.finish(conn, hello.speculativeAuthenticate as Document | undefined)
    return {conn, hello}
  } catch (error) {
    conn.close()
    throw error
  }
}
