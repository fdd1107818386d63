/**
 * A direct connection to one host that is opened afresh after a failure.
 *
 * A driver client whose first connect failed (the host was down, restarting, or not
 * reachable from here) does not recover: later operations fail with "Topology is closed",
 * which hides the real error and keeps a host that came back looking dead. So a failed
 * read closes the client and the next read opens a new one: a host that returns is read
 * again at the next poll, and each failure carries its own cause.
 */
import type {OpenReader} from '../target.js'
import type {ServerReader} from './reader.js'

export class HostConnection {
  private current?: OpenReader
  private closing: Promise<void>[] = []

  constructor(private readonly open: () => OpenReader) {}

  /** The reader to use now (a fresh connection after `failed()`). */
  get reader(): ServerReader {
    this.current ??= this.open()
    return this.current.reader
  }

  /** The last read failed: let this connection go; the next read opens another. */
  failed(): void {
    const broken = this.current
    this.current = undefined
    if (broken) this.closing.push(broken.close())
  }

  async close(): Promise<void> {
    const last = this.current
    this.current = undefined
    await Promise.all([...this.closing, last?.close()])
    this.closing = []
  }
}
