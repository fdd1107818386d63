/** `pooltool sim --replay FILE`: load the snapshot, serve it until Ctrl-C or --duration, then close every listener. */
import {readUserFile} from '../input.js'
import {stopRequested, type StopWhen} from '../run-sim.js'
import {parseSnapshot, type SnapshotFile} from '../snapshot/format.js'
import {type ReplayInfo, startReplayServer} from './server.js'

export async function loadSnapshot(file: string): Promise<SnapshotFile> {
  return parseSnapshot(await readUserFile(file, `--replay ${file}`, 'pass a file written by `pooltool snapshot --out FILE`'), file)
}

export interface RunReplayHooks extends StopWhen {
  onReady(info: ReplayInfo): void
}

export async function runReplayUntilStopped(file: string, hooks: RunReplayHooks): Promise<void> {
  const snapshot = await loadSnapshot(file)
  const server = await startReplayServer(snapshot, file)
  const stop = stopRequested(hooks)
  try {
    hooks.onReady(server.info)
    await stop.requested
  } finally {
    stop.cancel()
    await server.stop()
  }
}
