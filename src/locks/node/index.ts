/**
 * Node locks: lock contention on one mongod, from documents the caller has read (pure, no I/O).
 *
 * What to read on the node, and hand in:
 * - `$currentOp` with `{allUsers: true}` (idle connections are left out by default and again here),
 *   from `db.getSiblingDB('admin').aggregate([{$currentOp: {allUsers: true}}])`;
 * - `lockInfo` (`db.adminCommand({lockInfo: 1})`), when the user's role may run it: its reply as is;
 *   without it the chain is "inferred from $currentOp";
 * - `serverStatus` as is (its `locks`, `globalLock`, `wiredTiger.concurrentTransactions`,
 *   `queues.execution`, `uptime`, `version`, `process`).
 *
 * Then `nodeLocksView(...)` gives the JSON (types.ts) and `nodeLocksText(view, layout)`
 * (src/reporters/node-locks.ts) the text. For a watch, pass the previous serverStatus and the time
 * between the two reads to get wait rates per resource and mode; feed each poll's views to a
 * `NodeLockEpisodeTracker` (episodes.ts) for blocking episodes over the watch.
 */
import {analyseBlocking} from './blocking.js'
import {parseLockInfo} from './lock-info.js'
import {parseOperations} from './operations.js'
import {ticketsFromServerStatus} from './tickets.js'
import type {NodeLocksView} from './types.js'
import {lockWaitRates, lockWaitsFromServerStatus} from './waits.js'

export {analyseBlocking, inferEdges, killOpHint, LOCK_ACQUISITION_ORDER, lockInfoEdges, resourceOf, stopAdvice, waitedLockType} from './blocking.js'
export type {BlockingInput} from './blocking.js'
export {episodeRootOf, MAX_EPISODES_KEPT, NodeLockEpisodeTracker} from './episodes.js'
export type {NodeLockEpisodeTrackerOptions} from './episodes.js'
export {parseLockInfo, parseResourceId} from './lock-info.js'
export {compatible, conflicts, isModeLetter, isModeName, MODE_LETTER_OF, MODE_NAME_OF, modeName} from './modes.js'
export {isIdleConnection, parseLockCounters, parseOperation, parseOperations, SESSION_OPID_PREFIX, sessionIdOf} from './operations.js'
export {ticketsFromServerStatus} from './tickets.js'
export type * from './types.js'
export {lockWaitRates, lockWaitRows, lockWaitsFromServerStatus, uptimeOf, uptimeText} from './waits.js'

type Doc = Record<string, unknown>

export interface NodeLocksInput {
  /** host:port of the node the documents were read on. */
  node: string | null
  /** `$currentOp` documents (or a `currentOp` reply's `inprog`). */
  currentOp: readonly Doc[]
  /** The `lockInfo` reply; absent when it could not be run. */
  lockInfo?: unknown
  serverStatus: Doc
  /** The previous sample's serverStatus and the milliseconds between the two, for a watch. */
  previous?: {serverStatus: Doc; intervalMS: number}
}

/** One node's lock state: who blocks whom, lock waits since start (and since the previous sample), tickets. */
export function nodeLocksView(input: NodeLocksInput): NodeLocksView {
  const blocking = analyseBlocking({
    operations: parseOperations(input.currentOp, input.node),
    ...(input.lockInfo === undefined ? {} : {lockInfo: [parseLockInfo(input.lockInfo, input.node)]}),
  })
  const view: NodeLocksView = {node: input.node, blocking, waits: lockWaitsFromServerStatus(input.serverStatus), tickets: ticketsFromServerStatus(input.serverStatus)}
  if (input.previous) view.rates = lockWaitRates(input.previous.serverStatus, input.serverStatus, input.previous.intervalMS)
  return view
}
