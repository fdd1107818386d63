/** `pooltool auth` result → text. Pure: no I/O. */
import type {AuthResult, MeasuredHostSummary, MechanismResult, PercentilesUs} from '../auth/types.js'
import {fitTable, type Layout, UNLIMITED} from './fit.js'
import {formatCount, formatRecord, formatUs} from './format.js'

const pair = (p: PercentilesUs | null | undefined): string => (p ? `${formatUs(p.p50)} / ${formatUs(p.p99)}` : '–')
const times = (k: number | null | undefined): string => (k === null || k === undefined ? '–' : `${formatCount(k)}×`)
const errorCount = (m: MechanismResult): number => Object.values(m.errors).reduce((a, b) => a + b, 0)

function driverFreeTable(result: AuthResult, layout: Layout): string {
  const columns = [
    'mechanism', {head: 'i=', dropOrder: 2}, {head: 'round trips', short: 'trips'}, {head: 'TCP connect p50 / p99', short: 'TCP p50/p99', dropOrder: 3},
    {head: 'handshake p50 / p99', short: 'hello p50/p99', dropOrder: 4}, {head: 'auth p50 / p99', short: 'auth p50/p99'}, {head: 'of which PBKDF2 p50', short: 'PBKDF2 p50', dropOrder: 1},
    {head: 'set-up p50 / p99 / max', short: 'set-up p50/p99/max'},
  ]
  const rows = result.mechanisms.map((m) => [
    m.mechanism,
    m.iterationCount === null ? '–' : formatCount(m.iterationCount),
    m.roundTrips === null ? '–' : `${m.roundTrips}${m.speculative ? ' (speculative)' : ''}`,
    pair(m.tcpConnectUs),
    pair(m.handshakeUs),
    pair(m.authUs),
    m.keyDerivationUs ? formatUs(m.keyDerivationUs.p50) : '–',
    m.driverFreeSetupUs ? `${formatUs(m.driverFreeSetupUs.p50)} / ${formatUs(m.driverFreeSetupUs.p99)} / ${formatUs(m.driverFreeSetupUs.max)}` : '–',
  ])
  return fitTable(columns, rows, layout)
}

function driverTable(result: AuthResult, layout: Layout): string {
  const columns = [
    'mechanism', 'set-up p50', 'p99', {head: 'max', dropOrder: 2}, {head: 'first connection', short: 'first', dropOrder: 1}, {head: 'in pooled pings', short: 'in pings'},
    {head: 'fresh process (driver-free)', short: 'fresh process'},
  ]
  const rows = result.mechanisms.map((m) => [
    m.mechanism,
    formatUs(m.setupUs?.p50),
    formatUs(m.setupUs?.p99),
    formatUs(m.setupUs?.max),
    m.mechanism === 'none' ? 'n/a' : formatUs(m.driverFirstSetupUs),
    times(m.costInPooledOps),
    times(m.costInPooledOpsDriverFree),
  ])
  return fitTable(columns, rows, layout)
}

function stormTable(result: AuthResult, layout: Layout): string {
  const columns = [
    'mechanism', {head: 'driver conns/s', short: 'driver/s'}, {head: 'driver set-up p50 / p99', short: 'driver set-up', dropOrder: 2}, {head: 'driver-free conns/s', short: 'free/s'},
    {head: 'driver-free set-up p50 / p99', short: 'free set-up', dropOrder: 3}, {head: 'driver-free auth p50 / p99', short: 'free auth', dropOrder: 1}, 'failed',
  ]
  const rows = result.mechanisms.map((m) => {
    const free = m.storm.driverFree
    return [
      m.mechanism,
      formatCount(m.storm.driver.connectionsPerSec),
      pair(m.storm.driver.setupUs),
      free ? formatCount(free.connectionsPerSec) : '–',
      free ? pair(free.setupUs) : '–',
      free ? pair(free.authUs) : '–',
      errorCount(m) === 0 ? '0' : formatRecord(m.errors),
    ]
  })
  return fitTable(columns, rows, layout)
}

function serverTable(result: AuthResult, layout: Layout): string {
  const columns = [
    'mechanism', {head: 'connections opened', short: 'opened'}, {head: 'authentications by pooltool', short: 'auths by pooltool'}, 'received Δ', {head: 'successful Δ', short: 'successful Δ'},
    {head: 'of which speculative Δ', short: 'speculative Δ'},
  ]
  const rows = result.mechanisms.map((m) => {
    const c = m.serverAuthCounters
    return [
      m.mechanism,
      formatCount(m.connectionsOpened),
      formatCount(m.authenticationsExpected),
      formatCount(c?.received),
      formatCount(c?.successful),
      formatCount(c?.speculativeSuccessful),
    ]
  })
  return fitTable(columns, rows, layout)
}

function iterationLine(result: AuthResult): string {
  const it = result.serverIterationCounts
  if (it.unavailable && it.scramIterationCount === undefined) return `server iteration counts for new passwords: unavailable (${it.unavailable})`
  return `server iteration counts for new passwords: scramIterationCount ${formatCount(it.scramIterationCount)}, scramSHA256IterationCount ${formatCount(it.scramSHA256IterationCount)}`
}

export function headline(result: AuthResult): string | undefined {
  const m = result.headlineMechanism
  if (!m || result.costInPooledOps === null || !result.pooledPingUs) return undefined
  const what = m === 'none' ? 'one new connection (no auth)' : `one new authenticated connection (${m})`
  const fresh =
    m !== 'none' && result.costInPooledOpsDriverFree !== null
      ? `; in a fresh process, where PBKDF2 is not cached yet, ${formatCount(result.costInPooledOpsDriverFree)}`
      : ''
  return `${what} costs as much as ${formatCount(result.costInPooledOps)} pooled pings (pooled ping p50 ${formatUs(result.pooledPingUs.p50)})${fresh}`
}

/** "127.0.0.1:27018 (the replica set's primary)". */
function hostLine(host: MeasuredHostSummary): string {
  const role = host.role === 'primary' ? "the replica set's primary" : host.role === 'mongos' ? 'the router' : host.role === 'standalone' ? 'the standalone' : `a ${host.role} member`
  return `${host.host}${host.clusterName ? ` (known to the cluster as ${host.clusterName})` : ''} (${role})`
}

export function renderAuth(result: AuthResult, layout: Layout = UNLIMITED): string {
  const {target, config, measuredHost} = result
  const lines = [
    `pooltool auth · ${config.connections} new connections per mechanism, one at a time and in storms of ${config.parallel} · each: handshake, auth, one ping, close`,
    measuredHost
      ? `target ${target.uri} (${target.simulated ? 'embedded simulated cluster, ' : ''}MongoDB ${measuredHost.serverVersion}); every connection went to ${hostLine(measuredHost)}`
      : `target ${target.uri}${target.simulated ? ' (embedded simulated cluster)' : ''}; interrupted before the host to measure was known`,
  ]
  if (result.mechanisms.length === 0) {
    lines.push('', 'nothing was measured.')
    return lines.join('\n')
  }
  if (result.driverFree.available) {
    lines.push('', 'One at a time, driver-free (raw TCP with pooltool\'s wire client; PBKDF2 computed for every connection)')
    lines.push(driverFreeTable(result, layout))
  }
  lines.push('', 'One at a time, official driver (a new MongoClient per connection; connectionCreated → connectionReady, PBKDF2 cached after the first)')
  lines.push(driverTable(result, layout))
  lines.push('', `Storms of ${config.parallel} at once (connections per second sustained over the storms)`)
  lines.push(stormTable(result, layout))
  lines.push('', `Server side on ${measuredHost?.host ?? 'the host'} (serverStatus.security.authentication.mechanisms, delta while each mechanism ran)`)
  if (result.serverCounters.available) lines.push(serverTable(result, layout))
  else lines.push(`  unavailable: ${result.serverCounters.reason}`)
  lines.push(iterationLine(result))
  const line = headline(result)
  lines.push('', line ? `Headline: ${line}.` : 'Headline: not measured (no pooled pings ran).')
  if (result.notes.length > 0) lines.push('', 'Notes', ...result.notes.map((n) => `  - ${n}`))
  if (result.interrupted) lines.push('', 'interrupted: the figures above cover what was measured before Ctrl-C')
  return lines.join('\n')
}

/** The live line on stderr. */
export function renderAuthProgress(text: string): string {
  return `auth · ${text}`
}
