/**
 * The locks one operation holds or waits for, as currentOp reports them (`fillLockerInfo`,
 * src/mongo/db/concurrency/fill_locker_info.cpp): `locks` maps each resource type to the mode of the
 * request (granted or still pending, so a write queued behind fsyncLock already shows `Global: 'w'`),
 * `lockStats` the operation's own acquisitions and waits in serverStatus.locks' shape. The sequence
 * per kind mirrors what `storage/locks.ts` counts for the whole process, so the two agree; 7.0 adds
 * the FeatureCompatibilityVersion lock every global acquisition takes in the same intent mode, and
 * `Mutex` r for a read (both as 7.0 profiler and currentOp output show them).
 * Kept beside the operation in a WeakMap so the connection's op record stays the sim's own; the owner is a
 * connection's ActiveOp or a system thread's SystemOp (status/system-ops.ts).
 *
 * `acquireLocks` takes a plan's locks one by one through the lock table (storage/lock-table.ts), so an
 * operation waits where mongod's would: behind the fsyncLockWorker's Global S, behind an index build's
 * Collection X, and behind requests queued before it.
 */
import {Long, type Document} from 'bson'
import {FULL_MODE} from '../storage/lock-table.js'
import {lockStatsEntry, type LockManager, type LockMode, type LockStats, type ModeStats, modeStatsOf, type ResourceType} from '../storage/locks.js'
import type {VersionProfile} from '../profile.js'

export type Kind = 'read' | 'write' | 'global' | 'dbExclusive'

interface OpLockState {
  /** Resource type (ResourceType or 7.0's FeatureCompatibilityVersion) → mode requested. */
  held: Map<string, LockMode>
  stats: LockStats
  flowControlAcquired: number
  /** A wait in progress (its time so far is added when currentOp reads it). */
  waiting?: {type: string; mode: LockMode; since: bigint}
}

/** One lock of a plan: currentOp's resource type and mode, and its key in the lock table (none: never queued here). */
export interface LockStep {
  type: string
  mode: LockMode
  resource?: string
}

const states = new WeakMap<object, OpLockState>()

/** The FeatureCompatibilityVersion lock taken with every global lock (the profiles that model it: 5.0, 7.0). */
export function hasFcvLock(profile: VersionProfile): boolean {
  return profile.fcvLock
}

/** The `Mutex` r a read shows from 7.0 (wire 21) on, as 7.0 profiler and currentOp output show it; kept for 8.0. */
export function hasReadMutex(profile: VersionProfile): boolean {
  return profile.maxWireVersion >= 21
}

/** 5.0+ (wire 13) reads are lock-free: they skip the Database and Collection locks, so an exclusive collection lock does not block them. */
export function hasLockFreeReads(profile: VersionProfile): boolean {
  return profile.maxWireVersion >= 13
}

function stateOf(op: object): OpLockState {
  let s = states.get(op)
  if (!s) {
    s = {held: new Map(), stats: new Map(), flowControlAcquired: 0}
    states.set(op, s)
  }
  return s
}

/**
 * The locks taken with a global lock of `global` mode, outermost first: PBWM IS (before 7.1), the FCV
 * lock in the intent mode of the global one where the profile has it (IS for S/IS, IX for X/IX:
 * Lock::GlobalLock, d_concurrency.cpp), on 8.0 the MultiDocumentTransactionsBarrier for S/X only, RSTL IX, Global.
 */
export function globalSteps(global: LockMode, profile: VersionProfile): LockStep[] {
  const out: LockStep[] = []
  if (profile.pbwmLock) out.push({type: 'ParallelBatchWriterMode', mode: 'r', resource: 'ParallelBatchWriterMode'})
  // 7.3+ (8.0): the transactions barrier, only for a global lock in S or X, in that mode (lock_manager_defs.h).
  if (profile.txnBarrierLock && (global === 'R' || global === 'W')) {
    out.push({type: 'MultiDocumentTransactionsBarrier', mode: global, resource: 'MultiDocumentTransactionsBarrier'})
  }
  if (hasFcvLock(profile)) {
    const fcv: LockMode = global === 'r' || global === 'R' ? 'r' : 'w'
    out.push({type: 'FeatureCompatibilityVersion', mode: fcv, resource: 'FeatureCompatibilityVersion'})
  }
  out.push({type: 'ReplicationStateTransition', mode: 'w', resource: 'ReplicationStateTransition'}, {type: 'Global', mode: global, resource: 'Global'})
  return out
}

/** The resources and modes a kind of operation on `ns` takes, outermost first. */
export function lockPlan(kind: Kind, profile: VersionProfile, ns: string): LockStep[] {
  const db = ns.slice(0, Math.max(0, ns.indexOf('.'))) || ns
  // listDatabases ('global') takes the global lock in IS, as serverStatus counted it (Global r), not IX.
  const global: LockMode = kind === 'read' || kind === 'global' ? 'r' : 'w'
  const out = globalSteps(global, profile)
  // Lock-free reads (5.0+) never queue on Database / Collection; currentOp still shows them (README: not modelled).
  const queued = !(kind === 'read' && hasLockFreeReads(profile))
  const dbStep = (mode: LockMode): LockStep => ({type: 'Database', mode, ...(queued ? {resource: `Database:${db}`} : {})})
  const collStep = (mode: LockMode): LockStep => ({type: 'Collection', mode, ...(queued ? {resource: `Collection:${ns}`} : {})})
  if (kind === 'read') out.push(dbStep('r'), collStep('r'))
  else if (kind === 'write') out.push(dbStep('w'), collStep('w'))
  else if (kind === 'dbExclusive') out.push(dbStep('W'))
  if (kind === 'read' && hasReadMutex(profile)) out.push({type: 'Mutex', mode: 'r'})
  return out
}

function bump(s: OpLockState, type: string, mode: LockMode): ModeStats {
  return modeStatsOf(s.stats, type, mode)
}

/**
 * The global lock mode an operation holds or waits for (undefined once it yielded, or when it never took one):
 * the execution ticket it holds, read for IS/S, write for IX/X, taken before the global lock is granted.
 */
export function globalModeOf(op: object): LockMode | undefined {
  return states.get(op)?.held.get('Global')
}

/** A write on a replica-set member first takes a flow-control ticket (flowControlStats.acquireCount). */
export function takeFlowControlTicket(op: object): void {
  const s = stateOf(op)
  if (s.flowControlAcquired === 0) s.flowControlAcquired = 1
}

const SERVER_STATUS_TYPES = new Set<string>(['ParallelBatchWriterMode', 'MultiDocumentTransactionsBarrier', 'ReplicationStateTransition', 'Global', 'Database', 'Collection', 'Mutex', 'Metadata', 'oplog'])
/**
 * The types whose acquisitions the process counts itself; serverStatus derives the rest from them (7.0's
 * FeatureCompatibilityVersion from Global, Mutex from Collection r, oplog from Collection w: locksSection).
 */
const PROCESS_COUNTED_TYPES = new Set<string>(['ParallelBatchWriterMode', 'MultiDocumentTransactionsBarrier', 'ReplicationStateTransition', 'Global', 'Database', 'Collection'])

/**
 * Takes the plan's locks in order. As in mongod, an acquisition counts when requested, in the op's lockStats
 * and the process's serverStatus.locks, before any wait (and currentOp's `locks` shows a pending mode with
 * `waitingForLock: true`); a wait counts `acquireWaitCount` when it starts
 * (in the op's lockStats and serverStatus.locks), `timeAcquiringMicros` grows while it lasts and is added for
 * good when granted. While it waits the operation counts in globalLock.currentQueue as `queue`.
 * Resolves once every lock is granted (or the table was cleared by a restart).
 */
export async function acquireLocks(
  locks: LockManager,
  owner: object,
  plan: LockStep[],
  queue: 'readers' | 'writers',
  setWaiting: (waiting: boolean) => void,
): Promise<void> {
  const s = stateOf(owner)
  for (const step of plan) {
    if (s.held.has(step.type)) continue
    s.held.set(step.type, step.mode)
    // Counted when requested, before any wait (LockerImpl::_lockBegin): in the op's lockStats and in
    // serverStatus.locks, so neither ever shows more waits than acquisitions.
    bump(s, step.type, step.mode).acquireCount++
    if (PROCESS_COUNTED_TYPES.has(step.type)) locks.requested(step.type as ResourceType, step.mode)
    if (!step.resource) continue
    const wait = locks.table.request(step.resource, FULL_MODE[step.mode], owner)
    if (!wait) continue
    bump(s, step.type, step.mode).acquireWaitCount++
    const since = process.hrtime.bigint()
    s.waiting = {type: step.type, mode: step.mode, since}
    const counted = SERVER_STATUS_TYPES.has(step.type)
    if (counted) locks.waitBegins(step.type as ResourceType, step.mode)
    locks.queued[queue]++
    setWaiting(true)
    try {
      await wait
    } finally {
      setWaiting(false)
      locks.queued[queue] = Math.max(0, locks.queued[queue] - 1)
      const micros = elapsedMicros(since)
      bump(s, step.type, step.mode).timeAcquiringMicros += micros
      s.waiting = undefined
      if (counted) locks.waitEnds(step.type as ResourceType, step.mode, micros)
    }
  }
}

/** The sim's own per-collection write queue made the write wait `micros`: counted as a Collection wait, as storage/locks.ts counts it. */
export function addCollectionQueueWait(op: object, micros: number): void {
  const s = stateOf(op)
  const mode = s.held.get('Collection') ?? 'w'
  const m = bump(s, 'Collection', mode)
  m.acquireWaitCount++
  m.timeAcquiringMicros += micros
}

function elapsedMicros(since: bigint): number {
  return Number((process.hrtime.bigint() - since) / 1000n)
}

/**
 * The operation yields every lock it holds (an awaitData getMore while it waits for new oplog entries,
 * getmore_cmd.cpp): currentOp shows `locks: {}`; its lockStats keep what it acquired.
 */
export function yieldLocks(op: object, locks?: LockManager): void {
  states.get(op)?.held.clear()
  locks?.table.releaseAll(op)
}

/** currentOp's `waitingForFlowControl` and `flowControlStats` (`acquireCount` int64 once a ticket was taken). */
export function currentOpFlowControl(op: object): Document {
  const n = states.get(op)?.flowControlAcquired ?? 0
  return {waitingForFlowControl: false, flowControlStats: n > 0 ? {acquireCount: Long.fromNumber(n)} : {}}
}

/** currentOp's `locks` and `lockStats` (sparse Long counters, as serverStatus.locks). */
export function currentOpLockFields(op: object): {locks: Document; lockStats: Document} {
  const s = states.get(op)
  const locks: Document = {}
  const lockStats: Document = {}
  if (!s) return {locks, lockStats}
  for (const [type, mode] of s.held) locks[type] = mode
  for (const [type, modes] of s.stats) {
    lockStats[type] = lockStatsEntry(modes, (mode) => (s.waiting?.type === type && s.waiting.mode === mode ? elapsedMicros(s.waiting.since) : 0))
  }
  return {locks, lockStats}
}
