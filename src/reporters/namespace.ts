/**
 * What bench did to the cluster, in words: where it wrote, which dead runs'
 * leftovers it reclaimed, what it dropped, and what it left behind and how to
 * remove it. Pure: result in, lines out (the command prints them on stderr, so
 * they never mix with a piped report).
 */
import type {BenchResult} from '../bench/types.js'

export function renderNamespaceNotes(result: BenchResult): string[] {
  const ns = result.namespace
  const lines: string[] = []
  if (result.abandoned.length > 0) lines.push(`pooltool: cut short by the stop: ${result.abandoned.join('; ')}`)
  if (!ns) return lines
  for (const dead of ns.reclaimed) {
    lines.push(
      `pooltool: reclaimed ${dead.collections.length > 0 ? dead.collections.join(', ') : 'the marker'} of bench run ${dead.runId} ` +
        `(${dead.host}, pid ${dead.pid}), whose heartbeat stopped ${Math.round(dead.heartbeatAgeMS / 1000)} s ago`,
    )
  }
  if (ns.leftBehind.length === 0) return lines
  const where = ns.leftBehind.join(', ')
  if (ns.reason === '--keep') {
    lines.push(`pooltool: kept ${where} (--keep); drop it with db.getSiblingDB('${ns.database}').${collectionOf(ns.leftBehind[0]!, ns.database)}.drop() or drop the database ${ns.database} when no bench runs`)
  } else {
    lines.push(
      `pooltool: left behind ${where} (${ns.reason ?? 'cleanup did not finish'}); the next bench on this cluster reclaims it ` +
        `once this run's heartbeat is 60 s old, or drop it yourself`,
    )
  }
  return lines
}

const collectionOf = (namespace: string, database: string) => namespace.slice(database.length + 1)
