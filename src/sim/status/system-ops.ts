/**
 * Operations of server threads that have no client connection, as mongod runs them and currentOp lists
 * them (a ThreadClient with an OperationContext: `desc` is the thread's name, no `client`, no
 * `connectionId`):
 * - **fsyncLockWorker** (src/mongo/db/commands/fsync.cpp, 4.4+): `fsync: 1, lock: true` starts
 *   `FSyncLockThread`, whose `ThreadClient tc("fsyncLockWorker")` makes an operation context and takes
 *   `Lock::GlobalRead` (Global S) until the last `fsyncUnlock`; the fsync command answers once the thread
 *   holds it. It runs no command: currentOp shows `op: 'none'`, `ns: ''`, `command: {}`.
 * - **IndexBuildsCoordinatorMongod-N** (index_builds_coordinator_mongod.cpp, 4.4+ thread pool
 *   "IndexBuildsCoordinatorMongod"): a hybrid build takes the collection lock in X briefly to set up and
 *   to commit (index_builds_coordinator.cpp `_setUpIndexBuild`, `_insertKeysFromSideTablesBlockingWrites`
 *   takes S for the last drain, then X to commit), and shows the createIndexes command with
 *   `msg: 'Index Build: draining writes received during build'` and `progress: {done, total}`
 *   (index_build_interceptor.cpp's drain); lockInfo's `debugInfo` says `index build: <build UUID>`
 *   (the manual's lockInfo example). The `lock-hold` fault makes one hold that lock as long as asked.
 */
import {Long, UUID, type Document} from 'bson'
import type {SimProcess} from '../process.js'
import {acquireLocks, currentOpLockFields, globalSteps, type LockStep} from './op-locks.js'

export interface SystemOp {
  opid: number
  /** The thread's name (currentOp `desc`, lockInfo `clientInfo.desc`). */
  desc: string
  op: 'none' | 'command'
  ns: string
  command: Document
  msg?: string
  progress?: {done: number; total: number}
  /** lockInfo's debugInfo (LockerImpl::setDebugInfo). */
  debugInfo?: string
  startedAt: Date
  startedHr: bigint
  waitingForLock: boolean
}

function newSystemOp(proc: SimProcess, fields: Pick<SystemOp, 'desc' | 'op' | 'ns' | 'command'> & Partial<SystemOp>): SystemOp {
  const op: SystemOp = {opid: proc.nextOpId++, startedAt: new Date(), startedHr: process.hrtime.bigint(), waitingForLock: false, ...fields}
  proc.locks.systemOps.add(op)
  return op
}

function endSystemOp(proc: SimProcess, op: SystemOp): void {
  proc.locks.table.releaseAll(op)
  proc.locks.systemOps.delete(op)
}

/** Starts the fsyncLockWorker; resolves once it holds Global S (in-flight writes finish first, as on mongod). */
export async function startFsyncWorker(proc: SimProcess): Promise<void> {
  const op = newSystemOp(proc, {desc: 'fsyncLockWorker', op: 'none', ns: '', command: {}})
  proc.locks.fsyncWorker = op
  await acquireLocks(proc.locks, op, globalSteps('R', proc.profile), 'readers', (w) => (op.waitingForLock = w))
}

/** The last fsyncUnlock: the worker releases the global lock and ends; the writes behind it run. */
export function endFsyncWorker(proc: SimProcess): void {
  const op = proc.locks.fsyncWorker
  proc.locks.fsyncWorker = undefined
  if (op) endSystemOp(proc, op)
}

/**
 * An index build on `ns` holds the collection lock in `mode` (W: X, its setup or commit; R: S, its last
 * drain) for `ms` once granted. Its request queues like any other (behind a running write's IX, behind a
 * shared hold), and the operations that come after it queue behind it. A second hold on the same namespace
 * and mode sets the end of the first to `ms` from now (0 ends it now, or as soon as it is granted).
 */
export function holdCollectionLock(proc: SimProcess, ns: string, mode: 'W' | 'R', ms: number): void {
  const key = `${ns}:${mode}`
  const existing = proc.locks.holds.get(key)
  if (existing) {
    existing.ms = ms
    if (existing.granted) schedule(proc, key)
    return
  }
  const dot = ns.indexOf('.')
  const coll = ns.slice(dot + 1)
  const docs = proc.data.collection(ns.slice(0, dot), coll, false)
  const count = docs?.size ?? 0
  const buildUUID = new UUID()
  const op = newSystemOp(proc, {
    desc: `IndexBuildsCoordinatorMongod-${proc.locks.nextIndexBuilder++}`,
    op: 'command',
    ns,
    command: {createIndexes: coll, indexes: [{v: 2, key: {lockHold: 1}, name: 'lockHold_1'}], commitQuorum: 'votingMembers', $db: ns.slice(0, dot)},
    msg: 'Index Build: draining writes received during build',
    progress: {done: count, total: count},
    debugInfo: `index build: ${buildUUID.toHexString(true)}`,
  })
  const hold = {op, granted: false, ms}
  proc.locks.holds.set(key, hold)
  const steps: LockStep[] = [...globalSteps('w', proc.profile), {type: 'Database', mode: 'w', resource: `Database:${ns.slice(0, dot)}`}, {type: 'Collection', mode, resource: `Collection:${ns}`}]
  void acquireLocks(proc.locks, op, steps, 'writers', (w) => (op.waitingForLock = w)).then(() => {
    if (proc.locks.holds.get(key) !== hold) return // restarted meanwhile
    hold.granted = true
    schedule(proc, key)
  })
}

function schedule(proc: SimProcess, key: string): void {
  const hold = proc.locks.holds.get(key)
  if (!hold) return
  clearTimeout(hold.timer)
  const end = () => {
    proc.locks.holds.delete(key)
    endSystemOp(proc, hold.op)
  }
  if (hold.ms <= 0) end()
  else hold.timer = setTimeout(end, hold.ms)
}

/** currentOp documents of the process's system threads (active operations without a client). */
export function systemOpDocuments(proc: SimProcess, now: Date, nowHr: bigint): Document[] {
  const out: Document[] = []
  for (const op of proc.locks.systemOps) {
    const micros = Number((nowHr - op.startedHr) / 1000n)
    const doc: Document = {
      type: 'op',
      host: proc.hostPort,
      desc: op.desc,
      active: true,
      currentOpTime: now.toISOString().replace('Z', '+00:00'),
      threaded: true,
      opid: op.opid,
      secs_running: Long.fromNumber(Math.floor(micros / 1e6)),
      microsecs_running: Long.fromNumber(micros),
      op: op.op,
      ns: op.ns,
      command: op.command,
    }
    if (op.msg !== undefined) doc.msg = op.msg
    if (op.progress) doc.progress = {...op.progress}
    doc.numYields = 0
    doc.waitingForLock = op.waitingForLock
    Object.assign(doc, currentOpLockFields(op), {waitingForFlowControl: false, flowControlStats: {}})
    out.push(doc)
  }
  return out
}

