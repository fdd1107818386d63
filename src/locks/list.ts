/** `pooltool locks list` and `locks pings`: one snapshot of the lock state, joined and judged; every read bounded by --timeout-ms. */
import type {Target} from '../target.js'
import {filterLocks, toLockRows, toPingRows, type LockFilter} from './parse.js'
import {openLocksSession, readConfigSnapshot, readInMemoryView, withinTimeout, type LocksClientSettings, type LocksSession} from './read.js'
import type {LocksListResult, LocksPingsResult} from './types.js'

async function withSession<T>(target: Target, settings: LocksClientSettings, work: (s: LocksSession) => Promise<T>): Promise<T> {
  const session = await openLocksSession(target, settings)
  try {
    return await work(session)
  } finally {
    await session.close()
  }
}

export async function listLocks(session: LocksSession, filter: LockFilter = {}): Promise<LocksListResult> {
  const base = {target: session.target.redactedUri, serverVersion: session.serverVersion, model: session.model, message: session.message, expiryMS: session.timing.expiryMS}
  const snapshot = await withinTimeout(session.target, session.settings.timeoutMs, (bounds) => readConfigSnapshot(session, bounds))
  const input = {...snapshot, nowMs: snapshot.now.getTime(), timing: session.timing}
  const result: LocksListResult = {
    ...base,
    now: snapshot.now.toISOString(),
    locks: filterLocks(toLockRows(input), filter),
    pings: toPingRows(input).map(({process, ping, ageMS, alive, holds, role, host}) => ({process, ping, ageMS, alive, holds, role, host})),
  }
  if (session.model === 'in-memory') result.inMemory = await withinTimeout(session.target, session.settings.timeoutMs, (bounds) => readInMemoryView(session, bounds))
  return result
}

export function runLocksList(target: Target, settings: LocksClientSettings, filter: LockFilter = {}): Promise<LocksListResult> {
  return withSession(target, settings, (s) => listLocks(s, filter))
}

export function runLocksPings(target: Target, settings: LocksClientSettings): Promise<LocksPingsResult> {
  return withSession(target, settings, async (session) => {
    const snapshot = await withinTimeout(session.target, session.settings.timeoutMs, (bounds) => readConfigSnapshot(session, bounds))
    return {
      target: session.target.redactedUri,
      serverVersion: session.serverVersion,
      model: session.model,
      message: session.message,
      now: snapshot.now.toISOString(),
      pingIntervalMS: session.timing.pingIntervalMS,
      pings: toPingRows({...snapshot, nowMs: snapshot.now.getTime(), timing: session.timing}),
    }
  })
}
