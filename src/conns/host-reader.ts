/**
 * The reader `conns` polls one host with: a direct connection (a pool of one,
 * reused every round) whose monitor runs in `poll` mode, so pooltool adds two
 * connections per host (one pooled, one monitoring), not three; its appName
 * is the target's with the `conns` suffix, so the holders mark it as ours; its
 * connect timeout is the watch's, shorter than the target's so a host that
 * went away is noticed within a round.
 * A host name is looked up before the client opens (`resolvedHostReader`).
 */
import {type OpenReader, type ReaderOpener, resolvingFirst} from '../probes/host-connection.js'
import type {Target} from '../target.js'

/** The polling and discovery connections' appName suffix: `pooltool-conns`. */
export const CONNS_PURPOSE = 'conns'

export function connsAppName(target: Target): string {
  return target.clientSettings(CONNS_PURPOSE).appName
}

export function openHostReader(target: Target, host: string, timeoutMs: number): OpenReader {
  return target.openReader(host, CONNS_PURPOSE, {timeoutMs, pollMonitoring: true})
}

/** `openHostReader`, once the host name resolves (src/probes/host-connection.ts: a name that does not resolve fails at once). */
export function resolvedHostReader(target: Target, address: string, timeoutMs: number): ReaderOpener {
  return resolvingFirst(address, () => openHostReader(target, address, timeoutMs))
}
