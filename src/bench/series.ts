/**
 * The time series of one bench run: what happened in each interval of
 * `--series-interval`, on the run's monotonic clock from the start of the
 * measured interval.
 *
 * Every operation the engine counts (completed or failed) falls in exactly
 * one interval, the one holding the moment it was counted; one counted after
 * the measured interval ended (drained in flight) falls in the last one, so
 * the series' ops and errors add up to the run's. Latency percentiles come
 * from each interval's own HDR histogram, summarised and dropped when the
 * interval closes: a long run keeps one summary per interval, never the
 * histograms.
 */
import {createHistogram, encodeHistogram, type Histogram, percentileUs, recordMs} from '../metrics/histograms.js'

/** What the engine knows of one interval; the caller's gauges (pool, server) are added by `sample`. */
export interface SeriesInterval {
  /** Start of the interval, from the start of the measured interval. */
  tMS: number
  /** Its length: --series-interval, shorter for the last one when the run ends inside it. */
  durationMS: number
  ops: number
  errors: number
  opsPerSec: number
  /** Completed operations of this interval only, send → reply (uncorrected in open loop); absent when none completed. */
  latencyP50Us?: number
  latencyP99Us?: number
  latencyMaxUs?: number
}

interface OpenInterval {
  ops: number
  errors: number
  latencyUs: Histogram
}

/** In intervals: far below any time the clock can tell, far above floating-point error. */
const ROUNDING_DUST = 1e-6

export class SeriesRecorder<Sample extends object = object> {
  private readonly open = new Map<number, OpenInterval>()
  private readonly closed: (SeriesInterval & Sample)[] = []
  /** The measured interval's start on performance.now()'s clock; set by `start`. */
  private startAt = Number.NaN
  /** Intervals past this index do not exist (the run ended inside this one). */
  private lastIndex = Number.POSITIVE_INFINITY
  /** The gauges as the measured interval ended (see `sampleEnd`): the last interval's. */
  private endSample: Sample | undefined

  /** With `keepHistograms`: each closed interval's latency histogram, encoded (compressed: a long run stays small), in order. */
  readonly encodedHistograms: string[] = []

  constructor(
    readonly intervalMs: number,
    /** Called as each interval closes: the caller's gauges at that moment (pool in use, server connections …). */
    private readonly sample?: () => Sample,
    /** Keep each interval's histogram for a caller that merges series of several engines (bench --workers). */
    private readonly keepHistograms = false,
  ) {
    if (!(intervalMs > 0)) throw new Error('SeriesRecorder: the interval must be positive')
  }

  get started(): boolean {
    return !Number.isNaN(this.startAt)
  }

  start(at: number): void {
    this.startAt = at
  }

  /** The index of the interval holding `at` (clamped to the series' bounds). */
  private indexAt(at: number): number {
    return Math.min(Math.max(0, Math.floor((at - this.startAt) / this.intervalMs)), this.lastIndex)
  }

  private interval(index: number): OpenInterval {
    // An interval already closed never receives more: `closeBefore` only closes intervals wholly in the past.
    const minimum = this.closed.length
    const key = Math.max(index, minimum)
    let entry = this.open.get(key)
    if (!entry) {
      entry = {ops: 0, errors: 0, latencyUs: createHistogram()}
      this.open.set(key, entry)
    }
    return entry
  }

  /** A completed operation, counted at `at`, that took `latencyMs`. */
  recordOp(at: number, latencyMs: number): void {
    const entry = this.interval(this.indexAt(at))
    entry.ops += 1
    recordMs(entry.latencyUs, latencyMs)
  }

  /** A failed operation (or one given up on), counted at `at`. */
  recordError(at: number): void {
    this.interval(this.indexAt(at)).errors += 1
  }

  /** The run's measured interval ends at `end`: no interval starts at or after it. */
  endAt(end: number): void {
    if (!this.started) return
    const length = Math.max(0, end - this.startAt)
    // (start + 300) − start can come out as 300.00000000006: no interval for that rounding dust.
    this.lastIndex = Math.max(0, Math.ceil(length / this.intervalMs - ROUNDING_DUST) - 1)
  }

  /** Close every interval that ended before `now` (never the last one: operations drained late still land there). */
  closeBefore(now: number): void {
    if (!this.started) return
    const current = Math.min(Math.floor((now - this.startAt) / this.intervalMs), this.lastIndex)
    while (this.closed.length < current) this.closeNext(this.intervalMs)
  }

  /**
   * The measured interval ends now (a stop): close the intervals before the last and read the gauges for the
   * last one at this moment. Read at `finish`, after the operations in flight drained, they showed the pool
   * idle (in use 0 on every run's last point): the state after the run, not at its end.
   */
  sampleEnd(now: number): void {
    if (!this.started) return
    this.closeBefore(now)
    this.endSample = this.sample?.()
  }

  /** Close everything left, the last interval with the run's real end; the series is final. */
  finish(end: number): (SeriesInterval & Sample)[] {
    if (!this.started) return []
    this.endAt(end)
    const length = Math.max(0, end - this.startAt)
    while (this.closed.length <= this.lastIndex) {
      const index = this.closed.length
      this.closeNext(Math.max(0, Math.min(this.intervalMs, length - index * this.intervalMs)))
    }
    return this.closed
  }

  private closeNext(durationMs: number): void {
    const index = this.closed.length
    const entry = this.open.get(index) ?? {ops: 0, errors: 0, latencyUs: createHistogram()}
    this.open.delete(index)
    const histogram = entry.latencyUs
    const summary: SeriesInterval = {
      tMS: Math.round(index * this.intervalMs),
      durationMS: Math.round(durationMs),
      ops: entry.ops,
      errors: entry.errors,
      opsPerSec: durationMs > 0 ? Math.round((entry.ops * 1000 * 10) / durationMs) / 10 : 0,
      ...(histogram.totalCount === 0
        ? {}
        : {latencyP50Us: percentileUs(histogram, 50), latencyP99Us: percentileUs(histogram, 99), latencyMaxUs: histogram.maxValue}),
    }
    const gauges = index === this.lastIndex && this.endSample !== undefined ? this.endSample : this.sample?.()
    this.closed.push({...summary, ...(gauges ?? ({} as Sample))})
    if (this.keepHistograms) this.encodedHistograms.push(encodeHistogram(histogram))
  }
}
