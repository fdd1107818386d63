/**
 * `pooltool locks list` and `locks pings`: one snapshot of the lock state, joined and judged; every read bounded by --timeout-ms.
 *
 * list works on every topology: it discovers the deployment once (the one discovery), reads the node
 * locks on every data-bearing node of a standalone or replica set, or on every shard and config primary
 * of a sharded cluster (src/locks/nodes.ts), and on a sharded cluster the distributed locks beside them
 * as before — through the mongos or config-server entry, or, entered through a shard member, on the
 * config server's primary discovery found. pings reads config.lockpings, which exists on a sharded
 * cluster's config server only.
 */
import {toPoolToolError} from '../mongo/errors.js'
import {discoverCluster} from '../probes/discovery.js'
import type {ClusterTopology} from '../probes/topology.js'
import {targetSummary} from '../result.js'
import type {Target} from '../target.js'
import {NodeReaders, nodesNotes, nodesToRead, readNode, rootBlockers} from './nodes.js'
import type {NodeToRead} from './nodes.js'
import {filterLocks, toLockRows, toPingRows, type JoinInput, type LockFilter} from './parse.js'
import {embeddedInMemoryHint, openLocksSession, readConfigSnapshot, readInMemoryView, sessionNotes, withinTimeout, type LocksSession} from './read.js'
import type {DistributedLocksState, LocksListResult, LocksPingsResult, LocksTopology, NodeLocksEntry} from './types.js'
import type {NamespaceFilter} from './node/namespace-filter.js'

export interface LocksListConfig {
  filter?: LockFilter
  /** --lock-expiry: overrides the 15 min behind `stale`. */
  expiryMS?: number
}

export interface LocksPingsConfig {
  expiryMS?: number
}

/** The appName suffix of the locks commands' own connections (`pooltool-locks`): they show as ours in $currentOp. */
export const LOCKS_PURPOSE = 'locks'

async function withSession<T>(target: Target, expiryMS: number | undefined, work: (s: LocksSession) => Promise<T>): Promise<T> {
  const session = await openLocksSession(target, {expiryMS})
  try {
    return await work(session)
  } finally {
    await session.close()
  }
}

async function snapshotInput(session: LocksSession): Promise<JoinInput & {now: Date}> {
  const snapshot = await withinTimeout(session.target, (bounds) => readConfigSnapshot(session.reader, bounds))
  return {...snapshot, nowMs: snapshot.now.getTime(), timing: session.timing}
}

/** What list and pings both say first: where, which server, which lock model, and the server's now. */
function snapshotHeader(session: LocksSession, now: Date) {
  return {
    target: targetSummary(session.target),
    entry: session.entry,
    ...(session.clockSkewMS === undefined ? {} : {clockSkewMS: session.clockSkewMS}),
    serverVersion: session.serverVersion,
    model: session.model,
    message: session.message,
    now: now.toISOString(),
  }
}

/** The distributed-lock half of list on a sharded cluster: today's result, without the node fields. */
async function listDistributed(session: LocksSession, config: LocksListConfig, topology: ClusterTopology) {
  const input = await snapshotInput(session)
  const notes = [...sessionNotes(session, config.expiryMS !== undefined), ...embeddedInMemoryHint(session, 'locks list')]
  let inMemory: LocksListResult['inMemory']
  if (session.model === 'in-memory') {
    const read = await withinTimeout(session.target, (bounds) => readInMemoryView(session, bounds, topology))
    inMemory = read.view
    notes.push(...read.notes)
  }
  return {
    ...snapshotHeader(session, input.now),
    expiryMS: session.timing.expiryMS,
    locks: filterLocks(toLockRows(input), config.filter ?? {}),
    pings: toPingRows(input).map(({process, ping, ageMS, alive, holds, role, host}) => ({process, ping, ageMS, alive, holds, role, host})),
    ...(inMemory ? {inMemory} : {}),
    notes,
  }
}

/** Why a standalone or replica set has no distributed locks (`distributedLocks`, and the text's header). */
function notApplicable(topology: ClusterTopology): DistributedLocksState {
  const what = topology.kind === 'standalone' ? 'a standalone' : `replica set '${topology.setName ?? '?'}'`
  return `not applicable: ${what} takes no distributed locks (they live on a sharded cluster's config server)`
}

/**
 * A shard member whose config server discovery could not read keeps the replica set it is in: its node
 * locks are read, its cluster's distributed locks are unknown (said, never "none").
 */
const SHARD_WITHOUT_CONFIG = /part of a sharded cluster whose config server could not be read from here/

async function listNodes(target: Target, readers: NodeReaders, topology: ClusterTopology, toRead: ReadonlyArray<NodeToRead | NodeLocksEntry>, filter: NamespaceFilter): Promise<NodeLocksEntry[]> {
  return Promise.all(toRead.map(async (node) => ('view' in node ? node : (await readNode(target, readers, node, {filter})).entry)))
}

async function listLocks(target: Target, config: LocksListConfig): Promise<LocksListResult> {
  const topology = await withinTimeout(target, (bounds) => discoverCluster(target, {purpose: LOCKS_PURPOSE, ...bounds}))
  const readers = new NodeReaders(target, LOCKS_PURPOSE)
  try {
    const toRead = await nodesToRead(target, readers, topology)
    const discoveryNotes = topology.warnings.map((warning) => `discovery: ${warning}`)
    const kind: LocksTopology = topology.kind
    if (kind !== 'sharded') {
      const nodes = await listNodes(target, readers, topology, toRead, config.filter ?? {})
      const entry = nodes[0]
      const shardWithoutConfig = topology.warnings.some((w) => SHARD_WITHOUT_CONFIG.test(w))
      const distributedLocks: DistributedLocksState = shardWithoutConfig ? 'unknown: this shard member\'s config server could not be read from here (see the notes)' : notApplicable(topology)
      const where = kind === 'standalone' ? 'standalone' : `replica set '${topology.setName ?? '?'}'`
      // distributedLocks says the same for a script: "not applicable: …" or "unknown: …".
      return {
        target: targetSummary(target),
        topology: kind,
        distributedLocks,
        // The entry node's version (listed first by discovery), else any node's that answered.
        serverVersion: entry?.version ?? nodes.find((n) => n.version !== undefined)?.version ?? 'unknown',
        message: shardWithoutConfig
          ? `${where}: node locks on ${nodes.length} node(s); the sharded cluster's distributed locks are unknown (its config server could not be read from here)`
          : `${where}: node locks on ${nodes.length} data-bearing node(s); no distributed locks here (only a sharded cluster's config server keeps them)`,
        now: nodes.find((n) => n.readAt !== null)?.readAt ?? new Date().toISOString(),
        nodes,
        rootBlockers: rootBlockers(nodes),
        notes: [...nodesNotes(nodes, config.filter ?? {}), ...discoveryNotes],
        interrupted: false,
      }
    }
    // A sharded cluster: the distributed locks through the entry (a mongos, a config-server member) or, entered through a
    // shard member, on the config server's primary; the node locks at the same time.
    const viaShard = topology.entry?.role === 'shard'
    const configPrimary = toRead.find((n): n is NodeToRead => !('view' in n) && n.role === 'config primary')
    if (viaShard && !configPrimary) {
      const nodes = await listNodes(target, readers, topology, toRead, config.filter ?? {})
      return shardedWithoutDistributed(target, topology, nodes, 'unknown: no primary of the config server could be read from this shard member (see nodes)', discoveryNotes, config.filter ?? {})
    }
    let session: LocksSession
    try {
      session = await openLocksSession(target, {expiryMS: config.expiryMS, ...(viaShard ? {address: configPrimary!.address} : {})})
    } catch (error) {
      // Entered through a mongos or config member, the session is the entry: its failure is the command's, as before.
      if (!viaShard) throw error
      const nodes = await listNodes(target, readers, topology, toRead, config.filter ?? {})
      const failure = toPoolToolError(error, {target: configPrimary!.host, secrets: target.secrets})
      return shardedWithoutDistributed(target, topology, nodes, `unknown: the config server's primary ${configPrimary!.host} could not be read: ${failure.message}`, discoveryNotes, config.filter ?? {})
    }
    try {
      const [distributed, nodes] = await Promise.all([listDistributed(session, config, topology), listNodes(target, readers, topology, toRead, config.filter ?? {})])
      const via = viaShard ? [`the URI reached shard member ${topology.entry!.host}: the distributed locks were read on its config server's primary ${configPrimary!.host}`] : []
      // The in-memory view's notes already carry discovery's warnings (it reads the same topology).
      const discovery = distributed.inMemory ? [] : discoveryNotes
      return {
        ...distributed,
        topology: 'sharded',
        distributedLocks: 'read',
        nodes,
        rootBlockers: rootBlockers(nodes),
        notes: [...via, ...distributed.notes, ...nodesNotes(nodes, config.filter ?? {}), ...discovery],
        interrupted: false,
      }
    } finally {
      await session.close()
    }
  } finally {
    await readers.close()
  }
}

function shardedWithoutDistributed(target: Target, topology: ClusterTopology, nodes: NodeLocksEntry[], distributedLocks: DistributedLocksState, notes: string[], filter: NamespaceFilter): LocksListResult {
  return {
    target: targetSummary(target),
    topology: 'sharded',
    distributedLocks,
    serverVersion: nodes.find((n) => n.version !== undefined)?.version ?? 'unknown',
    message: `sharded cluster: node locks on ${nodes.length} shard and config primaries; distributed locks ${distributedLocks}`,
    now: nodes.find((n) => n.readAt !== null)?.readAt ?? new Date().toISOString(),
    nodes,
    rootBlockers: rootBlockers(nodes),
    notes: [...nodesNotes(nodes, filter), ...notes],
    interrupted: false,
  }
}

export function runLocksList(target: Target, config: LocksListConfig = {}): Promise<LocksListResult> {
  return listLocks(target, config)
}

export function runLocksPings(target: Target, config: LocksPingsConfig = {}): Promise<LocksPingsResult> {
  return withSession(target, config.expiryMS, async (session) => {
    const input = await snapshotInput(session)
    return {
      ...snapshotHeader(session, input.now),
      pingIntervalMS: session.timing.pingIntervalMS,
      pings: toPingRows(input),
      notes: [...sessionNotes(session, config.expiryMS !== undefined), ...embeddedInMemoryHint(session, 'locks pings')],
      interrupted: false,
    }
  })
}
