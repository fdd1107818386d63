/**
 * An open-loop run's missed slots, recorded when the engine gives up: a slot
 * that never started is a user who arrived on schedule and was not served, so
 * the wait from its scheduled time until the engine stopped waiting (a lower
 * bound of what they would have waited) goes into the corrected latency, and
 * into its stage's when the run has stages. No coordinated omission: what was
 * not sent is still measured.
 */
import type {Histogram} from '../metrics/histograms.js'
import type {SlotSchedule, StageLedger} from './stages.js'

export class MissedSlots {
  constructor(
    private readonly correctedUs: Histogram,
    private readonly schedule: SlotSchedule,
    private readonly ledger: StageLedger | undefined,
    /** When the engine stopped waiting (performance.now()). */
    private readonly givenUpAt: number,
  ) {}

  /**
   * Slots [first, end), in schedule order, each waited givenUpAt − its time (less for each later one). They
   * can be millions (a stalled server at a high rate), and the histogram keeps a count per bucket (3
   * significant digits), so every run of slots whose waits (in whole µs, as recordMs rounds) fall in one bucket
   * is recorded as one value with its count: the same histogram as one record per slot (counts, min, max,
   * percentiles), in a number of steps bounded by the buckets (a per-slot loop took a minute of CPU at 10^8/s).
   * A run never crosses a stage boundary (each stage has its own histogram).
   */
  recordRange(first: number, end: number): void {
    const {ledger, schedule, givenUpAt} = this
    const histogram = this.correctedUs as Histogram & {lowestEquivalentValue(value: number): number}
    const waitUs = (slot: number): number => Math.max(1, Math.round((givenUpAt - schedule.slotTime(slot)) * 1000))
    let slot = first
    while (slot < end) {
      const stage = ledger ? ledger.indexAt(schedule.slotTime(slot)) : 0
      const stageEnd = ledger && stage + 1 < ledger.stages.length ? schedule.firstSlotAtOrAfter(ledger.boundary(stage + 1)) : end
      const value = waitUs(slot)
      const bucketLow = histogram.lowestEquivalentValue(value)
      // The first later slot whose wait rounds below the bucket: scheduled after givenUpAt − (bucketLow − 0.5) µs.
      const after = givenUpAt - (bucketLow - 0.5) / 1000
      let next = schedule.firstSlotAtOrAfter(after)
      while (next < end && waitUs(next) >= bucketLow && next < stageEnd) next += 1
      while (next > slot + 1 && waitUs(next - 1) < bucketLow) next -= 1
      next = Math.min(Math.max(next, slot + 1), end, Math.max(stageEnd, slot + 1))
      const count = next - slot
      histogram.recordValueWithCount(value, count)
      ledger?.recordMissedUs(stage, value, count)
      slot = next
    }
  }
}
