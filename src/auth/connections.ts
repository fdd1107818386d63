/**
 * One measured new connection, two ways:
 * - driver-free: raw TCP with src/wire (connect, handshake with speculative
 *   SCRAM, the rest of the conversation with PBKDF2 computed fresh, ping,
 *   close), timed step by step;
 * - the official driver: a new MongoClient (directConnection, maxPoolSize 1)
 *   whose single pooled connection reports connectionCreated → connectionReady
 *   (durationMS) to a PoolTelemetry; then one ping and close.
 * Either is bounded as a whole by --timeout-ms and ends at once on Ctrl-C (deadline.ts).
 */
import {performance} from 'node:perf_hooks'

import {createClient} from '../mongo/client.js'
import type {ConnectionCreatedEvent, ConnectionReadyEvent, Document, ServerHeartbeatFailedEvent} from '../mongo/driver.js'
import {closedByHost, errorClass} from '../mongo/errors.js'
import type {PoolTelemetry} from '../mongo/pool-telemetry.js'
import {CLOSE_GRACE_MS, closeWithin} from '../mongo/client.js'
import {handshakeDocument, ScramSession, type ScramCredentials, WireCommandError, WireConnection} from '../wire/index.js'
import {ConnectionAbortedError, Deadline} from './deadline.js'
import type {AuthMechanismName} from './types.js'

export interface DriverFreeTarget {
  host: string
  port: number
  timeoutMs: number
  appName: string
  signal?: AbortSignal
}

export interface DriverFreeSample {
  tcpConnectMs: number
  handshakeMs: number
  /** 0 for none. */
  authMs: number
  keyDerivationMs: number | null
  /** TCP connect + handshake + auth. */
  setupMs: number
  roundTrips: number
  speculative: boolean
  iterationCount: number | null
}

export async function driverFreeConnection(
  target: DriverFreeTarget,
  mechanism: AuthMechanismName,
  credentials: ScramCredentials | undefined,
): Promise<DriverFreeSample> {
  // The client-first message (nonce) is ready before the clock starts, as in a driver.
  const session = mechanism === 'none' ? undefined : new ScramSession(mechanism, credentials!)
  const handshake = handshakeDocument(target.appName, session ? {speculativeAuthenticate: session.speculative()} : {})
  const deadline = new Deadline(target.timeoutMs, target.signal)
  const t0 = performance.now()
  const opening = WireConnection.open(target)
  let conn: WireConnection | undefined
  try {
    conn = await deadline.race(opening)
    const t1 = performance.now()
    const hello = await deadline.race(conn.legacyCommand(handshake))
    const t2 = performance.now()
    if (Number(hello.ok) !== 1) throw new WireCommandError(hello)
    const outcome = session ? await deadline.race(session.finish(conn, hello.speculativeAuthenticate as Document | undefined)) : undefined
    const t3 = performance.now()
    await deadline.race(conn.command('admin', {ping: 1}))
    return {
      tcpConnectMs: t1 - t0,
      handshakeMs: t2 - t1,
      authMs: session ? t3 - t2 : 0,
      keyDerivationMs: outcome?.keyDerivationMs ?? null,
      setupMs: t3 - t0,
      roundTrips: 1 + (outcome?.roundTrips ?? 0),
      speculative: outcome?.speculative ?? false,
      iterationCount: outcome?.iterationCount ?? null,
    }
  } finally {
    deadline.dispose()
    if (conn) conn.close()
    // Lost the race while still connecting: close the socket once it exists.
    else void opening.then((late) => late.close(), () => undefined)
  }
}

export interface DriverTarget {
  /** One-host URI with the mechanism's credentials (see hostUri). */
  uri: string
  appName: string
  timeoutMs: number
}

/** Where a driver connection's set-up goes. */
export interface DriverSetupSink {
  /** CMAP counts, and the set-up as the driver reports it (connectionReady.durationMS: whole milliseconds). */
  telemetry: PoolTelemetry
  /** connectionCreated → connectionReady timed by pooltool's own listeners (sub-millisecond), ms. */
  onSetup(setupMs: number): void
}

/**
 * A new MongoClient with one pooled connection: connect (which checks a
 * connection out, driver 7), ping, close. The driver emits connectionCreated
 * and connectionReady synchronously, so listeners timestamp the same interval
 * durationMS covers, without its rounding to whole milliseconds.
 *
 * The connection fails as soon as its monitor's check is closed by the server (a host at its
 * connection limit): the driver would only retry until server selection gives up, so every
 * such connection took the whole --timeout-ms, one after another in the one-at-a-time passes
 * (80 connections x --timeout-ms against a full host), where the driver-free path fails at once.
 */
export async function driverConnection(target: DriverTarget, sink: DriverSetupSink, signal?: AbortSignal): Promise<void> {
  const client = createClient({
    uri: target.uri,
    appName: target.appName,
    timeoutMs: target.timeoutMs,
    pool: {maxPoolSize: 1},
    // One monitoring connection (no RTT pinger); monitors never authenticate.
    extra: {serverMonitoringMode: 'poll'},
  })
  const createdAt = new Map<number | string, number>()
  const onCreated = (event: ConnectionCreatedEvent) => createdAt.set(event.connectionId, performance.now())
  const onReady = (event: ConnectionReadyEvent) => {
    const started = createdAt.get(event.connectionId)
    if (started !== undefined) sink.onSetup(performance.now() - started)
  }
  client.on('connectionCreated', onCreated)
  client.on('connectionReady', onReady)
  let onHeartbeatFailed: (event: ServerHeartbeatFailedEvent) => void = () => undefined
  const closedByServer = new Promise<never>((_, reject) => {
    onHeartbeatFailed = (event) => {
      // Accepted and closed at once: what a server at its connection limit does. A refused TCP connect (ECONNREFUSED:
      // a restart) is not one: the driver may still reach the host within --timeout-ms.
      if (closedByHost(event.failure)) reject(event.failure)
    }
  })
  closedByServer.catch(() => undefined)
  client.on('serverHeartbeatFailed', onHeartbeatFailed)
  const detach = sink.telemetry.attach(client)
  const deadline = new Deadline(target.timeoutMs, signal)
  try {
    await deadline.race(Promise.race([client.connect(), closedByServer]))
    await deadline.race(client.db('admin').command({ping: 1}))
  } finally {
    deadline.dispose()
    client.off('serverHeartbeatFailed', onHeartbeatFailed)
    // A stalled server keeps the driver's close waiting (endSessions, its monitor): bounded, the rest is the driver's.
    await closeWithin(client, CLOSE_GRACE_MS)
    detach()
    client.off('connectionCreated', onCreated)
    client.off('connectionReady', onReady)
  }
}

/** A short class for counting a failed connection: auth, network, timeout, the server's codeName … */
export function connectionErrorClass(error: unknown): string {
  if (error instanceof ConnectionAbortedError) return 'interrupted'
  const name = (error as {name?: string})?.name
  const message = String((error as {message?: string})?.message ?? '')
  if (name === 'WireNetworkError') return /timed out|no reply within/.test(message) ? 'timeout' : 'network'
  return errorClass(error)
}
