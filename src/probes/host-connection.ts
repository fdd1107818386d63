/**
 * A direct connection to one host that is opened afresh after a failure, shared by every
 * poller (conns, bench's sampler).
 *
 * A driver client whose first connect failed (the host was down, restarting, or not
 * reachable from here) does not recover: later operations fail with "Topology is closed",
 * which hides the real error and keeps a host that came back looking dead. So a failed
 * read lets the connection go (`failed()`) and the next read opens a new one: a host that
 * returns is read again at the next poll, and each failure carries its own cause.
 *
 * `resolvingFirst` looks the host name up before the client opens: a name that does not
 * resolve from here (a member's in-cluster name seen through a port-forward) then fails at
 * once with its real error (ENOTFOUND), where the driver would keep selecting a server
 * until its timeout.
 */
import {lookup} from 'node:dns/promises'
import {isIP} from 'node:net'

import type {PoolOptions} from '../mongo/client.js'
import type {ServerReader} from './reader.js'

export interface OpenReaderOptions {
  /** A connect timeout of its own (a poller that must notice a lost host within its round), else the target's. */
  timeoutMs?: number
  /**
   * The driver's monitor polls instead of streaming: one monitoring connection per host instead of two,
   * for a reader that stays open as long as a watch.
   */
  pollMonitoring?: boolean
  /** Pool options for the reader's client (the driver's default pool holds up to 100 connections). */
  pool?: PoolOptions
}

/** A reader over one connection, and how to let it go. */
export interface OpenReader {
  reader: ServerReader
  /**
   * Whether the server answered this client at least once (a monitor's hello or a connection's
   * handshake): a failure after that is the target going away, not a target never reached.
   */
  answered(): boolean
  /** Closes the connection, waiting at most CLOSE_GRACE_MS for a stalled server. */
  close(): Promise<void>
}

/** Opens a fresh connection to the host; may reject (a name that does not resolve). */
export type ReaderOpener = () => OpenReader | Promise<OpenReader>

/** "h:27017" → "h"; "[::1]:27017" → "::1". */
export function hostnameOf(address: string): string {
  const v6 = /^\[([^\]]+)\]/.exec(address)
  if (v6) return v6[1]!
  const colon = address.lastIndexOf(':')
  return colon > 0 ? address.slice(0, colon) : address
}

/** `open` once the host name of `address` resolves; rejects with the resolver's error (ENOTFOUND, EAI_AGAIN …) when it does not. */
export function resolvingFirst(address: string, open: () => OpenReader): ReaderOpener {
  return async () => {
    const hostname = hostnameOf(address)
    if (isIP(hostname) === 0) await lookup(hostname)
    return open()
  }
}

export class HostConnection {
  private current?: OpenReader
  /** Connections let go after a failure, still closing: `close()` waits for them. */
  private readonly closing = new Set<Promise<void>>()
  private closed = false

  constructor(private readonly open: ReaderOpener) {}

  /** The reader to use now (a fresh connection after `failed()`); rejects when opening fails or the connection was closed meanwhile. */
  async reader(): Promise<ServerReader> {
    if (!this.current) {
      const opened = await this.open()
      // Closed while it was opening (the poll ended): let it go rather than leak it.
      if (this.closed) {
        await opened.close()
        throw new Error('closed')
      }
      this.current = opened
    }
    return this.current.reader
  }

  /** The last read failed: let this connection go; the next read opens another. */
  failed(): void {
    const broken = this.current
    if (!broken) return
    this.current = undefined
    const closing = broken.close().finally(() => this.closing.delete(closing))
    this.closing.add(closing)
  }

  async close(): Promise<void> {
    this.closed = true
    this.failed()
    await Promise.all([...this.closing])
  }
}
