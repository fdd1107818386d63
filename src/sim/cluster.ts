/**
 * Assembles the simulated processes of a topology, starts their listeners, creates the
 * default users, and applies faults (by IPC control or by schedule). Runs inside the
 * child process (child.ts); nothing here touches the caller's event loop.
 */
import {randomBytes} from 'node:crypto'

import {INTERNAL_USER, UserStore} from './auth/users.js'
import {endStall, faultTargets} from './faults.js'
import {holdCollectionLock} from './status/system-ops.js'
import type {SimProcess} from './process.js'
import {profileFor} from './profile.js'
import {DataStore} from './storage/collection.js'
import {buildReplSet} from './topologies/replset.js'
import {MemberOptionsError, resolveMembers} from './topologies/members.js'
import {buildSharded, MAX_MONGOS, MAX_SET_MEMBERS, MAX_SHARDS} from './topologies/sharded.js'
import {validateScenarios} from './sharding/scenario.js'
import {registerListenAddress} from './sharding/wire-client.js'
import {buildStandalone} from './topologies/standalone.js'
import type {BuiltTopology, TopologyContext} from './topologies/topology.js'
import {
  DEFAULT_SIM_OPTIONS,
  type FiredFault,
  type FiredScenario,
  SIM_TOPOLOGIES,
  SIM_VERSION_PROFILES,
  type StartFailureReason,
  type SimClusterInfo,
  type SimCredentials,
  type SimFault,
  type SimOptions,
  type SimTrigger,
} from './types.js'

/** The root user created when auth is on (documented in SimClusterInfo.credentials). */
export const DEFAULT_CREDENTIALS: SimCredentials = {username: 'pooltool', password: 'pooltool-sim', authSource: 'admin'}

/** Options that cannot work: the caller's to fix (host.ts reports them as a usage error). */
export class SimOptionsError extends Error {
  override name = 'SimOptionsError'
}

export function resolveOptions(partial: Partial<SimOptions> = {}): SimOptions {
  const o: SimOptions = {...DEFAULT_SIM_OPTIONS, ...partial}
  if (!SIM_TOPOLOGIES.includes(o.topology)) throw new SimOptionsError(`unknown topology '${o.topology}'`)
  if (!SIM_VERSION_PROFILES.includes(o.versionProfile)) throw new SimOptionsError(`unknown version profile '${o.versionProfile}'`)
  if (!Number.isInteger(o.basePort) || o.basePort < 0 || o.basePort > 65535) throw new SimOptionsError(`invalid basePort ${o.basePort}`)
  if (o.advertiseHost !== undefined) {
    if (!/^[A-Za-z0-9.-]+$/.test(o.advertiseHost)) throw new SimOptionsError(`advertiseHost '${o.advertiseHost}' is not a host name`)
  }
  for (const k of ['latencyMs', 'setupCostMs', 'maxIncomingConnections'] as const) {
    if (!(o[k] >= 0)) throw new SimOptionsError(`${k} must be >= 0`)
  }
  if (o.scramIterationCount < 5000 || o.scramSHA256IterationCount < 5000) {
    throw new SimOptionsError('SCRAM iteration counts must be at least 5000 (as on mongod)')
  }
  // The topology builders check these too; here they become usage errors, not internal ones.
  const counts: Array<[string, number, number]> =
    o.topology === 'replset'
      ? [['members', o.members, 50]]
      : o.topology === 'sharded'
        ? [['mongos', o.mongos, MAX_MONGOS], ['shards', o.shards, MAX_SHARDS], ['shardMembers', o.shardMembers, MAX_SET_MEMBERS], ['configMembers', o.configMembers, MAX_SET_MEMBERS]]
        : []
  for (const [name, n, max] of counts) {
    if (!Number.isInteger(n) || n < 1 || n > max) throw new SimOptionsError(`${name} must be an integer between 1 and ${max} (got ${n})`)
  }
  if (o.memberOptions.length > 0) {
    if (o.topology !== 'replset') throw new SimOptionsError('member options (priority, hidden, arbiter) apply to a replica set (topology replset)')
    try {
      resolveMembers(o.members, o.memberOptions)
    } catch (e) {
      if (e instanceof MemberOptionsError) throw new SimOptionsError(e.message)
      throw e
    }
  }
  const lastPort = o.basePort + processCount(o) - 1
  if (o.basePort !== 0 && lastPort > 65535) {
    throw new SimOptionsError(`ports ${o.basePort}-${lastPort} are needed for ${processCount(o)} processes, beyond 65535`)
  }
  // Checked for every topology: a scenario on a standalone would otherwise be silently ignored.
  try {
    validateScenarios(o.scenarios, o.topology, o.versionProfile)
  } catch (e) {
    throw new SimOptionsError(e instanceof Error ? e.message : String(e))
  }
  return o
}

/** Listeners a topology runs, one port each (from basePort up): routers, shards and the config server when sharded. */
function processCount(o: SimOptions): number {
  if (o.topology === 'replset') return o.members
  if (o.topology === 'sharded') return o.mongos + o.shards * o.shardMembers + o.configMembers
  return 1
}

/** The errno code (EADDRINUSE …) of an error or of one of its causes. */
function errnoCode(error: unknown): string | undefined {
  for (let e = error as {code?: unknown; cause?: unknown} | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') return e.code
  }
  return undefined
}

/** Why SimClusterRuntime.start failed, for the parent to classify (see StartFailureReason). */
export function classifyStartFailure(error: unknown): StartFailureReason {
  if (error instanceof SimOptionsError) return 'invalid-options'
  const code = errnoCode(error)
  const message = error instanceof Error ? error.message : String(error)
  // The listener words EADDRINUSE as "address already in use" and keeps EACCES in its message.
  if (code === 'EADDRINUSE' || /address already in use/.test(message)) return 'address-in-use'
  if (code === 'EACCES' || /\bEACCES\b/.test(message)) return 'permission-denied'
  return 'internal'
}

/** What the runtime reports to whoever started it (child.ts forwards it over IPC). */
export interface RuntimeHooks {
  /** A scheduled fault was applied (or failed to apply). */
  onScheduledFault?(event: FiredFault): void
  /** A scenario was set up (during start, before start resolves). */
  onScenarioFired?(event: FiredScenario): void
}

/**
 * The cluster's keyFile: a random key per child, known only to its processes (never in SimClusterInfo, never logged).
 * With auth on, the cluster's own connections authenticate with it as `__system` on `local`, as real members and
 * routers do (`authenticateInternalUser`, src/mongo/client/authenticate.cpp; the mechanism is negotiated with
 * `saslSupportedMechs: "local.__system"`, SCRAM-SHA-256 on 4.4+), with one salted-password cache for the child, as a
 * server's SCRAM client cache: thousands of internal connections derive the key once, not once each.
 */
const INTERNAL_KEY = randomBytes(48).toString('base64')
const INTERNAL_CREDENTIALS = {username: INTERNAL_USER.user, password: INTERNAL_KEY, source: INTERNAL_USER.db, saltedPasswordCache: new Map<string, Buffer>()}

function build(ctx: TopologyContext): BuiltTopology {
  switch (ctx.options.topology) {
    case 'standalone':
      return buildStandalone(ctx)
    case 'replset':
      return buildReplSet(ctx, undefined, INTERNAL_CREDENTIALS)
    case 'sharded':
      return buildSharded(ctx, {internalCredentials: INTERNAL_CREDENTIALS})
    default:
      throw new Error(`unknown topology '${String(ctx.options.topology)}'`)
  }
}

function validateFault(fault: SimFault): void {
  const num = (v: unknown, name: string) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`fault ${fault.kind}: ${name} must be a number >= 0`)
  }
  switch (fault.kind) {
    case 'latency':
    case 'stall':
    case 'setup-cost':
      num(fault.ms, 'ms')
      return
    case 'restart':
      num(fault.downMS, 'downMS')
      return
    case 'max-connections':
      num(fault.max, 'max')
      return
    case 'drop-connections':
    case 'recover':
      return
    case 'lock-hold': {
      num(fault.ms, 'ms')
      const dot = typeof fault.ns === 'string' ? fault.ns.indexOf('.') : -1
      if (dot < 1 || dot === fault.ns.length - 1) throw new Error(`fault lock-hold: ns must be "db.collection", not ${JSON.stringify(fault.ns)}`)
      if (fault.mode !== 'W' && fault.mode !== 'R') throw new Error(`fault lock-hold: mode must be 'W' or 'R', not ${JSON.stringify(fault.mode)}`)
      return
    }
    default:
      throw new Error(`unknown fault kind '${(fault as {kind: string}).kind}'`)
  }
}

export class SimClusterRuntime {
  private readonly timers: NodeJS.Timeout[] = []
  /**
   * Restarts in progress: each process down, what ends its down time now (stop() and a `recover` need not wait it
   * out) and its coming back.
   */
  private readonly downs = new Set<{proc: SimProcess; wake: () => void; up: Promise<void>}>()
  private stopping = false

  private constructor(
    readonly options: SimOptions,
    readonly topology: BuiltTopology,
    readonly info: SimClusterInfo,
    private readonly hooks: RuntimeHooks,
  ) {}

  get processes(): SimProcess[] {
    return this.topology.processes
  }

  static async start(partial: Partial<SimOptions> = {}, hooks: RuntimeHooks = {}): Promise<SimClusterRuntime> {
    const options = resolveOptions(partial)
    const profile = profileFor(options.versionProfile)
    const users = new UserStore()
    const topology = build({options, profile, data: new DataStore(), users})
    if (options.auth) {
      const c = DEFAULT_CREDENTIALS
      await users.create('admin', c.username, c.password, [{role: 'root', db: 'admin'}], ['SCRAM-SHA-1', 'SCRAM-SHA-256'], options)
      await users.setInternalKey(INTERNAL_KEY, options)
    }
    const started: SimProcess[] = []
    try {
      for (const p of topology.processes) {
        await p.start()
        started.push(p)
      }
    } catch (e) {
      await Promise.all(started.map((p) => p.stop()))
      // A large cluster can need more descriptors than the soft limit allows: the caller's to fix, not a bug.
      if (errnoCode(e) === 'EMFILE') {
        throw new SimOptionsError(`${topology.processes.length} listeners need more open files than this process may have (EMFILE): raise ulimit -n or start fewer processes`)
      }
      throw e
    }
    // Ports are known now: internal connections to an advertised name dial where its process listens.
    for (const p of topology.processes) registerListenAddress(p.hostPort, p.listenAddress)
    const creds = options.auth
      ? `${encodeURIComponent(DEFAULT_CREDENTIALS.username)}:${encodeURIComponent(DEFAULT_CREDENTIALS.password)}@`
      : ''
    const info: SimClusterInfo = {
      uri: topology.uri(creds),
      topology: options.topology,
      versionProfile: options.versionProfile,
      serverVersion: profile.version,
      processes: topology.processes.map((p) => p.info()),
      ...(options.auth ? {credentials: {...DEFAULT_CREDENTIALS}} : {}),
      pid: process.pid,
    }
    const runtime = new SimClusterRuntime(options, topology, info, hooks)
    await topology.started?.((event) => hooks.onScenarioFired?.(event))
    runtime.schedule()
    return runtime
  }

  private schedule(): void {
    for (const {atMs, fault} of this.options.faultSchedule) {
      const t = setTimeout(() => {
        const at = new Date().toISOString()
        this.control(fault).then(
          () => this.hooks.onScheduledFault?.({at, atMS: atMs, fault, ok: true}),
          (e: unknown) => this.hooks.onScheduledFault?.({at, atMS: atMs, fault, ok: false, error: e instanceof Error ? e.message : String(e)}),
        )
      }, Math.max(0, atMs))
      this.timers.push(t)
    }
  }

  private readonly armed = new Map<number, {check: NodeJS.Timeout; fired: boolean}>()

  /** Arms `fault` to fire once `trigger.host` has served `trigger.grows` more `trigger.opcounter` operations. */
  arm(id: number, fault: SimFault, trigger: SimTrigger): void {
    validateFault(fault)
    const proc = this.processes.find((p) => p.listenAddress === trigger.host || p.hostPort === trigger.host)
    if (!proc) throw new Error(`no simulated process is ${trigger.host}`)
    const baseline = proc.counters.opcounters[trigger.opcounter]
    const started = performance.now()
    // A check every 2 ms while armed: the fault lands within a few operations of the mark.
    const check = setInterval(() => {
      if (proc.counters.opcounters[trigger.opcounter] - baseline < trigger.grows) return
      clearInterval(check)
      entry.fired = true
      const at = new Date().toISOString()
      const atMS = Math.round(performance.now() - started)
      this.control(fault).then(
        () => this.hooks.onScheduledFault?.({at, atMS, fault, ok: true}),
        (e: unknown) => this.hooks.onScheduledFault?.({at, atMS, fault, ok: false, error: e instanceof Error ? e.message : String(e)}),
      )
    }, 2)
    const entry = {check, fired: false}
    this.armed.set(id, entry)
    this.timers.push(check)
  }

  /** Whether the armed fault fired; it will not fire after this. */
  disarm(id: number): boolean {
    const entry = this.armed.get(id)
    if (!entry) throw new Error(`no armed fault ${id}`)
    clearInterval(entry.check)
    this.armed.delete(id)
    return entry.fired
  }

  /** Applies a fault to the targeted processes. A restart resolves once the processes are down. */
  async control(fault: SimFault): Promise<void> {
    validateFault(fault)
    let targets = this.processes.filter((p) => faultTargets(fault, p.listenAddress) || faultTargets(fault, p.hostPort))
    if (targets.length === 0) throw new Error(`no simulated process matches hosts ${JSON.stringify(fault.hosts)}`)
    if (fault.kind === 'lock-hold') {
      // an index build runs on data-bearing mongods (every member of a set: two-phase builds, 4.4+); a router has no lock manager
      targets = targets.filter((p) => p.role !== 'mongos' && !p.isArbiter && p.running)
      if (targets.length === 0) throw new Error('lock-hold: no running mongod among the targeted processes (a router has no lock manager)')
    }
    for (const p of targets) {
      switch (fault.kind) {
        case 'latency':
          p.faults.latencyMs = fault.ms
          break
        case 'setup-cost':
          p.faults.setupCostMs = fault.ms
          break
        case 'max-connections':
          p.faults.maxIncomingConnections = fault.max
          break
        case 'stall':
          p.faults.stallUntil = Math.max(p.faults.stallUntil, Date.now() + fault.ms)
          break
        case 'drop-connections':
          p.dropConnections()
          break
        case 'lock-hold':
          holdCollectionLock(p, fault.ns, fault.mode, fault.ms)
          break
        case 'recover':
          endStall(p.faults)
          break
        case 'restart':
          break
      }
    }
    if (fault.kind === 'restart') {
      await Promise.all(targets.map((p) => p.stop()))
      for (const p of targets) this.goDown(p, fault.downMS)
    }
    if (fault.kind === 'recover') {
      const downs = [...this.downs].filter((d) => targets.includes(d.proc))
      for (const d of downs) d.wake()
      await Promise.all(downs.map((d) => d.up))
    }
  }

  /** Keeps a stopped process down for `ms` (less when woken: the cluster stops, or a `recover`), then listening again. */
  private goDown(p: SimProcess, ms: number): void {
    let wake = () => {}
    const downTime = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    const down = {
      proc: p,
      wake,
      up: downTime
        .then(() => (this.stopping ? undefined : p.resume()))
        .catch((e: unknown) => {
          process.stderr.write(`pooltool sim: ${p.hostPort} could not come back after restart: ${String(e)}\n`)
        })
        .finally(() => this.downs.delete(down)),
    }
    this.downs.add(down)
  }

  async stop(): Promise<void> {
    this.stopping = true
    for (const t of this.timers) clearTimeout(t)
    await this.topology.stopping?.()
    // A process down for a restart stays down (`stopping` is set): stopping must not wait out its down time. Woken
    // once, here, after the topology's own stopping, so a restart begun meanwhile is woken too.
    const downs = [...this.downs]
    for (const d of downs) d.wake()
    await Promise.all(downs.map((d) => d.up))
    await Promise.all(this.processes.map((p) => p.stop()))
  }
}
