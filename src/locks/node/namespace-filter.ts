/**
 * `locks list/watch --db/--ns` on node locks: the blocking that touches the
 * namespace asked for. A chain is kept whole when any operation in it (a
 * waiter, or its blocker) works on that namespace: the root blocker of a
 * waiter on `app.orders` is often an operation with no namespace of its own
 * (the fsync lock's worker, a global or database lock holder), and dropping
 * it would hide the very thing the DBA is looking for. Waiters with no
 * visible blocker are kept when they work on it. serverStatus.locks waits and
 * the tickets are counted per process, not per namespace: they stay whole
 * (the caller says so).
 */
import type {BlockingAnalysis, BlockingTreeNode, NodeOperation} from './types.js'

export interface NamespaceFilter {
  /** A database: its namespaces, and the database itself. */
  db?: string
  /** One namespace (db.collection). */
  ns?: string
}

export function operationMatches(op: NodeOperation, filter: NamespaceFilter): boolean {
  if (op.ns === null) return false
  if (filter.ns !== undefined && op.ns !== filter.ns) return false
  if (filter.db !== undefined && op.ns !== filter.db && !op.ns.startsWith(`${filter.db}.`)) return false
  return true
}

function treeOps(node: BlockingTreeNode, into: NodeOperation[] = []): NodeOperation[] {
  into.push(node.operation)
  for (const child of node.children) treeOps(child, into)
  return into
}

/** The analysis restricted to what touches `filter`'s namespace; the analysis itself when no filter is given. */
export function filterBlocking(analysis: BlockingAnalysis, filter: NamespaceFilter): BlockingAnalysis {
  if (filter.db === undefined && filter.ns === undefined) return analysis
  const chains = analysis.chains.filter((chain) => treeOps(chain.root).some((op) => operationMatches(op, filter)))
  const unexplainedWaiters = analysis.unexplainedWaiters.filter((waiter) => operationMatches(waiter.operation, filter))
  const kept = new Set<number | string>([...chains.flatMap((chain) => treeOps(chain.root)), ...unexplainedWaiters.map((w) => w.operation)].map((op) => op.opid))
  for (const op of analysis.operations) if (operationMatches(op, filter)) kept.add(op.opid)
  return {
    ...analysis,
    operations: analysis.operations.filter((op) => kept.has(op.opid)),
    edges: analysis.edges.filter((edge) => kept.has(edge.waiter) && kept.has(edge.blocker)),
    chains,
    unexplainedWaiters,
    // A Global hold stops every namespace's operations, the filtered one's too.
    holdsThatBlock: analysis.holdsThatBlock.filter((hold) => hold.resource.type === 'Global' || operationMatches(hold.operation, filter)),
  }
}

/** Said once where a filter narrowed the node locks. */
export function namespaceFilterNote(filter: NamespaceFilter): string | undefined {
  const what = filter.ns !== undefined ? `namespace ${filter.ns}` : filter.db !== undefined ? `database ${filter.db}` : undefined
  if (what === undefined) return undefined
  return `node locks: only blocking that touches ${what} (a chain is kept whole, its root blocker included, when any operation in it works there); lock waits and tickets are counted per process and are shown whole`
}
