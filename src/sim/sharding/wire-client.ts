/**
 * One outbound connection of a simulated process (mongos → shard, config server → shard,
 * mongos → config server). The socket, handshake and SCRAM are the project's driver-free
 * client (src/wire/client.ts); this wrapper adds what the pools report in connPoolStats
 * (id, creation and last use) and answers like a server-side network interface: replies
 * come back as they are (ok: 0 included, to be forwarded), every number keeps its BSON type
 * (storage/numbers.ts: a router forwards a shard's 5.0 as a double, its int64 as a Long), and a request
 * waits as long as the shard takes.
 */
import type {Document} from 'bson'

import {EXACT_DECODE, toExactForm} from '../storage/numbers.js'
import {isNumeric, toNumber} from '../storage/values.js'
import {openAuthenticated, splitHostPort, type ScramCredentials, type WireConnection as Socketed} from '../../wire/index.js'

export type InternalCredentials = ScramCredentials

/**
 * Where each process that names itself otherwise (`advertiseHost`: a cluster seen from outside Kubernetes) really
 * listens, by the name it gives itself. Internal connections are addressed by those names (hosts keys in
 * connPoolStats, the monitors' targets) but dial the listening address: a name that resolves nowhere here is never
 * looked up inside the sim.
 */
const listenAddresses = new Map<string, string>()

export function registerListenAddress(advertised: string, listenAddress: string): void {
  if (advertised !== listenAddress) listenAddresses.set(advertised, listenAddress)
}

let nextConnectionNumber = 1

export class WireConnection {
  readonly id = nextConnectionNumber++
  readonly createdAt = Date.now()
  lastUsed = Date.now()

  private constructor(
    readonly host: string,
    private readonly connection: Socketed,
  ) {}

  /**
   * Opens, says hello with `client` (internal/metadata.ts: what the server's network interface or
   * internal client sends), and authenticates (SCRAM-SHA-256) when credentials are given.
   */
  static async open(host: string, client: Document, credentials?: InternalCredentials, timeoutMs = 10_000): Promise<WireConnection> {
    const {conn} = await openAuthenticated({
      ...splitHostPort(listenAddresses.get(host) ?? host),
      timeoutMs,
      requestTimeoutMs: 0,
      appName: '',
      credentials,
      mechanism: credentials ? 'SCRAM-SHA-256' : undefined,
      handshake: {client},
    })
    return new WireConnection(host, conn)
  }

  get closed(): boolean {
    return this.connection.closed
  }

  /** Sends one command and waits for its reply (one at a time per connection). */
  async command(db: string, body: Document): Promise<Document> {
    this.lastUsed = Date.now()
    const reply = toExactForm(await this.connection.commandReply(db, body, EXACT_DECODE))
    // `ok` arrives as the double 1.0 every server sends; the sim compares it as a plain number.
    if (isNumeric(reply.ok)) reply.ok = toNumber(reply.ok)
    return reply
  }

  /** Streams an exhaust command's replies (a monitor's awaitable hello) until the server stops or the socket closes. */
  async exhaust(db: string, body: Document, onReply: (doc: Document) => void): Promise<void> {
    this.lastUsed = Date.now()
    await this.connection.exhaust(db, body, (doc) => onReply(toExactForm(doc)), EXACT_DECODE)
  }

  close(): void {
    this.connection.close()
  }
}
