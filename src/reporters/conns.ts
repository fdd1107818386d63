/**
 * `pooltool conns watch` / `conns list` → text. No I/O: every function returns
 * a string the command writes. The live view keeps each host's recent
 * `current` values for its sparkline and redraws in place (ANSI cursor-up +
 * clear) on a terminal; the plain renderer prints one line per host per round.
 *
 * Control characters in what servers and clients sent (appName, driver, host names, a router's
 * version, errmsg) are escaped by the output layer (fit.ts) every line passes through; the labels
 * built here from those strings also show a newline as `\x0a` (terminalLine), so an appName cannot
 * start a line of its own and pass for one of ours.
 */
import type {
  ClusterHolders,
  ClusterTopology,
  ConnPoolStatsSummary,
  ConnsAlert,
  ConnsHostSummary,
  ConnsListResult,
  ConnsTopologySummary,
  ConnsVerdict,
  ConnsWatchResult,
  Holder,
  HostIdentity,
  HostSample,
  IncomingLimit,
  NeverShrankDetail,
  PoolCounts,
  ReadersWriters,
  RoundSample,
} from '../conns/types.js'
import {neverShrankVerdict} from '../conns/never-shrank-advice.js'
import {CONNECTION_OPTIONAL_FIELDS} from '../probes/server-status.js'
import {LOCAL_TIME, type TimeDisplay, timeOfDay, zoneNote} from './time-of-day.js'
import {terminalLine} from './escape.js'
import {type Cell, fitTable, type Layout, UNLIMITED} from './fit.js'
import {formatCount} from './format.js'
import {Redraw} from './redraw.js'
import {sparklineWithLevel} from './sparkline.js'

const dash = (n: number | undefined) => (n === undefined ? '–' : formatCount(n))
const rate = (n: number | undefined) => (n === undefined ? '–' : `${n.toFixed(1)}/s`)
const seconds = (ms: number) => (ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`)
const pct = (n: number | undefined) => (n === undefined ? '–' : `${n < 10 ? n.toFixed(1) : Math.round(n)}%`)
/** "80% of 100": the share of the connection limit in use, and the limit. */
const usedOf = (usedPct: number | undefined, maxIncoming: number | undefined) => (maxIncoming === undefined ? '–' : `${pct(usedPct)} of ${formatCount(maxIncoming)}`)
/** A lock queue as total (readers/writers). */
const queue = (q: ReadersWriters | undefined) => (q === undefined ? '–' : q.total === 0 ? '0' : `${q.total} (${q.readers}r/${q.writers}w)`)

/**
 * The one table of serverStatus.connections fields: the header a reader sees (the JSON keeps the
 * server's names) and what the figure means, as `conns list --help` and the README say it.
 */
export const CONNECTION_FIELDS: Record<string, {header: string; meaning: string}> = {
  current: {header: 'current', meaning: 'open incoming connections: applications\' pools, every client\'s monitoring connections (one per member, two streaming), other members, routers, shells'},
  available: {header: 'available', meaning: 'how many more the server accepts: the limit (current + available) minus current'},
  totalCreated: {header: 'created (total)', meaning: 'connections created since the process started; over serverStatus.uptime it is the lifetime churn baseline'},
  active: {header: 'active', meaning: 'connections with an operation in progress, a parked awaitable hello included: on a member nobody reads from it is mostly client monitors waiting'},
  rejected: {header: 'rejected', meaning: 'connections refused at the limit since the start (6.3+)'},
  threaded: {header: 'threaded', meaning: 'connections given a thread to serve them (5.0+)'},
  exhaustIsMaster: {header: 'exhaust isMaster', meaning: 'connections streaming legacy isMaster replies: monitors of older drivers (4.4+)'},
  exhaustHello: {header: 'exhaust hello', meaning: 'connections streaming hello replies: one per client monitor of this member (4.4.2+); never in a pool, never closed by maxIdleTimeMS'},
  awaitingTopologyChanges: {header: 'awaiting topology', meaning: 'parked awaitable hellos: one per MongoClient (or mongos, member) monitoring this member; above current it is the SERVER-62082 counter defect'},
  loadBalanced: {header: 'load-balanced', meaning: 'connections that came through a load balancer (5.3+)'},
  queuedForEstablishment: {header: 'queued to set up', meaning: 'connections waiting for the establishment rate limiter (8.0.12+, 7.0.23+)'},
  limitExempt: {header: 'limit-exempt', meaning: 'connections exempt from the limit (maxIncomingConnectionsOverride)'},
}

/** Table headers for serverStatus.connections fields (derived from CONNECTION_FIELDS). */
export const CONNECTION_FIELD_HEADERS: Record<string, string> = Object.fromEntries(
  Object.entries(CONNECTION_FIELDS)
    .filter(([field]) => field !== 'current' && field !== 'available')
    .map(([field, {header}]) => [field, header]),
)

/** The list's columns that are not serverStatus.connections fields. */
const DERIVED_COLUMNS: Record<string, {field: string; meaning: string}> = {
  '% used of max': {field: 'usedPct, maxIncoming', meaning: 'current as a share of the limit (current + available), and the limit'},
  'lock queue / active': {field: 'lockQueue, activeClients', meaning: 'operations waiting for a lock, and clients running one (globalLock; readers r / writers w)'},
}

/** "header (field): meaning; …": every column of the table explained, for --help. */
export function connectionFieldsHelp(): string {
  return [
    ...Object.entries(CONNECTION_FIELDS).map(([field, {header, meaning}]) => `${header}${header === field ? '' : ` (${field})`}: ${meaning}`),
    ...Object.entries(DERIVED_COLUMNS).map(([header, {field, meaning}]) => `${header} (${field}): ${meaning}`),
  ].join('; ')
}

/** Role, shard, member state, router version and zone tags: "mongos 7.0.14", "shard shardA P zones NYC,SF", "secondary passive". */
export function roleLabel(h: {role: string; shard?: string; memberState?: string; mongoVersion?: string; tags?: string[]; passive?: boolean; hidden?: boolean}): string {
  const parts: string[] = [h.role]
  if (h.passive) parts.push('passive')
  if (h.hidden) parts.push('hidden')
  if (h.mongoVersion) parts.push(h.mongoVersion)
  if (h.shard) parts.push(h.shard)
  if (h.memberState && (h.role === 'shard' || h.role === 'config')) parts.push(h.memberState === 'primary' ? 'P' : h.memberState === 'secondary' ? 'S' : '?')
  if (h.tags && h.tags.length > 0) parts.push(`zones ${h.tags.join(',')}`)
  return terminalLine(parts.join(' '))
}

/** The host as the cluster names it; the entry node marked, with the address it is reached at when that differs. */
export function hostLabel(h: Pick<HostIdentity, 'host' | 'entry' | 'address'>): string {
  if (!h.entry) return terminalLine(h.host)
  return terminalLine(h.address && h.address !== h.host ? `${h.host} (entry, via ${h.address})` : `${h.host} (entry)`)
}

/** A host without figures: "not reachable from here" for one that never answered, else its state. */
function downState(h: {state: string; reachedFromHere?: boolean}): string {
  return h.state === 'unreachable' && h.reachedFromHere === false ? 'not reachable from here' : h.state
}

/**
 * The errors of the hosts without figures, one line each under the table (a cell spanning the
 * figure columns would draw a broken rule in the compact table).
 */
function downLines(hosts: ReadonlyArray<{host: string; state: string; error?: string; reachedFromHere?: boolean}>, width: number): string[] {
  return hosts.filter((h) => h.state !== 'ok').map((h) => `${terminalLine(h.host)} ${downState(h)}: ${terminalLine(h.error ?? '').slice(0, width)}`)
}

/** hello lists no hidden member: said with a replica set's hosts when replSetGetConfig could not list them either. */
export const HIDDEN_MEMBERS_TEXT = 'hidden members are not in hello'

export function describeTopology(t: ClusterTopology | ConnsTopologySummary, hostCount: number): string {
  const kind = t.kind === 'replset' ? terminalLine(`replica set ${t.setName ?? ''}`.trim()) : t.kind === 'sharded' ? 'sharded cluster' : 'standalone'
  return `${kind}, ${hostCount} host${hostCount === 1 ? '' : 's'} (from ${t.sources.join(', ')}${t.kind === 'replset' && t.hiddenMembersVisible === false ? `; ${HIDDEN_MEMBERS_TEXT}` : ''})`
}

export function renderTopology(t: ClusterTopology): string {
  const lines = [`discovered ${describeTopology(t, t.hosts.length)}:`]
  for (const h of t.hosts) lines.push(`  ${hostLabel(h)}  ${roleLabel(h)}${h.setName ? ` (${terminalLine(h.setName)})` : ''}`)
  for (const s of t.staleRouters) lines.push(`  ${terminalLine(`${s.host}  mongos${s.mongoVersion ? ` ${s.mongoVersion}` : ''}`)}, stale (last ping ${s.lastPing ?? 'never'}): not polled`)
  if (t.configMongosCount === 0) lines.push('  config.mongos is empty: no router has registered')
  for (const w of t.warnings) lines.push(`  warning: ${w}`)
  return lines.join('\n')
}

function holderLabel(h: Holder): string {
  // An application's monitoring connections said beside its count: they are its clients, not its pool.
  const monitoring = h.kind === 'application' && h.monitors ? ` (${h.monitors + (h.rttPingers ?? 0)} monitoring)` : ''
  return `${terminalLine(`${h.appName}@${h.client} (${h.driver})`)}${h.own ? ' [pooltool]' : ''} ×${h.count}${monitoring}`
}

function poolsLine(p: ConnPoolStatsSummary): string {
  const t = p.totals
  const shards = p.shards.map((s) => `${terminalLine(s.shard)} ${s.inUse}/${s.available}/${s.created}/${s.refreshing}`).join(', ')
  return `pools in use/available/created/refreshing: total ${t.inUse}/${t.available}/${t.created}/${t.refreshing}${shards ? `; ${shards}` : ''}`
}

/** in use/available/created/refreshing. */
const counts4 = (c: PoolCounts) => `${c.inUse}/${c.available}/${c.created}/${c.refreshing}`
/** "NetworkInterfaceTL-TaskExecutorPool-0" → "TaskExecutorPool-0" (the JSON keeps the server's name). */
const shortPoolName = (name: string) => terminalLine(name.replace(/^NetworkInterface(TL|ASIO)-/, ''))

/** One node's pools on one line: totals, each pool by name, waits and never-used connections where the server counts them. */
function poolsByNameLine(p: ConnPoolStatsSummary, byShard: boolean): string {
  const parts = [`total ${counts4(p.totals)}`, ...(p.byPool ?? []).map((pool) => `${shortPoolName(pool.pool)} ${counts4(pool)}`)]
  // A router's pools summed per shard (and config): which shard its connections go to.
  if (byShard && p.shards.length > 0) parts.push(`by shard ${p.shards.map((s) => `${terminalLine(s.shard)} ${counts4(s)}`).join(', ')}`)
  if (p.totals.wasNeverUsed !== undefined) parts.push(`never used ${formatCount(p.totals.wasNeverUsed)}`)
  const waits = p.acquisitionWaitTimes
  if (waits && waits.totalCount > 0) parts.push(`waited ≥50 ms ${formatCount(waits.waitedAtLeast50MS)} of ${formatCount(waits.totalCount)} acquisitions`)
  return parts.join(' · ')
}

/**
 * Outgoing pools of every node that answered connPoolStats (in use/available/created/refreshing): one line per node
 * with its pools by name; with `perHost`, a second line with each remote host over every pool; nodes that refused, said so.
 */
function poolsSection(hosts: ReadonlyArray<{host: string; role: string; pools?: ConnPoolStatsSummary; poolsUnavailable?: string}>, perHost: boolean): string[] {
  const lines: string[] = []
  for (const h of hosts) {
    if (h.pools) {
      if (h.pools.totals.created === 0 && (h.pools.byPool ?? []).length === 0) {
        lines.push(`  ${terminalLine(h.host)} none`)
        continue
      }
      lines.push(`  ${terminalLine(h.host)} ${poolsByNameLine(h.pools, h.role === 'mongos')}`)
      const remote = h.pools.byHost ?? []
      if (perHost && remote.length > 0) lines.push(`    to ${remote.map((r) => `${terminalLine(r.host)} ${counts4(r)}`).join(', ')}`)
    } else if (h.poolsUnavailable) lines.push(`  ${terminalLine(h.host)} not available: ${terminalLine(h.poolsUnavailable)}`)
  }
  return lines.length > 0 ? ['outgoing pools (connPoolStats; in use/available/created/refreshing):', ...lines] : []
}

/** The connection limit of each host, explained; hosts with the same explanation on one line. */
function limitsSection(hosts: ReadonlyArray<{host: string; incomingLimit?: IncomingLimit}>): string[] {
  const byText = new Map<string, string[]>()
  for (const h of hosts) if (h.incomingLimit) byText.set(h.incomingLimit.explanation, [...(byText.get(h.incomingLimit.explanation) ?? []), h.host])
  if (byText.size === 0) return []
  return ['connection limits (current + available):', ...[...byText].map(([text, names]) => `  ${terminalLine(names.join(', '))}: ${terminalLine(text)}`)]
}

export function renderAlert(alert: ConnsAlert, display: TimeDisplay = LOCAL_TIME): string {
  const value = alert.unit === '/s' ? `${alert.value}/s` : alert.unit === '%' ? `${alert.value}%` : String(alert.value)
  return `ALERT ${timeOfDay(alert.at, display)} ${terminalLine(alert.host)}: ${alert.rule} (now ${value})`
}

export function renderNeverShrank(host: string, d: NeverShrankDetail): string {
  // The fix by who holds them (never-shrank-advice.ts): monitoring connections of clients created per request,
  // idle pooled connections (maxIdleTimeMS), or the cluster's own pools (ShardingTaskExecutorPool*).
  return `NEVER-SHRANK ${terminalLine(host)}: ${d.levelAtQuiet} connections still open ${seconds(d.quietForMS)} after creation stopped (was ${d.baseline} before the growth); ${terminalLine(neverShrankVerdict(host, d).verdict)}`
}

/** One line per host for logs and pipes: key=value, absent fields left out. */
export function renderPlainRound(round: RoundSample, display: TimeDisplay = LOCAL_TIME): string {
  return round.hosts
    .map((h) => {
      const head = `${timeOfDay(round.at, display)} #${round.round} ${terminalLine(h.host)} ${roleLabel(h).replaceAll(' ', '/')}`
      if (h.state !== 'ok') return `${head} ${h.state.toUpperCase()}${h.reachedFromHere === false ? ' (not reachable from here)' : ''} ${terminalLine(h.error ?? '')}`.trimEnd()
      const fields: string[] = []
      if (h.current !== undefined) fields.push(`current=${h.current}`, `available=${h.available}`, `totalCreated=${h.totalCreated}`)
      if (h.totalCreatedRatePerSec !== undefined) fields.push(`rate=${h.totalCreatedRatePerSec}/s`)
      for (const f of CONNECTION_OPTIONAL_FIELDS) if (h[f] !== undefined) fields.push(`${f}=${h[f]}`)
      if (h.maxIncoming !== undefined) fields.push(`maxIncoming=${h.maxIncoming}`)
      if (h.usedPct !== undefined) fields.push(`used=${h.usedPct}%`)
      if (h.lockQueue) fields.push(`lockQueue=${h.lockQueue.total}/${h.lockQueue.readers}r/${h.lockQueue.writers}w`)
      if (h.lockWaitsPerSec !== undefined) fields.push(`lockWaits=${h.lockWaitsPerSec}/s`, `lockWaitUs=${h.lockWaitUsPerSec}/s`)
      if (h.counterReset) fields.push('restarted')
      if (h.neverShrank) fields.push('neverShrank')
      if (h.pools) fields.push(`pools=${h.pools.totals.inUse}/${h.pools.totals.available}/${h.pools.totals.created}/${h.pools.totals.refreshing}`)
      if (h.incomingLimit) fields.push(`limitBinds=${h.incomingLimit.binds}`)
      for (const d of h.counterDefects ?? []) fields.push(`defect=${d.field}>current(${d.ticket})`)
      if (h.holders && h.holders.length > 0) fields.push(`holders=${h.holders.slice(0, 3).map((x) => `${terminalLine(`${x.appName}@${x.client}`)}:${x.count}`).join(',')}`)
      return `${head} ${fields.join(' ')}`
    })
    .join('\n')
}

/** No rule between rows: one line per host keeps the live frame short. */

const SPARK_WIDTH = 30
const ALERTS_SHOWN = 5

/** The terminal view: a table with a sparkline of `current` per host, pools, top holders and recent alerts. */
export class ConnsLiveView {
  private readonly history = new Map<string, Array<number | undefined>>()
  private readonly alerts: string[] = []
  private alertCount = 0
  private readonly redraw = new Redraw()
  private last?: RoundSample

  constructor(
    private readonly header: string,
    private readonly display: TimeDisplay = LOCAL_TIME,
  ) {}

  push(round: RoundSample): void {
    this.last = round
    for (const h of round.hosts) {
      const series = this.history.get(h.host) ?? []
      series.push(h.state === 'ok' ? h.current : undefined)
      if (series.length > SPARK_WIDTH) series.shift()
      this.history.set(h.host, series)
    }
  }

  note(line: string, isAlert = true): void {
    if (isAlert) this.alertCount += 1
    this.alerts.push(line)
    if (this.alerts.length > ALERTS_SHOWN) this.alerts.shift()
  }

  /**
   * The frame, prefixed with the escape codes that erase the previous one. Fitted to the width,
   * so no line wraps on the terminal: the count of lines to erase is the count the terminal shows.
   */
  frame(layout: Layout = UNLIMITED): string {
    return this.redraw.frame(this.body(layout), layout)
  }


  private body(layout: Layout): string {
    const round = this.last
    const lines = [this.header]
    if (!round) return [...lines, 'waiting for the first poll round…'].join('\n')
    lines.push(`round ${round.round} at ${timeOfDay(round.at, this.display)} (${zoneNote(this.display, new Date(round.at))}) · ${seconds(round.elapsedMS)} elapsed · poll ${round.roundMS} ms · Ctrl-C for the summary`)
    // The trend is the view's only history: it goes last, after every lesser column (highest dropOrder goes first).
    const columns = [
      'host', 'role', 'current', {head: 'available', short: 'avail', dropOrder: 5}, '% used', {head: 'active', dropOrder: 2}, 'created/s', {head: 'rejected', short: 'rej', dropOrder: 6},
      {head: 'lock queue', short: 'lock q', dropOrder: 4}, {head: 'lock waits/s', short: 'waits/s', dropOrder: 3}, {head: `current (last ${SPARK_WIDTH})`, short: 'trend', dropOrder: 1},
    ]
    const rows = round.hosts.map((h): Cell[] => {
      // The top of the bars' scale beside them: the bars alone cannot tell 2 connections from 42.
      const spark = sparklineWithLevel(this.history.get(h.host) ?? [], SPARK_WIDTH, (n) => formatCount(n))
      // The state alone keeps the column narrow; why (and "not reachable from here") is on a line under the table.
      if (h.state !== 'ok') return [hostLabel(h), roleLabel(h), h.state, ...Array.from({length: 7}, () => '–'), spark]
      return [
        hostLabel(h),
        roleLabel(h) + (h.neverShrank ? ' ⚠ never shrank' : ''),
        dash(h.current),
        dash(h.available),
        pct(h.usedPct),
        dash(h.active),
        rate(h.totalCreatedRatePerSec),
        dash(h.rejected),
        queue(h.lockQueue),
        rate(h.lockWaitsPerSec),
        spark,
      ]
    })
    lines.push(fitTable(columns, rows, layout), ...downLines(round.hosts, 100))
    // Live: the routers' pools only (one line each); every node's pools are in the summary and conns list.
    for (const h of round.hosts) if (h.pools && h.role === 'mongos') lines.push(`${terminalLine(h.host)} ${poolsLine(h.pools)}`)
    for (const h of round.hosts) {
      if (h.holders && h.holders.length > 0) lines.push(`${terminalLine(h.host)} holders: ${h.holders.slice(0, 3).map(holderLabel).join(', ')}`)
    }
    // Summed over the hosts: one app's connections on every member, and what they say.
    const cluster = round.clusterHolders
    if (cluster && cluster.holders.length > 0) lines.push(`cluster-wide: ${cluster.holders.slice(0, 3).map(clusterHolderLabel).join(', ')}`)
    for (const v of round.verdicts ?? []) lines.push(`VERDICT ${terminalLine(v.verdict)}`)
    if (this.alerts.length > 0) {
      lines.push(`alerts (${this.alertCount}):`)
      for (const a of this.alerts) lines.push(`  ${a}`)
    }
    return lines.join('\n')
  }
}

function hostsTable(hosts: readonly ConnsHostSummary[], layout: Layout): string {
  const columns = [
    'host', 'role', {head: 'samples', dropOrder: 5}, {head: 'unreachable', short: 'unreach.'}, {head: 'current min/max/last', short: 'current'}, {head: '% used max', short: '% used'},
    {head: 'created/s max/mean', short: 'created/s'}, 'created', {head: 'rejected', short: 'rej', dropOrder: 2}, {head: 'lock queue max', short: 'lock q', dropOrder: 4},
    {head: 'lock waits/s max/mean', short: 'waits/s', dropOrder: 3}, {head: 'never shrank', short: 'shrank?'}, {head: 'alerts', dropOrder: 1},
  ]
  const rows = hosts.map((h): Cell[] => {
    const unreachable = !h.reachedFromHere
      ? 'not reachable from here'
      : h.unreachableRounds > 0
        ? `${h.unreachableRounds} round${h.unreachableRounds === 1 ? '' : 's'}${h.state === 'ok' ? '' : ' (now)'}`
        : '–'
    return [
      hostLabel(h),
      roleLabel(h),
      h.samples,
      unreachable,
      `${dash(h.current.min)} / ${dash(h.current.max)} / ${dash(h.current.last)}`,
      usedOf(h.usedPct.max, h.maxIncoming),
      `${rate(h.totalCreatedRate.max)} / ${rate(h.totalCreatedRate.mean)}`,
      dash(h.created),
      dash(h.rejected),
      dash(h.lockQueueTotal.max),
      h.lockWaitsPerSec.max === undefined ? '–' : `${rate(h.lockWaitsPerSec.max)} / ${rate(h.lockWaitsPerSec.mean)}`,
      h.neverShrank ? 'YES' : 'no',
      h.alerts,
    ]
  })
  return fitTable(columns, rows, layout)
}

/** Hosts whose holders could not be read are named once, grouped by reason, in the result's notes. */
function holdersSection(hosts: ReadonlyArray<{host: string; holders?: Holder[]}>, top = 5): string[] {
  const lines: string[] = []
  for (const h of hosts) {
    if (h.holders && h.holders.length > 0) {
      const more = h.holders.length > top ? ` (+${h.holders.length - top} more)` : ''
      lines.push(`  ${terminalLine(h.host)}: ${h.holders.slice(0, top).map(holderLabel).join(', ')}${more}`)
    }
  }
  return lines.length > 0 ? ['who holds the connections (appName@client (driver) ×count):', ...lines] : []
}

/** "1.2 M", "14 d": a count and a duration a reader takes in at a glance. */
const ageText = (sec: number) =>
  sec >= 2 * 86_400 ? `${Math.round(sec / 86_400)} days` : sec >= 2 * 3600 ? `${Math.round(sec / 3600)} h` : sec >= 120 ? `${Math.round(sec / 60)} min` : `${Math.round(sec)} s`

/**
 * The churn baseline per host: what it created since it started over its uptime, against the rate now
 * ("1.2 M created in 14 days = 1.0/s; now 4.0/s"). `now` absent (one poll): the baseline alone.
 */
function churnSection(hosts: ReadonlyArray<{host: string; uptimeSec?: number; created?: number; totalCreated?: number; totalCreatedSinceStart?: number; createdPerSecSinceStart?: number; now?: number}>): string[] {
  const lines = hosts.flatMap((h) => {
    const total = h.totalCreatedSinceStart ?? h.totalCreated
    if (h.uptimeSec === undefined || h.createdPerSecSinceStart === undefined || total === undefined) return []
    const now = h.now === undefined ? '' : `; now ${rate(h.now)}`
    return [`  ${terminalLine(h.host)}: ${formatCount(total)} created in ${ageText(h.uptimeSec)} = ${rate(h.createdPerSecSinceStart)}${now}`]
  })
  return lines.length > 0 ? ['churn since start (totalCreated over serverStatus.uptime):', ...lines] : []
}

/** A cluster-wide holder: "checkout-svc@10.0.0.5 (nodejs) ×560 on 3 hosts: 480 monitoring (≈80 clients), 80 pooled". */
function clusterHolderLabel(h: ClusterHolders['holders'][number]): string {
  // Monitoring and pooled are an application driver's classes: the server's own and ours are counted whole.
  const split = h.monitoring === undefined || h.kind !== 'application' ? '' : `: ${formatCount(h.monitoring)} monitoring${h.impliedClients ? ` (≈${formatCount(h.impliedClients)} client${h.impliedClients === 1 ? '' : 's'})` : ''}, ${formatCount(h.pool ?? 0)} pooled`
  return `${terminalLine(`${h.appName}@${h.client} (${h.driver})`)}${h.kind === 'pooltool' ? ' [pooltool]' : h.kind === 'internal' ? ' [internal]' : ''} ×${formatCount(h.count)} on ${h.hosts} host${h.hosts === 1 ? '' : 's'}${split}`
}

const totalLabel = (t: ClusterHolders['byApp'][number]) => `${terminalLine(t.name)} ×${formatCount(t.count)}${t.monitoring ? ` (${formatCount(t.monitoring)} monitoring)` : ''}`

/** The holders summed over every host read, ranked, and per app, client host and driver. */
export function clusterHoldersSection(c: ClusterHolders | undefined, top = 5): string[] {
  if (!c || c.holders.length === 0) return []
  const t = c.totals
  const split = t.monitoring === undefined ? '' : ` (${formatCount(t.monitoring)} monitoring, ${formatCount(t.pool ?? 0)} pooled)`
  const unread = c.hostsUnread.length > 0 ? `; not read on ${terminalLine(c.hostsUnread.join(', '))}: unknown there` : ''
  const more = (n: number) => (n > top ? ` (+${n - top} more)` : '')
  return [
    `cluster-wide holders over ${c.hostsRead.length} host${c.hostsRead.length === 1 ? '' : 's'}: applications ×${formatCount(t.application)}${split}, internal ×${formatCount(t.internal)}, pooltool ×${formatCount(t.pooltool)}${unread}`,
    ...c.holders.slice(0, top).map((h, i) => `  ${i + 1}. ${clusterHolderLabel(h)}`),
    ...(c.holders.length > top ? [`  (+${c.holders.length - top} more)`] : []),
    `  by app: ${c.byApp.slice(0, top).map(totalLabel).join(', ')}${more(c.byApp.length)}`,
    `  by client host: ${c.byClient.slice(0, top).map(totalLabel).join(', ')}${more(c.byClient.length)}`,
    `  by driver: ${c.byDriver.slice(0, top).map(totalLabel).join(', ')}${more(c.byDriver.length)}`,
  ]
}

/** Each verdict on its line, its evidence under it. */
export function verdictsSection(verdicts: readonly ConnsVerdict[]): string[] {
  return verdicts.flatMap((v) => [`VERDICT ${terminalLine(v.verdict)}`, `  evidence: ${terminalLine(v.evidence)}`])
}

/**
 * Footnotes where a value surprises: `active` made mostly of parked monitor hellos (awaitingTopologyChanges),
 * e.g. on a secondary nobody reads from.
 */
export function surprisingValueNotes(hosts: ReadonlyArray<{host: string; state: string; active?: number; awaitingTopologyChanges?: number; current?: number}>): string[] {
  return hosts.flatMap((h) => {
    if (h.state !== 'ok' || h.active === undefined || h.awaitingTopologyChanges === undefined || h.current === undefined) return []
    // Above current it is the counter defect, said in the notes.
    if (h.awaitingTopologyChanges === 0 || h.awaitingTopologyChanges > h.current || h.awaitingTopologyChanges * 2 < h.active) return []
    return [
      `* ${terminalLine(h.host)}: active ${formatCount(h.active)} counts ${formatCount(Math.min(h.active, h.awaitingTopologyChanges))} parked monitor hellos (awaiting topology ${formatCount(h.awaitingTopologyChanges)}): one per client monitoring this member, not work`,
    ]
  })
}

export function renderWatchSummary(result: ConnsWatchResult, layout: Layout = UNLIMITED): string {
  const lines = [
    `conns watch ${result.target.uri}: ${describeTopology(result.topology, result.hosts.length)}`,
    `${result.rounds} rounds every ${result.intervalMS} ms over ${seconds(result.durationMS)}${result.interrupted ? ' (stopped by Ctrl-C)' : ''}; poll round ${result.roundMS.mean ?? '–'} ms mean, ${result.roundMS.max ?? '–'} ms max`,
    hostsTable(result.hosts, layout),
  ]
  lines.push(...poolsSection(result.hosts, false), ...limitsSection(result.hosts))
  for (const h of result.hosts) if (h.neverShrankDetail) lines.push(renderNeverShrank(h.host, h.neverShrankDetail))
  lines.push(...churnSection(result.hosts.map((h) => ({...h, now: h.totalCreatedRate.mean}))))
  lines.push(...holdersSection(result.hosts), ...clusterHoldersSection(result.clusterHolders))
  lines.push(...surprisingValueNotes(result.hosts.map((h) => ({host: h.host, state: h.state, ...h.last}))))
  lines.push(...verdictsSection(result.verdicts ?? []))
  const rules = Object.entries(result.alertCounts)
  if (rules.length > 0) lines.push(`alerts: ${rules.map(([rule, n]) => `${rule} fired ${n}×`).join(', ')}`)
  for (const note of result.notes) lines.push(`note: ${note}`)
  return lines.join('\n')
}

export function renderList(result: ConnsListResult, layout: Layout = UNLIMITED): string {
  const optional = CONNECTION_OPTIONAL_FIELDS.filter((f) => result.hosts.some((h) => h[f] !== undefined))
  const locks = result.hosts.some((h) => h.lockQueue !== undefined || h.activeClients !== undefined)
  const lockHeads = locks ? ['lock queue / active'] : []
  const columns = [
    // available = the limit − current: the first to go, the share used says as much.
    'host', 'role', 'state', 'current', {head: 'available', short: 'avail', dropOrder: optional.length + 2}, {head: '% used of max', short: '% used'}, {head: CONNECTION_FIELD_HEADERS.totalCreated!, short: 'created'},
    ...optional.map((field, index) => ({head: CONNECTION_FIELD_HEADERS[field] ?? field, dropOrder: optional.length - index + 1})), ...lockHeads.map((head) => ({head, short: 'lock q/active', dropOrder: 1})),
  ]
  const rows = result.hosts.map((h): Cell[] => {
    if (h.state !== 'ok') return [hostLabel(h), roleLabel(h), downState(h), ...Array.from({length: 4 + optional.length + lockHeads.length}, () => '–')]
    const lockCells = locks ? [`${queue(h.lockQueue)} / ${queue(h.activeClients)}`] : []
    return [hostLabel(h), roleLabel(h), h.state, dash(h.current), dash(h.available), usedOf(h.usedPct, h.maxIncoming), dash(h.totalCreated), ...optional.map((f) => dash(h[f])), ...lockCells]
  })
  const lines = [`conns list ${result.target.uri}: ${describeTopology(result.topology, result.hosts.length)} at ${result.at} (poll ${result.roundMS} ms)`, fitTable(columns, rows, layout), ...downLines(result.hosts, 200)]
  lines.push(...poolsSection(result.hosts, true), ...limitsSection(result.hosts))
  lines.push(...churnSection(result.hosts))
  lines.push(...holdersSection(result.hosts, 10), ...clusterHoldersSection(result.clusterHolders, 10))
  lines.push(...surprisingValueNotes(result.hosts), ...verdictsSection(result.verdicts ?? []))
  for (const s of result.topology.staleRouters) lines.push(`stale router ${terminalLine(`${s.host}${s.mongoVersion ? ` ${s.mongoVersion}` : ''}`)} (last ping ${s.lastPing ?? 'never'}): not polled`)
  for (const note of result.notes) lines.push(`note: ${note}`)
  return lines.join('\n')
}

/** `--ndjson`: one line per host sample. */
export function ndjsonSamples(round: RoundSample): string[] {
  return round.hosts.map((h) => JSON.stringify({type: 'sample', round: round.round, at: round.at, ...h}))
}
