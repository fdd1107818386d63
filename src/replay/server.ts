/**
 * `pooltool sim --replay FILE`: one loopback listener per captured host
 * (SimListener, the wire codec of src/wire), every captured host name and
 * address rewritten to its listener inside every document, each command
 * answered by the replay's dispatcher (dispatch.ts). Runs in this process: it
 * holds no state besides the file and serves nothing it did not read there.
 */
import type {Socket} from 'node:net'

import type {Document} from 'bson'

import {SimListener} from '../sim/index.js'
import type {SnapshotFile, SnapshotRead} from '../snapshot/format.js'
import {rewriteNames} from '../snapshot/rewrite.js'
import {MessageFramer, OP_MSG, OP_QUERY, commandFromOpMsg, decodeOpMsg, decodeOpQuery, encodeOpMsg, encodeOpReply, isMoreToCome} from '../wire/index.js'
import {dispatchReplay, type ReplayContext, type ReplayHostState} from './dispatch.js'
import {replayUri} from './uri.js'

const LOOPBACK = '127.0.0.1'

export interface ReplayInfo {
  /** The URI to point pooltool at: the entry's listener(s) with the captured URI's options. */
  uri: string
  /** Captured name → "127.0.0.1:port" of its listener. */
  hosts: Record<string, string>
  capturedAt: Date
  file: string
}

/** How a replay is served. */
export interface ReplayOptions {
  /**
   * A test's jump of the replayed clocks (ms added to the time since the replay began), so a test sees
   * the replay as it is minutes after its start without waiting (`sim --replay-clock-offset`, hidden).
   */
  clockOffsetMS?: number
}

export interface ReplayServer {
  info: ReplayInfo
  stop(): Promise<void>
}

/** One client socket: frames messages and answers them in order. */
class ReplayConnection {
  private readonly framer = new MessageFramer()

  constructor(
    private readonly socket: Socket,
    private readonly host: ReplayHostState,
    private readonly context: ReplayContext,
  ) {
    socket.setNoDelay(true)
    socket.on('error', () => {
      /* 'close' follows */
    })
    socket.on('data', (chunk: Buffer) => {
      try {
        this.framer.push(chunk, (message) => this.answer(message))
      } catch {
        socket.destroy()
      }
    })
  }

  private answer(message: Buffer): void {
    const requestID = message.readInt32LE(4)
    const opCode = message.readInt32LE(12)
    if (opCode === OP_QUERY) {
      const query = decodeOpQuery(message)
      const command: Document = query.query.$query && typeof query.query.$query === 'object' ? query.query.$query : query.query
      const db = query.fullCollectionName.replace(/\.\$cmd$/, '')
      this.socket.write(encodeOpReply({responseTo: requestID, documents: [dispatchReplay(this.host, command, db, true, this.context)]}))
      return
    }
    if (opCode !== OP_MSG) {
      // OP_COMPRESSED is never offered (hello replies carry no compression); anything else is a protocol error.
      this.socket.destroy()
      return
    }
    const msg = decodeOpMsg(message)
    const command = commandFromOpMsg(msg)
    const db = typeof command.$db === 'string' ? command.$db : 'admin'
    const reply = dispatchReplay(this.host, command, db, false, this.context)
    if (isMoreToCome(msg.flags)) return
    this.socket.write(encodeOpMsg({responseTo: requestID, body: reply}))
  }
}

/** Every captured name and address of every host → its listener. */
function listenerMap(snapshot: SnapshotFile, ports: readonly number[]): Map<string, string> {
  const map = new Map<string, string>()
  snapshot.hosts.forEach((host, i) => {
    const listener = `${LOOPBACK}:${ports[i]}`
    map.set(host.host, listener)
    if (host.address !== undefined && host.address !== host.host) map.set(host.address, listener)
  })
  return map
}

export async function startReplayServer(snapshot: SnapshotFile, file: string, options: ReplayOptions = {}): Promise<ReplayServer> {
  const startedAt = performance.now()
  const offset = options.clockOffsetMS ?? 0
  const context: ReplayContext = {file, capturedAt: snapshot.capturedAt, formatVersion: snapshot.formatVersion, elapsedMS: () => Math.round(performance.now() - startedAt) + offset}
  const states: ReplayHostState[] = []
  const sockets = new Set<Socket>()
  const listeners = snapshot.hosts.map(
    (_, i) =>
      new SimListener(LOOPBACK, {
        accept: (socket) => {
          const state = states[i]
          if (!state) return false
          sockets.add(socket)
          socket.once('close', () => sockets.delete(socket))
          new ReplayConnection(socket, state, context)
          return true
        },
      }),
  )
  const stop = async () => {
    // A listener's close waits for its open sockets: stop accepting, drop the clients, then wait.
    const closed = Promise.all(listeners.map((l) => l.close()))
    for (const socket of sockets) socket.destroy()
    await closed
  }
  let ports: number[]
  try {
    ports = await Promise.all(listeners.map((l) => l.listen(0)))
  } catch (error) {
    await stop()
    throw error
  }
  const names = listenerMap(snapshot, ports)
  snapshot.hosts.forEach((host, i) => {
    states[i] = {listener: `${LOOPBACK}:${ports[i]}`, reads: rewriteNames<SnapshotRead[]>(host.reads, names)}
  })
  const uri = replayUri(snapshot.entry.uri, snapshot.entry.seedHosts, names, states[0]!.listener)
  const hosts = Object.fromEntries(snapshot.hosts.map((host, i) => [host.host, states[i]!.listener]))
  return {info: {uri, hosts, capturedAt: snapshot.capturedAt, file}, stop}
}
