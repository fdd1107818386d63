/** What `pooltool snapshot --json` prints (and text mode says on stderr): where the file went and what it holds. */
import {type ResultEnvelope, targetSummary} from '../result.js'
import type {Target} from '../target.js'
import type {CaptureOutcome} from './capture.js'
import type {NodeLocksCapture} from './format.js'

export interface SnapshotSummary extends ResultEnvelope {
  /** The file written; absent when the snapshot went to stdout. */
  file?: string
  capturedAt: string
  redactedHosts: boolean
  /** `nodeLocks`: how the node-lock reads went on a node `locks list` reads (absent elsewhere: routers, a sharded cluster's secondaries). */
  hosts: Array<{host: string; address?: string; role: string; reads: number; errors: number; nodeLocks?: NodeLocksCapture}>
  unreachable: Array<{host: string; error: string}>
  /** Command results kept beside the reads (`conns list`, `locks list`, `locks pings`). */
  views: string[]
}

export function summarizeCapture(target: Target, outcome: CaptureOutcome, file: string | undefined): SnapshotSummary {
  const {snapshot} = outcome
  return {
    target: targetSummary(target),
    ...(file === undefined ? {} : {file}),
    capturedAt: snapshot.capturedAt.toISOString(),
    redactedHosts: snapshot.redactedHosts,
    hosts: snapshot.hosts.map((h) => ({
      host: h.host,
      ...(h.address === undefined ? {} : {address: h.address}),
      role: h.role,
      reads: h.reads.length,
      errors: h.reads.filter((r) => r.error !== undefined).length,
      ...(h.nodeLocks === undefined ? {} : {nodeLocks: h.nodeLocks}),
    })),
    unreachable: snapshot.unreachable,
    views: Object.keys(snapshot.views ?? {}),
    notes: outcome.notes,
    interrupted: outcome.interrupted,
  }
}
