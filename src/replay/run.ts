/** `pooltool sim --replay FILE`: load the snapshot, serve it until Ctrl-C or --duration, then close every listener. */
import {readUserFile} from '../input.js'
import {stopRequested, type StopWhen} from '../run-sim.js'
import {parseSnapshot, type SnapshotFile} from '../snapshot/format.js'
import {type ReplayInfo, type ReplayOptions, startReplayServer} from './server.js'

/**
 * 256 MiB: a snapshot is every host's replies to pooltool's probes (serverStatus, currentOp, pool
 * stats), a few hundred kB a host even on a busy one, so a few MB for a large sharded cluster; 256 MiB
 * leaves room for a currentOp of many thousands of operations, while Extended JSON parsing of anything
 * bigger (several times its size in memory) is not worth waiting for: such a file is not a snapshot.
 */
export const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024

export async function loadSnapshot(file: string): Promise<SnapshotFile> {
  const text = await readUserFile(file, `--replay ${file}`, 'pass a file written by `pooltool snapshot --out FILE`', {maxBytes: MAX_SNAPSHOT_BYTES, what: 'a snapshot'})
  return parseSnapshot(text, file)
}

export interface RunReplayHooks extends StopWhen, ReplayOptions {
  onReady(info: ReplayInfo): void
}

export async function runReplayUntilStopped(file: string, hooks: RunReplayHooks): Promise<void> {
  const snapshot = await loadSnapshot(file)
  const server = await startReplayServer(snapshot, file, {clockOffsetMS: hooks.clockOffsetMS})
  const stop = stopRequested(hooks)
  try {
    hooks.onReady(server.info)
    await stop.requested
  } finally {
    stop.cancel()
    await server.stop()
  }
}
