/**
 * Where a cluster keeps its DDL locks, by server version, and the one line that says so.
 * Pure: the version comes from buildInfo (src/locks/read.ts).
 */
import {versionAtLeast, versionParts} from './parse.js'
import type {LockModel} from './types.js'

export function modelFor(version: string): LockModel {
  const [major = 0] = versionParts(version)
  if (major === 0 || !versionAtLeast(version, 3, 4)) return 'unsupported'
  return versionAtLeast(version, 6, 1) ? 'in-memory' : 'config.locks'
}

/** The one-line explanation of each model. */
export function modelMessage(model: LockModel, version: string, collectionsPresent: boolean): string {
  if (model === 'in-memory') {
    return (
      `MongoDB ${version} keeps DDL locks in memory on the coordinating shard (distributed locks left config.locks / ` +
      `config.lockpings in 6.1${collectionsPresent ? '; the leftover documents here are from before the FCV upgrade' : ''}): ` +
      'showing DDL operations from $currentOp and DDL lock entries of serverStatus.locks instead'
    )
  }
  if (model === 'unsupported') return `MongoDB ${version}: pooltool reads the config.locks shapes of 3.4 – 6.0 only`
  return versionAtLeast(version, 5, 0)
    ? `MongoDB ${version}: config.locks written by shard primaries (process = shard name, fixed lock session ids) and the config server ("config")`
    : `MongoDB ${version}: config.locks written by the config server ("ConfigServer"), shards and routers (host:port:epoch:random)`
}
