/**
 * Who blocks whom on a node, from `$currentOp` operations and, when it could be run, `lockInfo` (pure).
 *
 * The inference from $currentOp (its lock fields: waitingForLock, locks, lockStats), stated so it can be checked:
 * 1. Resource identity. `locks` names a resource TYPE, not which one. A Database lock is taken to be
 *    the op's `ns` database, a Collection (DDLCollection) lock its `ns`, a DDLDatabase lock its
 *    database; Global and every other type is one resource per node. An op whose `ns` cannot name a
 *    Database/Collection resource is never matched on it (no edge is guessed).
 * 2. What a waiter waits on. `waitingForLock: true` says a request is pending, not which one; the
 *    server takes locks top-down (RSTL / PBWM / FCV → Global → Database → Collection → Metadata /
 *    Mutex / oplog; DDL locks before all of them, MMAPV1Journal right after Global on 3.x), so the
 *    pending request is the deepest resource in its `locks`. A type we cannot place (one this code
 *    does not know) is taken only when the op names no type we know.
 * 3. Who blocks it. Ops on the same node holding the same resource in a conflicting mode (the
 *    manual's compatibility table, modes.ts); and, because the lock manager grants in FIFO order
 *    (lockInfo's `compatibleFirst` aside: manual, lockInfo "Lock Information"), ops whose own
 *    conflicting request on that resource is queued ahead: waiting longer, i.e. a larger
 *    `microsecs_running`. Those edges are "queued ahead": the classic index build, where a long read
 *    holds IS, the build waits for X, and every new read queues behind the build's X request.
 * 4. Roots. An op that blocks others and does not wait itself, or whose own wait has no visible
 *    blocker. How to end it (stopAdvice: killOp, or dropIndexes for an index build) is a hint for the DBA; pooltool never kills.
 *
 * With lockInfo, its granted and pending lists per resource decide the edges: an edge $currentOp also
 * suggested is "confirmed by lockInfo"; one only $currentOp suggested is left out and counted.
 */
import {conflicts, modeName} from './modes.js'
import {sessionIdOf} from './operations.js'
import type {
  BlockingAnalysis,
  BlockingChain,
  BlockingEdge,
  BlockingTreeNode,
  HoldThatBlocks,
  LockInfoRequest,
  LockInfoSnapshot,
  LockResource,
  NodeOperation,
  StopAdvice,
  UnexplainedWaiter,
} from './types.js'

/** The server's acquisition order, outermost first (see point 2 above). */
export const LOCK_ACQUISITION_ORDER: readonly string[] = [
  'DDLDatabase',
  'DDLCollection',
  'ReplicationStateTransition',
  'ParallelBatchWriterMode',
  'FeatureCompatibilityVersion',
  'Global',
  'MMAPV1Journal',
  'Database',
  'Collection',
  'Metadata',
  'Mutex',
  'oplog',
]

/** Types whose identity comes from the op's namespace; every other type is a singleton per node. */
const NAMED_BY_DATABASE = new Set(['Database', 'DDLDatabase'])
const NAMED_BY_NAMESPACE = new Set(['Collection', 'DDLCollection'])

const databaseOf = (ns: string | null): string | null => {
  if (!ns) return null
  const dot = ns.indexOf('.')
  const db = dot >= 0 ? ns.slice(0, dot) : ns
  return db === '' ? null : db
}
const namespaceOf = (ns: string | null): string | null => (ns && ns.includes('.') && !ns.endsWith('.$cmd') ? ns : null)

/**
 * The namespace an op works on: its `ns`, else, for an index build whose `ns` is empty (a 4.2 secondary's
 * IndexBuildsCoordinatorMongod), the collection its command names.
 */
function opNamespace(op: NodeOperation): string | null {
  if (op.ns) return op.ns
  const build = op.indexBuild
  return build?.db && build.collection ? `${build.db}.${build.collection}` : op.ns
}

/** The resource an op's lock of `type` is on (identity inferred: point 1). */
export function resourceOf(op: NodeOperation, type: string): LockResource {
  if (NAMED_BY_DATABASE.has(type)) return {node: op.node, type, name: databaseOf(opNamespace(op))}
  if (NAMED_BY_NAMESPACE.has(type)) return {node: op.node, type, name: namespaceOf(opNamespace(op))}
  return {node: op.node, type, name: null}
}

/** Whether a resource's identity is known: a singleton, or a named one with its name. */
const identified = (r: LockResource): boolean => !(NAMED_BY_DATABASE.has(r.type) || NAMED_BY_NAMESPACE.has(r.type)) || r.name !== null
const sameResource = (a: LockResource, b: LockResource): boolean => a.node === b.node && a.type === b.type && a.name === b.name && identified(a)

/** The lock type a waiting op waits on (point 2); null when it does not wait or names no lock. */
export function waitedLockType(op: NodeOperation): string | null {
  if (!op.waitingForLock) return null
  const types = Object.keys(op.locks)
  if (types.length === 0) return null
  const known = types.filter((t) => LOCK_ACQUISITION_ORDER.includes(t))
  if (known.length === 0) return types[types.length - 1]!
  return known.reduce((deepest, t) => (LOCK_ACQUISITION_ORDER.indexOf(t) > LOCK_ACQUISITION_ORDER.indexOf(deepest) ? t : deepest))
}

/** Two documents name one operation. '' names none (a document with neither opid nor session id): never the same as another. */
const sameOpid = (a: number | string | null, b: number | string | null): boolean => a !== null && b !== null && a !== '' && String(a) === String(b)
const edgeKey = (e: Pick<BlockingEdge, 'waiter' | 'blocker'>): string => `${String(e.waiter)}\u0000${String(e.blocker)}`

/** Edges from $currentOp alone (points 1–3). */
export function inferEdges(operations: readonly NodeOperation[]): BlockingEdge[] {
  const edges: BlockingEdge[] = []
  for (const waiter of operations) {
    const type = waitedLockType(waiter)
    if (type === null) continue
    const mode = modeName(waiter.locks[type])
    const resource = resourceOf(waiter, type)
    if (mode === null || !identified(resource)) continue
    for (const other of operations) {
      if (other === waiter || sameOpid(other.opid, waiter.opid) || other.locks[type] === undefined) continue
      if (!sameResource(resourceOf(other, type), resource)) continue
      const otherMode = modeName(other.locks[type])
      if (otherMode === null || !conflicts(otherMode, mode)) continue
      const otherQueuedHere = waitedLockType(other) === type
      if (!otherQueuedHere) {
        edges.push({waiter: waiter.opid, blocker: other.opid, resource, waiterMode: mode, blockerMode: otherMode, kind: 'holds', evidence: 'inferred-from-currentOp'})
      } else if ((other.runningMicros ?? -1) > (waiter.runningMicros ?? -1)) {
        edges.push({waiter: waiter.opid, blocker: other.opid, resource, waiterMode: mode, blockerMode: otherMode, kind: 'queued-ahead', evidence: 'inferred-from-currentOp'})
      }
    }
  }
  return edges
}

/** Edges lockInfo shows: each pending request against the conflicting granted ones and the conflicting requests queued before it. */
export function lockInfoEdges(snapshot: LockInfoSnapshot): BlockingEdge[] {
  const edges: BlockingEdge[] = []
  for (const r of snapshot.resources) {
    const resource: LockResource = {node: snapshot.node, type: r.type, name: r.name}
    r.pending.forEach((waiting, index) => {
      if (waiting.mode === null || waiting.opid === null) return
      const add = (other: LockInfoRequest, kind: BlockingEdge['kind']) => {
        if (other.mode === null || other.opid === null || sameOpid(other.opid, waiting.opid) || !conflicts(other.mode, waiting.mode)) return
        edges.push({waiter: waiting.opid!, blocker: other.opid, resource, waiterMode: waiting.mode!, blockerMode: other.mode, kind, evidence: 'lockInfo'})
      }
      for (const granted of r.granted) add(granted, 'holds')
      for (const ahead of r.pending.slice(0, index)) add(ahead, 'queued-ahead')
    })
  }
  return edges
}

/**
 * An idle transaction's locks are granted to a locker no client holds, and lockInfo names a request's holder only
 * through the client whose operation holds the locker (the server's lockInfo builds its lockToClientMap from the
 * clients' operations): it lists them with no clientInfo, no opid. A $currentOp edge from such a session is kept
 * where lockInfo shows, on one resource, the waiter's pending request and a granted request with no opid in a mode
 * that conflicts with it: lockInfo agrees that something holds it, it cannot say whose.
 */
function heldByIdleSession(edge: BlockingEdge, snapshots: readonly LockInfoSnapshot[]): boolean {
  if (sessionIdOf(edge.blocker) === null) return false
  const sameName = (name: string | null) => name === null || edge.resource.name === null || name === edge.resource.name
  return snapshots.some(
    (snapshot) =>
      snapshot.node === edge.resource.node &&
      snapshot.resources.some(
        (r) =>
          r.type === edge.resource.type &&
          sameName(r.name) &&
          r.pending.some((request) => sameOpid(request.opid, edge.waiter)) &&
          r.granted.some((request) => request.opid === null && request.mode !== null && conflicts(request.mode, edge.waiterMode)),
      ),
  )
}

/** A lockInfo edge's resource with the name $currentOp gives it, when lockInfo's resourceId is a hash. */
function nameFromOperations(edge: BlockingEdge, operations: readonly NodeOperation[]): LockResource {
  if (identified(edge.resource)) return edge.resource
  for (const opid of [edge.waiter, edge.blocker]) {
    const op = operations.find((o) => sameOpid(o.opid, opid) && o.node === edge.resource.node)
    const name = op ? resourceOf(op, edge.resource.type).name : null
    if (name !== null) return {...edge.resource, name}
  }
  return edge.resource
}

/** An op lockInfo names that $currentOp did not list (a race between the two reads): what lockInfo says of it. */
function operationFromLockInfo(request: LockInfoRequest, node: string | null): NodeOperation {
  return {
    node, opid: request.opid ?? '', desc: request.desc, connectionId: request.connectionId, client: request.client, appName: null, driver: null,
    op: null, ns: null, commandName: null, runningMicros: null, waitingForLock: false, locks: {}, lockStats: {}, msg: null, progress: null, shard: null,
  }
}

/** `db.killOp(<opid>)`, a router's `shard:opid` quoted. A hint only. */
export function killOpHint(opid: number | string): string {
  return `db.killOp(${typeof opid === 'number' ? opid : JSON.stringify(opid)})`
}

/** A client connection's thread ("conn123"); every other desc names a thread of the server's own. */
const CLIENT_THREAD = /^conn\d+$/
/** $currentOp's desc of an idle session holding a transaction's locks (idleSessions, 4.0+: "string is always the same", DOCS-11564). */
const INACTIVE_TRANSACTION = 'inactive transaction'
/** The thread that runs index builds (4.2 secondaries; every member from 4.4): IndexBuildsCoordinatorMongod-0 … */
const INDEX_BUILDER_THREAD = /^IndexBuildsCoordinator/

/**
 * The command that aborts an index build (4.4+: dropIndexes on the primary, naming every index the build builds),
 * its namespace JSON-quoted so a hostile name stays one string. The index names are left for the DBA to fill in
 * from the build's own $currentOp (pooltool keeps no command values), never "*", which drops every index.
 */
function dropIndexesCommand(op: NodeOperation): string {
  const ns = opNamespace(op)
  const dot = ns?.indexOf('.') ?? -1
  const db = op.indexBuild?.db ?? (dot > 0 ? ns!.slice(0, dot) : null)
  const collection = op.indexBuild?.collection ?? (dot > 0 ? ns!.slice(dot + 1) : null)
  const quoted = (value: string | null, unknown: string) => (value === null || value === '' ? unknown : JSON.stringify(value))
  return `db.getSiblingDB(${quoted(db, '<db>')}).runCommand({dropIndexes: ${quoted(collection, '<collection>')}, index: [<names in its command.indexes>]})`
}

/**
 * How a DBA would end this root blocker, by what it is. The manual's killOp: "Only use killOp to terminate
 * operations initiated by clients and do not terminate internal database operations", and "Do not use killOp to
 * terminate an in-progress index build in replica sets or sharded clusters. Use dropIndexes on the primary"
 * (4.4+; on 4.2 a build ran on the client's connection on the primary, where killOp stopped it, and could not be
 * stopped on a secondary). An fsyncLock is ended by fsyncUnlock, an idle transaction by killSessions.
 */
export function stopAdvice(op: NodeOperation): StopAdvice {
  const kill = killOpHint(op.opid)
  const desc = op.desc ?? ''
  if (INDEX_BUILDER_THREAD.test(desc)) {
    return {killOpHint: null, stopHint: `an index build: abort it on the primary (4.4+) with ${dropIndexesCommand(op)}, not killOp (manual: killOp)`}
  }
  if (op.commandName === 'createIndexes' && CLIENT_THREAD.test(desc)) {
    return {killOpHint: kill, stopHint: `an index build: ${kill} stops it up to 4.2; from 4.4 abort it on the primary with ${dropIndexesCommand(op)}`}
  }
  if (desc === 'fsyncLockWorker') return {killOpHint: null, stopHint: 'db.fsyncUnlock() on this node ends the fsync lock (db.fsyncLock() took it)'}
  if (desc === INACTIVE_TRANSACTION) {
    // No opid to kill: an idle session's transaction keeps its locks between statements until it commits, aborts,
    // or runs past transactionLifetimeLimitSeconds; killSessions on its lsid ends it now.
    const sessionId = sessionIdOf(op.opid)
    const session = sessionId === null ? '<lsid.id in its $currentOp>' : `UUID(${JSON.stringify(sessionId)})`
    return {
      killOpHint: null,
      stopHint: `an idle transaction: the server aborts it after transactionLifetimeLimitSeconds (60 s by default); killSessions on its session ends it now: db.adminCommand({killSessions: [{id: ${session}}]})`,
    }
  }
  if (desc !== '' && !CLIENT_THREAD.test(desc) && op.connectionId === null && op.client === null) {
    return {killOpHint: null, stopHint: `an internal operation of the server (${desc}): the manual's killOp is for operations clients started only`}
  }
  return {killOpHint: kill, stopHint: kill}
}

export interface BlockingInput {
  operations: readonly NodeOperation[]
  /** lockInfo snapshots, one per node where the user's role could run it. */
  lockInfo?: readonly LockInfoSnapshot[]
}

/** Who blocks whom: edges, the tree from each root blocker, and waiters whose blocker cannot be seen. */
export function analyseBlocking(input: BlockingInput): BlockingAnalysis {
  const operations = [...input.operations]
  const inferred = inferEdges(operations)
  const snapshots = input.lockInfo ?? []
  let edges = inferred
  let inferredEdgesNotInLockInfo = 0
  if (snapshots.length > 0) {
    const fromLockInfo = snapshots.flatMap(lockInfoEdges)
    const inferredByKey = new Map(inferred.map((e) => [edgeKey(e), e]))
    const lockInfoKeys = new Set(fromLockInfo.map(edgeKey))
    const coveredNodes = new Set(snapshots.map((s) => s.node))
    // Nodes lockInfo did not cover keep their inferred edges.
    const uncovered = inferred.filter((e) => !coveredNodes.has(e.resource.node))
    const notInLockInfo = inferred.filter((e) => coveredNodes.has(e.resource.node) && !lockInfoKeys.has(edgeKey(e)))
    const sessionHeld = notInLockInfo.filter((e) => heldByIdleSession(e, snapshots))
    inferredEdgesNotInLockInfo = notInLockInfo.length - sessionHeld.length
    // One edge per waiter and blocker (lockInfo may show the pair on several resources: keep the first, the outermost).
    const seen = new Set<string>()
    const confirmed = fromLockInfo
      .map((e): BlockingEdge => {
        const twin = inferredByKey.get(edgeKey(e))
        // A release build's lockInfo resourceId names no database or collection ("{…: Collection, <hash>}"): the
        // $currentOp edge it confirms names it (its ns), so a DBA still reads which collection.
        if (twin) {
          const named = e.resource.name === null && twin.resource.type === e.resource.type ? {...e.resource, name: twin.resource.name} : e.resource
          return {...e, resource: named, evidence: 'confirmed-by-lockInfo'}
        }
        // An edge only lockInfo shows (the waiter began waiting between the two reads): its hashed resource is named
        // by the waiter's own ns (what its pending request is on), else the holder's; one resource, never a
        // second, nameless copy of it beside the named one.
        return {...e, resource: nameFromOperations(e, operations)}
      })
      .filter((e) => (seen.has(edgeKey(e)) ? false : (seen.add(edgeKey(e)), true)))
    edges = [...confirmed, ...sessionHeld, ...uncovered]
    for (const snapshot of snapshots) {
      for (const r of snapshot.resources) {
        for (const request of [...r.granted, ...r.pending]) {
          if (request.opid === null || operations.some((op) => sameOpid(op.opid, request.opid))) continue
          if (edges.some((e) => sameOpid(e.waiter, request.opid) || sameOpid(e.blocker, request.opid))) operations.push(operationFromLockInfo(request, snapshot.node))
        }
      }
    }
  }

  const byOpid = new Map(operations.map((op) => [String(op.opid), op]))
  const blockersOf = new Map<string, BlockingEdge[]>()
  for (const e of edges) blockersOf.set(String(e.waiter), [...(blockersOf.get(String(e.waiter)) ?? []), e])
  const running = (opid: number | string) => byOpid.get(String(opid))?.runningMicros ?? -1
  // A waiter is drawn once, under its primary blocker: one that holds the lock before one queued ahead, then the longest running.
  const primaryOf = new Map<string, BlockingEdge>()
  for (const [waiter, list] of blockersOf) {
    const sorted = [...list].sort((a, b) => Number(a.kind !== 'holds') - Number(b.kind !== 'holds') || running(b.blocker) - running(a.blocker))
    primaryOf.set(waiter, sorted[0]!)
  }
  const childrenOf = new Map<string, BlockingEdge[]>()
  for (const e of primaryOf.values()) childrenOf.set(String(e.blocker), [...(childrenOf.get(String(e.blocker)) ?? []), e])

  const placed = new Set<string>()
  const build = (op: NodeOperation, edge: BlockingEdge | undefined): BlockingTreeNode => {
    placed.add(String(op.opid))
    const kids = (childrenOf.get(String(op.opid)) ?? [])
      .filter((e) => !placed.has(String(e.waiter)))
      .sort((a, b) => running(b.waiter) - running(a.waiter))
    const node: BlockingTreeNode = {
      operation: op,
      waitingAtMostMicros: edge ? op.runningMicros : null,
      alsoBlockedBy: (blockersOf.get(String(op.opid)) ?? []).map((e) => e.blocker).filter((b) => edge !== undefined && !sameOpid(b, edge.blocker)),
      children: [],
    }
    if (edge) node.edge = edge
    for (const e of kids) {
      if (placed.has(String(e.waiter))) continue
      const waiter = byOpid.get(String(e.waiter))
      if (waiter) node.children.push(build(waiter, e))
    }
    return node
  }
  const count = (node: BlockingTreeNode): number => node.children.reduce((sum, child) => sum + 1 + count(child), 0)

  const roots = operations.filter((op) => childrenOf.has(String(op.opid)) && !primaryOf.has(String(op.opid)))
  const chains: BlockingChain[] = roots
    .map((op) => build(op, undefined))
    .map((root) => ({root, ...stopAdvice(root.operation), waiterCount: count(root)}))
    .sort((a, b) => b.waiterCount - a.waiterCount || running(b.root.operation.opid) - running(a.root.operation.opid))

  // Waiters with no visible blocker, and those only in a cycle (no root reaches them).
  const unexplainedWaiters: UnexplainedWaiter[] = operations
    .filter((op) => op.waitingForLock && !placed.has(String(op.opid)))
    .map((op) => {
      const type = waitedLockType(op)
      const resource = type === null ? null : resourceOf(op, type)
      const mode = type === null ? null : modeName(op.locks[type])
      const compatibleHolders =
        resource === null || type === null || mode === null
          ? []
          : operations
              .filter((other) => other !== op && other.locks[type] !== undefined && waitedLockType(other) !== type && sameResource(resourceOf(other, type), resource))
              // Compatible only: a holder in a conflicting mode that lockInfo did not confirm is counted in inferredEdgesNotInLockInfo, not called compatible.
              .filter((other) => {
                const held = modeName(other.locks[type])
                return held !== null && !conflicts(held, mode)
              })
              .map((other) => other.opid)
      return {operation: op, resource, mode, compatibleHolders}
    })

  const chainSource = snapshots.length > 0 ? 'lockInfo' : 'currentOp'
  return {
    chainSource,
    chainSourceText: chainSource === 'lockInfo' ? 'confirmed by lockInfo' : 'inferred from $currentOp',
    operations,
    edges,
    chains,
    unexplainedWaiters,
    holdsThatBlock: holdsThatBlock(operations, new Set(chains.map((chain) => String(chain.root.operation.opid)))),
    inferredEdgesNotInLockInfo,
  }
}

/**
 * The levels where a hold in S or X stops what clients do, outermost first. The others (RSTL, PBWM, FCV, Mutex,
 * oplog, Metadata) are the server's own, taken briefly; an op that holds them in S or X is not told as a blocker
 * before anything waits on it.
 */
const CLIENT_VISIBLE_LEVELS = ['Global', 'Database', 'Collection'] as const

/**
 * Operations (not waiting themselves, not already a root with waiters) holding S or X on Global, a Database or a
 * Collection: the outermost such hold of each. By the manual's compatibility table, S admits only IS and S (so
 * every write waits) and X admits nothing.
 */
function holdsThatBlock(operations: readonly NodeOperation[], roots: ReadonlySet<string>): HoldThatBlocks[] {
  const out: HoldThatBlocks[] = []
  for (const op of operations) {
    if (op.waitingForLock || roots.has(String(op.opid))) continue
    for (const type of CLIENT_VISIBLE_LEVELS) {
      const mode = modeName(op.locks[type])
      if (mode !== 'S' && mode !== 'X') continue
      out.push({operation: op, resource: resourceOf(op, type), mode, blocks: mode === 'X' ? 'every operation' : 'writes', ...stopAdvice(op)})
      break
    }
  }
  return out
}

