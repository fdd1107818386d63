/**
 * The one place that builds HDR histograms. Every latency in pooltool is
 * recorded in whole microseconds into one of these; lanes and runs are
 * combined with `mergeHistograms`, never by averaging percentiles.
 */
import * as hdr from 'hdr-histogram-js'

export type Histogram = hdr.Histogram

/** 3 significant digits: 0.1% error on every recorded value; grows as needed. */
export function createHistogram(): Histogram {
  return hdr.build({
    bitBucketSize: 32,
    autoResize: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 2,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  })
}

/** Record a duration given in (fractional) milliseconds as whole microseconds, at least 1. */
export function recordMs(histogram: Histogram, durationMs: number): void {
  histogram.recordValue(Math.max(1, Math.round(durationMs * 1000)))
}

export function mergeHistograms(histograms: Iterable<Histogram>): Histogram {
  const merged = createHistogram()
  for (const histogram of histograms) merged.add(histogram)
  return merged
}

export interface LatencySummaryUs {
  p50: number
  p90: number
  p99: number
  p999: number
  max: number
  mean: number
  count: number
}

/**
 * A percentile that lies within what was recorded. HDR's getValueAtPercentile
 * answers with the highest value equivalent to the bucket's (up to 0.1% above
 * anything recorded), so a single 123,457 µs sample reads p99 123,519 µs: above
 * the max. Every percentile pooltool shows goes through here.
 */
export function percentileUs(histogram: Histogram, percentile: number): number {
  if (histogram.totalCount === 0) return 0
  return clampToRecorded(histogram, histogram.getValueAtPercentile(percentile))
}

/** Within [smallest, largest] recorded value; 0 stays 0 (HDR tracks the smallest non-zero value only). */
function clampToRecorded(histogram: Histogram, value: number): number {
  return Math.min(histogram.maxValue, value === 0 ? 0 : Math.max(histogram.minNonZeroValue, value))
}

export function summarize(histogram: Histogram): LatencySummaryUs {
  if (histogram.totalCount === 0) return {p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0, count: 0}
  return {
    p50: percentileUs(histogram, 50),
    p90: percentileUs(histogram, 90),
    p99: percentileUs(histogram, 99),
    p999: percentileUs(histogram, 99.9),
    max: histogram.maxValue,
    // The mean is computed from bucket midpoints: clamp it the same way.
    mean: Math.round(clampToRecorded(histogram, histogram.mean)),
    count: histogram.totalCount,
  }
}

/** Compressed base64 (HdrHistogram's own format), so JSON results can be merged later. */
export function encodeHistogram(histogram: Histogram): string {
  return hdr.encodeIntoCompressedBase64(histogram)
}

/**
 * A histogram that crosses a thread (bench --workers): HDR's encoding, plus the exact largest value,
 * which the encoding keeps only to its bucket (59,000 µs comes back as 59,007).
 */
export interface PortableHistogram {
  encoded: string
  maxValue: number
}

export function toPortable(histogram: Histogram): PortableHistogram {
  return {encoded: encodeHistogram(histogram), maxValue: histogram.maxValue}
}

export function fromPortable(portable: PortableHistogram): Histogram {
  const histogram = decodeHistogram(portable.encoded)
  // The bucket's counts are exact; only the largest value needs putting back.
  if (histogram.totalCount > 0) (histogram as {maxValue: number}).maxValue = portable.maxValue
  return histogram
}

export function decodeHistogram(encoded: string): Histogram {
  const merged = createHistogram()
  merged.add(hdr.decodeFromCompressedBase64(encoded))
  return merged
}
