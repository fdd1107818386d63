/**
 * fsync and fsyncUnlock. The data is in memory, so the flush is a no-op; `lock: true` starts the
 * `fsyncLockWorker` system thread (status/system-ops.ts), which holds the global lock in S mode until as
 * many fsyncUnlock, as mongod does for a backup: every write then waits on Global IX behind it. The first
 * fsyncLock answers once the worker holds the lock (FSyncCommand::errmsgRun waits for `threadStarted`).
 * Reply shapes and errors follow mongod's fsync.cpp.
 */
import {Long, type Document} from 'bson'
import {CommandError} from '../errors.js'
import type {CommandContext, CommandSpec} from './registry.js'
import {clusterAdmin, truthyFlag} from './util.js'
import {endFsyncWorker, startFsyncWorker} from '../status/system-ops.js'

const FSYNC_URL = 'http://dochub.mongodb.org/core/fsynccommand'

function requireAdmin(ctx: CommandContext): void {
  if (ctx.db !== 'admin') throw CommandError.of('Unauthorized', `${ctx.spec.name} may only be run against the admin database.`)
}

async function fsync(ctx: CommandContext): Promise<Document> {
  requireAdmin(ctx)
  // mongod's dummy value since MMAPv1 went away.
  if (!truthyFlag(ctx.cmd.lock)) return {numFiles: 1, ok: 1}
  const lockCount = ctx.proc.locks.fsyncLock()
  if (lockCount === 1) await startFsyncWorker(ctx.proc)
  return {info: 'now locked against writes, use db.fsyncUnlock() to unlock', lockCount: Long.fromNumber(lockCount), seeAlso: FSYNC_URL, ok: 1}
}

function fsyncUnlock(ctx: CommandContext): Document {
  requireAdmin(ctx)
  const lockCount = ctx.proc.locks.fsyncUnlock()
  if (lockCount < 0) throw CommandError.of('IllegalOperation', 'fsyncUnlock called when not locked')
  if (lockCount === 0) endFsyncWorker(ctx.proc)
  return {info: 'fsyncUnlock completed', lockCount: Long.fromNumber(lockCount), ok: 1}
}

export const fsyncCommands: CommandSpec[] = [
  {name: 'fsync', handler: fsync, authz: clusterAdmin},
  {name: 'fsyncUnlock', handler: fsyncUnlock, authz: clusterAdmin},
]
