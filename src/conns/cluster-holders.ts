/**
 * Who holds the cluster's connections, summed over every host whose holders were read, and what
 * that says (a client that leaks MongoClients, a pool that never shrinks). Pure: the per-host holders in, the ranking and the verdicts out.
 *
 * Classes of client connections (the SDAM and CMAP specifications): each MongoClient
 * keeps, per member it monitors, one monitoring connection (a parked awaitable hello on 4.4+) and,
 * streaming, a second for round-trip-time pings; neither is in its pool nor closed by
 * maxIdleTimeMS. So the parked hellos of one holder on one member count its MongoClient instances
 * there, and a holder whose connections are mostly monitoring is many clients, not a big pool.
 */
import type {ClusterHolder, ClusterHolders, ConnsVerdict, Holder, HolderKind, HolderTotal} from './types.js'

export interface HolderHostInput {
  host: string
  state: string
  holders?: readonly Holder[]
}

const byCount = <T extends {count: number; name?: string; appName?: string}>(a: T, b: T) => b.count - a.count || (a.name ?? a.appName ?? '').localeCompare(b.name ?? b.appName ?? '')

function total(into: Map<string, HolderTotal & {monitoringKnown: boolean; hostSet: Set<string>}>, name: string, host: string, holder: Holder): void {
  const entry = into.get(name) ?? {name, count: 0, hosts: 0, monitoring: 0, monitoringKnown: true, hostSet: new Set<string>()}
  entry.count += holder.count
  entry.hostSet.add(host)
  if (holder.kind === 'application' && holder.monitors !== undefined) entry.monitoring! += holder.monitors + (holder.rttPingers ?? 0)
  else if (holder.kind === 'application' || holder.kind === undefined) entry.monitoringKnown = false
  into.set(name, entry)
}

function finish(into: Map<string, HolderTotal & {monitoringKnown: boolean; hostSet: Set<string>}>): HolderTotal[] {
  return [...into.values()]
    .map(({monitoringKnown, hostSet, monitoring, ...rest}) => ({...rest, hosts: hostSet.size, ...(monitoringKnown ? {monitoring} : {})}))
    .sort(byCount)
}

/** The holders of every host summed per holder, per app, per client host and per driver; biggest first. */
export function clusterHolders(hosts: readonly HolderHostInput[]): ClusterHolders {
  const holders = new Map<string, ClusterHolder & {splitKnown: boolean}>()
  const apps = new Map<string, HolderTotal & {monitoringKnown: boolean; hostSet: Set<string>}>()
  const clients = new Map<string, HolderTotal & {monitoringKnown: boolean; hostSet: Set<string>}>()
  const drivers = new Map<string, HolderTotal & {monitoringKnown: boolean; hostSet: Set<string>}>()
  const totals: ClusterHolders['totals'] = {application: 0, internal: 0, pooltool: 0, monitoring: 0, pool: 0}
  let splitKnown = true
  const hostsRead: string[] = []
  const hostsUnread: string[] = []
  for (const h of hosts) {
    if (h.state !== 'ok' || h.holders === undefined) {
      hostsUnread.push(h.host)
      continue
    }
    hostsRead.push(h.host)
    for (const holder of h.holders) {
      const kind: HolderKind = holder.kind ?? (holder.own ? 'pooltool' : 'application')
      totals[kind] += holder.count
      if (kind === 'application') {
        if (holder.monitors === undefined) splitKnown = false
        else {
          totals.monitoring! += holder.monitors + (holder.rttPingers ?? 0)
          totals.pool! += holder.pool ?? 0
        }
      }
      const key = `${holder.appName}\u0000${holder.client}\u0000${holder.driver}`
      const entry = holders.get(key) ?? {appName: holder.appName, client: holder.client, driver: holder.driver, kind, count: 0, hosts: 0, perHost: {}, monitoring: 0, pool: 0, monitors: 0, monitorsPerHost: {}, splitKnown: true}
      entry.count += holder.count
      entry.perHost[h.host] = (entry.perHost[h.host] ?? 0) + holder.count
      if (holder.monitors === undefined) entry.splitKnown = false
      else {
        entry.monitors! += holder.monitors
        entry.monitoring! += holder.monitors + (holder.rttPingers ?? 0)
        entry.pool! += holder.pool ?? 0
        entry.monitorsPerHost![h.host] = (entry.monitorsPerHost![h.host] ?? 0) + holder.monitors
      }
      holders.set(key, entry)
      total(apps, holder.appName, h.host, {...holder, kind})
      total(clients, holder.client, h.host, {...holder, kind})
      total(drivers, holder.driver, h.host, {...holder, kind})
    }
  }
  if (!splitKnown) {
    delete totals.monitoring
    delete totals.pool
  }
  const list = [...holders.values()].map(({splitKnown: known, monitoring, pool, monitors, monitorsPerHost, ...rest}): ClusterHolder => {
    const out: ClusterHolder = {...rest, hosts: Object.keys(rest.perHost).length}
    if (known) {
      Object.assign(out, {monitoring, pool, monitors, monitorsPerHost})
      out.impliedClients = Math.max(0, ...Object.values(monitorsPerHost!))
    }
    return out
  })
  return {hostsRead, hostsUnread, holders: list.sort(byCount), byApp: finish(apps), byClient: finish(clients), byDriver: finish(drivers), totals}
}

/** Client instances from one app and client host at or above which "one client per process" is the verdict. */
export const LEAK_MIN_CLIENTS = 5

const perHostText = (per: Record<string, number>) =>
  Object.entries(per)
    .map(([host, n]) => `${n} on ${host}`)
    .join(', ')

/**
 * Client-per-request leaks: an application holder with at least LEAK_MIN_CLIENTS MongoClient
 * instances from one client host whose connections are mostly monitoring (a handful of processes
 * each with one client is normal; dozens from one host, each with monitors on every member and
 * hardly any pooled connection, are clients created per request and never closed).
 */
export function clientLeakVerdicts(cluster: ClusterHolders): ConnsVerdict[] {
  const out: ConnsVerdict[] = []
  for (const h of cluster.holders) {
    if (h.kind !== 'application' || h.impliedClients === undefined || h.monitoring === undefined) continue
    if (h.impliedClients < LEAK_MIN_CLIENTS || h.monitoring * 2 < h.count) continue
    const label = `${h.appName}@${h.client}`
    out.push({
      kind: 'client-per-request',
      holder: {appName: h.appName, client: h.client, driver: h.driver},
      impliedClients: h.impliedClients,
      verdict: `≈${h.impliedClients} MongoClient instances from ${label}: create one client per process and reuse it (maxIdleTimeMS does not close monitoring connections)`,
      evidence:
        `${h.monitoring} of its ${h.count} connections over ${h.hosts} host${h.hosts === 1 ? '' : 's'} are monitoring connections ` +
        `(parked awaitable hellos: ${perHostText(h.monitorsPerHost ?? {})}; each client keeps one, and streaming a second for RTT, on every member, reads or not); ${h.pool ?? 0} pooled`,
    })
  }
  return out
}
