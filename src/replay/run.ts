/** `pooltool sim --replay FILE`: load the snapshot, serve it until Ctrl-C or --duration, then close every listener. */
import {readFile} from 'node:fs/promises'

import {PoolToolError} from '../errors.js'
import {stopRequested, type StopWhen} from '../run-sim.js'
import {parseSnapshot, type SnapshotFile} from '../snapshot/format.js'
import {type ReplayInfo, startReplayServer} from './server.js'

export async function loadSnapshot(file: string): Promise<SnapshotFile> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'error'})`
    throw new PoolToolError('USAGE', `--replay ${file} ${why}`, 'pass a file written by `pooltool snapshot --out FILE`')
  }
  return parseSnapshot(text, file)
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
