/**
 * Parent-side API: starts the simulated cluster in a child process (never on the
 * caller's event loop) and steers it over IPC.
 *
 *   const sim = await startSimCluster({topology: 'replset', auth: true})
 *   … connect to sim.info.uri …
 *   await sim.control({kind: 'latency', ms: 20})
 *   void sim.exited.then((exit) => …)      // notice an unexpected death
 *   await sim.stop()
 *
 * Lifecycle (see README.md in this folder): the child runs in its own process group, so
 * a signal to the caller's group never reaches it; it stays up while the caller cleans
 * up and leaves on `stop()` or when the caller is gone. Nothing here throws an IPC error
 * (EPIPE, ERR_IPC_CHANNEL_CLOSED) at the caller when the child is already gone.
 */
import {fork, type ChildProcess} from 'node:child_process'
import {existsSync, statSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {PoolToolError} from '../errors.js'
import {BUG_HINT} from '../mongo/errors.js'
import {
  DEFAULT_SIM_OPTIONS,
  type ChildMessage,
  type FiredFault,
  type FiredScenario,
  type ParentMessage,
  type SimClusterInfo,
  type SimFault,
  type SimOptions,
  type SimTrigger,
  type StartFailureReason,
} from './types.js'

/** How the cluster's process ended. */
export interface SimExit {
  /** true when `stop()` asked for it; false for a crash or a kill from outside. */
  requested: boolean
  code: number | null
  signal: NodeJS.Signals | null
}

export interface SimCluster {
  readonly info: SimClusterInfo
  /**
   * Resolves (never rejects) when the cluster's process has exited, for whatever reason.
   * It does not keep the event loop alive (the child is unref'd between requests): a
   * caller that only waits on it must hold the loop itself, as run-sim.ts does.
   */
  readonly exited: Promise<SimExit>
  control(fault: SimFault): Promise<void>
  /**
   * Arms `fault` to fire inside the cluster once `trigger.host` has served `trigger.grows` more
   * operations of a kind (tests: a fault that lands at a point of a command's work, not of the
   * test's clock). `disarm()` resolves with whether it fired; it will not fire after that.
   */
  armFault(fault: SimFault, trigger: SimTrigger): Promise<{disarm(): Promise<boolean>}>
  /** Calls `listener` for each scheduled fault as it fires, first replaying those that fired before. Returns an unsubscribe. */
  onFaultFired(listener: (event: FiredFault) => void): () => void
  /** Calls `listener` for each scenario the cluster set up (they fire during start: all are replayed). Returns an unsubscribe. */
  onScenarioFired(listener: (event: FiredScenario) => void): () => void
  /** Stops the cluster; resolves quietly when it is already gone. Safe to call twice. */
  stop(): Promise<void>
}

const START_TIMEOUT_MS = 15_000
const STOP_GRACE_MS = 5_000
const CONTROL_TIMEOUT_MS = 30_000

/**
 * The child's script. From the build: child.bundle.js beside this file, the child and its modules in one file
 * (bin/bundle-sim.js, a step of npm run build: Node 20's ESM loader spends ~0.1 s of CPU resolving and linking
 * the ~70 modules one by one), or child.js when there is no bundle or a later tsc build may have left it behind.
 * From the sources (tests under tsx): child.ts under tsx, unless POOLTOOL_SIM_CHILD names a built child to fork
 * instead. `npm test` sets it to dist/src/sim/child.bundle.js right after building (test/run-tiers.mjs): tsx's
 * loader and transforms cost the child about 0.5–1 s of CPU per start, and the suite starts ~150 clusters.
 * Unset (a tier run alone, maybe on an old build), the child comes from the sources being tested.
 */
function childEntry(): {path: string; execArgv: string[]} {
  const here = import.meta.url
  const built = process.env.POOLTOOL_SIM_CHILD
  if (here.endsWith('.ts') && built) return {path: built, execArgv: []}
  if (here.endsWith('.ts')) {
    let loader = 'tsx'
    try {
      loader = import.meta.resolve('tsx')
    } catch {
      /* fall back to bare specifier resolved from the cwd */
    }
    return {path: fileURLToPath(new URL('./child.ts', here)), execArgv: ['--import', loader]}
  }
  const bundle = fileURLToPath(new URL('./child.bundle.js', here))
  return {path: bundleIsCurrent(bundle, fileURLToPath(new URL('../../.tsbuildinfo', here))) ? bundle : fileURLToPath(new URL('./child.js', here)), execArgv: []}
}

/**
 * The bundle exists and no tsc build ran after it: `npx tsc` alone (the build without its bundle step) rewrites
 * dist/.tsbuildinfo and the modules, not the bundle, which then holds the code of before.
 */
function bundleIsCurrent(bundle: string, buildInfo: string): boolean {
  const bundled = statSync(bundle, {throwIfNoEntry: false})
  if (!bundled) return false
  const compiled = statSync(buildInfo, {throwIfNoEntry: false})
  return !compiled || compiled.mtimeMs <= bundled.mtimeMs
}

type Channel = {ref?(): void; unref?(): void}
type ControlResult = ChildMessage & {type: 'control-result'}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`
}

/**
 * The error for a cluster that died without being asked to. Killed by a signal (it ignores
 * INT/TERM/HUP, so: SIGKILL, the OOM killer, a crash signal) comes from outside: the server
 * went away, as a real one can (9). An exit with a code is pooltool's own failure (1).
 */
export function unexpectedExitError(exit: SimExit, pid: number): PoolToolError {
  const message = `the embedded cluster (pid ${pid}) ${describeExit(exit.code, exit.signal)}; nothing is serving its URI any more`
  return exit.signal
    ? new PoolToolError('SERVER_ERROR', message, 'it was killed from outside (kill -9, the kernel OOM killer) or crashed; start it again')
    : new PoolToolError('INTERNAL', message, BUG_HINT)
}

/** A start-up failure, classified: the caller's to fix (2), from outside (9), or ours (1). */
function startFailure(reason: StartFailureReason | 'exited' | 'killed' | 'timeout' | 'spawn', message: string): PoolToolError {
  const line = `the embedded cluster could not start: ${message}`
  switch (reason) {
    case 'address-in-use':
      return new PoolToolError('USAGE', line, 'pick another --port, or --port 0 for free ports')
    case 'permission-denied':
      return new PoolToolError('USAGE', line, 'ports below 1024 need privileges: pick a higher --port, or --port 0')
    case 'invalid-options':
      return new PoolToolError('USAGE', line, 'see pooltool sim --help for the values each option takes')
    case 'killed':
    case 'timeout':
    case 'spawn':
      return new PoolToolError('SERVER_ERROR', line, 'the machine may be short of memory, processes or CPU; try again')
    case 'exited':
    case 'internal':
      return new PoolToolError('INTERNAL', line, BUG_HINT)
  }
}

/** Events the child reports, kept so that a listener added late still hears every one, in order. */
class ReplayedEvents<T> {
  private readonly seen: T[] = []
  private readonly listeners = new Set<(event: T) => void>()

  emit(event: T): void {
    this.seen.push(event)
    for (const listener of this.listeners) listener(event)
  }

  subscribe(listener: (event: T) => void): () => void {
    for (const event of this.seen) listener(event)
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}

class ChildHandle implements SimCluster {
  info!: SimClusterInfo
  readonly exited: Promise<SimExit>
  private nextId = 1
  private busy = 0
  private readonly waiters = new Map<number, (m: ControlResult) => void>()
  private hasExited = false
  private stopRequested = false
  private readonly faults = new ReplayedEvents<FiredFault>()
  private readonly scenarios = new ReplayedEvents<FiredScenario>()

  constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.hasExited = true
        for (const [id, w] of this.waiters) w({type: 'control-result', id, ok: false, message: 'the simulated cluster process exited'})
        this.waiters.clear()
        resolve({requested: this.stopRequested, code, signal})
      }),
    )
    // Send and kill failures once the child is gone (EPIPE, ERR_IPC_CHANNEL_CLOSED, ESRCH):
    // the 'exit' event tells the story; an unhandled 'error' would crash the caller.
    child.on('error', () => undefined)
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'control-result') {
        const w = this.waiters.get(m.id)
        this.waiters.delete(m.id)
        w?.(m)
      } else if (m.type === 'fault-fired') {
        this.faults.emit(m.event)
      } else if (m.type === 'scenario-fired') {
        this.scenarios.emit(m.event)
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

  /** Sends one message; rejects (never throws an 'error' event) when the channel is closed. */
  post(msg: ParentMessage): Promise<void> {
    if (this.hasExited || !this.child.connected) return Promise.reject(new Error('the simulated cluster is not running'))
    return new Promise((resolve, reject) => {
      this.child.send(msg, (error) => (error ? reject(new Error(`the simulated cluster is not running (${error.message})`)) : resolve()))
    })
  }

  onFaultFired(listener: (event: FiredFault) => void): () => void {
    return this.faults.subscribe(listener)
  }

  onScenarioFired(listener: (event: FiredScenario) => void): () => void {
    return this.scenarios.subscribe(listener)
  }

  async control(fault: SimFault): Promise<void> {
    await this.request((id) => ({type: 'control', id, fault}), `control ${fault.kind}`)
  }

  async armFault(fault: SimFault, trigger: SimTrigger): Promise<{disarm(): Promise<boolean>}> {
    let armId = 0
    await this.request((id) => {
      armId = id
      return {type: 'arm', id, fault, trigger}
    }, `arm ${fault.kind}`)
    return {disarm: async () => (await this.request((id) => ({type: 'disarm', id, armId}), `disarm ${fault.kind}`)).fired === true}
  }

  /** One request to the child and its answer; rejects when the child says it failed, is gone, or does not answer. */
  private async request(message: (id: number) => ParentMessage, what: string): Promise<ControlResult> {
    const id = this.nextId++
    this.hold()
    try {
      const reply = await new Promise<ControlResult>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.waiters.delete(id)
          reject(new Error(`simulated cluster did not answer ${what} within ${CONTROL_TIMEOUT_MS} ms`))
        }, CONTROL_TIMEOUT_MS)
        this.waiters.set(id, (m) => {
          clearTimeout(timer)
          resolve(m)
        })
        this.post(message(id)).catch((error: unknown) => {
          clearTimeout(timer)
          this.waiters.delete(id)
          reject(error)
        })
      })
      if (!reply.ok) throw new Error(`${what} failed: ${reply.message ?? 'unknown error'}`)
      return reply
    } finally {
      this.release()
    }
  }


  async stop(): Promise<void> {
    this.stopRequested = true
    if (this.hasExited) return
    this.hold()
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS)
    try {
      // A closed channel is fine: the child leaves by itself when its channel disconnects.
      await this.post({type: 'stop'}).catch(() => undefined)
      await this.exited
    } finally {
      clearTimeout(timer)
      this.release()
    }
  }
}

/** The environment without the user's connection strings (the cluster never needs them). */
function withoutConnectionStrings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const {POOLTOOL_URI: _pooltool, MONGODB_URI: _mongodb, ...rest} = env
  return rest
}

/**
 * Forks the simulated cluster and resolves once every listener is up. Rejects with a
 * PoolToolError: usage (2) for a port in use or an option that cannot work, 9 when the
 * machine could not run it, 1 when it failed on its own.
 */
export async function startSimCluster(options: Partial<SimOptions> = {}): Promise<SimCluster> {
  const full: SimOptions = {...DEFAULT_SIM_OPTIONS, ...options}
  const entry = childEntry()
  // Checked here: a missing file would make the child print Node's own multi-line stack.
  if (!existsSync(entry.path)) {
    throw new PoolToolError('INTERNAL', `the embedded cluster could not start: ${entry.path} is missing`, 'pooltool is not fully built or installed: run npm run build (or reinstall)')
  }
  const child = fork(entry.path, [], {
    execArgv: entry.execArgv,
    // Not the caller's stdout: the child never prints there, and holding the pipe open would
    // keep a reader (`| tee`, `$(…)`) waiting for EOF after the command itself has exited.
    // stderr is shared, for the child's own one-line errors.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'json',
    // The cluster needs no connection string: keep the user's (and its credentials) out of a
    // process whose stderr is not behind pooltool's secret guard.
    env: withoutConnectionStrings(process.env),
    // Its own process group: Ctrl-C, `timeout` or a CI cancel signal the caller's group
    // and must not take the server away while the caller cleans up against it.
    detached: true,
  })
  const handle = new ChildHandle(child)
  handle.hold()
  try {
    handle.info = await new Promise<SimClusterInfo>((resolve, reject) => {
      const fail = (error: PoolToolError) => {
        cleanup()
        child.kill('SIGKILL')
        reject(error)
      }
      const timer = setTimeout(() => fail(startFailure('timeout', `no answer within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS)
      const onMessage = (m: ChildMessage) => {
        if (m.type === 'ready') {
          cleanup()
          resolve(m.info)
        } else if (m.type === 'start-failed') {
          fail(startFailure(m.reason, m.message))
        }
      }
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        fail(startFailure(signal ? 'killed' : 'exited', `its process ${describeExit(code, signal)} before it was ready`))
      const onError = (e: Error) => fail(startFailure('spawn', e.message))
      const cleanup = () => {
        clearTimeout(timer)
        child.off('message', onMessage)
        child.off('exit', onExit)
        child.off('error', onError)
      }
      child.on('message', onMessage)
      child.once('exit', onExit)
      child.once('error', onError)
      // A failed send means the child is already gone: its 'exit' (or 'error') rejects.
      handle.post({type: 'start', options: full}).catch(() => undefined)
    })
  } finally {
    handle.release()
  }
  return handle
}
