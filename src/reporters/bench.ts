/** `pooltool bench` result → text. Pure: no I/O. */
import {NO_OPERATIONS_MEASURED, runLabel} from '../bench/fail-on.js'
import type {BenchResult, RunResult, ServerHostResult, ThresholdBreach} from '../bench/types.js'
import {describeWarmup} from '../bench/warmup.js'
import {csvCell} from './escape.js'
import {type Cell, fitTable, type Layout, UNLIMITED} from './fit.js'
import {formatCount, formatRecord, formatUs} from './format.js'
import {renderLockObservation} from './locks.js'
import {sparklineWithLevel} from './sparkline.js'

function runsTable(result: BenchResult, layout: Layout): string {
  const openLoop = result.runs.some((run) => run.latencyCorrectedUs !== null)
  const columns = [
    'model', 'conc', 'pool', openLoop ? 'rate' : undefined, 'ops/s', 'p50', {head: 'p90', dropOrder: 5}, 'p99', {head: 'p99.9', dropOrder: 4}, {head: 'max', dropOrder: 3},
    openLoop ? 'p99 corr.' : undefined, {head: 'checkout p99', short: 'chk p99', dropOrder: 2}, 'errors', openLoop ? 'missed' : undefined,
  ]
  const rows = result.runs.map((run): Array<Cell | undefined> => [
    run.model,
    run.concurrency,
    run.maxPoolSize ?? 'default',
    openLoop ? run.rate ?? '–' : undefined,
    formatCount(run.opsPerSec),
    formatUs(run.latencyUs.p50),
    formatUs(run.latencyUs.p90),
    formatUs(run.latencyUs.p99),
    formatUs(run.latencyUs.p999),
    formatUs(run.latencyUs.max),
    openLoop ? formatUs(run.latencyCorrectedUs?.p99) : undefined,
    formatUs(run.checkoutWaitUs.p99),
    formatCount(run.errors),
    openLoop ? formatCount(run.missed) : undefined,
  ])
  return fitTable(columns, rows, layout)
}

/** --stages: one row per stage, under its run; the run's row above covers the whole run. */
function stagesTable(runs: readonly RunResult[], layout: Layout): string {
  const openLoop = runs.some((run) => run.latencyCorrectedUs !== null)
  const columns = [
    'run', 'stage', {head: 'from', dropOrder: 2}, 'for', openLoop ? 'rate' : 'conc', {head: 'in flight mean/peak', short: 'in flight'}, 'ops/s', 'p50', 'p99', {head: 'max', dropOrder: 1},
    openLoop ? 'p99 corr.' : undefined, 'errors', openLoop ? 'missed' : undefined,
  ]
  const rows = runs.flatMap((run) =>
    (run.stages ?? []).map((stage): Array<Cell | undefined> => [
      runLabel(run),
      stage.index + 1,
      formatMs(stage.startMS),
      formatMs(stage.durationMS),
      openLoop ? `${formatCount(stage.rate)}/s` : stage.concurrency,
      // Absent in files written before they existed.
      stage.inFlightMean === undefined ? '–' : `${formatCount(stage.inFlightMean)} / ${formatCount(stage.inFlightPeak)}`,
      formatCount(stage.opsPerSec),
      formatUs(stage.latencyUs.p50),
      formatUs(stage.latencyUs.p99),
      formatUs(stage.latencyUs.max),
      openLoop ? formatUs(stage.latencyCorrectedUs?.p99) : undefined,
      formatCount(stage.errors),
      openLoop ? formatCount(stage.missed) : undefined,
    ]),
  )
  return fitTable(columns, rows, layout)
}

const formatMs = (ms: number): string => (ms >= 1000 ? `${Math.round(ms / 100) / 10}s` : `${ms}ms`)

function poolTable(runs: readonly RunResult[], layout: Layout): string {
  const columns = [
    'run', {head: 'clients', dropOrder: 3}, {head: 'conns created', short: 'created'}, {head: 'closed (reason)', short: 'closed'}, {head: 'peak total', short: 'peak'},
    {head: 'peak in use', short: 'in use'}, {head: 'checkout failed', short: 'chk failed'}, {head: 'cleared', dropOrder: 2}, {head: 'setup p50', dropOrder: 1}, 'setup p99',
  ]
  const rows = runs.map((run): Cell[] => [
    runLabel(run),
    formatCount(run.pool.clients),
    formatCount(run.pool.created),
    formatRecord(run.pool.closed),
    run.pool.peakTotal,
    run.pool.peakInUse,
    formatRecord(run.pool.checkOutFailed),
    run.pool.cleared,
    // No connection set up in the measured interval (the warm-up opened them): no set-up time, not 0.
    run.pool.created === 0 ? '–' : formatUs(run.pool.setupUs.p50),
    run.pool.created === 0 ? '–' : formatUs(run.pool.setupUs.p99),
  ])
  return fitTable(columns, rows, layout)
}

/** "shard (rs0)", "config (cfg)", "mongos", "primary (rs0)" … */
function roleOf(host: ServerHostResult): string {
  const set = host.shard ?? host.setName
  return set === undefined ? host.role : `${host.role} (${set})`
}

function notesOf(result: BenchResult): string[] {
  return result.notes.length === 0 ? [] : ['', 'Notes', ...result.notes.map((note) => `  ${note}`)]
}

function serverTable(runs: readonly RunResult[], layout: Layout): string {
  const columns = [
    'run', 'host', 'role', {head: 'conns before', short: 'before'}, 'peak', {head: 'at end', dropOrder: 2}, 'after', {head: 'totalCreated Δ', short: 'created Δ'},
    {head: 'lock waits', dropOrder: 3}, {head: 'lock wait time', short: 'lock wait', dropOrder: 1},
  ]
  const rows = runs.flatMap((run) =>
    run.server.map((host): Cell[] => {
      if (host.unavailable && host.connectionsBefore === undefined) return [runLabel(run), host.host, roleOf(host), {colSpan: 7, content: `unavailable: ${host.unavailable}`}]
      return [
        runLabel(run),
        host.host,
        roleOf(host),
        formatCount(host.connectionsBefore),
        formatCount(host.connectionsPeak),
        formatCount(host.connectionsAtEnd),
        formatCount(host.connectionsAfter),
        formatCount(host.totalCreatedDelta),
        formatCount(host.lockWaits?.acquireWaitCount),
        formatUs(host.lockWaits?.timeAcquiringMicros),
      ]
    }),
  )
  return fitTable(columns, rows, layout)
}

/**
 * A sweep as grids, one per model: concurrency down, pool size across, each cell "ops/s · p99";
 * the knee marked ★, a p99 over the SLO marked ›. Only for a model swept over more than one cell.
 */
function sweepGrids(result: BenchResult, layout: Layout): string[] {
  const lines: string[] = []
  const slo = result.knee?.sloUs
  for (const model of [...new Set(result.runs.map((run) => run.model))]) {
    const runs = result.runs.filter((run) => run.model === model && run.rate === null && (run.stages ?? []).length === 0)
    if (runs.length < 2) continue
    const pools = [...new Set(runs.map((run) => run.maxPoolSize))].sort((a, b) => (a ?? 0) - (b ?? 0))
    const concurrencies = [...new Set(runs.map((run) => run.concurrency))].sort((a, b) => a - b)
    const cell = (run: RunResult | undefined): string => {
      if (!run) return '–'
      const knee = result.knee && result.knee.model === model && result.knee.concurrency === run.concurrency && result.knee.maxPoolSize === run.maxPoolSize
      const over = slo !== undefined && run.latencyUs.p99 > slo
      return `${knee ? '★ ' : over ? '› ' : ''}${formatCount(Math.round(run.opsPerSec))} · ${formatUs(run.latencyUs.p99)}`
    }
    const columns = [model === 'fixed' ? 'conc \\ conns' : 'conc \\ pool', ...pools.map((pool) => String(pool ?? 'default'))]
    const rows = concurrencies.map((concurrency) => [concurrency, ...pools.map((pool) => cell(runs.find((run) => run.concurrency === concurrency && run.maxPoolSize === pool)))])
    lines.push('', `Sweep, ${model}: ops/s · p99 per cell (★ the knee${slo === undefined ? '' : `; › p99 over the SLO ${formatUs(slo)}`})`, fitTable(columns, rows, layout))
  }
  return lines
}

/**
 * What the load clients' monitors hold per host: a heartbeat connection; with the streaming protocol
 * (4.4+; per-op clients run in poll mode, models.ts) also a round-trip-time connection, which the
 * driver opens one heartbeatFrequencyMS (10 s) after connecting (sdam/monitor.js RTTPinger).
 */
function monitoringText(run: RunResult, serverVersion: string, they: string): string {
  const [major = 0, minor = 0] = serverVersion.split('.').map(Number)
  const streaming = run.model !== 'per-op' && (major > 4 || (major === 4 && minor >= 4))
  const heartbeat = `a heartbeat connection to every host ${they}`
  return streaming ? `${heartbeat}, and from 10 s on (heartbeatFrequencyMS) a round-trip-time connection beside it (the streaming protocol)` : heartbeat
}

/**
 * Why the server counts more connections than the client pool made: each run's load clients also
 * monitor every host they know, pooltool's sampler holds its own, and a router opens its own to the shards.
 */
function connectionSources(result: BenchResult): string[] {
  const runs = result.runs.filter((run) => run.server.some((host) => host.connectionsPeak !== undefined && host.connectionsBefore !== undefined))
  if (runs.length === 0) return []
  const lines = ['Connections the server counts beyond the client pool:']
  for (const run of runs) {
    const rise = run.server.reduce((sum, host) => sum + Math.max(0, (host.connectionsPeak ?? 0) - (host.connectionsBefore ?? 0)), 0)
    const one = run.pool.clients === 1
    lines.push(
      `  ${runLabel(run)}: the count rose by ${formatCount(rise)} over all hosts (before → peak); the pool's peak was ${formatCount(run.pool.peakTotal)}, ` +
        `and its ${formatCount(run.pool.clients)} client${one ? '' : 's'} also keep${one ? 's' : ''} ${monitoringText(run, result.cluster.serverVersion, one ? 'it knows' : 'they know')}`,
    )
  }
  lines.push("  pooltool's sampler holds one directly connected client per host (its pooled connection and its monitoring), opened before the run: counted in 'before'")
  if (result.cluster.topology === 'sharded') lines.push("  on a sharded cluster each router also opens pooled connections of its own to the shards it forwards to (NetworkInterfaceTL): they count on the shards, not in the client pool")
  lines.push('  the peak is sampled every --sample-interval: a shorter peak can be missed')
  return ['', ...lines]
}

export function renderBench(result: BenchResult, layout: Layout = UNLIMITED): string {
  const {target, cluster, config} = result
  const stages = config.stages?.map((stage) => `${formatMs(stage.durationMS)}:${stage.rate === undefined ? stage.concurrency : `${stage.rate}/s`}`).join(',')
  const bound = config.ops !== undefined ? `${formatCount(config.ops)} ops` : `${(config.durationMS ?? 0) / 1000}s${stages === undefined ? '' : ` in stages ${stages}`}`
  const mix = config.mix ? ` (${Object.entries(config.mix).map(([op, w]) => `${op}=${w}`).join(',')})` : ''
  const file = config.workloadFile
    ? ` ${config.workloadFile.path} (${config.workloadFile.operations.map((op) => `${op.name}=${op.weight}`).join(',')})${config.workloadFile.readNamespace ? `, reading ${config.workloadFile.readNamespace}` : ''}`
    : ''
  const keys = config.keyDist !== undefined && config.keyDist !== 'uniform' ? ` · ${config.keyDist} keys` : ''
  const lines = [
    `pooltool bench · ${config.workload}${mix}${file}${keys} · ${bound} per run`,
    targetLine(target, cluster),
    warmupText(config),
  ]
  if (result.runs.length === 0) {
    lines.push('', 'no run finished.', ...notesOf(result))
    return lines.join('\n')
  }
  lines.push(...warmupLines(result))
  lines.push('', 'Latency and throughput (closed loop: send → reply; open loop: uncorrected, with the corrected p99 from the schedule)')
  lines.push(runsTable(result, layout))
  const staged = result.runs.filter((run) => (run.stages ?? []).length > 0)
  if (staged.length > 0) {
    lines.push('', 'Per stage (an operation counts in the stage in which it started; open loop: was scheduled)')
    lines.push(stagesTable(staged, layout))
  }
  lines.push('', 'Client pool (the driver\'s CMAP events; checkout wait and set-up timed on pooltool\'s own clock)')
  lines.push(poolTable(result.runs, layout))
  lines.push('', 'Server side, per host (serverStatus.connections and .locks; totalCreated Δ and lock waits over the measured interval)')
  lines.push(serverTable(result.runs, layout))
  lines.push(...connectionSources(result))
  const perOp = result.runs.filter((run) => run.model === 'per-op')
  for (const run of perOp) {
    const delta = run.server.reduce((sum, host) => sum + (host.totalCreatedDelta ?? 0), 0)
    lines.push(
      `${runLabel(run)}: ${formatCount(run.pool.created)} pooled connections for ${formatCount(run.ops + run.errors)} operations; ` +
        `the server counted ${formatCount(delta)} new connections: each short-lived client also opens one monitoring connection (${formatCount(run.pool.clients)} clients)`,
    )
  }
  // A result without series or per-operation latency (an older file, a merged one) has neither.
  const byOpLines = result.runs.filter((run) => Object.keys(run.latencyByOpUs ?? {}).length > 1).flatMap(perOperationLines)
  if (byOpLines.length > 0) lines.push('', 'Latency per operation (as latencyUs measures it)', ...byOpLines)
  const seriesLines = result.runs.filter((run) => (run.series ?? []).length > 1).map(seriesLine)
  if (seriesLines.length > 0) lines.push('', `Over time, one bar per ${formatSeriesInterval(config.seriesIntervalMS)} (ops/s; p99; --json runs[].series or --csv for the figures)`, ...seriesLines)
  const scheduleLines = result.runs.filter((run) => run.scheduled !== null).map(openLoopAccounting)
  if (scheduleLines.length > 0) lines.push('', 'Open loop: every operation scheduled in the measured interval', ...scheduleLines)
  const timeoutLines = result.runs.filter((run) => run.timeouts).map(timeoutLine)
  if (timeoutLines.length > 0) lines.push('', `Time limit ${config.opTimeout?.ms ?? ''}ms per operation, enforced by the ${config.opTimeout?.side ?? ''} (--op-timeout, --timeout-side)`, ...timeoutLines)
  const workerLines = result.runs.filter((run) => run.workers).map(workersLine)
  if (workerLines.length > 0) lines.push('', 'Worker threads (--workers; each its own clients and pool: the figures above are theirs merged)', ...workerLines)
  const segmentLines = result.runs.filter((run) => run.segment).map((run) => `  ${runLabel(run)}: segment ${run.segment!.index}/${run.segment!.count} of run ${config.segment?.runId ?? '?'}: this process drove concurrency ${run.segment!.concurrency}${run.segment!.rate === null ? '' : `, ${formatCount(run.segment!.rate)} ops/s`} (merge the segments with pooltool report merge)`)
  if (segmentLines.length > 0) lines.push('', 'Distributed run (--segment)', ...segmentLines)
  const errorLines = result.runs.filter((run) => run.errors > 0).map((run) => `  ${runLabel(run)}: ${formatRecord(run.errorsByClass)}`)
  if (errorLines.length > 0) lines.push('', 'Errors by class', ...errorLines)
  const lockLines = result.runs.filter((run) => run.locks).map((run) => `  ${runLabel(run)}: ${renderLockObservation(run.locks!)}`)
  if (lockLines.length > 0) lines.push('', 'DDL locks of the bench database (polled during the run)', ...lockLines)
  lines.push(...sweepGrids(result, layout))
  if (result.knee) {
    const k = result.knee
    lines.push(
      '',
      `Knee: ${k.model} at concurrency ${k.concurrency}${k.maxPoolSize === null ? '' : `, maxPoolSize ${k.maxPoolSize}`}: ` +
        `${formatCount(k.opsPerSec)} ops/s with p99 ${formatUs(k.p99Us)} (SLO ${formatUs(k.sloUs)}, ${k.sloSource})`,
    )
  }
  if (result.failOn) lines.push('', ...thresholdLines(result.failOn))
  lines.push(...notesOf(result))
  if (result.interrupted) lines.push('', 'interrupted: the figures above cover what was measured before Ctrl-C')
  // Why it stays, when the report says (--keep, a stop, a merged file whose last segment is not in it).
  const why = result.namespace?.reason === undefined ? '' : ` (${result.namespace.reason})`
  lines.push(result.cleanedUp ? `namespace ${config.db} dropped` : `namespace ${config.db} kept${why}`)
  return lines.join('\n')
}

/**
 * Which cluster was measured and where its address came from (target.source in the JSON): a gate's reader must see
 * whether it was a real cluster, and which variable named it.
 */
function targetLine(target: BenchResult['target'], cluster: BenchResult['cluster']): string {
  const hosts = `MongoDB ${cluster.serverVersion}, ${cluster.hosts.length} ${cluster.hosts.length === 1 ? 'host' : 'hosts'} sampled`
  if (target.source === 'embedded' || target.simulated) return `target ${target.uri}: the embedded simulated ${cluster.topology} (--sim, or no URI given; ${hosts})`
  return `target ${target.uri} from ${target.source} (${cluster.topology}, ${hosts})`
}

/** What was warm-up: it is in no figure of the report, and a run without one measures the pool's set-up and a cold JIT. */
function warmupText(config: BenchResult['config']): string {
  const setting = config.warmup
  const notMeasured = 'not measured: its operations, and the connections it opened, are in no figure below'
  if (setting?.mode === 'auto') {
    return `warm-up auto before each run, until ops/s settles (the last ${(setting.windowMS * setting.windows) / 1000} s: halves within ${Math.round(setting.tolerance * 100)} %, each second within ${Math.round(setting.spread * 100)} %, the pool no longer growing, twice running; ${formatMs(setting.floorMS)} to ${formatMs(setting.capMS)}), ${notMeasured}`
  }
  const warmupMS = setting?.mode === 'fixed' ? setting.ms : setting?.mode === 'off' ? 0 : config.warmupMS
  // Files written before the field existed: unknown, never "none".
  if (warmupMS === undefined || warmupMS === null) return 'warm-up: unknown (the file does not say)'
  if (warmupMS <= 0) return 'no warm-up (--warmup 0s): the figures include filling the pool and a cold JIT'
  const fallback = setting?.mode === 'fixed' && setting.fallback ? ` (${setting.fallback})` : ''
  return `warm-up ${formatMs(warmupMS)} before each run${fallback}, ${notMeasured}`
}

/** Per run, how its adaptive warm-up ended: "  pool c=10: settled after 7.5 s: …". */
function warmupLines(result: BenchResult): string[] {
  const runs = result.runs.filter((run) => run.warmup?.mode === 'auto')
  if (runs.length === 0) return []
  return ['', 'Warm-up (not measured)', ...runs.map((run) => `  ${runLabel(run)}: ${describeWarmup(run.warmup!)}`)]
}

/** "  pool c=8: find 80,112 ops p50 310µs p99 1.2ms · update …" */
function perOperationLines(run: RunResult): string[] {
  return Object.entries(run.latencyByOpUs ?? {}).map(
    ([name, latency]) => `  ${runLabel(run)}: ${name} ${formatCount(latency.count)} ops · p50 ${formatUs(latency.p50)} · p99 ${formatUs(latency.p99)} · p99.9 ${formatUs(latency.p999)} · max ${formatUs(latency.max)}`,
  )
}

function seriesLine(run: RunResult): string {
  const ops = sparklineWithLevel((run.series ?? []).map((point) => point.opsPerSec), 60, (n) => `${formatCount(Math.round(n))}/s`)
  const p99 = sparklineWithLevel((run.series ?? []).map((point) => point.latencyP99Us ?? undefined), 60, formatUs)
  return `  ${runLabel(run)}: ops/s ${ops}  p99 ${p99}`
}

const formatSeriesInterval = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`)

/** The columns of `--csv`, one row per interval per run; `connections:<host>` columns follow, one per sampled host. */
export const SERIES_CSV_COLUMNS = [
  'runIndex', 'model', 'concurrency', 'maxPoolSize', 'rate',
  'tMS', 'durationMS', 'ops', 'errors', 'opsPerSec', 'latencyP50Us', 'latencyP99Us', 'latencyMaxUs',
  'poolInUse', 'poolTotal', 'checkoutWaitP99Us',
] as const

/**
 * `--csv FILE`: every run's time series, one row per interval per run, with
 * a header row. runIndex is the run's index in the JSON's runs[]; a figure
 * that could not be read (no operation completed, a host that did not
 * answer) is an empty field, never 0.
 */
export function renderSeriesCsv(result: BenchResult): string {
  const hosts = [...new Set([...result.cluster.hosts.map((host) => host.host), ...result.runs.flatMap((run) => (run.series ?? []).flatMap((point) => Object.keys(point.serverConnections)))])]
  const rows = [[...SERIES_CSV_COLUMNS, ...hosts.map((host) => `connections:${host}`)].map(csvCell).join(',')]
  for (const [runIndex, run] of result.runs.entries()) {
    for (const point of run.series ?? []) {
      const fields = [
        runIndex, run.model, run.concurrency, run.maxPoolSize, run.rate,
        point.tMS, point.durationMS, point.ops, point.errors, point.opsPerSec, point.latencyP50Us, point.latencyP99Us, point.latencyMaxUs,
        point.poolInUse, point.poolTotal, point.checkoutWaitP99Us,
        ...hosts.map((host) => point.serverConnections[host]),
      ]
      rows.push(fields.map(csvCell).join(','))
    }
  }
  return `${rows.join('\n')}\n`
}

/**
 * One line per --fail-on threshold, as k6 prints them: `✓ errors>100` when no run crossed it, else
 * `✗ p50>1us` with the runs that did and their values.
 */
function thresholdLines(failOn: NonNullable<BenchResult['failOn']>): string[] {
  // A run that completed no operation fails every threshold: there is nothing to hold them against.
  const nothingMeasured = failOn.breaches.filter((breach) => breach.expression === NO_OPERATIONS_MEASURED).map((breach) => `${breach.run}: ${NO_OPERATIONS_MEASURED}`)
  const actual = (breach: ThresholdBreach) => `${breach.run}: ${formatCount(breach.actual)}${breach.unit === 'us' ? 'µs' : ''}`
  return failOn.expressions.map((expression) => {
    const failed = [...failOn.breaches.filter((breach) => breach.expression === expression).map(actual), ...nothingMeasured]
    return failed.length === 0 ? `✓ ${expression}` : `✗ ${expression} (${failed.join('; ')})`
  })
}

/** "pool c=8: 2 workers, started within 0.6 ms: #0 c=4 405 ops (405/s, p99 87.2ms, 3 connections created) …". */
function workersLine(run: RunResult): string {
  const w = run.workers!
  const each = w.perWorker.map(
    (worker) =>
      `#${worker.index} c=${worker.concurrency}${worker.rate === null ? '' : ` ${formatCount(worker.rate)}/s`} ${formatCount(worker.ops)} ops ` +
      `(${formatCount(worker.opsPerSec)}/s, p99 ${formatUs(worker.latencyP99Us)}, ${formatCount(worker.poolCreated)} connections created)`,
  )
  return `  ${runLabel(run)}: ${w.count} workers, started within ${w.startSkewMS} ms: ${each.join('; ')}`
}

/** "answered by the server 120 (connection kept), client gave up 0; connections closed on error 0, created 4". */
function timeoutLine(run: RunResult): string {
  const t = run.timeouts!
  return `  ${runLabel(run)}: ${formatCount(t.total)} timed out: ${formatCount(t.answeredByServer)} answered MaxTimeMSExpired by the server (connection kept), ` +
    `${formatCount(t.clientGaveUp)} given up by the client (connection closed); connections closed on error ${formatCount(t.connectionsClosedOnError)}, created ${formatCount(t.connectionsCreated)}`
}

/** "scheduled 4,000 = 1,159 ops + 0 errors + 2,841 missed (in-flight cap full 2,841)", then the shortfall warning. */
function openLoopAccounting(run: RunResult): string {
  const reasons = Object.entries(run.missedByReason).filter(([, n]) => n > 0)
  const why = reasons.length === 0 ? '' : ` (${reasons.map(([reason, n]) => `${MISSED_REASON_TEXT[reason] ?? reason} ${formatCount(n)}`).join(', ')})`
  const aborted = run.aborted > 0 ? ` (${formatCount(run.aborted)} aborted by the stop)` : ''
  const line = `  ${runLabel(run)}: scheduled ${formatCount(run.scheduled)} = ${formatCount(run.ops)} ops + ${formatCount(run.errors)} errors${aborted} + ${formatCount(run.missed)} missed${why}`
  return run.rateShortfall ? `${line}\n  warning: ${run.rateShortfall.message}` : line
}

const MISSED_REASON_TEXT: Record<string, string> = {inFlightCapFull: 'in-flight cap full', runEnded: 'run ended before the generator reached them', interrupted: 'stopped by the signal'}

/** The live line on stderr. */
export function renderBenchTick(label: string, tick: {elapsedMs: number; opsPerSecLastTick: number; p99Us: number; errors: number; inUse: number; stage?: {number: number; of: number}}): string {
  const stage = tick.stage === undefined ? '' : ` · stage ${tick.stage.number}/${tick.stage.of}`
  return `${label} · ${(tick.elapsedMs / 1000).toFixed(0)}s${stage} · ${formatCount(Math.round(tick.opsPerSecLastTick))} ops/s · p99 ${formatUs(tick.p99Us)} · in use ${tick.inUse} · errors ${tick.errors}`
}
