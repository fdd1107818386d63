/**
 * The reader `conns` polls one host with: a direct connection (a pool of one,
 * reused every round) whose monitor runs in `poll` mode, so pooltool adds two
 * connections per host (one pooled, one monitoring), not three; its appName
 * is the target's with the `conns` suffix, so the holders mark it as ours; its
 * connect timeout is the watch's, shorter than the target's so a host that
 * went away is noticed within a round.
 */
import {driverChannel} from '../mongo/channel.js'
import {CLOSE_GRACE_MS, closeWithin, createHostClient} from '../mongo/client.js'
import {ServerReader} from '../probes/reader.js'
import type {OpenReader, Target} from '../target.js'

/** The polling and discovery connections' appName suffix: `pooltool-conns`. */
export const CONNS_PURPOSE = 'conns'

export function connsAppName(target: Target): string {
  return target.clientSettings(CONNS_PURPOSE).appName
}

export function openHostReader(target: Target, host: string, timeoutMs: number): OpenReader {
  const client = createHostClient({...target.clientSettings(CONNS_PURPOSE), timeoutMs, extra: {serverMonitoringMode: 'poll'}}, host)
  return {
    reader: new ServerReader(driverChannel(client, host), target.recorder),
    close: () => closeWithin(client, CLOSE_GRACE_MS),
  }
}
