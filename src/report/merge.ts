/**
 * `pooltool report merge`: the segments of one distributed bench run (same
 * configuration, run on several machines over the same measured interval) into
 * one result, exactly where the files allow it:
 *
 * - latency: the HDR histograms are decoded, added and re-encoded; every
 *   percentile is recomputed from the merged histogram (never averaged); the
 *   same per operation name (`latencyByOpUs`) when every segment has them;
 * - the per-interval series are not carried: their percentiles come from
 *   histograms the file no longer holds, so a merged file has none;
 * - per-stage results (--stages; every segment has the same stages) merge as
 *   the run does, stage by stage: histograms added, counts summed, each
 *   stage's ops/s over its longest segment; a segment a stop request cut short
 *   has fewer stages, and then they are dropped (said in a note);
 * - counts are summed (ops, errors and their classes, missed, scheduled,
 *   aborted, pool telemetry: connections created, closed, cleared, failed
 *   checkouts, clients);
 * - ops/s is recomputed over the common measured interval: segments start
 *   together (`--start-at`), so it is the longest segment's interval;
 * - figures kept only as percentiles (checkout wait, connection set-up,
 *   schedule lag) cannot be merged exactly: the merged value is the worst
 *   segment's, an upper bound of the true one (said in the notes);
 * - server figures are readings of the whole server, which every segment sees:
 *   summing would count each connection once per segment. Per host the merged
 *   `server` keeps the highest peak, end reading and growth and the lowest
 *   before/after reading; each segment's own readings stay in `serverBySegment`.
 *
 * Every rule is a sum, a max, a min or a histogram addition, so merge is
 * associative: a merged file can be merged again.
 */
import type {NamespaceReport} from '../bench/namespace.js'
import type {BenchResult, PoolResult, RunResult, ServerHostResult, StageResult} from '../bench/types.js'
import {perSecond} from '../bench/stages.js'
import {findKnee} from '../bench/knee.js'
import {runLabel} from '../bench/fail-on.js'
import {achievedRatePerSec, rateShortfallOf} from '../bench/rate-shortfall.js'
import {usageError} from '../errors.js'
import {decodeHistogram, encodeHistogram, type LatencySummaryUs, mergeHistograms, summarize} from '../metrics/histograms.js'
import {sum, sumRecords} from '../metrics/counts.js'
import type {LoadedResult} from './load.js'
import {notBenchResult} from './load.js'
import type {MergedBenchResult, MergedRunResult} from './types.js'

const MISMATCH_HINT = 'merge only the segments of one run: the same bench flags on every segment (only --segment differs)'

/** The configuration fields every segment must share. */
const CONFIG_FIELDS = ['workload', 'mix', 'docSizeBytes', 'warmupMS', 'warmup', 'durationMS', 'ops', 'stages'] as const

/** What makes two runs the same run of the matrix. */
export function runKey(run: Pick<RunResult, 'model' | 'concurrency' | 'maxPoolSize' | 'rate'>): string {
  return runLabel(run as RunResult)
}

export const UPPER_BOUND_NOTE =
  'merged checkoutWaitUs, checkoutWaitDriverMS, pool.setupUs, pool.setupDriverMS and scheduleLagUs are the worst segment\'s (bench keeps them as percentiles only): upper bounds of the true values'
const MISSING_SEGMENTS_NOTE = /^segments? [\d, ]+ of \d+ of run \w+ not merged: /
export const PEAKS_NOTE = 'merged pool.peakTotal and pool.peakInUse are sums of each segment\'s peak (each segment has its own pools): upper bounds, the peaks need not coincide'

export const STAGES_NOTE = 'per-stage results (runs[].stages, --stages) are not carried where a segment was stopped before its last stage: read them in each segment file'

export function mergeBenchResults(inputs: readonly LoadedResult[]): MergedBenchResult {
  if (inputs.length < 2) throw usageError(`report merge needs at least two files (got ${inputs.length})`, MISMATCH_HINT)
  checkDistinct(inputs)
  const [first, ...rest] = inputs as [LoadedResult, ...LoadedResult[]]
  for (const other of rest) checkSameConfig(first, other)
  const {note: segmentNote, indices} = checkSegments(inputs)
  const keys = first.result.runs.map(runKey)
  for (const input of inputs) checkSameRuns(input, first, keys)
  const runs = keys.map((key) => mergeRuns(inputs.map((input) => ({file: input.file, run: input.result.runs.find((run) => runKey(run) === key)!}))))
  const upperBounds = runs.some((run) => run.segments > 1)
  // A merged input's word on missing segments is recomputed here: a later merge may have added them.
  const inputNotes = inputs.flatMap((input) => input.result.notes ?? []).filter((note) => !MISSING_SEGMENTS_NOTE.test(note))
  const notes = unique([...inputNotes, ...(upperBounds ? [UPPER_BOUND_NOTE, PEAKS_NOTE] : []), ...segmentNote])
  const locksDropped = inputs.some((input) => input.result.runs.some((run) => run.locks !== undefined))
  if (locksDropped) notes.push('lock observations (ddl workload) are per segment and are not merged: read them in each segment file')
  const stagesDropped = inputs.some((input) => input.result.runs.some((run) => run.stages !== undefined)) && runs.some((run) => run.stages === undefined)
  if (stagesDropped) notes.push(STAGES_NOTE)
  const namespace = mergeNamespaces(inputs.map((input) => input.result.namespace).filter((ns): ns is NamespaceReport => ns !== null && ns !== undefined))
  return {
    target: first.result.target,
    notes: unique(notes),
    interrupted: inputs.some((input) => input.result.interrupted),
    cluster: {...first.result.cluster, hosts: uniqueBy(inputs.flatMap((input) => input.result.cluster?.hosts ?? []), (host) => host.host)},
    config: indices ? {...first.result.config, segment: {...first.result.config.segment!, index: indices[0]!, indices}} : first.result.config,
    runs,
    knee: findKnee(runs),
    // A merge gates nothing: run `report compare --fail-on` on the merged file.
    failOn: null,
    // Segments of one run share one namespace, which the last to finish drops: it was cleaned up when what any
    // segment left behind was dropped by another (mergeNamespaces), not only when every segment dropped it itself.
    cleanedUp: namespace ? namespace.leftBehind.length === 0 : inputs.every((input) => input.result.cleanedUp),
    namespace,
    abandoned: unique(inputs.flatMap((input) => input.result.abandoned ?? [])),
    segments: inputs.reduce((sum, input) => sum + segmentsOf(input.result), 0),
  }
}

/**
 * What the merged runs did to the cluster, from each segment's own report. The segments of one distributed run
 * share one namespace: each one but the last to finish leaves it behind ("other segments still running"), and the
 * last drops it. So a collection is left behind only when some segment left it and none dropped it; a segment that
 * dropped it was the last to use it. (Taking the first segment's report, as before, said "kept" of a namespace the
 * last segment had dropped.) Files of separate runs each report their own collections: the union holds them all.
 * Unions throughout, so a merged report merges again.
 */
export function mergeNamespaces(reports: readonly NamespaceReport[]): NamespaceReport | null {
  const [first] = reports
  if (!first) return null
  const dropped = unique(reports.flatMap((report) => report.dropped ?? []))
  const leftBehind = unique(reports.flatMap((report) => report.leftBehind ?? [])).filter((name) => !dropped.includes(name))
  // Why each collection still left stayed: the reasons of the segments that left it (none dropped it after them).
  const reasons = unique(reports.filter((report) => (report.leftBehind ?? []).some((name) => leftBehind.includes(name))).map((report) => report.reason).filter((why): why is string => why !== undefined))
  const merged: NamespaceReport = {
    database: first.database,
    runId: unique(reports.map((report) => report.runId)).join(','),
    collections: unique(reports.flatMap((report) => report.collections ?? [])),
    reclaimed: uniqueBy(reports.flatMap((report) => report.reclaimed ?? []), (run) => `${run.runId} ${run.host} ${run.pid}`),
    dropped,
    leftBehind,
    databaseDropped: reports.some((report) => report.databaseDropped),
  }
  if (leftBehind.length > 0 && reasons.length > 0) merged.reason = reasons.join('; ')
  return merged
}

/**
 * The same result twice (one file named twice, `./a.json` and its absolute path, a symbolic link,
 * or a copy) would count every operation twice: refused. Segments of one run are told apart by
 * --segment (checkSegments); files without one only by their real path and bytes.
 */
function checkDistinct(inputs: readonly LoadedResult[]): void {
  const seen = new Map<string, string>()
  for (const {file, identity} of inputs) {
    if (!identity) continue
    for (const [key, what] of [[`path:${identity.realPath}`, 'the same file as'], [`sha256:${identity.sha256}`, 'a copy of']] as const) {
      const earlier = seen.get(key)
      if (earlier !== undefined) throw usageError(`${file} is ${what} ${earlier}: merging it twice would count its operations twice`, 'give each segment\'s file once')
      seen.set(key, file)
    }
  }
}

/**
 * Files written with --segment: all of one run (same --run-id and count), each segment once; a
 * missing segment is said (the merged figures then hold only the shares merged).
 */
function checkSegments(inputs: readonly LoadedResult[]): {note: string[]; indices?: number[]} {
  const shares = inputs.map((input) => ({file: input.file, segment: input.result.config.segment}))
  const split = shares.filter((share) => share.segment !== undefined)
  if (split.length === 0) return {note: []}
  if (split.length !== shares.length) {
    const plain = shares.find((share) => share.segment === undefined)!
    throw usageError(`${plain.file} is not a --segment file, ${split[0]!.file} is`, MISMATCH_HINT)
  }
  const [first] = split as [{file: string; segment: {index: number; count: number; runId: string}}]
  const seen = new Set<number>()
  for (const {file, segment} of split) {
    if (segment!.runId !== first.segment.runId || segment!.count !== first.segment.count) {
      throw usageError(`${file} is segment ${segment!.index}/${segment!.count} of run ${segment!.runId}, ${first.file} of ${first.segment.count} of run ${first.segment.runId}`, MISMATCH_HINT)
    }
    for (const index of segment!.indices ?? [segment!.index]) {
      if (seen.has(index)) throw usageError(`${file}: segment ${index} of run ${segment!.runId} is given twice`, MISMATCH_HINT)
      seen.add(index)
    }
  }
  const indices = [...seen].sort((a, b) => a - b)
  const missing = Array.from({length: first.segment.count}, (_, i) => i).filter((i) => !seen.has(i))
  const note = missing.length === 0 ? [] : [`segment${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of ${first.segment.count} of run ${first.segment.runId} not merged: the figures hold only the shares merged`]
  return {note, indices}
}

function segmentsOf(result: BenchResult): number {
  const segments = (result as Partial<MergedBenchResult>).segments
  return typeof segments === 'number' ? segments : 1
}

function checkSameConfig(first: LoadedResult, other: LoadedResult): void {
  for (const field of CONFIG_FIELDS) {
    const a = JSON.stringify(first.result.config[field] ?? null)
    const b = JSON.stringify(other.result.config[field] ?? null)
    if (a !== b) throw usageError(`${other.file}: config.${field} is ${b}, ${first.file} has ${a}`, MISMATCH_HINT)
  }
}

function checkSameRuns(input: LoadedResult, first: LoadedResult, keys: readonly string[]): void {
  const own = input.result.runs.map(runKey)
  input.result.runs.forEach((run, index) => {
    if (!keys.includes(own[index]!)) throw usageError(`${input.file}: runs[${index}] (${own[index]}) is not in ${first.file}`, MISMATCH_HINT)
    if (own.indexOf(own[index]!) !== index) throw usageError(`${input.file}: runs[${index}] (${own[index]}) appears twice`, MISMATCH_HINT)
  })
  const missing = keys.find((key) => !own.includes(key))
  if (missing !== undefined) throw usageError(`${input.file}: runs has no ${missing} (${first.file} has it)`, MISMATCH_HINT)
}

const unique = <T>(values: readonly T[]) => [...new Set(values)]
const uniqueBy = <T>(values: readonly T[], key: (value: T) => string) => [...new Map(values.map((value) => [key(value), value])).values()]


/** Each figure's highest value over the segments. */
function worst<T extends object>(values: readonly T[]): T {
  const result: Record<string, number> = {}
  for (const value of values) for (const [key, n] of Object.entries(value) as Array<[string, number]>) result[key] = Math.max(result[key] ?? n, n)
  return result as T
}

/**
 * The compressed format keeps bucket counts, not the exact largest value: a
 * decoded histogram's max reads up to 0.1% above anything recorded. Each
 * segment's summary holds its exact max, so the merged max (and every
 * percentile's clamp) comes from those, as one histogram fed every value reads.
 */
function mergeLatency(label: string, file: readonly string[], encoded: ReadonlyArray<string | null>, field: string, maxima: readonly number[]): {summary: LatencySummaryUs; encoded: string} {
  const histograms = encoded.map((value, index) => {
    try {
      return decodeHistogram(value!)
    } catch {
      throw notBenchResult(file[index]!, `runs[${label}].histograms.${field}`, 'does not decode as an HDR histogram')
    }
  })
  const merged = mergeHistograms(histograms)
  const summary = summarize(merged)
  if (summary.count > 0 && maxima.every((max) => typeof max === 'number')) {
    const max = Math.max(...maxima)
    for (const key of ['p50', 'p90', 'p99', 'p999', 'mean'] as const) summary[key] = Math.min(summary[key], max)
    summary.max = max
  }
  return {summary, encoded: encodeHistogram(merged)}
}

interface Segment {
  file: string
  run: RunResult
}

/**
 * Per-operation latency, merged exactly like the run's: per operation name, the segments' histograms
 * added. Only when every segment carries them (results from before per-operation latency do not).
 */
function mergeLatencyByOp(label: string, files: readonly string[], runs: readonly RunResult[]): {summaries: Record<string, LatencySummaryUs>; encoded: Record<string, string>} | undefined {
  if (!runs.every((run) => run.histograms.latencyByOpUs !== undefined && run.latencyByOpUs !== undefined)) return undefined
  const names = [...new Set(runs.flatMap((run) => Object.keys(run.histograms.latencyByOpUs!)))].sort()
  const summaries: Record<string, LatencySummaryUs> = {}
  const encoded: Record<string, string> = {}
  for (const name of names) {
    const having = runs.map((run, index) => ({run, file: files[index]!})).filter(({run}) => run.histograms.latencyByOpUs![name] !== undefined)
    const merged = mergeLatency(
      label,
      having.map(({file}) => file),
      having.map(({run}) => run.histograms.latencyByOpUs![name]!),
      `latencyByOpUs.${name}`,
      having.map(({run}) => run.latencyByOpUs![name]?.max as number),
    )
    summaries[name] = merged.summary
    encoded[name] = merged.encoded
  }
  return {summaries, encoded}
}

/**
 * Per-stage results, merged exactly like the run's, stage by stage. Only when every segment has all of them (the
 * stages themselves are the same: config.stages is checked); concurrency and rate stay each segment's, as the run's.
 * Operations in flight are summed: each segment kept up its own (the mean adds up; the peak is an upper bound, as
 * pool.peakInUse is).
 */
function mergeStages(label: string, files: readonly string[], runs: readonly RunResult[]): StageResult[] | undefined {
  const lists = runs.map((run) => run.stages)
  const count = lists[0]?.length
  if (count === undefined || !lists.every((stages) => stages?.length === count)) return undefined
  return Array.from({length: count}, (_, index) => {
    const stages = lists.map((list) => list![index]!)
    const first = stages[0]!
    const field = `stages[${index}]`
    const latency = mergeLatency(label, files, stages.map((stage) => stage.histograms.latencyUs), `${field}.latencyUs`, stages.map((stage) => stage.latencyUs.max))
    const openLoop = stages.every((stage) => stage.histograms.latencyCorrectedUs !== null)
    const corrected = openLoop ? mergeLatency(label, files, stages.map((stage) => stage.histograms.latencyCorrectedUs), `${field}.latencyCorrectedUs`, stages.map((stage) => stage.latencyCorrectedUs?.max as number)) : null
    const ops = sum(stages.map((stage) => stage.ops))
    const durationMS = Math.max(...stages.map((stage) => stage.durationMS))
    return {
      index: first.index,
      startMS: first.startMS,
      durationMS,
      concurrency: first.concurrency,
      rate: first.rate,
      ops,
      errors: sum(stages.map((stage) => stage.errors)),
      scheduled: first.scheduled === null ? null : sum(stages.map((stage) => stage.scheduled ?? 0)),
      missed: sum(stages.map((stage) => stage.missed)),
      opsPerSec: perSecond(ops, durationMS),
      inFlightPeak: sum(stages.map((stage) => stage.inFlightPeak ?? 0)),
      inFlightMean: Math.round(sum(stages.map((stage) => stage.inFlightMean ?? 0)) * 100) / 100,
      latencyUs: latency.summary,
      latencyCorrectedUs: corrected?.summary ?? null,
      histograms: {latencyUs: latency.encoded, latencyCorrectedUs: corrected?.encoded ?? null},
    }
  })
}

export function mergeRuns(segments: readonly Segment[]): MergedRunResult {
  const runs = segments.map((segment) => segment.run)
  const files = segments.map((segment) => segment.file)
  const first = runs[0]!
  const latency = mergeLatency(runKey(first), files, runs.map((run) => run.histograms.latencyUs), 'latencyUs', runs.map((run) => run.latencyUs.max))
  const openLoop = runs.every((run) => run.histograms.latencyCorrectedUs !== null && run.histograms.latencyCorrectedUs !== undefined)
  const corrected = openLoop ? mergeLatency(runKey(first), files, runs.map((run) => run.histograms.latencyCorrectedUs), 'latencyCorrectedUs', runs.map((run) => run.latencyCorrectedUs?.max as number)) : null
  const byOp = mergeLatencyByOp(runKey(first), files, runs)
  const stages = mergeStages(runKey(first), files, runs)
  const ops = sum(runs.map((run) => run.ops))
  const errors = sum(runs.map((run) => run.errors))
  const scheduled = runs.every((run) => run.scheduled === null) ? null : sum(runs.map((run) => run.scheduled ?? 0))
  const missedByReason = sumRecords(runs.map((run) => run.missedByReason))
  const durationMs = Math.max(...runs.map((run) => run.durationMS))
  const segmentCount = sum(runs.map((run) => (run as Partial<MergedRunResult>).segments ?? 1))
  // --segment files carry the whole run's concurrency and rate; separate benches each their own.
  const loadSplit = runs.every((run) => run.segment !== undefined || (run as Partial<MergedRunResult>).loadSplit === true)
  const totalRate = first.rate === null ? null : loadSplit ? first.rate : first.rate * segmentCount
  const totalInFlightCap = loadSplit ? first.concurrency : first.concurrency * segmentCount
  const counts = {ops, errors, scheduled, missedByReason, durationMs}
  const lags = runs.map((run) => run.scheduleLagUs).filter((lag): lag is LatencySummaryUs => lag !== null && lag !== undefined)
  // Each input's own warm-up: one that never settled (its cap) stands for them, else the longest; unknown if any is.
  const warmups = runs.map((run) => run.warmup).filter((warmup) => warmup !== undefined)
  const warmup = warmups.length < runs.length ? undefined : (warmups.find((w) => w.endedBy === 'cap') ?? warmups.reduce((a, b) => (b.durationMS > a.durationMS ? b : a)))
  return {
    model: first.model,
    workload: first.workload,
    concurrency: first.concurrency,
    rate: first.rate,
    maxPoolSize: first.maxPoolSize,
    ops,
    errors,
    scheduled,
    missed: sum(runs.map((run) => run.missed)),
    missedByReason,
    aborted: sum(runs.map((run) => run.aborted ?? 0)),
    durationMS: durationMs,
    opsPerSec: durationMs > 0 ? Math.round((ops * 1000 * 10) / durationMs) / 10 : 0,
    achievedRatePerSec: achievedRatePerSec(counts),
    rateShortfall: rateShortfallOf(counts, totalRate, totalInFlightCap, latency.summary.mean),
    latencyUs: latency.summary,
    latencyCorrectedUs: corrected?.summary ?? null,
    ...(byOp ? {latencyByOpUs: byOp.summaries} : {}),
    scheduleLagUs: lags.length === 0 ? null : {...worst(lags), count: sum(lags.map((lag) => lag.count))},
    checkoutWaitUs: worst(runs.map((run) => run.checkoutWaitUs)),
    checkoutWaitDriverMS: worst(runs.map((run) => run.checkoutWaitDriverMS)),
    pool: mergePools(runs.map((run) => run.pool)),
    server: mergeServer(runs.map((run) => run.server ?? [])),
    serverBySegment: runs.flatMap((run) => (run as Partial<MergedRunResult>).serverBySegment ?? [run.server ?? []]),
    errorsByClass: sumRecords(runs.map((run) => run.errorsByClass)),
    ...(stages ? {stages} : {}),
    ...(warmup ? {warmup} : {}),
    histograms: {latencyUs: latency.encoded, latencyCorrectedUs: corrected?.encoded ?? null, ...(byOp ? {latencyByOpUs: byOp.encoded} : {})},
    interrupted: runs.some((run) => run.interrupted),
    segments: segmentCount,
    ...(loadSplit ? {loadSplit} : {}),
  }
}

function mergePools(pools: readonly PoolResult[]): PoolResult {
  return {
    created: sum(pools.map((pool) => pool.created)),
    closed: sumRecords(pools.map((pool) => pool.closed)),
    peakTotal: sum(pools.map((pool) => pool.peakTotal)),
    peakInUse: sum(pools.map((pool) => pool.peakInUse)),
    checkOutFailed: sumRecords(pools.map((pool) => pool.checkOutFailed)),
    cleared: sum(pools.map((pool) => pool.cleared)),
    clients: sum(pools.map((pool) => pool.clients)),
    setupUs: worst(pools.map((pool) => pool.setupUs)),
    setupDriverMS: worst(pools.map((pool) => pool.setupDriverMS)),
  }
}

type Pick2 = (values: number[]) => number
const lowest: Pick2 = (values) => Math.min(...values)
const highest: Pick2 = (values) => Math.max(...values)

/** A reading merged over the segments that have it; absent when none read it (never 0 for "unknown"). */
function reading(hosts: readonly ServerHostResult[], field: 'connectionsBefore' | 'connectionsPeak' | 'connectionsAtEnd' | 'connectionsAfter' | 'totalCreatedDelta', pick: Pick2): number | undefined {
  const values = hosts.map((host) => host[field]).filter((value): value is number => typeof value === 'number')
  return values.length === 0 ? undefined : pick(values)
}

function mergeServer(segments: ReadonlyArray<readonly ServerHostResult[]>): ServerHostResult[] {
  const byHost = new Map<string, ServerHostResult[]>()
  for (const hosts of segments) for (const host of hosts) byHost.set(host.host, [...(byHost.get(host.host) ?? []), host])
  return [...byHost.values()].map((hosts) => {
    const first = hosts[0]!
    const merged: ServerHostResult = {host: first.host, role: first.role}
    if (first.setName !== undefined) merged.setName = first.setName
    if (first.shard !== undefined) merged.shard = first.shard
    // The quietest reading before and after is the one taken outside every segment's load.
    const fields = {
      connectionsBefore: reading(hosts, 'connectionsBefore', lowest),
      connectionsPeak: reading(hosts, 'connectionsPeak', highest),
      connectionsAtEnd: reading(hosts, 'connectionsAtEnd', highest),
      connectionsAfter: reading(hosts, 'connectionsAfter', lowest),
      totalCreatedDelta: reading(hosts, 'totalCreatedDelta', highest),
    }
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) (merged as unknown as Record<string, number>)[key] = value
    const waits = hosts.map((host) => host.lockWaits).filter((w) => w !== undefined)
    if (waits.length > 0) merged.lockWaits = waits.reduce((a, b) => (b.timeAcquiringMicros > a.timeAcquiringMicros ? b : a))
    const unavailable = unique(hosts.map((host) => host.unavailable).filter((why): why is string => why !== undefined))
    if (unavailable.length > 0) merged.unavailable = unavailable.join('; ')
    // clockSkewMS is each segment machine's own: it stays in serverBySegment.
    return merged
  })
}
