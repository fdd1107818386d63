/**
 * One share of a distributed bench run (`--segment i/n`, `--run-id`, `--start-at`): n processes,
 * usually on n machines (a Kubernetes Indexed Job, k8s-job.ts), each drive the i-th share of the
 * load the flags describe, from the same instant, into one shared owned namespace; `pooltool report
 * merge` adds their results up exactly.
 *
 * Shares: segment i of n drives floor(C/n) of the concurrency C, one more for the first C mod n
 * segments, so the shares add up to C (likewise --ops); the rate is R/n each. Seeding: segment i
 * inserts its slice of the seeded ids, so the segments together seed them once.
 */
import {usageError} from '../errors.js'
import type {LoadStage, Segment} from './types.js'

export type {Segment}

export const MAX_SEGMENTS = 1000
/** The run id segments share: the name of their collections (bench_<runId>), as bench's own ids. */
export const RUN_ID_PATTERN = /^[0-9a-f]{8}$/
/** A --start-at further ahead than this is a mistake (a date typed wrong), not a plan. */
export const MAX_START_AHEAD_MS = 24 * 3600 * 1000

export function parseSegment(text: string): Segment {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim())
  const hint = `write INDEX/COUNT with INDEX from 0 to COUNT-1, e.g. --segment 0/3 (COUNT up to ${MAX_SEGMENTS})`
  if (!match) throw usageError(`--segment '${text}' is not INDEX/COUNT`, hint)
  const [index, count] = [Number(match[1]), Number(match[2])]
  if (count < 1 || count > MAX_SEGMENTS || index >= count) throw usageError(`--segment ${text} is out of range`, hint)
  return {index, count}
}

export function checkRunId(runId: string): void {
  if (!RUN_ID_PATTERN.test(runId)) {
    throw usageError(`--run-id '${runId}' is not 8 hex digits`, 'give every segment the same id, e.g. --run-id $(openssl rand -hex 4), or let --emit k8s-job choose one')
  }
}

/** Segment `segment`'s share of a total count (concurrency, --ops): the shares add up to the total. */
export function shareOf(total: number, segment: Segment | undefined): number {
  if (!segment) return total
  return Math.floor(total / segment.count) + (segment.index < total % segment.count ? 1 : 0)
}

/** A share of every stage (a segment's, a worker thread's): each stage's concurrency or rate split as the run's is. */
export function stagesShareOf(stages: readonly LoadStage[] | undefined, segment: Segment | undefined): LoadStage[] | undefined {
  return stages?.map((stage) => ({
    ...stage,
    ...(stage.concurrency === undefined ? {} : {concurrency: shareOf(stage.concurrency, segment)}),
    ...(stage.rate === undefined ? {} : {rate: rateShareOf(stage.rate, segment)}),
  }))
}

/** Segment `segment`'s share of a rate (ops/s): an n-th each. */
export function rateShareOf(rate: number | undefined, segment: Segment | undefined): number | undefined {
  return rate === undefined || !segment ? rate : rate / segment.count
}

/**
 * `--start-at all-ready`: start when every segment of the run is set up (start-barrier.ts), the
 * default of an emitted Kubernetes Job, whose pods start minutes apart.
 */
export const START_ALL_READY = 'all-ready'

/** --start-at: an ISO 8601 instant with its zone (`2026-11-23T21:00:00Z`, `…+01:00`), at most a day ahead. */
export function parseStartAt(text: string, now = Date.now()): Date {
  const hint = `give an ISO 8601 instant with its zone, e.g. --start-at 2026-11-23T21:00:00Z, or --start-at ${START_ALL_READY} to start when every segment is set up`
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(text)) throw usageError(`--start-at '${text}' is not an instant with a zone`, hint)
  const at = new Date(text)
  if (Number.isNaN(at.getTime())) throw usageError(`--start-at '${text}' is not a valid date`, hint)
  if (at.getTime() - now > MAX_START_AHEAD_MS) throw usageError(`--start-at ${text} is more than a day ahead`, hint)
  return at
}
