/**
 * `pooltool locks watch`: poll the locks from the start to the end of --duration and turn
 * successive snapshots into transitions (src/locks/transitions.ts) — held at the start (with
 * verdicts), acquired, released, overtaken, stale — printed as they happen, in time order,
 * and summarised per lock. On 6.1+ (in-memory model) the DDL operations of `$currentOp`
 * stand in for locks, keyed by namespace.
 */
import {PoolToolError, stoppedError} from '../errors.js'
import {toPoolToolError} from '../mongo/errors.js'
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import {filterLocks, toLockRows, type LockFilter} from './parse.js'
import {classifyPollFailure} from './poll-failure.js'
import {embeddedInMemoryHint, openLocksSession, readConfigSnapshot, readDdlOpsAt, sessionNotes, type LocksSession, type ReadBounds} from './read.js'
import {byTime, DdlOpTracker, LockTransitionTracker} from './transitions.js'
import {LOCK_POLL_FAILURE_REASONS, type LockEvent, type LockPollFailure, type LockPollFailureReason, type LocksPoll, type LocksWatchResult} from './types.js'

// Bench's lock observer and older callers import the trackers from here.
export {DdlOpTracker, LockTransitionTracker}

export interface LocksWatchConfig {
  /** Stop after this long (default: until the signal). */
  durationMS?: number
  intervalMS: number
  filter: LockFilter
  /** --lock-expiry: overrides the 15 min behind `stale`. */
  expiryMS?: number
}

export interface WatchHooks {
  signal: AbortSignal
  onEvent?(event: LockEvent): void
  onStart?(info: {model: LocksWatchResult['model']; serverVersion: string; message: string; expiryMS: number}): void
  /** A poll got no snapshot; the watch goes on. */
  onPollFailed?(failure: LockPollFailure): void
  /**
   * After each answered poll: what is held now. config.locks: the locks not free (held, stale, no
   * ping, the balancer's); 6.1+: the DDL operations running (no lock documents to show).
   */
  onPoll?(poll: LocksPoll): void
}


function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, {once: true})
  })
}

const noFailures = (): Record<LockPollFailureReason, number> =>
  Object.fromEntries(LOCK_POLL_FAILURE_REASONS.map((reason) => [reason, 0])) as Record<LockPollFailureReason, number>

/** Said in every watch's notes: what a hold time is, per lock model. */
export const HOLD_TIMES_NOTE =
  "hold times run from the lock's `when` (server clock) to the first poll that saw it free, or to the next holder's `when`: " +
  'each is over by at most one interval; holds taken and freed between two polls are only bounded by that gap (listed apart)'
export const DDL_HOLD_TIMES_NOTE =
  "hold times run from each DDL operation's start ($currentOp microsecs_running, server clock) to the first poll that no longer " +
  'saw it: each is over by at most one interval; an operation that starts and ends between two polls is not seen'

/** Said in the result's notes when a poll failed. */
export const FAILED_POLLS_NOTE = 'transitions during failed polls show at the next poll that answered: their hold times are accurate to that gap'

/**
 * Polls from the start to the deadline (a last poll at the deadline itself, so the watch
 * covers the whole --duration), Ctrl-C or forever. A poll that fails (router or config
 * server gone, a stall, a lost privilege) is a marked round and the watch goes on, so
 * the summary is always produced. Each poll is bounded by the target's --timeout-ms
 * through the driver's per-operation AbortSignal (see ReadBounds), so the last poll ends
 * at most --timeout-ms after the deadline.
 */
export async function runLocksWatch(target: Target, config: LocksWatchConfig, hooks: WatchHooks): Promise<LocksWatchResult> {
  const pollTimeoutMS = target.connection.timeoutMs
  const started = Date.now()
  const until = config.durationMS === undefined ? Number.POSITIVE_INFINITY : started + config.durationMS
  const events: LockEvent[] = []
  const pollFailures: LockPollFailure[] = []
  const failedPollsByReason = noFailures()
  let polls = 0
  const markFailed = (failure: Omit<LockPollFailure, 'poll'>): void => {
    const marked: LockPollFailure = {at: failure.at, poll: polls, reason: failure.reason, error: failure.error}
    pollFailures.push(marked)
    failedPollsByReason[marked.reason] += 1
    hooks.onPollFailed?.(marked)
  }
  const session = await openRidingRestarts(target, config, hooks.signal, until, (failure) => {
    polls++
    markFailed(failure)
  })
  const locks = new LockTransitionTracker()
  const ddl = new DdlOpTracker()
  try {
    hooks.onStart?.({model: session.model, serverVersion: session.serverVersion, message: session.message, expiryMS: session.timing.expiryMS})
    while (!hooks.signal.aborted) {
      const at = Date.now()
      polls++
      const timeout = AbortSignal.timeout(pollTimeoutMS)
      try {
        const {events: fresh, poll} = await pollOnce(session, config.filter, {signal: AbortSignal.any([hooks.signal, timeout])}, {locks, ddl})
        for (const e of fresh) {
          events.push(e)
          hooks.onEvent?.(e)
        }
        hooks.onPoll?.({poll: polls, ...poll})
      } catch (error) {
        // Ctrl-C cancelled the read: not a failure of the cluster, and not a poll that counts.
        if (hooks.signal.aborted) {
          polls--
          break
        }
        const {reason, error: text} = classifyPollFailure(error, {
          target: target.redactedUri,
          secrets: target.secrets,
          timeoutMs: pollTimeoutMS,
          timedOut: timeout.aborted,
        })
        // No reply to take the server's clock from: this machine's, moved by the skew measured at the start, so
        // failures and events read on one clock.
        markFailed({at: new Date(at + (session.clockSkewMS ?? 0)).toISOString(), reason, error: text})
      }
      // The poll that started at (or after) the deadline was the last; else the next one, the deadline at the latest.
      if (at >= until) break
      await sleep(Math.min(at + config.intervalMS, until) - Date.now(), hooks.signal)
    }
    return {
      target: targetSummary(target),
      entry: session.entry,
      ...(session.clockSkewMS === undefined ? {} : {clockSkewMS: session.clockSkewMS}),
      serverVersion: session.serverVersion,
      model: session.model,
      message: session.message,
      durationMS: Date.now() - started,
      intervalMS: config.intervalMS,
      polls,
      failedPolls: pollFailures.length,
      failedPollsByReason,
      pollFailures,
      pollTimeoutMS,
      // Each poll's events are in time order; after a failed poll, the next one's may reach back past what was printed.
      events: byTime(events),
      locks: session.model === 'in-memory' ? ddl.summary() : locks.summary(),
      notes: [...sessionNotes(session, config.expiryMS !== undefined), ...embeddedInMemoryHint(session, 'locks watch'), session.model === 'in-memory' ? DDL_HOLD_TIMES_NOTE : HOLD_TIMES_NOTE, ...(pollFailures.length > 0 ? [FAILED_POLLS_NOTE] : [])],
      interrupted: hooks.signal.aborted,
    }
  } finally {
    await session.close().catch(() => undefined)
  }
}

/**
 * Opens the session, riding out a router that restarts or stalls while it opens, as the watch rides out one
 * that does so between polls. A target that never answered (a wrong port, a host that is down) fails at once,
 * as before: exit 4 with the driver's reason. Once it has answered (a monitor's hello, a handshake), a failure
 * to read the session's facts (hello, buildInfo, config's collections) is a failed poll, marked and retried
 * every --interval with a fresh client (a driver client whose first connection failed stays closed).
 * Ends with the last failure when --duration runs out first (no poll answered: the watch saw nothing, the
 * exit of the failure's class) or on Ctrl-C (exit 130).
 */
async function openRidingRestarts(
  target: Target,
  config: LocksWatchConfig,
  signal: AbortSignal,
  until: number,
  onFailedOpen: (failure: Omit<LockPollFailure, 'poll'>) => void,
): Promise<LocksSession> {
  const reached = {answered: false}
  const stopped = (failure: PoolToolError) =>
    stoppedError(signal, `stopped before the watch could read ${target.redactedUri} again: ${failure.message}`, 'the target answered at first and then went away; run the watch again once it is back')
  for (let attempt = 1; ; attempt++) {
    const at = Date.now()
    try {
      return await openLocksSession(target, {expiryMS: config.expiryMS, reached})
    } catch (error) {
      if (!reached.answered) throw error
      const failure = toPoolToolError(error, {target: target.redactedUri, secrets: target.secrets})
      // Not the cluster going away (a wrong topology, refused credentials, a bug): the open's own error, as before.
      if (failure.code !== 'UNREACHABLE') throw error
      if (signal.aborted) throw stopped(failure)
      onFailedOpen({at: new Date(at).toISOString(), reason: 'unreachable', error: failure.message})
      if (Date.now() >= until) {
        throw new PoolToolError(
          'UNREACHABLE',
          `${failure.message} (${target.redactedUri} answered at first, then not again within --duration: ${attempt} attempts to open the watch failed)`,
          failure.hint,
          {cause: error},
        )
      }
      await sleep(Math.min(at + config.intervalMS, until) - Date.now(), signal)
      if (signal.aborted) throw stopped(failure)
    }
  }
}

/** One snapshot turned into transitions (the trackers keep the last successful snapshot across failed polls). */
async function pollOnce(
  session: LocksSession,
  filter: LockFilter,
  bounds: ReadBounds,
  trackers: {locks: LockTransitionTracker; ddl: DdlOpTracker},
): Promise<{events: LockEvent[]; poll: Omit<LocksPoll, 'poll'>}> {
  if (session.model === 'in-memory') {
    const {now, ops} = await readDdlOpsAt(session.reader, bounds)
    const matching = ops.filter((o) => matches(o.ns, filter))
    return {events: trackers.ddl.observe(matching, now.getTime()), poll: {at: now.toISOString(), ddlRunning: matching.length}}
  }
  const snap = await readConfigSnapshot(session.reader, bounds)
  const rows = filterLocks(toLockRows({...snap, nowMs: snap.now.getTime(), timing: session.timing}), {db: filter.db, ns: filter.ns})
  return {events: trackers.locks.observe(rows, snap.now.getTime()), poll: {at: snap.now.toISOString(), held: rows.filter((row) => row.verdict !== 'free')}}
}

function matches(ns: string | null, filter: LockFilter): boolean {
  if (!ns) return filter.db === undefined && filter.ns === undefined
  if (filter.ns !== undefined && ns !== filter.ns) return false
  if (filter.db !== undefined && ns !== filter.db && !ns.startsWith(`${filter.db}.`)) return false
  return true
}
