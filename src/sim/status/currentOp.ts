/** currentOp / $currentOp documents: one per client connection (idle ones on request). */
import {Long, type Document} from 'bson'
import type {SimProcess} from '../process.js'
import type {ClientConnection} from '../server/connection.js'
import {currentOpFlowControl, currentOpLockFields} from './op-locks.js'
import {systemOpDocuments} from './system-ops.js'

export interface CurrentOpOptions {
  allUsers: boolean
  idleConnections: boolean
  idleSessions: boolean
  localOps: boolean
}

/** The command as shown in currentOp, without credentials. */
function shownCommand(conn: ClientConnection): Document {
  const op = conn.op!
  const hidden = op.spec.sensitiveFields
  if (!hidden || hidden.length === 0) return op.cmd
  const out: Document = {}
  for (const k of Object.keys(op.cmd)) if (!hidden.includes(k)) out[k] = op.cmd[k]
  return out
}

function sharesUser(a: ClientConnection, b: ClientConnection): boolean {
  return a.users.some((u) => b.users.some((v) => v.user === u.user && v.db === u.db))
}

function isoWithOffset(d: Date): string {
  return d.toISOString().replace('Z', '+00:00')
}

export function currentOpDocuments(proc: SimProcess, asking: ClientConnection, opts: CurrentOpOptions): Document[] {
  const out: Document[] = []
  const now = new Date()
  const nowHr = process.hrtime.bigint()
  for (const conn of proc.connections.values()) {
    if (proc.authEnabled && !opts.allUsers && conn !== asking && !sharesUser(conn, asking)) continue
    const op = conn.op
    if (!op && !opts.idleConnections) continue
    const doc: Document = {
      type: 'op',
      host: proc.hostPort,
      desc: `conn${conn.id}`,
      connectionId: conn.id,
      client: conn.remote,
    }
    if (conn.appName !== undefined) doc.appName = conn.appName
    if (conn.clientMetadata) doc.clientMetadata = conn.clientMetadata
    if (conn.users.length > 0) doc.effectiveUsers = conn.users.map((u) => ({user: u.user, db: u.db}))
    doc.active = op !== null
    doc.currentOpTime = isoWithOffset(now)
    if (op) {
      const micros = Number((nowHr - op.startedHr) / 1000n)
      doc.threaded = true
      doc.opid = op.opid
      doc.secs_running = Long.fromNumber(Math.floor(micros / 1e6))
      doc.microsecs_running = Long.fromNumber(micros)
      doc.op = op.type
      doc.ns = op.ns
      doc.command = shownCommand(conn)
      doc.numYields = 0
      doc.waitingForLock = op.waitingForLock === true
      // A router has no lock manager: its own operations carry no lock fields (CurOp on mongos).
      if (proc.role !== 'mongos') Object.assign(doc, currentOpLockFields(op), currentOpFlowControl(op))
      if (op.killed) doc.killPending = true
    }
    out.push(doc)
  }
  // Server threads with an operation (fsyncLockWorker, index builds) are active and belong to no user:
  // listed to whoever may see every user's operations (allUsers, or no auth), idle connections or not.
  if (proc.role !== 'mongos' && (!proc.authEnabled || opts.allUsers)) out.push(...systemOpDocuments(proc, now, nowHr))
  return out
}
