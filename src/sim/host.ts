/**
 * Parent-side API: starts the simulated cluster in a child process (never on the
 * caller's event loop) and steers it over IPC.
 *
 *   const sim = await startSimCluster({topology: 'replset', auth: true})
 *   … connect to sim.info.uri …
 *   await sim.control({kind: 'latency', ms: 20})
 *   await sim.stop()
 */
import {fork, type ChildProcess} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {DEFAULT_SIM_OPTIONS, type ChildMessage, type ParentMessage, type SimClusterInfo, type SimFault, type SimOptions} from './types.js'

export interface SimCluster {
  readonly info: SimClusterInfo
  control(fault: SimFault): Promise<void>
  stop(): Promise<void>
}

const START_TIMEOUT_MS = 15_000
const STOP_GRACE_MS = 5_000
const CONTROL_TIMEOUT_MS = 30_000

function childEntry(): {path: string; execArgv: string[]} {
  const here = import.meta.url
  if (here.endsWith('.ts')) {
    let loader = 'tsx'
    try {
      loader = import.meta.resolve('tsx')
    } catch {
      /* fall back to bare specifier resolved from the cwd */
    }
    return {path: fileURLToPath(new URL('./child.ts', here)), execArgv: ['--import', loader]}
  }
  return {path: fileURLToPath(new URL('./child.js', here)), execArgv: []}
}

type Channel = {ref?(): void; unref?(): void}

class ChildHandle implements SimCluster {
  info!: SimClusterInfo
  private nextId = 1
  private busy = 0
  private readonly waiters = new Map<number, (m: ChildMessage & {type: 'control-result'}) => void>()
  private readonly exited: Promise<void>
  private hasExited = false

  constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    child.once('exit', () => {
      this.hasExited = true
      for (const [id, w] of this.waiters) w({type: 'control-result', id, ok: false, message: 'the simulated cluster process exited'})
      this.waiters.clear()
    })
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'control-result') {
        const w = this.waiters.get(m.id)
        this.waiters.delete(m.id)
        w?.(m)
      }
    })
  }

  /** Keep the parent's event loop alive only while a request is in flight. */
  hold(): void {
    if (this.busy++ === 0) {
      this.child.ref()
      ;(this.child.channel as Channel | null | undefined)?.ref?.()
    }
  }

  release(): void {
    if (--this.busy === 0) {
      this.child.unref()
      ;(this.child.channel as Channel | null | undefined)?.unref?.()
    }
  }

  post(msg: ParentMessage): void {
    if (this.hasExited || !this.child.connected) throw new Error('the simulated cluster is not running')
    this.child.send(msg)
  }

  async control(fault: SimFault): Promise<void> {
    const id = this.nextId++
    this.hold()
    try {
      const reply = await new Promise<ChildMessage & {type: 'control-result'}>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.waiters.delete(id)
          reject(new Error(`simulated cluster did not answer control ${fault.kind} within ${CONTROL_TIMEOUT_MS} ms`))
        }, CONTROL_TIMEOUT_MS)
        this.waiters.set(id, (m) => {
          clearTimeout(timer)
          resolve(m)
        })
        try {
          this.post({type: 'control', id, fault})
        } catch (e) {
          clearTimeout(timer)
          this.waiters.delete(id)
          reject(e)
        }
      })
      if (!reply.ok) throw new Error(`fault ${fault.kind} failed: ${reply.message ?? 'unknown error'}`)
    } finally {
      this.release()
    }
  }

  async stop(): Promise<void> {
    if (this.hasExited) return
    this.hold()
    try {
      try {
        this.post({type: 'stop'})
      } catch {
        /* already disconnected: wait for exit / kill below */
      }
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS)
      await this.exited
      clearTimeout(timer)
    } finally {
      this.release()
    }
  }
}

/** Forks the simulated cluster and resolves once every listener is up. */
export async function startSimCluster(options: Partial<SimOptions> = {}): Promise<SimCluster> {
  const full: SimOptions = {...DEFAULT_SIM_OPTIONS, ...options}
  const entry = childEntry()
  const child = fork(entry.path, [], {
    execArgv: entry.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  })
  const handle = new ChildHandle(child)
  handle.hold()
  try {
    handle.info = await new Promise<SimClusterInfo>((resolve, reject) => {
      const fail = (message: string) => {
        cleanup()
        child.kill('SIGKILL')
        reject(new Error(`simulated cluster failed to start: ${message}`))
      }
      const timer = setTimeout(() => fail(`no answer within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS)
      const onMessage = (m: ChildMessage) => {
        if (m.type === 'ready') {
          cleanup()
          resolve(m.info)
        } else if (m.type === 'start-failed') {
          fail(m.message)
        }
      }
      const onExit = (code: number | null, signal: string | null) => fail(`child exited (${signal ?? `code ${code}`}) before it was ready`)
      const onError = (e: Error) => fail(e.message)
      const cleanup = () => {
        clearTimeout(timer)
        child.off('message', onMessage)
        child.off('exit', onExit)
        child.off('error', onError)
      }
      child.on('message', onMessage)
      child.once('exit', onExit)
      child.once('error', onError)
      child.send({type: 'start', options: full} satisfies ParentMessage)
    })
  } finally {
    handle.release()
  }
  return handle
}
