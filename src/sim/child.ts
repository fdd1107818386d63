/**
 * Entry point of the child process that serves the simulated cluster (forked by host.ts).
 * Speaks ParentMessage/ChildMessage over IPC.
 *
 * Lifecycle: this process leaves only when its parent says `stop`, or when the parent is
 * gone (the IPC channel disconnects, or, should that ever be missed, the parent pid
 * changes). It ignores SIGINT, SIGTERM and SIGHUP: host.ts already forks it into its own
 * process group, so a signal to the command's group (Ctrl-C, `timeout`, a CI cancel)
 * does not reach it, and one sent to it directly must not take the server away while the
 * command still cleans up against it (bench drops its namespace after a Ctrl-C).
 */
import {classifyStartFailure, SimClusterRuntime} from './cluster.js'
import type {ChildMessage, ParentMessage} from './types.js'

const STOP_HARD_LIMIT_MS = 4000
/** Exit code when stopping overran STOP_HARD_LIMIT_MS (EX_SOFTWARE): `sim.exited` shows it was not clean. */
const STOP_OVERRAN_EXIT_CODE = 70
const PARENT_CHECK_MS = 1000

let runtime: SimClusterRuntime | null = null
let starting: Promise<SimClusterRuntime> | null = null
let exiting = false

/** Best effort: a parent that went away cannot be told anything (the callback swallows EPIPE / ERR_IPC_CHANNEL_CLOSED). */
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
  const hardStop = setTimeout(() => {
    say(`stopping took more than ${STOP_HARD_LIMIT_MS / 1000} s; exiting anyway`)
    process.exit(STOP_OVERRAN_EXIT_CODE)
  }, STOP_HARD_LIMIT_MS)
  hardStop.unref()
  try {
    const r = runtime ?? (starting ? await starting.catch(() => null) : null)
    await r?.stop()
  } catch (e) {
    say(`error while stopping: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (notify) send({type: 'stopped'}, () => process.exit(code))
  else process.exit(code)
}

async function onMessage(msg: ParentMessage): Promise<void> {
  switch (msg.type) {
    case 'start': {
      if (starting) return
      starting = SimClusterRuntime.start(msg.options, {
        onScheduledFault: (event) => send({type: 'fault-fired', event}),
        onScenarioFired: (event) => send({type: 'scenario-fired', event}),
      })
      try {
        runtime = await starting
        send({type: 'ready', info: runtime.info})
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e)
        exiting = true
        send({type: 'start-failed', message, reason: classifyStartFailure(e)}, () => process.exit(1))
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
    case 'arm':
    case 'disarm': {
      try {
        if (!runtime) throw new Error('the simulated cluster is not running')
        if (msg.type === 'arm') {
          runtime.arm(msg.id, msg.fault, msg.trigger)
          send({type: 'control-result', id: msg.id, ok: true})
        } else {
          send({type: 'control-result', id: msg.id, ok: true, fired: runtime.disarm(msg.armId)})
        }
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

/** One line on the inherited stderr; the stack only when DEBUG is set. */
function say(line: string, stack?: string): void {
  process.stderr.write(`pooltool sim: ${line}\n${process.env.DEBUG && stack ? `${stack}\n` : ''}`)
}

if (!process.send) {
  process.stderr.write('pooltool sim child: must be started by host.ts (child_process.fork)\n')
  process.exit(2)
}

// stderr is the parent's: when its reader is gone (`… 2>&1 | head`), stay quiet rather than crash.
process.stderr.on('error', () => undefined)

process.on('message', (msg: ParentMessage) => {
  void onMessage(msg)
})
// Parent exited, crashed or was killed (SIGKILL included): never leave an orphan behind.
process.on('disconnect', () => {
  void shutdown(0, false)
})
const parentPid = process.ppid
setInterval(() => {
  if (process.ppid !== parentPid) void shutdown(0, false)
}, PARENT_CHECK_MS).unref()

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined)

process.on('uncaughtException', (e) => {
  say(`internal error in the embedded cluster: ${e.message}`, e.stack)
})
process.on('unhandledRejection', (e) => {
  say(`internal error in the embedded cluster: ${e instanceof Error ? e.message : String(e)}`, e instanceof Error ? e.stack : undefined)
})
