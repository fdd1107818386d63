/**
 * The locks one operation holds or waits for, as currentOp reports them (`fillLockerInfo`,
 * src/mongo/db/concurrency/fill_locker_info.cpp): `locks` maps each resource type to the mode of the
 * request (granted or still pending, so a write queued behind fsyncLock already shows `Global: 'w'`),
 * `lockStats` the operation's own acquisitions and waits in serverStatus.locks' shape. The sequence
 * per kind mirrors what `storage/locks.ts` counts for the whole process, so the two agree; 7.0 adds
 * the FeatureCompatibilityVersion lock every global acquisition takes in the same intent mode, and
 * `Mutex` r for a read (both as 7.0 profiler and currentOp output show them).
 * Kept beside the operation in a WeakMap so the connection's op record stays the sim's own.
 */
import {Long, type Document} from 'bson'
import type {ActiveOp} from '../server/connection.js'
import {lockStatsEntry, type LockMode, type LockStats, type ModeStats, modeStatsOf} from '../storage/locks.js'
import type {VersionProfile} from '../profile.js'

type Kind = 'read' | 'write' | 'global' | 'dbExclusive'

interface OpLockState {
  /** Resource type (ResourceType or 7.0's FeatureCompatibilityVersion) → mode requested. */
  held: Map<string, LockMode>
  stats: LockStats
  flowControlAcquired: number
  /** A wait in progress (its time so far is added when currentOp reads it). */
  waiting?: {type: string; mode: LockMode; since: bigint}
}

const states = new WeakMap<ActiveOp, OpLockState>()

/** 7.0's FeatureCompatibilityVersion lock (taken with every global lock from 7.0, maxWireVersion 21). */
export function hasFcvLock(profile: VersionProfile): boolean {
  return profile.maxWireVersion >= 21
}

function stateOf(op: ActiveOp): OpLockState {
  let s = states.get(op)
  if (!s) {
    s = {held: new Map(), stats: new Map(), flowControlAcquired: 0}
    states.set(op, s)
  }
  return s
}

/** The resources and modes a kind of operation takes, outermost first. */
function sequence(kind: Kind, profile: VersionProfile): Array<[string, LockMode]> {
  const global: LockMode = kind === 'read' ? 'r' : 'w'
  const out: Array<[string, LockMode]> = [['ParallelBatchWriterMode', 'r']]
  if (hasFcvLock(profile)) out.push(['FeatureCompatibilityVersion', global])
  out.push(['ReplicationStateTransition', 'w'], ['Global', global])
  if (kind === 'read') out.push(['Database', 'r'], ['Collection', 'r'])
  else if (kind === 'write') out.push(['Database', 'w'], ['Collection', 'w'])
  else if (kind === 'dbExclusive') out.push(['Database', 'W'])
  if (kind === 'read' && hasFcvLock(profile)) out.push(['Mutex', 'r'])
  return out
}

function bump(s: OpLockState, type: string, mode: LockMode): ModeStats {
  return modeStatsOf(s.stats, type, mode)
}

/**
 * Requests the global part of a kind's locks (up to and including Global) before a wait for it
 * (fsyncLock holds Global), so currentOp shows them while the operation waits. As in mongod, an
 * acquisition counts when requested; a wait adds acquireWaitCount / timeAcquiringMicros when granted.
 * A write on a replica-set member first takes a flow-control ticket (flowControlStats.acquireCount).
 */
export function requestGlobal(op: ActiveOp, kind: Kind, profile: VersionProfile, replicaSet: boolean): void {
  const s = stateOf(op)
  if (kind !== 'read' && replicaSet && s.flowControlAcquired === 0) s.flowControlAcquired = 1
  for (const [type, mode] of sequence(kind, profile)) {
    if (!s.held.has(type)) {
      s.held.set(type, mode)
      bump(s, type, mode).acquireCount++
    }
    if (type === 'Global') return
  }
}

/**
 * The wait for Global begins (fsyncLock holds it): like mongod's lock stats, acquireWaitCount counts
 * when the wait starts and timeAcquiringMicros grows while it lasts, so currentOp shows a waiting
 * operation's wait so far.
 */
export function beginGlobalWait(op: ActiveOp, kind: Kind): void {
  const s = stateOf(op)
  const mode: LockMode = kind === 'read' ? 'r' : 'w'
  bump(s, 'Global', mode).acquireWaitCount++
  s.waiting = {type: 'Global', mode, since: process.hrtime.bigint()}
}

/** The wait begun by beginGlobalWait is over: its time is added for good. */
export function endGlobalWait(op: ActiveOp): void {
  const s = stateOf(op)
  if (!s.waiting) return
  bump(s, s.waiting.type, s.waiting.mode).timeAcquiringMicros += elapsedMicros(s.waiting.since)
  s.waiting = undefined
}

function elapsedMicros(since: bigint): number {
  return Number((process.hrtime.bigint() - since) / 1000n)
}

/** Every lock of the kind taken (the collection lock after `waitedMicros` in its queue, when it waited). */
export function grantedAll(op: ActiveOp, kind: Kind, profile: VersionProfile, replicaSet: boolean, collectionWaitMicros = -1): void {
  requestGlobal(op, kind, profile, replicaSet)
  const s = stateOf(op)
  for (const [type, mode] of sequence(kind, profile)) {
    if (s.held.has(type)) continue
    s.held.set(type, mode)
    const m = bump(s, type, mode)
    m.acquireCount++
    if (type === 'Collection' && collectionWaitMicros >= 0) {
      m.acquireWaitCount++
      m.timeAcquiringMicros += collectionWaitMicros
    }
  }
}

/**
 * The operation yields every lock it holds (an awaitData getMore while it waits for new oplog entries,
 * getmore_cmd.cpp): currentOp shows `locks: {}`; its lockStats keep what it acquired.
 */
export function yieldLocks(op: ActiveOp): void {
  states.get(op)?.held.clear()
}

/** currentOp's `waitingForFlowControl` and `flowControlStats` (`acquireCount` int64 once a ticket was taken). */
export function currentOpFlowControl(op: ActiveOp): Document {
  const n = states.get(op)?.flowControlAcquired ?? 0
  return {waitingForFlowControl: false, flowControlStats: n > 0 ? {acquireCount: Long.fromNumber(n)} : {}}
}

/** currentOp's `locks` and `lockStats` (sparse Long counters, as serverStatus.locks). */
export function currentOpLockFields(op: ActiveOp): {locks: Document; lockStats: Document} {
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
