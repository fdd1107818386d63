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
import {openAuthenticated, splitHostPort, type ScramCredentials, type WireConnection as Socketed} from '../../wire/client.js'

export type InternalCredentials = ScramCredentials

let nextConnectionNumber = 1

export class WireConnection {
  readonly id = nextConnectionNumber++
  readonly createdAt = Date.now()
  lastUsed = Date.now()

  private constructor(
    readonly host: string,
    private readonly connection: Socketed,
  ) {}

  /** Opens, says hello as a server's network interface, and authenticates (SCRAM-SHA-256) when credentials are given. */
  static async open(host: string, appName: string, credentials?: InternalCredentials, timeoutMs = 10_000): Promise<WireConnection> {
    const {conn} = await openAuthenticated({
      ...splitHostPort(host),
      timeoutMs,
      requestTimeoutMs: 0,
      appName,
      credentials,
      mechanism: credentials ? 'SCRAM-SHA-256' : undefined,
      handshake: {client: {driver: {name: 'NetworkInterfaceTL', version: 'pooltool-sim'}, application: {name: appName}, os: {type: 'Linux'}}},
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

  close(): void {
    this.connection.close()
  }
}
