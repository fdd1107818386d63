/**
 * Pools that never shrink (a driver pool that only grows, as mgo's did: connections opened in a burst
 * stay open until restart; the fix is maxIdleTimeMS): after a growth, connection creation stopped (totalCreated
 * unchanged) for at least the idle window, and the connection count stayed at
 * the level it had when creation stopped.
 *
 * Streaming, O(1) per sample. Definitions, per host:
 * - a creation sample: totalCreated grew since the previous sample;
 * - level: `current` at the last creation sample;
 * - baseline: the lowest `current` seen up to that sample;
 * - growth: level − baseline (at least MIN_GROWTH, else nothing grew);
 * - shrank: some later sample is below level − tolerance, tolerance =
 *   max(1, 10% of the growth) (other clients' monitors come and go);
 * - neverShrank: not shrank, and the last creation sample is at least the
 *   idle window old. A new creation starts a new judgement; a counter reset
 *   (the server restarted) starts from scratch.
 */
import type {NeverShrankDetail} from './types.js'

export const MIN_GROWTH = 2

export interface SeriesPoint {
  /** Time of the sample, any monotonic origin (ms). */
  atMS: number
  current: number
  totalCreated: number
}

export interface NeverShrankVerdict {
  neverShrank: boolean
  detail?: NeverShrankDetail
}

export class NeverShrankDetector {
  private prevTotalCreated?: number
  private runningMin = Number.POSITIVE_INFINITY
  private lastCreationAtMS?: number
  private level?: number
  private baseline?: number
  private minSinceQuiet?: number
  private lastAtMS?: number

  constructor(readonly idleWindowMS: number) {}

  push(point: SeriesPoint): void {
    if (this.prevTotalCreated !== undefined && point.totalCreated < this.prevTotalCreated) this.reset()
    const created = this.prevTotalCreated !== undefined && point.totalCreated > this.prevTotalCreated
    this.runningMin = Math.min(this.runningMin, point.current)
    if (created) {
      this.lastCreationAtMS = point.atMS
      this.level = point.current
      this.baseline = this.runningMin
      this.minSinceQuiet = undefined
    } else if (this.level !== undefined) {
      this.minSinceQuiet = Math.min(this.minSinceQuiet ?? Number.POSITIVE_INFINITY, point.current)
    }
    this.prevTotalCreated = point.totalCreated
    this.lastAtMS = point.atMS
  }

  /** Forget everything (the server restarted: its counters and connections are new). */
  reset(): void {
    this.prevTotalCreated = undefined
    this.runningMin = Number.POSITIVE_INFINITY
    this.lastCreationAtMS = undefined
    this.level = undefined
    this.baseline = undefined
    this.minSinceQuiet = undefined
  }

  /** The verdict as of `nowMS` (default: the last sample's time). */
  verdict(nowMS = this.lastAtMS): NeverShrankVerdict {
    if (this.lastCreationAtMS === undefined || this.level === undefined || this.baseline === undefined || this.minSinceQuiet === undefined || nowMS === undefined) {
      return {neverShrank: false}
    }
    const growth = this.level - this.baseline
    const quietForMS = nowMS - this.lastCreationAtMS
    const tolerance = Math.max(1, Math.floor(growth * 0.1))
    const neverShrank = growth >= MIN_GROWTH && quietForMS >= this.idleWindowMS && this.minSinceQuiet >= this.level - tolerance
    if (!neverShrank) return {neverShrank}
    return {neverShrank, detail: {levelAtQuiet: this.level, minSinceQuiet: this.minSinceQuiet, baseline: this.baseline, quietForMS}}
  }
}

/** The detector over a whole series (tests, and callers holding a series). */
export function detectNeverShrank(series: readonly SeriesPoint[], idleWindowMS: number): NeverShrankVerdict {
  const detector = new NeverShrankDetector(idleWindowMS)
  for (const point of series) detector.push(point)
  return detector.verdict()
}
