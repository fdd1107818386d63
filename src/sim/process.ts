/**
 * One simulated server process: a listener, a role, its own counters, cursors, lock
 * statistics, connections and fault state, and (possibly shared) data and users.
 * Topologies assemble several of these (see cluster.ts); a future mongos is another
 * SimProcess with role 'mongos' and its own command registry.
 */
import {ensureOplog} from './repl/oplog.js'
import type {Socket} from 'node:net'
import {ObjectId, type Document} from 'bson'
import type {UserStore} from './auth/users.js'
import type {CommandRegistry} from './commands/registry.js'
import {initialFaultState, type FaultState} from './faults.js'
import {intParameter, ServerParameters} from './parameters.js'
import type {VersionProfile} from './profile.js'
import {ClientConnection} from './server/connection.js'
import {SimListener} from './server/listener.js'
import {CursorManager} from './storage/cursors.js'
import type {DataStore} from './storage/collection.js'
import {LockManager} from './storage/locks.js'
import {ServerCounters} from './status/counters.js'
import type {SimMemberState, SimOptions, SimProcessInfo, SimProcessRole} from './types.js'

/** Replica-set state shared by the members of one set. */
export interface ReplSetState {
  setName: string
  members: SimProcess[]
  setVersion: number
  term: number
  electionId: ObjectId
}

/** One member's place in its set (replSetGetConfig `members[n]`) and its state. */
export interface MemberConfig {
  state: SimMemberState
  priority: number
  hidden: boolean
}

export interface SimProcessConfig {
  role: SimProcessRole
  options: SimOptions
  profile: VersionProfile
  data: DataStore
  users: UserStore
  registry: CommandRegistry
  replSet?: ReplSetState
  /** With replSet: this member's settings (default: a priority-1 primary). */
  member?: MemberConfig
  /** Port to listen on (0: ephemeral). */
  port: number
}

export class SimProcess {
  readonly role: SimProcessRole
  readonly options: SimOptions
  readonly profile: VersionProfile
  readonly data: DataStore
  readonly users: UserStore
  readonly registry: CommandRegistry
  readonly replSet?: ReplSetState
  readonly member?: MemberConfig
  readonly parameters = new ServerParameters()
  readonly faults: FaultState
  readonly connections = new Map<number, ClientConnection>()
  readonly locks = new LockManager()
  counters = new ServerCounters()
  cursors: CursorManager
  topologyVersion = {processId: new ObjectId(), counter: 0}
  nextOpId = 1
  port: number
  /** Iteration counts used by createUser/updateUser (setParameter changes them). */
  scramIterationCount: number
  scramSHA256IterationCount: number
  private nextConnectionId = 1
  private readonly listener: SimListener
  private readonly topologyWaiters = new Set<() => void>()
  private stopped = false

  constructor(config: SimProcessConfig) {
    this.role = config.role
    this.options = config.options
    this.profile = config.profile
    this.data = config.data
    this.users = config.users
    this.registry = config.registry
    this.replSet = config.replSet
    this.member = config.replSet ? (config.member ?? {state: 'primary', priority: 1, hidden: false}) : undefined
    // A replica-set member's writes go to the set's oplog (local.oplog.rs, shared with the other members); an arbiter holds no data.
    if (config.replSet && this.member?.state !== 'arbiter') ensureOplog(config.data, () => config.replSet!.term)
    this.port = config.port
    this.faults = initialFaultState(config.options)
    this.scramIterationCount = config.options.scramIterationCount
    this.scramSHA256IterationCount = config.options.scramSHA256IterationCount
    this.cursors = new CursorManager(10 * 60_000 * Math.max(config.options.timeScale, 0.001))
    this.listener = new SimListener(config.options.host, {accept: (s) => this.accept(s)})
    this.defineParameters()
  }

  /** The name the process gives itself in its documents (the advertised host when one is set). */
  get hostPort(): string {
    return `${this.options.advertiseHost ?? this.options.host}:${this.port}`
  }

  /** Where it listens: what a URI names to reach it from here. */
  get listenAddress(): string {
    return `${this.options.host}:${this.port}`
  }

  /** Listening (false between a stop / restart fault and the resume). */
  get running(): boolean {
    return !this.stopped
  }

  get authEnabled(): boolean {
    return this.options.auth
  }

  get isWritablePrimary(): boolean {
    return this.role === 'standalone' || this.role === 'mongos' || this.isPrimaryMember
  }

  /** The primary of its replica set (replset, shard or config-server member). */
  get isPrimaryMember(): boolean {
    return this.member?.state === 'primary'
  }

  get isSecondaryMember(): boolean {
    return this.member?.state === 'secondary'
  }

  get isArbiter(): boolean {
    return this.member?.state === 'arbiter'
  }

  info(): SimProcessInfo {
    const advertised = this.hostPort === this.listenAddress ? {} : {advertisedAs: this.hostPort}
    const member = this.member ? {memberState: this.member.state, ...(this.member.hidden ? {hidden: true as const} : {})} : {}
    return {host: this.listenAddress, ...advertised, port: this.port, role: this.role, ...(this.replSet ? {setName: this.replSet.setName} : {}), ...member}
  }

  private defineParameters(): void {
    const p = this.parameters
    p.define('scramIterationCount', intParameter('scramIterationCount', () => this.scramIterationCount, (n) => (this.scramIterationCount = n), 5000))
    p.define(
      'scramSHA256IterationCount',
      intParameter('scramSHA256IterationCount', () => this.scramSHA256IterationCount, (n) => (this.scramSHA256IterationCount = n), 5000),
    )
    p.define('authenticationMechanisms', {get: () => ['MONGODB-X509', 'SCRAM-SHA-1', 'SCRAM-SHA-256']})
    p.define('maxIncomingConnections', {get: () => this.faults.maxIncomingConnections})
    p.define('featureCompatibilityVersion', {get: () => ({version: this.profile.featureCompatibilityVersion})})
    p.define('logLevel', {get: () => 0, set: () => undefined})
    p.define('cursorTimeoutMillis', {get: () => 600_000})
  }

  // ------------------------------------------------------------ lifecycle

  async start(): Promise<void> {
    if (this.listener.listening) return
    this.stopped = false
    this.port = await this.listener.listen(this.port)
  }

  private accept(socket: Socket): boolean {
    if (this.stopped) return false
    if (this.connections.size >= this.faults.maxIncomingConnections) {
      this.counters.rejected++
      return false
    }
    this.counters.totalCreated++
    const id = this.nextConnectionId++
    this.connections.set(id, new ClientConnection(this, id, socket))
    return true
  }

  connectionClosed(conn: ClientConnection): void {
    this.connections.delete(conn.id)
  }

  /** Destroys every client socket; the listener stays up. */
  dropConnections(): void {
    for (const c of [...this.connections.values()]) c.destroy()
  }

  /** Closes the listener and every socket (used by stop and by the restart fault). */
  async stop(): Promise<void> {
    this.stopped = true
    this.dropConnections()
    await this.listener.close()
    this.cursors.clear()
    this.wakeTopologyWaiters()
  }

  /** After a restart's downtime: listen on the same port again with fresh counters (data kept). */
  async resume(): Promise<void> {
    if (this.listener.listening) return
    this.counters = new ServerCounters()
    this.cursors = new CursorManager(10 * 60_000 * Math.max(this.options.timeScale, 0.001))
    this.locks.reset()
    this.nextConnectionId = 1
    this.nextOpId = 1
    this.topologyVersion = {processId: new ObjectId(), counter: 0}
    await this.start()
  }

  // ------------------------------------------------------------ topology changes

  /** Bumps topologyVersion.counter and answers every waiting awaitable hello. */
  topologyChanged(): void {
    this.topologyVersion.counter++
    this.wakeTopologyWaiters()
  }

  private wakeTopologyWaiters(): void {
    for (const w of [...this.topologyWaiters]) w()
  }

  /** Waits up to `ms` for a topology change (or the connection closing). */
  waitForTopologyChange(conn: ClientConnection, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.topologyWaiters.delete(done)
        if (conn.wake === done) conn.wake = null
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.topologyWaiters.add(done)
      conn.wake = done
    })
  }

  get awaitingTopologyChanges(): number {
    return this.topologyWaiters.size
  }

  /**
   * The set's members as hello lists them (`TopologyCoordinator::fillHelloForReplSet`): hidden members
   * nowhere, electable ones (priority > 0) in `hosts`, arbiters in `arbiters`, the rest in `passives`;
   * the two last only when not empty.
   */
  replSetHelloLists(): {hosts: string[]; passives?: string[]; arbiters?: string[]} {
    const hosts: string[] = []
    const passives: string[] = []
    const arbiters: string[] = []
    for (const m of this.replSet?.members ?? []) {
      const c = m.member!
      if (c.hidden) continue
      if (c.state === 'arbiter') arbiters.push(m.hostPort)
      else if (c.priority > 0) hosts.push(m.hostPort)
      else passives.push(m.hostPort)
    }
    return {hosts, ...(passives.length > 0 ? {passives} : {}), ...(arbiters.length > 0 ? {arbiters} : {})}
  }

  /** What a member says of itself in hello: `arbiterOnly`, else `passive` at priority 0; `hidden`. */
  selfMemberFields(): Document {
    const c = this.member
    if (!c) return {}
    const doc: Document = {}
    if (c.state === 'arbiter') doc.arbiterOnly = true
    else if (c.priority === 0) doc.passive = true
    if (c.hidden) doc.hidden = true
    return doc
  }

  primaryHost(): string | undefined {
    return this.replSet?.members.find((m) => m.isPrimaryMember)?.hostPort
  }

  /** Helper for handlers that need the process-wide document of an error-free reply. */
  static ok(doc: Document = {}): Document {
    return {...doc, ok: 1}
  }
}
