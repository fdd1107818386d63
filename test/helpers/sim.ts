/** Test helpers for the simulated cluster: a driver-free wire client and small waits. */
import {AssertionError} from 'node:assert'
import {readFileSync} from 'node:fs'
import {connect, type Socket} from 'node:net'
import {inspect} from 'node:util'
import type {Document} from 'bson'
import {MessageFramer, OP_MSG, decodeOpMsg, decodeOpReply, encodeOpMsg, encodeOpQuery} from '../../src/wire/index.js'

/** A minimal client over one raw socket, using src/wire (no driver involved). */
export class RawClient {
  private readonly framer = new MessageFramer()
  private readonly waiting: Array<(m: Buffer) => void> = []
  readonly closed: Promise<void>
  isClosed = false

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) =>
      this.framer.push(chunk, (m) => {
        const w = this.waiting.shift()
        w?.(Buffer.from(m))
      }),
    )
    socket.on('error', () => undefined)
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.isClosed = true
        resolve()
      }),
    )
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = connect({port, host}, () => {
        s.off('error', reject)
        resolve(new RawClient(s))
      })
      s.once('error', reject)
    })
  }

  private next(): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.isClosed) return reject(new Error('socket closed'))
      this.waiting.push(resolve)
      void this.closed.then(() => reject(new Error('socket closed')))
    })
  }

  async command(db: string, body: Document): Promise<Document> {
    const reply = this.next()
    this.socket.write(encodeOpMsg({body: {...body, $db: db}}))
    const m = await reply
    if (m.readInt32LE(12) !== OP_MSG) throw new Error('expected OP_MSG reply')
    return decodeOpMsg(m).body
  }

  async legacyHello(body: Document = {isMaster: 1}): Promise<Document> {
    const reply = this.next()
    this.socket.write(encodeOpQuery({fullCollectionName: 'admin.$cmd', query: body, numberToReturn: -1}))
    return decodeOpReply(await reply).documents[0]
  }

  close(): Promise<void> {
    this.socket.destroy()
    return this.closed
  }
}

export function portOf(hostPort: string): number {
  return Number(hostPort.slice(hostPort.lastIndexOf(':') + 1))
}

export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Polls `probe` until `done(value)` or the timeout; returns the last value. */
export async function waitFor<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs
  let v = await probe()
  while (!done(v) && Date.now() < until) {
    await delay(50)
    v = await probe()
  }
  return v
}

export function withParams(uri: string, params: string): string {
  return uri + (uri.includes('?') ? '&' : uri.endsWith('/') ? '?' : '/?') + params
}

/**
 * Polls `probe` until `done(value)` and returns that value. When it never gets there, the
 * test fails naming `what` and the last value seen. `limitMs` only turns a hang into a
 * failure: it is no bound on how fast the server should be.
 */
export async function waitForState<T>(what: string, probe: () => Promise<T>, done: (v: T) => boolean, limitMs = 60_000): Promise<T> {
  const v = await waitFor(probe, done, limitMs)
  if (!done(v)) throw new AssertionError({message: `never reached: ${what}; last seen ${inspect(v, {depth: 4, breakLength: Infinity})}`})
  return v
}

/** A process is running and not a zombie waiting for its parent to reap it (Linux: /proc/<pid>/stat). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return true
  }
}
