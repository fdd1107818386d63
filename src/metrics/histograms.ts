/**
 * The one place that builds HDR histograms. Every latency in pooltool is
 * recorded in whole microseconds into one of these; lanes and runs are
 * combined with `mergeHistograms`, never by averaging percentiles.
 */
import {createRequire} from 'node:module'
import {inflateSync} from 'node:zlib'

import type * as HdrModule from 'hdr-histogram-js'

export type Histogram = HdrModule.Histogram

let hdrModule: typeof HdrModule | undefined
/**
 * hdr-histogram-js, loaded on first use (synchronously: it is CommonJS). Modules that only parse
 * flags import this one (bench's --stages parser sits beside the stage histograms), and its ~30
 * files cost a start that ends in a usage error or help as much as Node's own start-up.
 */
function hdr(): typeof HdrModule {
  hdrModule ??= createRequire(import.meta.url)('hdr-histogram-js') as typeof HdrModule
  return hdrModule
}

/** 3 significant digits: 0.1% error on every recorded value; grows as needed. */
export function createHistogram(): Histogram {
  return hdr().build({
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
  return hdr().encodeIntoCompressedBase64(histogram)
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

/**
 * A histogram as its counts array (up to its largest value's bucket) and its exact largest value: what
 * a bench worker's progress tick carries to the parent every second. Profiled (bench:workers), the
 * ticks were most of the worker machinery's CPU: each worker encoding its whole run's histogram in
 * HDR's compressed form (ZigZag LEB128, deflate, base64: ~0.5 ms for a wide one) and the parent
 * inflating and decoding each into a fresh histogram, copied again into the merge (~0.6 ms each).
 * The counts cross the thread as one typed-array copy, and the parent adds them index by index: every
 * histogram createHistogram builds indexes its buckets alike (the array only grows at the top), so
 * index i is the same bucket in each. Exact as the encoding is.
 */
export interface BucketCounts {
  /** A copy of the histogram's own counts (a typed array: it crosses a thread as one block). */
  counts: ArrayLike<number>
  maxValue: number
}

/** What the bucket counts use of hdr-histogram-js's JS histogram (the one createHistogram builds): public or internal there, absent from its Histogram interface. */
interface CountsArray {
  _counts: ArrayLike<number> & {slice(start: number, end: number): ArrayLike<number>}
  countsArrayLength: number
  countsArrayIndex(value: number): number
  addToCountAtIndex(index: number, count: number): void
  resize(highestTrackableValue: number): void
  /** Total count, smallest and largest value, from the counts. */
  establishInternalTackingValues(): void
}

export function toBucketCounts(histogram: Histogram): BucketCounts {
  if (histogram.totalCount === 0) return {counts: [], maxValue: 0}
  const array = histogram as unknown as CountsArray
  const last = Math.min(array.countsArrayIndex(histogram.maxValue), array.countsArrayLength - 1)
  return {counts: array._counts.slice(0, last + 1), maxValue: histogram.maxValue}
}

/** Histograms given as bucket counts, added into one, with the exact largest value of them all. */
export function mergeBucketCounts(parts: Iterable<BucketCounts>): Histogram {
  const merged = createHistogram()
  const array = merged as unknown as CountsArray
  let maxValue = 0
  for (const {counts, maxValue: partMax} of parts) {
    if (counts.length === 0) continue
    if (counts.length > array.countsArrayLength) array.resize(partMax)
    for (let index = 0; index < counts.length; index++) {
      const count = counts[index]!
      if (count > 0) array.addToCountAtIndex(index, count)
    }
    maxValue = Math.max(maxValue, partMax)
  }
  array.establishInternalTackingValues()
  // The counts give the largest value only to its bucket: the largest one recorded goes back.
  if (merged.totalCount > 0) (merged as {maxValue: number}).maxValue = maxValue
  return merged
}

/** Why an encoded histogram was refused: the caller names the file and field. */
export class HistogramDecodeError extends Error {
  override name = 'HistogramDecodeError'
}

/** HdrHistogram's V2 cookies (the low nibble of the second byte is the word size: 0x10 = 9-byte LEB128). */
const V2_COMPRESSED_COOKIE_BASE = 0x1c849304
const V2_COOKIE_BASE = 0x1c849303
const COOKIE_WORD_SIZE_MASK = 0xf0
/** cookie, payload length, normalizing offset, significant digits (4 bytes each); lowest, highest, int-to-double ratio (8 each). */
const HEADER_BYTES = 40
/** A count or a run of zeros is one ZigZag LEB128 word of at most 9 bytes. */
const MAX_WORD_BYTES = 9
/**
 * The most counts a pooltool histogram can have: 1 µs to 2^53 µs (the largest integer a JS number
 * holds exactly) at 3 significant digits is 43 buckets of 1,024 sub-buckets, 45,056 counts.
 */
const MAX_COUNTS = countsLength(Number.MAX_SAFE_INTEGER)
/**
 * The largest decoded histogram pooltool can have written: the header and every count at 9 bytes
 * (405,544 bytes). Inflating stops there: a few MB of deflated zeros (a zlib bomb) would
 * otherwise inflate to gigabytes before anything looked at them.
 */
export const MAX_DECODED_HISTOGRAM_BYTES = HEADER_BYTES + MAX_COUNTS * MAX_WORD_BYTES

/** HdrHistogram's counts array length (getLengthForNumberOfBuckets) for lowest value 1 and 3 digits: 2,048 sub-buckets. */
function countsLength(highestTrackableValue: number): number {
  const subBuckets = 2048
  let buckets = 1
  for (let untrackable = subBuckets; untrackable <= highestTrackableValue; untrackable *= 2) {
    buckets++
    // As getBucketsNeededToCoverValue: the bucket past 2^52 is the last.
    if (untrackable > Number.MAX_SAFE_INTEGER / 2) break
  }
  return (buckets + 1) * (subBuckets / 2)
}

/**
 * A histogram from its compressed base64 (encodeHistogram's output), bounded: what hdr-histogram-js
 * would decode unchecked (any size, any configuration, runs of zeros it walks one by one) is
 * checked first, and a histogram pooltool could not have written is a HistogramDecodeError.
 */
export function decodeHistogram(encoded: string): Histogram {
  const merged = createHistogram()
  merged.add((hdr().JsHistogram as unknown as {decode(data: Uint8Array, bitBucketSize: 32): Histogram}).decode(inflateHistogram(encoded), 32))
  return merged
}

/** The decoded (inflated) V2 encoding, its header and counts checked against pooltool's configuration. */
function inflateHistogram(encoded: string): Uint8Array {
  const bad = (why: string) => new HistogramDecodeError(why)
  if (typeof encoded !== 'string') throw bad('is not a string')
  const bytes = Buffer.from(encoded.trim(), 'base64')
  if (bytes.length < 8 || (bytes.readInt32BE(0) & ~COOKIE_WORD_SIZE_MASK) !== V2_COMPRESSED_COOKIE_BASE) throw bad('is not a compressed HDR histogram (no V2 cookie)')
  const compressedLength = bytes.readInt32BE(4)
  if (compressedLength <= 0 || 8 + compressedLength > bytes.length) throw bad(`states ${compressedLength} compressed bytes, has ${bytes.length - 8}`)
  let raw: Buffer
  try {
    raw = inflateSync(bytes.subarray(8, 8 + compressedLength), {maxOutputLength: MAX_DECODED_HISTOGRAM_BYTES})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw bad(`inflates past ${MAX_DECODED_HISTOGRAM_BYTES.toLocaleString('en-US')} bytes, the largest histogram pooltool writes`)
    }
    throw bad(`does not inflate (${(error as Error).message})`)
  }
  if (raw.length < HEADER_BYTES) throw bad('is shorter than an HDR header')
  const cookie = raw.readInt32BE(0)
  if ((cookie & ~COOKIE_WORD_SIZE_MASK) !== V2_COOKIE_BASE || (cookie & COOKIE_WORD_SIZE_MASK) !== 0x10) throw bad('is not an HDR V2 histogram')
  const payloadLength = raw.readInt32BE(4)
  const digits = raw.readInt32BE(12)
  const lowest = Number(raw.readBigInt64BE(16))
  const highest = Number(raw.readBigInt64BE(24))
  if (payloadLength < 0 || HEADER_BYTES + payloadLength > raw.length) throw bad(`states ${payloadLength} bytes of counts, has ${raw.length - HEADER_BYTES}`)
  // pooltool's configuration (createHistogram): another one would decode to other buckets, or to a much larger array.
  if (digits !== 3 || lowest !== 1) throw bad(`is not pooltool's (${digits} significant digits, lowest value ${lowest}; pooltool's: 3 and 1)`)
  if (!(highest >= 2 && highest <= Number.MAX_SAFE_INTEGER)) throw bad(`has highest trackable value ${highest}`)
  checkCounts(raw, HEADER_BYTES, HEADER_BYTES + payloadLength, countsLength(highest), bad)
  return raw
}

/**
 * Walks the counts as hdr-histogram-js will: a negative word is a run of zeros it skips, and it then
 * visits every index up to the last one, so a run of 2^50 zeros in 9 bytes would loop for days.
 * Every index must fall inside the counts array the header's highest value gives.
 */
function checkCounts(raw: Buffer, start: number, end: number, length: number, bad: (why: string) => Error): void {
  let index = 0
  let at = start
  while (at < end) {
    let value = 0
    let scale = 1
    for (let byte = 0; ; byte++) {
      if (at >= end) throw bad('ends inside a count')
      const b = raw[at++]!
      // The 9th byte carries 8 bits, the others 7 and a continuation bit.
      if (byte === MAX_WORD_BYTES - 1) {
        value += b * scale
        break
      }
      value += (b & 0x7f) * scale
      if ((b & 0x80) === 0) break
      scale *= 128
    }
    const count = value % 2 === 0 ? value / 2 : -(value + 1) / 2
    index += count < 0 ? -count : 1
    if (index > length) throw bad(`has counts past its ${length.toLocaleString('en-US')} buckets`)
  }
}
