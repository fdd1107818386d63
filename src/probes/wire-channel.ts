/**
 * pooltool's own wire connection as the read layer's CommandChannel
 * (reader.ts), so a driver-free connection reads the server through
 * the same ServerReader as a driver client. Commands only: a bare connection
 * drains no cursors, so the reader refuses `config.*` and `$currentOp` on it.
 *
 * The connection stays the caller's: closing it is theirs, not the channel's.
 */
import {WireNetworkError, type WireConnection} from '../wire/index.js'
import type {CommandChannel, ReadOptions} from './reader.js'

/**
 * Sends (unless `signal` has aborted already) and rejects as soon as `signal` aborts; a reply that
 * comes later is dropped (replies are matched by request id, so the connection stays usable).
 */
function untilAborted<T>(send: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return send()
  if (signal.aborted) return Promise.reject(new WireNetworkError('interrupted'))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new WireNetworkError('interrupted'))
    signal.addEventListener('abort', onAbort, {once: true})
    send()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** `host` is the address the connection went to ("host:port"), as reads report it. */
export function wireChannel(conn: WireConnection, host: string): CommandChannel {
  return {
    host,
    command: (db, command, options?: ReadOptions) => untilAborted(() => conn.command(db, command), options?.signal),
  }
}
