/**
 * The reader `conns` polls one host with: a direct connection (a pool of one,
 * reused every round) whose monitor runs in `poll` mode, so pooltool adds two
 * connections per host (one pooled, one monitoring), not three; its appName
 * is the target's with the `conns` suffix, so the holders mark it as ours; its
 * connect timeout is the watch's, shorter than the target's so a host that
 * went away is noticed within a round.
 *
 * A host name is looked up before the client opens: a name that does not
 * resolve from here (a member's in-cluster name seen through a port-forward)
 * then fails at once with its real error (ENOTFOUND), where the driver would
 * keep selecting a server until its timeout.
 */
import {lookup} from 'node:dns/promises'
import {isIP} from 'node:net'

import type {OpenReader, Target} from '../target.js'

/** The polling and discovery connections' appName suffix: `pooltool-conns`. */
export const CONNS_PURPOSE = 'conns'

export function connsAppName(target: Target): string {
  return target.clientSettings(CONNS_PURPOSE).appName
}

export function openHostReader(target: Target, host: string, timeoutMs: number): OpenReader {
  return target.openReader(host, CONNS_PURPOSE, {timeoutMs, pollMonitoring: true})
}

/** "h:27017" → "h"; "[::1]:27017" → "::1". */
export function hostnameOf(address: string): string {
  const v6 = /^\[([^\]]+)\]/.exec(address)
  if (v6) return v6[1]!
  const colon = address.lastIndexOf(':')
  return colon > 0 ? address.slice(0, colon) : address
}

/** `openHostReader` once the host name resolves; rejects with the resolver's error (ENOTFOUND, EAI_AGAIN …) when it does not. */
export async function openResolvedHostReader(target: Target, address: string, timeoutMs: number): Promise<OpenReader> {
  const hostname = hostnameOf(address)
  if (isIP(hostname) === 0) await lookup(hostname)
  return openHostReader(target, address, timeoutMs)
}
