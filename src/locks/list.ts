/** `pooltool locks list` and `locks pings`: one snapshot of the lock state, joined and judged; every read bounded by --timeout-ms. */
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import {filterLocks, toLockRows, toPingRows, type JoinInput, type LockFilter} from './parse.js'
import {embeddedInMemoryHint, openLocksSession, readConfigSnapshot, readInMemoryView, sessionNotes, withinTimeout, type LocksSession} from './read.js'
import type {LocksListResult, LocksPingsResult} from './types.js'

export interface LocksListConfig {
  filter?: LockFilter
  /** --lock-expiry: overrides the 15 min behind `stale`. */
  expiryMS?: number
}

export interface LocksPingsConfig {
  expiryMS?: number
}

async function withSession<T>(target: Target, expiryMS: number | undefined, work: (s: LocksSession) => Promise<T>): Promise<T> {
  const session = await openLocksSession(target, {expiryMS})
  try {
    return await work(session)
  } finally {
    await session.close()
  }
}

async function snapshotInput(session: LocksSession): Promise<JoinInput & {now: Date}> {
  const snapshot = await withinTimeout(session.target, (bounds) => readConfigSnapshot(session.reader, bounds))
  return {...snapshot, nowMs: snapshot.now.getTime(), timing: session.timing}
}

/** What list and pings both say first: where, which server, which lock model, and the server's now. */
function snapshotHeader(session: LocksSession, now: Date) {
  return {
    target: targetSummary(session.target),
    entry: session.entry,
    ...(session.clockSkewMS === undefined ? {} : {clockSkewMS: session.clockSkewMS}),
    serverVersion: session.serverVersion,
    model: session.model,
    message: session.message,
    now: now.toISOString(),
  }
}

async function listLocks(session: LocksSession, config: LocksListConfig): Promise<LocksListResult> {
  const input = await snapshotInput(session)
  const notes = [...sessionNotes(session, config.expiryMS !== undefined), ...embeddedInMemoryHint(session, 'locks list')]
  let inMemory: LocksListResult['inMemory']
  if (session.model === 'in-memory') {
    const read = await withinTimeout(session.target, (bounds) => readInMemoryView(session, bounds))
    inMemory = read.view
    notes.push(...read.notes)
  }
  return {
    ...snapshotHeader(session, input.now),
    expiryMS: session.timing.expiryMS,
    locks: filterLocks(toLockRows(input), config.filter ?? {}),
    pings: toPingRows(input).map(({process, ping, ageMS, alive, holds, role, host}) => ({process, ping, ageMS, alive, holds, role, host})),
    ...(inMemory ? {inMemory} : {}),
    notes,
    interrupted: false,
  }
}

export function runLocksList(target: Target, config: LocksListConfig = {}): Promise<LocksListResult> {
  return withSession(target, config.expiryMS, (session) => listLocks(session, config))
}

export function runLocksPings(target: Target, config: LocksPingsConfig = {}): Promise<LocksPingsResult> {
  return withSession(target, config.expiryMS, async (session) => {
    const input = await snapshotInput(session)
    return {
      ...snapshotHeader(session, input.now),
      pingIntervalMS: session.timing.pingIntervalMS,
      pings: toPingRows(input),
      notes: [...sessionNotes(session, config.expiryMS !== undefined), ...embeddedInMemoryHint(session, 'locks pings')],
      interrupted: false,
    }
  })
}
