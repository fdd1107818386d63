/**
 * Node locks on every topology, for `locks list` and `locks watch`: which nodes to read (from the
 * one discovery, src/probes/discovery.ts), one bounded read of each through the read layer
 * (`$currentOp` with allUsers and no idle connections, `serverStatus`, and `lockInfo` when the
 * role may run it), and the pure core (src/locks/node) turning the documents into a view.
 *
 * - standalone: the node; replica set: every data-bearing member discovery lists (hello `hosts`
 *   and `passives`; arbiters hold no data and no locks of users);
 * - sharded cluster: every shard's primary and the config server's primary (routers keep no
 *   `serverStatus.locks`). A primary is found by `hello` on the set's members at each read, so a
 *   failover between two polls of a watch is followed.
 *
 * One deadline (--timeout-ms) bounds a whole node read (`readNodes`, a watch's poll): on a sharded
 * cluster finding a set's primary and reading it share it, the read getting what the search left,
 * so the poll ends within the one bound its `pollTimeoutMS` states, not two of them back to back.
 * A node that cannot be read (the deadline ran out, among other reasons) is listed with its error:
 * its locks are unknown, never "no contention". lockInfo refused (Unauthorized, CommandNotFound on
 * a server or replay that lacks it) only means the chain is inferred from `$currentOp`: said in
 * `lockInfo`, never an error.
 * Read only: pooltool never kills; the killOp hint is text for a human.
 */
import {setMaxListeners} from 'node:events'

import {PoolToolError} from '../errors.js'
import type {Document} from '../mongo/driver.js'
import {errorClass, toPoolToolError} from '../mongo/errors.js'
import {type OpenReader, resolvingFirst} from '../probes/host-connection.js'
import type {ServerReader} from '../probes/reader.js'
import {type ClusterHost, type ClusterTopology, connectAddress} from '../probes/topology.js'
import type {Target} from '../target.js'
import {nodeLocksView} from './node/index.js'
import type {NodeLocksEntry, NodeLocksRole, NodeReadError, RootBlocker} from './types.js'
import {filterBlocking, type NamespaceFilter, namespaceFilterNote} from './node/namespace-filter.js'

/** serverStatus sections the node view parses: lock waits, the global lock queue, tickets (queues.execution is never switched off), the member state. */
const NODE_SECTIONS = ['locks', 'globalLock', 'wiredTiger', 'repl'] as const

/** One node to read: where to connect, what it is called, what it is expected to be. */
export interface NodeToRead {
  host: string
  address: string
  role: NodeLocksRole
  shard?: string
  setName?: string
}

/** A set whose primary is read on a sharded cluster: a shard (by id) or the config server. */
interface SetToRead {
  shard?: string
  setName?: string
  role: 'shard primary' | 'config primary'
  members: ClusterHost[]
}

/** What one node's read keeps for the next one (a watch's wait rates): never in the JSON. */
export interface NodeSample {
  serverStatus: Document
  /** The server's clock at the read (ms), else this machine's. */
  atMS: number
}

/**
 * Readers kept per address: list opens and closes them once; a watch keeps them for every poll. A host
 * name is looked up first (resolvingFirst): a member's in-cluster name seen through a port-forward fails
 * at once with its real error, not after a server-selection timeout.
 */
export class NodeReaders {
  private readonly open = new Map<string, Promise<OpenReader>>()
  /** Readers let go after a failure, still closing: `close()` waits for them, a read does not. */
  private readonly closing = new Set<Promise<void>>()

  constructor(
    private readonly target: Target,
    private readonly purpose: string,
  ) {}

  async reader(address: string): Promise<ServerReader> {
    let opened = this.open.get(address)
    if (!opened) {
      // Polling monitor: one monitoring connection per node, not two, for as long as a watch runs.
      opened = Promise.resolve(resolvingFirst(address, () => this.target.openReader(address, this.purpose, {pollMonitoring: true}))())
      this.open.set(address, opened)
    }
    return (await opened).reader
  }

  /**
   * A reader that failed is replaced at the next read: a driver client whose connection failed may stay unusable.
   * Closed in the background: closing a client of a stalled host waits up to CLOSE_GRACE_MS, which must not be
   * added to the read that let it go (that read is bounded by its deadline).
   */
  drop(address: string): void {
    const opened = this.open.get(address)
    if (!opened) return
    this.open.delete(address)
    const closing: Promise<void> = opened
      .then((o) => o.close())
      .catch(() => undefined)
      .finally(() => this.closing.delete(closing))
    this.closing.add(closing)
  }

  async close(): Promise<void> {
    const all = [...this.open.values()]
    this.open.clear()
    await Promise.all([...all.map((o) => o.then((r) => r.close()).catch(() => undefined)), ...this.closing])
  }
}

/** The sets (shards, config server) of a sharded topology, their members grouped. */
function setsOf(topology: ClusterTopology): SetToRead[] {
  const sets = new Map<string, SetToRead>()
  for (const host of topology.hosts) {
    if (host.role !== 'shard' && host.role !== 'config') continue
    const key = host.role === 'config' ? 'config' : `shard:${host.shard ?? host.setName ?? host.host}`
    let set = sets.get(key)
    if (!set) {
      set = {role: host.role === 'config' ? 'config primary' : 'shard primary', members: [], ...(host.shard === undefined ? {} : {shard: host.shard}), ...(host.setName === undefined ? {} : {setName: host.setName})}
      sets.set(key, set)
    }
    set.members.push(host)
  }
  // Shards first, the config server last: the order `conns` lists them in.
  return [...sets.values()].sort((a, b) => Number(a.role === 'config primary') - Number(b.role === 'config primary'))
}

/** Standalone and replica set: every data-bearing node discovery lists, with the role it had then (the read refreshes it). */
function plainNodes(topology: ClusterTopology): NodeToRead[] {
  return topology.hosts.map((h) => ({
    host: h.host,
    address: connectAddress(h),
    role: h.role === 'standalone' ? 'standalone' : h.role === 'primary' ? 'primary' : 'secondary',
    ...(h.setName === undefined ? {} : {setName: h.setName}),
  }))
}

const errorOf = (error: unknown, host: string, target: Target): NodeReadError => {
  const failure = toPoolToolError(error, {target: host, secrets: target.secrets})
  return {code: failure.code, message: failure.message}
}

/**
 * One bound (--timeout-ms) over a whole node read: a watch's poll makes one and every read of the poll takes
 * its signal, so finding a set's primary and reading it share it (the read gets what the search left), and
 * the poll ends within the bound it states (`pollTimeoutMS`) instead of after one bound per phase.
 */
export interface ReadDeadline {
  /** Aborts when the bound runs out. */
  signal: AbortSignal
  /** The bound (--timeout-ms), for the message of a read it cut. */
  timeoutMs: number
}

/** A deadline `timeoutMs` from now. */
export function readDeadline(timeoutMs: number): ReadDeadline {
  const signal = AbortSignal.timeout(timeoutMs)
  // One bound over every read of a poll (a read per node, three each): each adds a listener, by design, not a leak.
  setMaxListeners(0, signal)
  return {signal, timeoutMs}
}

/** Whether a message is a read cut by its deadline (the watch counts such a node's poll as a timeout). */
export const TIMED_OUT = /within \d+ ms \(--timeout-ms/

/**
 * `read` bounded by `deadline`, else by a deadline of its own (--timeout-ms from now: one per read, where a
 * caller reads once); so one stalled node cannot hold the others' answers back. Running out is UNREACHABLE
 * with a message naming the bound (`why` says what it covered); Ctrl-C (`signal`) is rethrown as it is.
 */
async function bounded<T>(target: Target, signal: AbortSignal | undefined, host: string, deadline: ReadDeadline | undefined, read: (signal: AbortSignal) => Promise<T>, why = ''): Promise<T> {
  const bound = deadline ?? readDeadline(target.connection.timeoutMs)
  try {
    return await read(signal ? AbortSignal.any([signal, bound.signal]) : bound.signal)
  } catch (error) {
    // Refused or closed till the bound ran out (the read layer gives the host's last failure): a failure, not a stall.
    if (signal?.aborted || !bound.signal.aborted || errorClass(error) === 'network') throw error
    throw new PoolToolError('UNREACHABLE', `${host} did not answer within ${bound.timeoutMs} ms (--timeout-ms${why})`, 'the node is stalled or overloaded; raise --timeout-ms for slow links', {cause: error})
  }
}

/**
 * The primary of one shard or of the config server, from `hello` on its members (all at once, each bounded):
 * the member that says it is writable primary, else the one the others name. Under a shared deadline (a
 * watch's poll) the first member to say it is primary is taken at once, so a stalled secondary does not spend
 * the time the primary's read has left; the hellos left go on in the background, within the same bound (not
 * cut: a secondary a little slower than the primary keeps its connection from one poll to the next), and a
 * failure still lets its reader go. Without one (list, the watch's start) every member's answer is awaited,
 * as before. A set with no primary found is listed with why (its node locks are unknown).
 */
async function primaryOf(target: Target, readers: NodeReaders, set: SetToRead, signal: AbortSignal | undefined, deadline: ReadDeadline | undefined): Promise<NodeToRead | NodeLocksEntry> {
  const failures: string[] = []
  const failed = new Map<string, NodeReadError>()
  let primaryFound: (member: ClusterHost) => void = () => undefined
  const selfNamed = new Promise<ClusterHost>((resolve) => (primaryFound = resolve))
  const isPrimary = (hello: Document): boolean => hello.isWritablePrimary === true || hello.ismaster === true
  const asks = Promise.all(
    set.members.map(async (member) => {
      const address = connectAddress(member)
      try {
        const hello = (await bounded(target, signal, member.host, deadline, async (s) => (await readers.reader(address)).hello({signal: s}))).value
        if (isPrimary(hello)) primaryFound(member)
        return {member, hello}
      } catch (error) {
        signal?.throwIfAborted()
        readers.drop(address)
        const failure = errorOf(error, member.host, target)
        failed.set(member.host, failure)
        failures.push(`${member.host}: ${failure.message}`)
        return undefined
      }
    }),
  )
  // Left to settle in the background once the primary is found (Ctrl-C rejects it): never an unhandled rejection.
  asks.catch(() => undefined)
  const early = deadline ? await Promise.race([selfNamed, asks.then(() => undefined)]) : undefined
  const answered = early ? [] : (await asks).filter((a): a is NonNullable<typeof a> => a !== undefined)
  const own = early ?? answered.find((a) => isPrimary(a.hello))?.member
  const named = answered.map((a) => a.hello.primary).find((p): p is string => typeof p === 'string')
  const primary = own ?? set.members.find((m) => m.host === named)
  const base = {role: set.role, ...(set.shard === undefined ? {} : {shard: set.shard}), ...(set.setName === undefined ? {} : {setName: set.setName})}
  if (primary) {
    // Named by the others while its own hello failed, and the deadline is spent (a primary that stalls or is down):
    // its own failure is why it is not read, said as it is, rather than that no time was left to read it.
    const own = failed.get(primary.host)
    if (own && deadline?.signal.aborted) return {...base, host: primary.host, readAt: null, view: null, error: own, lockInfo: 'not read'}
    return {...base, host: primary.host, address: connectAddress(primary)}
  }
  const who = set.shard === undefined ? 'the config server' : `shard ${set.shard}`
  const why = failures.length > 0 ? failures.join('; ') : 'every member answered, none is primary (an election?)'
  return {
    ...base,
    host: set.members[0]?.host ?? '?',
    readAt: null,
    view: null,
    error: {code: failures.length === set.members.length ? 'UNREACHABLE' : 'NO_PRIMARY', message: `no primary of ${who} found among ${set.members.map((m) => m.host).join(', ')}: ${why}`},
    lockInfo: 'not read',
  }
}

/**
 * The nodes to read on this topology (a sharded cluster's primaries found now); entries for sets whose primary could not be
 * found. Each hello is bounded by `deadline` when one is given, else by a --timeout-ms of its own.
 */
export async function nodesToRead(target: Target, readers: NodeReaders, topology: ClusterTopology, signal?: AbortSignal, deadline?: ReadDeadline): Promise<Array<NodeToRead | NodeLocksEntry>> {
  if (topology.kind === 'sharded') return Promise.all(setsOf(topology).map((set) => primaryOf(target, readers, set, signal, deadline)))
  return plainNodes(topology)
}

/** A replica-set member's state at the read (serverStatus.repl); a standalone has no `repl`. */
function roleAtRead(expected: NodeLocksRole, status: Document): NodeLocksRole {
  if (expected !== 'primary' && expected !== 'secondary') return expected
  const repl = status.repl as Document | undefined
  if (!repl || typeof repl !== 'object') return expected
  if (repl.isWritablePrimary === true || repl.ismaster === true) return 'primary'
  if (repl.secondary === true) return 'secondary'
  return 'other'
}

/**
 * One node's read: `$currentOp`, serverStatus and lockInfo at once, bounded by `deadline` (what is left of a
 * poll's, when finding the node's primary spent part of it), else by a --timeout-ms of its own. `previous`
 * (the last sample of the same node) gives wait rates over the interval. Never throws for the node's
 * sake: a failure is the entry's `error`, a deadline that ran out one naming it (Ctrl-C still ends it).
 */
export async function readNode(
  target: Target,
  readers: NodeReaders,
  node: NodeToRead,
  options: {signal?: AbortSignal; previous?: NodeSample; filter?: NamespaceFilter; deadline?: ReadDeadline} = {},
): Promise<{entry: NodeLocksEntry; sample?: NodeSample}> {
  const base = {host: node.host, role: node.role, ...(node.shard === undefined ? {} : {shard: node.shard}), ...(node.setName === undefined ? {} : {setName: node.setName})}
  const deadline = options.deadline
  // A primary found by hello shared the deadline with that search: the message says so (the read had what was left).
  const shared = deadline !== undefined && (node.role === 'shard primary' || node.role === 'config primary') ? ", one bound for finding its set's primary and reading it" : ''
  if (deadline?.signal.aborted) {
    options.signal?.throwIfAborted()
    // Finding the primary took the whole bound: the node is not asked at all, and its locks are unknown for this read.
    const error = {code: 'UNREACHABLE', message: `${node.host} not read: no time left within ${deadline.timeoutMs} ms (--timeout-ms${shared})`}
    return {entry: {...base, readAt: null, view: null, error, lockInfo: 'not read'}}
  }
  try {
    const {ops, status, lockInfo} = await bounded(target, options.signal, node.host, deadline, async (signal) => {
      const reader = await readers.reader(node.address)
      // Every read settles before a failure ends the node's read: the failure drops the reader (below), which would
      // cut the others short with the driver's "session that has ended" instead of the server's answer (a snapshot
      // records each read as it ended: an Unauthorized lockInfo must stay one).
      const [ops, status, lockInfo] = await Promise.allSettled([
        reader.currentOp({allUsers: true, idleConnections: false}, {signal}),
        reader.serverStatus(NODE_SECTIONS, {signal}),
        // Refused or unknown: the chain is inferred from $currentOp; why is said, the node is still read.
        reader.lockInfo({signal}).then(
          (reading) => ({value: reading.value as unknown}),
          (error: unknown) => ({refused: errorOf(error, node.host, target).message}),
        ),
      ])
      if (ops.status === 'rejected') throw ops.reason
      if (status.status === 'rejected') throw status.reason
      if (lockInfo.status === 'rejected') throw lockInfo.reason
      return {ops: ops.value, status: status.value, lockInfo: lockInfo.value}
    }, shared)
    const at = status.serverTime ?? status.receivedAt
    const previous = options.previous
    const intervalMS = previous ? at.getTime() - previous.atMS : 0
    const fullView = nodeLocksView({
      node: node.host,
      currentOp: ops.value,
      ...('value' in lockInfo ? {lockInfo: lockInfo.value} : {}),
      serverStatus: status.value,
      // Rates need time between the two reads: a clock that did not move (or went back) gives none.
      ...(previous && intervalMS > 0 ? {previous: {serverStatus: previous.serverStatus, intervalMS}} : {}),
    })
    // --db/--ns: the blocking that touches the namespace (chains whole); waits and tickets stay per process.
    const view = options.filter ? {...fullView, blocking: filterBlocking(fullView.blocking, options.filter)} : fullView
    const version = typeof status.value.version === 'string' ? {version: status.value.version} : {}
    const entry: NodeLocksEntry = {...base, role: roleAtRead(node.role, status.value), readAt: at.toISOString(), ...version, view, lockInfo: 'value' in lockInfo ? 'read' : `refused: ${lockInfo.refused}`}
    return {entry, sample: {serverStatus: status.value, atMS: at.getTime()}}
  } catch (error) {
    options.signal?.throwIfAborted()
    readers.drop(node.address)
    return {entry: {...base, readAt: null, view: null, error: errorOf(error, node.host, target), lockInfo: 'not read'}}
  }
}

/**
 * Every node of the topology, read at once, within one deadline (`deadline`, else --timeout-ms from now): on a
 * sharded cluster each set's primary is read as soon as it is found, with what is left of the deadline, so one
 * set whose members stall spends no other set's time. The previous samples (by host) give rates.
 */
export async function readNodes(
  target: Target,
  readers: NodeReaders,
  topology: ClusterTopology,
  options: {signal?: AbortSignal; previous?: ReadonlyMap<string, NodeSample>; filter?: NamespaceFilter; deadline?: ReadDeadline} = {},
): Promise<{nodes: NodeLocksEntry[]; samples: Map<string, NodeSample>}> {
  const deadline = options.deadline ?? readDeadline(target.connection.timeoutMs)
  const read = (node: NodeToRead | NodeLocksEntry): Promise<{entry: NodeLocksEntry; sample?: NodeSample}> => {
    if ('view' in node) return Promise.resolve({entry: node})
    const previous = options.previous?.get(node.host)
    return readNode(target, readers, node, {...(options.signal ? {signal: options.signal} : {}), ...(previous ? {previous} : {}), ...(options.filter ? {filter: options.filter} : {}), deadline})
  }
  const reads =
    topology.kind === 'sharded'
      ? setsOf(topology).map(async (set) => read(await primaryOf(target, readers, set, options.signal, deadline)))
      : plainNodes(topology).map(read)
  const done = await Promise.all(reads)
  const samples = new Map<string, NodeSample>()
  for (const r of done) if (r.sample) samples.set(r.entry.host, r.sample)
  return {nodes: done.map((r) => r.entry), samples}
}

/**
 * The root blockers of the whole deployment, worst first: most operations blocked, then the longest
 * running. The first is what `locks list` names first, with how a DBA would end it on that node (killOp,
 * dropIndexes for an index build: a hint, pooltool never kills).
 */
export function rootBlockers(nodes: readonly NodeLocksEntry[]): RootBlocker[] {
  const out: RootBlocker[] = []
  for (const node of nodes) {
    for (const chain of node.view?.blocking.chains ?? []) {
      const op = chain.root.operation
      out.push({host: node.host, role: node.role, opid: op.opid, waiterCount: chain.waiterCount, runningMicros: op.runningMicros, killOpHint: chain.killOpHint, stopHint: chain.stopHint})
    }
  }
  return out.sort((a, b) => b.waiterCount - a.waiterCount || (b.runningMicros ?? -1) - (a.runningMicros ?? -1))
}

/** A note when some node could not be read (its locks are unknown): how many were; nothing when all were. */
export function nodesNotes(nodes: readonly NodeLocksEntry[], filter: NamespaceFilter = {}): string[] {
  const read = nodes.filter((n) => n.view !== null).length
  const filtered = namespaceFilterNote(filter)
  return [
    ...(read === nodes.length ? [] : [`node locks: ${read} of ${nodes.length} node(s) read, ${nodes.length - read} unknown (each listed with its error)`]),
    ...(filtered === undefined || nodes.length === 0 ? [] : [filtered]),
  ]
}

/** One node's state at a poll in a few fields (a watch's --ndjson `nodes` line): the full views stay in `locks list`. */
export function nodeStatusOf(n: NodeLocksEntry): {host: string; role: NodeLocksEntry['role']; readAt: string | null; lockInfo: NodeLocksEntry['lockInfo']; waiting: number | null; rootBlockers: Array<number | string>; error?: NodeLocksEntry['error']} {
  const blocking = n.view?.blocking
  const waiting = blocking ? blocking.operations.filter((op) => op.waitingForLock).length : null
  return {
    host: n.host,
    role: n.role,
    readAt: n.readAt,
    lockInfo: n.lockInfo,
    // Unknown (null) for a node not read: never 0.
    waiting,
    rootBlockers: (blocking?.chains ?? []).map((c) => c.root.operation.opid),
    ...(n.error ? {error: n.error} : {}),
  }
}
