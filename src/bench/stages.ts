/**
 * `bench --stages 10s:8,30s:64,10s:8`: one run whose load changes at given
 * moments. Three parts, each pure or engine-owned state:
 *
 * - `parseStages` / `stagedLoadOf`: the flag's grammar and what it excludes;
 * - `SlotSchedule`: the open loop's slot times, piecewise: each stage's slots
 *   are `boundary + j / rate`, so a stage of duration d at rate r holds exactly
 *   ⌈r·d⌉ slots whatever the stages around it;
 * - `StageLedger`: per-stage accounting for the engine. An operation belongs to
 *   the stage in which it started (closed loop) or was scheduled (open loop),
 *   so each stage keeps the run's identities on its own (open loop:
 *   scheduled = ops + errors + missed), and the stages add up to the run.
 *   Beside the counts, the concurrency the client really kept up in each
 *   stage's time window: operations in flight, peak and time-weighted mean.
 */
import {PoolToolError, usageError} from '../errors.js'
import {createHistogram, encodeHistogram, type Histogram, recordMs, summarize} from '../metrics/histograms.js'
import {DURATION_HINT, MAX_DURATION_MS, parseDurationMs} from '../parse/durations.js'
import type {LoadStage, StageResult} from './types.js'

export type {LoadStage}

/** As --concurrency lists allow. */
const MAX_STAGE_CONCURRENCY = 100_000

const STAGES_HINT = 'write DURATION:CONCURRENCY (closed loop) or DURATION:RATE/s (open loop) for each stage, e.g. 10s:8,30s:64,10s:8 or 10s:500/s,30s:2000/s'

/** `10s:8,30s:64` (concurrencies) or `10s:500/s,30s:2000/s` (rates) → stages; one-line usage errors naming the part at fault. */
export function parseStages(text: string): LoadStage[] {
  const parts = text.split(',')
  const stages = parts.map((raw, index) => parseStage(raw.trim(), index + 1))
  const openLoop = stages[0]!.rate !== undefined
  const other = stages.findIndex((stage) => (stage.rate !== undefined) !== openLoop)
  if (other >= 0) throw usageError(`--stages mixes concurrencies and rates (stage ${other + 1} '${parts[other]!.trim()}')`, 'give every stage a concurrency (closed loop) or every stage a rate N/s (open loop)')
  const total = stages.reduce((sum, stage) => sum + stage.durationMs, 0)
  if (total > MAX_DURATION_MS) throw usageError(`--stages add up to ${total} ms, above the longest duration pooltool can time (${MAX_DURATION_MS} ms)`, 'use at most 596h in all')
  return stages
}

function parseStage(part: string, number: number): LoadStage {
  const at = `--stages stage ${number} '${part}'`
  if (part === '') throw usageError(`--stages stage ${number} is empty`, STAGES_HINT)
  const match = /^([^:]+):\s*(\d+)\s*(\/s)?$/.exec(part)
  if (!match) throw usageError(`${at} is not DURATION:CONCURRENCY or DURATION:RATE/s`, STAGES_HINT)
  const [, durationText, countText, perSecond] = match as unknown as [string, string, string, string | undefined]
  let durationMs: number
  try {
    durationMs = parseDurationMs(durationText, 'stages')
  } catch (error) {
    // The duration grammar's own words ("has no unit", "is not a duration"), said of this stage.
    const why = error instanceof PoolToolError ? error.message.replace(/^--stages /, 'duration ') : `duration '${durationText.trim()}' is not a duration`
    throw usageError(`${at}: ${why}`, error instanceof PoolToolError ? error.hint : DURATION_HINT)
  }
  if (durationMs <= 0) throw usageError(`${at}: a stage must last more than 0`, STAGES_HINT)
  const count = Number(countText)
  if (perSecond !== undefined) {
    if (count < 1) throw usageError(`${at}: the rate must be at least 1/s`, STAGES_HINT)
    return {durationMs, rate: count}
  }
  if (count < 1 || count > MAX_STAGE_CONCURRENCY) throw usageError(`${at}: the concurrency must be from 1 to ${MAX_STAGE_CONCURRENCY}`, STAGES_HINT)
  return {durationMs, concurrency: count}
}

/** The `bench` flags --stages reads or excludes. */
export interface StageFlags {
  stages?: string
  concurrency: string
  rate?: number
  duration?: number
  ops?: number
}

/** What --stages sets in a BenchConfig. */
export interface StagedLoad {
  stages: readonly LoadStage[]
  /** The stages' sum: the measured interval. */
  durationMs: number
  /** Closed loop: the most workers of any stage (the run's concurrency, what `fixed` sizes its connections by); open loop: --concurrency, the in-flight cap. */
  concurrency: number
  /** Open loop: the time-weighted mean of the stages' rates (the run's rate); closed loop: undefined. */
  rate?: number
}

/**
 * --stages and the flags it excludes. `defaultConcurrency`: --concurrency's
 * default, the only value that may stand beside closed-loop stages (they give
 * the concurrency themselves).
 */
export function stagedLoadOf(flags: StageFlags, defaultConcurrency: string): StagedLoad | undefined {
  if (flags.stages === undefined) return undefined
  const stages = parseStages(flags.stages)
  if (flags.duration !== undefined) throw usageError('--stages and --duration cannot be combined', 'the stages\' durations add up to the measured interval; drop --duration')
  if (flags.ops !== undefined) throw usageError('--stages and --ops cannot be combined', 'a staged run is bounded by its stages\' durations; drop --ops')
  if (flags.rate !== undefined) throw usageError('--stages and --rate cannot be combined', 'give each stage its rate instead, e.g. --stages 10s:500/s,30s:2000/s (open loop; --concurrency stays the in-flight cap)')
  if (flags.concurrency.includes(',')) throw usageError('--stages and a --concurrency list cannot be combined', 'a staged run is one run per model and pool size; give one --concurrency (open loop: the in-flight cap)')
  const durationMs = stages.reduce((sum, stage) => sum + stage.durationMs, 0)
  if (stages[0]!.rate === undefined) {
    if (flags.concurrency.trim() !== defaultConcurrency) throw usageError('--concurrency has no meaning beside closed-loop --stages', 'each stage gives its concurrency (10s:8,30s:64); drop --concurrency, or give rates (10s:500/s) to keep it as the in-flight cap')
    return {stages, durationMs, concurrency: Math.max(...stages.map((stage) => stage.concurrency!))}
  }
  const concurrency = Number(flags.concurrency)
  if (!Number.isInteger(concurrency) || concurrency < 1) throw usageError(`--concurrency '${flags.concurrency}' is not a whole number of at least 1`, 'e.g. --concurrency 64')
  const meanRate = stages.reduce((sum, stage) => sum + stage.rate! * stage.durationMs, 0) / durationMs
  return {stages, durationMs, concurrency, rate: Math.round(meanRate * 10) / 10}
}

/**
 * The open loop's schedule: slot index → scheduled time, on performance.now()'s
 * clock. One segment per stage, each starting at its boundary with a slot; the
 * first also covers the warm-up before it. Without stages, one segment: slot i
 * at start + i / rate.
 */
export class SlotSchedule {
  private readonly segments: Array<{startAt: number; firstSlot: number; intervalMs: number}> = []

  /** `starts`: each segment's start and rate, in time order, the first at the loop's start. */
  constructor(starts: ReadonlyArray<{at: number; ratePerSec: number}>) {
    for (const {at, ratePerSec} of starts) {
      const previous = this.segments.at(-1)
      const firstSlot = previous ? this.firstSlotAtOrAfter(at) : 0
      this.segments.push({startAt: at, firstSlot, intervalMs: 1000 / ratePerSec})
    }
  }

  private segmentOfSlot(slot: number): {startAt: number; firstSlot: number; intervalMs: number} {
    for (let i = this.segments.length - 1; i > 0; i--) if (slot >= this.segments[i]!.firstSlot) return this.segments[i]!
    return this.segments[0]!
  }

  slotTime(slot: number): number {
    const segment = this.segmentOfSlot(slot)
    return segment.startAt + (slot - segment.firstSlot) * segment.intervalMs
  }

  /** The first slot scheduled at or after `time`, compared exactly as slotTime computes. */
  firstSlotAtOrAfter(time: number): number {
    let segment = this.segments[0]!
    for (const candidate of this.segments) if (candidate.startAt <= time) segment = candidate
    let slot = segment.firstSlot + Math.max(0, Math.ceil((time - segment.startAt) / segment.intervalMs))
    while (slot > 0 && this.slotTime(slot - 1) >= time) slot -= 1
    while (this.slotTime(slot) < time) slot += 1
    return slot
  }
}

/** What the engine measured in one stage: a StageResult's counts, unrounded times (ms from the start of the measured interval) and the histograms themselves. */
export type EngineStage = Pick<StageResult, 'index' | 'concurrency' | 'rate' | 'ops' | 'errors' | 'scheduled' | 'missed' | 'inFlightPeak'> & {
  /** Operations in flight, integrated over the stage's window (ms); ÷ durationMs is the mean. */
  inFlightAreaMs: number
  startMs: number
  durationMs: number
  latencyUs: Histogram
  latencyCorrectedUs: Histogram | null
}

interface StageTally {
  ops: number
  errors: number
  missed: number
  /** Measured operations of this stage still in flight. */
  inFlight: number
  latencyUs: Histogram
  latencyCorrectedUs: Histogram | null
  /** Most operations in flight at once while the stage's window was current. */
  inFlightPeak: number
  /** Operations in flight × ms, over the stage's window. */
  inFlightAreaMs: number
}

/**
 * The engine's per-stage accounts. Boundaries are set by `anchor` (the start of
 * the first stage); before that, and before the first boundary, everything is
 * stage 0.
 */
export class StageLedger {
  private readonly tallies: StageTally[]
  /** Where each stage starts, and (last) where the last one ends; empty until `anchor`. */
  private boundaries: number[] = []

  constructor(
    readonly stages: readonly LoadStage[],
    private readonly openLoop: boolean,
    /** Open loop: the in-flight cap every stage shares. */
    private readonly inFlightCap: number,
  ) {
    if (stages.length === 0) throw new Error('StageLedger: no stages')
    if (stages.some((stage) => (stage.rate !== undefined) !== openLoop || (!openLoop && stage.concurrency === undefined))) {
      throw new Error('StageLedger: closed-loop stages need a concurrency, open-loop stages a rate')
    }
    this.tallies = stages.map(() => ({ops: 0, errors: 0, missed: 0, inFlight: 0, latencyUs: createHistogram(), latencyCorrectedUs: openLoop ? createHistogram() : null, inFlightPeak: 0, inFlightAreaMs: 0}))
  }

  get anchored(): boolean {
    return this.boundaries.length > 0
  }

  anchor(at: number): void {
    this.boundaries = [at]
    for (const stage of this.stages) this.boundaries.push(this.boundaries.at(-1)! + stage.durationMs)
  }

  /** Measuring begins at `at`. Closed loop: the stages start there; open loop: they were planned, and the first one's window starts there. */
  measureFrom(at: number): void {
    if (!this.anchored) this.anchor(at)
    else this.boundaries[0] = at
    this.measuredFrom = at
  }

  /** Where stage `index` starts (index = stages.length: where the last one ends). */
  boundary(index: number): number {
    if (!this.anchored) throw new Error('StageLedger: not anchored yet')
    return this.boundaries[index]!
  }

  get endAt(): number {
    return this.boundary(this.stages.length)
  }

  /** The stage holding `time` (clamped: before the first boundary stage 0, after the end the last). */
  indexAt(time: number): number {
    if (!this.anchored) return 0
    let index = 0
    while (index < this.stages.length - 1 && time >= this.boundary(index + 1)) index += 1
    return index
  }

  /** Closed loop: how many workers may start an operation at `time`. */
  concurrencyAt(time: number): number {
    return this.stages[this.indexAt(time)]!.concurrency!
  }

  begin(stage: number): void {
    this.tallies[stage]!.inFlight += 1
  }

  end(stage: number): void {
    this.tallies[stage]!.inFlight -= 1
  }

  recordOp(stage: number, latencyMs: number, correctedMs?: number): void {
    const tally = this.tallies[stage]!
    tally.ops += 1
    recordMs(tally.latencyUs, latencyMs)
    if (correctedMs !== undefined) recordMs(tally.latencyCorrectedUs!, correctedMs)
  }

  recordError(stage: number): void {
    this.tallies[stage]!.errors += 1
  }

  /** Open loop: a slot of this stage never started; it waited `waitedMs` until the engine gave up. */
  recordMissed(stage: number, waitedMs: number): void {
    const tally = this.tallies[stage]!
    tally.missed += 1
    recordMs(tally.latencyCorrectedUs!, waitedMs)
  }

  /** `count` missed slots of one stage whose waits fall in the histogram bucket of `waitedUs` (the engine's bulk record). */
  recordMissedUs(stage: number, waitedUs: number, count: number): void {
    const tally = this.tallies[stage]!
    tally.missed += count
    tally.latencyCorrectedUs!.recordValueWithCount(waitedUs, count)
  }

  /** When the count of operations in flight last changed, and to what (the client's load, measured or not). */
  private inFlightSince = Number.NaN
  private inFlightNow = 0
  /** Where measuring began (see measureFrom); in flight is only counted from there. */
  private measuredFrom = Number.NaN

  /** The operations in flight (all of them: the load the client keeps up) changed to `count` at `now`. */
  inFlightChanged(now: number, count: number): void {
    this.integrateInFlight(now)
    this.inFlightSince = now
    this.inFlightNow = count
    if (!Number.isNaN(this.measuredFrom) && now >= this.boundaries[0]! && now < this.endAt) {
      const tally = this.tallies[this.indexAt(now)]!
      tally.inFlightPeak = Math.max(tally.inFlightPeak, count)
    }
  }

  /** Add the time since the last change, at the count then, to the stages it overlaps (up to `until`). */
  private integrateInFlight(until: number): void {
    if (Number.isNaN(this.measuredFrom) || Number.isNaN(this.inFlightSince)) return
    for (const [index, tally] of this.tallies.entries()) {
      const overlap = Math.min(until, this.boundaries[index + 1]!) - Math.max(this.inFlightSince, this.boundaries[index]!)
      if (overlap > 0) {
        tally.inFlightAreaMs += overlap * this.inFlightNow
        // The count has held since inFlightSince: it was reached inside this stage too.
        tally.inFlightPeak = Math.max(tally.inFlightPeak, this.inFlightNow)
      }
    }
  }

  /** Stage by stage, how many measured operations are still in flight (given up on at the end of the drain). */
  inFlightByStage(): number[] {
    return this.tallies.map((tally) => tally.inFlight)
  }

  /**
   * The stages of the measured interval [measureStart, measureEnd): the first
   * always, a later one when it began before the end (a stop request can end
   * the run early). `slotsIn`: open loop, the slots scheduled in a window.
   */
  finish(measureStart: number, measureEnd: number, slotsIn?: (from: number, to: number) => number): EngineStage[] {
    // Stopped before measuring began (closed loop): the stages would have started there; none was reached but the first.
    if (!this.anchored) this.anchor(measureStart)
    // The count in flight since the last change held until the end.
    this.integrateInFlight(measureEnd)
    this.inFlightSince = Math.max(this.inFlightSince, measureEnd)
    const result: EngineStage[] = []
    for (const [index, stage] of this.stages.entries()) {
      const from = index === 0 ? measureStart : Math.max(measureStart, this.boundary(index))
      if (index > 0 && from >= measureEnd) break
      const to = Math.max(from, index === this.stages.length - 1 ? measureEnd : Math.min(measureEnd, this.boundary(index + 1)))
      const tally = this.tallies[index]!
      result.push({
        index,
        startMs: from - measureStart,
        durationMs: to - from,
        concurrency: this.openLoop ? this.inFlightCap : stage.concurrency!,
        rate: stage.rate ?? null,
        ops: tally.ops,
        errors: tally.errors,
        scheduled: this.openLoop && slotsIn ? slotsIn(from, to) : null,
        missed: tally.missed,
        latencyUs: tally.latencyUs,
        latencyCorrectedUs: tally.latencyCorrectedUs,
        inFlightPeak: tally.inFlightPeak,
        inFlightAreaMs: tally.inFlightAreaMs,
      })
    }
    return result
  }
}

/** Per second of `durationMs`, to a tenth, as runs[].opsPerSec is; 0 over no time. */
export const perSecond = (count: number, durationMs: number): number => (durationMs > 0 ? Math.round((count * 1000 * 10) / durationMs) / 10 : 0)

/** The JSON of a run's stages (`runs[].stages`), from the engine's. Pure. */
export function toStageResults(stages: readonly EngineStage[]): StageResult[] {
  return stages.map((stage) => ({
    index: stage.index,
    startMS: Math.round(stage.startMs),
    durationMS: Math.round(stage.durationMs),
    concurrency: stage.concurrency,
    rate: stage.rate,
    ops: stage.ops,
    errors: stage.errors,
    scheduled: stage.scheduled,
    missed: stage.missed,
    opsPerSec: perSecond(stage.ops, stage.durationMs),
    inFlightPeak: stage.inFlightPeak,
    inFlightMean: stage.durationMs > 0 ? Math.round((stage.inFlightAreaMs / stage.durationMs) * 100) / 100 : 0,
    latencyUs: summarize(stage.latencyUs),
    latencyCorrectedUs: stage.latencyCorrectedUs ? summarize(stage.latencyCorrectedUs) : null,
    histograms: {
      latencyUs: encodeHistogram(stage.latencyUs),
      latencyCorrectedUs: stage.latencyCorrectedUs ? encodeHistogram(stage.latencyCorrectedUs) : null,
    },
  }))
}
