/**
 * Entry point of the child process that serves the simulated cluster (forked by host.ts).
 * Speaks ParentMessage/ChildMessage over IPC and exits when the parent goes away.
 */
import {SimClusterRuntime} from './cluster.js'
import type {ChildMessage, ParentMessage} from './types.js'

let runtime: SimClusterRuntime | null = null
let starting: Promise<SimClusterRuntime> | null = null
let exiting = false

function send(msg: ChildMessage, then?: () => void): void {
  if (!process.connected || !process.send) {
    then?.()
    return
  }
  process.send(msg, undefined, {}, () => then?.())
}

async function shutdown(code: number, notify: boolean): Promise<void> {
  if (exiting) return
  exiting = true
  const hardStop = setTimeout(() => process.exit(code), 4000)
  hardStop.unref()
  try {
    const r = runtime ?? (starting ? await starting.catch(() => null) : null)
    await r?.stop()
  } catch (e) {
    process.stderr.write(`pooltool sim: error while stopping: ${String(e)}\n`)
  }
  if (notify) send({type: 'stopped'}, () => process.exit(code))
  else process.exit(code)
}

async function onMessage(msg: ParentMessage): Promise<void> {
  switch (msg.type) {
    case 'start': {
      if (starting) return
      starting = SimClusterRuntime.start(msg.options)
      try {
        runtime = await starting
        send({type: 'ready', info: runtime.info})
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e)
        exiting = true
        send({type: 'start-failed', message}, () => process.exit(1))
      }
      return
    }
    case 'control': {
      try {
        if (!runtime) throw new Error('the simulated cluster is not running')
        await runtime.control(msg.fault)
        send({type: 'control-result', id: msg.id, ok: true})
      } catch (e) {
        send({type: 'control-result', id: msg.id, ok: false, message: e instanceof Error ? e.message : String(e)})
      }
      return
    }
    case 'stop':
      await shutdown(0, true)
      return
  }
}

if (!process.send) {
  process.stderr.write('pooltool sim child: must be started by host.ts (child_process.fork)\n')
  process.exit(2)
}

process.on('message', (msg: ParentMessage) => {
  void onMessage(msg)
})
// Parent killed, crashed or Ctrl-C'd: never leave an orphan behind.
process.on('disconnect', () => {
  void shutdown(0, false)
})
// Ctrl-C reaches the whole process group: let the parent decide (it may still need us to
// take a final snapshot); its exit disconnects the channel and ends this process.
process.on('SIGINT', () => undefined)
process.on('SIGTERM', () => void shutdown(143, false))
process.on('uncaughtException', (e) => {
  process.stderr.write(`pooltool sim: uncaught exception: ${e.stack ?? String(e)}\n`)
})
process.on('unhandledRejection', (e) => {
  process.stderr.write(`pooltool sim: unhandled rejection: ${String(e)}\n`)
})
