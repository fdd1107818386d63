/**
 * Whether the measured host is still there. `pooltool auth` counts a failed
 * connection and goes on, but once one failed as unreachable (refused, reset,
 * timed out) it asks the host directly before the next connection: a restart
 * passes (the host answers again within --timeout-ms of the failure and the run
 * goes on), a host that stays silent that long is gone, and the run stops with
 * what it measured (exit 4) instead of spending every remaining connection on it.
 */
import {performance} from 'node:perf_hooks'
import {setTimeout as sleep} from 'node:timers/promises'

import {PoolToolError} from '../errors.js'
import {closedByHost} from '../mongo/errors.js'
import {handshakeDocument, splitHostPort, WireConnection} from '../wire/index.js'
import {unlessAborted} from './deadline.js'

/** Failure classes that mean "nothing answered", as opposed to a refusal (auth) or a server error. */
const UNREACHABLE_CLASSES = new Set(['network', 'timeout', 'serverSelection', 'poolCleared'])

const PROBE_RETRY_MS = 100

/** The least time one probe gets (the first may come after --timeout-ms has run out; it still gets a fair chance). */
const PROBE_MIN_TIMEOUT_MS = 1000

export interface HostWatchSettings {
  /** "host:port" */
  host: string
  timeoutMs: number
  appName: string
  /** Plain TCP: the probe sends a hello and waits for the answer; under TLS it can only see the listener. */
  plainTcp: boolean
  signal: AbortSignal
}

export class HostWatch {
  /** performance.now() of the first unreachable failure not yet cleared by an answer. */
  private silentSince: number | undefined

  constructor(private readonly settings: HostWatchSettings) {}

  /** A connection failed with this class (connectionErrorClass). */
  noteFailure(errorClass: string): void {
    if (UNREACHABLE_CLASSES.has(errorClass)) this.silentSince ??= performance.now()
  }

  /**
   * Resolves at once when nothing failed as unreachable since the last check, else
   * once the host answers; throws UNREACHABLE when it has not answered for
   * --timeout-ms since the failure. Returns early (no throw) when the signal aborts.
   */
  async confirm(): Promise<void> {
    if (this.silentSince === undefined) return
    const giveUpAt = this.silentSince + this.settings.timeoutMs
    let lastError = 'no answer'
    // The host is asked at least once, however long ago the failure was: the connections still open when it
    // happened (a storm) may have kept us from asking until after --timeout-ms, and a host that answers now is there.
    for (let asked = false; !this.settings.signal.aborted; asked = true) {
      const left = giveUpAt - performance.now()
      if (asked && left <= 0) break
      try {
        await this.probe(Math.max(PROBE_MIN_TIMEOUT_MS, Math.round(left)))
        this.silentSince = undefined
        return
      } catch (error) {
        lastError = (error as Error).message
      }
      // An abort ends the wait early, and is seen below.
      await sleep(Math.min(PROBE_RETRY_MS, Math.max(0, giveUpAt - performance.now())), undefined, {signal: this.settings.signal}).catch(() => {})
    }
    if (this.settings.signal.aborted) return
    throw new PoolToolError(
      'UNREACHABLE',
      `${this.settings.host} stopped answering: nothing for ${this.settings.timeoutMs} ms (--timeout-ms; last: ${lastError}); the figures measured until then follow`,
      'check that the host is up; raise --timeout-ms to ride out longer restarts or stalls',
    )
  }

  /**
   * One unauthenticated hello (or, under TLS, a TCP connect) within `timeoutMs`. A
   * server at its connection limit accepts and closes at once: it is there (the
   * connections it refuses are counted as failed), so that counts as an answer.
   */
  private async probe(timeoutMs: number): Promise<void> {
    const {host, port} = splitHostPort(this.settings.host)
    const conn = await WireConnection.open({host, port, timeoutMs, signal: this.settings.signal})
    try {
      // Ctrl-C must not wait for a stalled host's hello (up to timeoutMs): the probe is abandoned, its socket closed below.
      if (this.settings.plainTcp) await unlessAborted(conn.legacyCommand(handshakeDocument(`${this.settings.appName}-probe`)), this.settings.signal)
    } catch (error) {
      // How a server at its connection limit refuses: it accepts and closes at once, which the probe sees as a close,
      // a reset, or (its hello still being written) EPIPE.
      if (!closedByHost(error)) throw error
    } finally {
      conn.close()
    }
  }
}
