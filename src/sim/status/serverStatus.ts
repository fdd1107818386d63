/** serverStatus of one simulated process, with the fields that differ by version (connections, locks, globalLock, auth counters). */
import {Long, type Document} from 'bson'
import type {SimProcess} from '../process.js'
import {topologyVersionDoc} from '../commands/hello.js'
import {ddlLockStatsOf, shardingStatusOf} from '../sharding/state.js'
import {exactDouble} from '../storage/numbers.js'
import {globalModeOf, hasFcvLock, hasReadMutex} from './op-locks.js'

export function connectionsSection(proc: SimProcess): Document {
  const p = proc.profile
  let active = 0
  let exhaustIsMaster = 0
  let exhaustHello = 0
  for (const c of proc.connections.values()) {
    if (c.op !== null) active++
    if (c.exhaust === 'hello') exhaustHello++
    else if (c.exhaust === 'isMaster') exhaustIsMaster++
  }
  const current = proc.connections.size
  const doc: Document = {
    current,
    available: Math.max(0, proc.faults.maxIncomingConnections - current),
    totalCreated: proc.counters.totalCreated,
  }
  if (p.connectionsRejected) doc.rejected = proc.counters.rejected
  doc.active = active
  if (p.connectionsThreaded) doc.threaded = current
  if (p.exhaustIsMaster) doc.exhaustIsMaster = exhaustIsMaster
  if (p.exhaustHello) doc.exhaustHello = exhaustHello
  if (p.exhaustIsMaster) doc.awaitingTopologyChanges = proc.awaitingTopologyChanges
  // A Counter64 (int64) in the 5.3+ mongos entry point; the three above are static_cast<int> (int32)
  // in ServiceEntryPointImpl::appendStats (src/mongo/transport/service_entry_point_impl.cpp, 4.4–7.0).
  if (p.connectionsLoadBalanced) doc.loadBalanced = long(0)
  // 8.0.12+ (SERVER-104811): the establishment rate limiter's queue and counters. The limiter is off by
  // default (ingressConnectionEstablishmentRateLimiterEnabled), so nothing is ever queued here.
  if (p.establishmentQueue) {
    doc.queuedForEstablishment = long(0)
    doc.establishmentRateLimit = {rejected: long(0), exempted: long(0), interruptedDueToClientDisconnect: long(0)}
  }
  return doc
}

/**
 * Execution tickets, named where the version reports them (profile.ts `tickets`). The sim never runs out:
 * an operation holding (or waiting for) a global lock holds one ticket, read for IS/S, write for IX/X
 * (the ticket comes with the global lock; one that yielded its locks, like an awaitData getMore, gave
 * it back); none waits for a ticket, so the queue figures stay 0. Totals: 128 each before 7.0 (the
 * manual's default); 7.0+ sizes them dynamically, starting from 128 here as well.
 */
function ticketCounts(proc: SimProcess): {read: number; write: number} {
  let read = 0
  let write = 0
  const count = (op: object) => {
    const mode = globalModeOf(op)
    if (mode === 'r' || mode === 'R') read++
    else if (mode === 'w' || mode === 'W') write++
  }
  // Client operations only: whether a system thread (the fsyncLockWorker) is admitted through a ticket is not modelled.
  for (const c of proc.connections.values()) if (c.op) count(c.op)
  return {read, write}
}

const TOTAL_TICKETS = 128

function ticketPool(out: number): Document {
  return {out, available: Math.max(0, TOTAL_TICKETS - out), totalTickets: TOTAL_TICKETS}
}

/** TicketHolder::_appendCommonQueueImplStats: every figure 0, none waits here. */
function queueFigures(processing: number): Document {
  return {
    addedToQueue: long(0),
    removedFromQueue: long(0),
    queueLength: long(0),
    startedProcessing: long(processing),
    processing: long(processing),
    finishedProcessing: long(0),
    totalTimeProcessingMicros: long(0),
    canceled: long(0),
    newAdmissions: long(0),
    totalTimeQueuedMicros: long(0),
  }
}

/** `wiredTiger` with its ticket part only (up to 7.x; 7.0 with the queue figures beside each pool), or `queues` (8.0: under exempt and normalPriority). */
function ticketSections(proc: SimProcess): {wiredTiger?: Document; queues?: Document} {
  const n = ticketCounts(proc)
  const kind = proc.profile.tickets
  if (kind === 'queues-8.0') {
    const pool = (out: number): Document => ({...ticketPool(out), exempt: queueFigures(0), normalPriority: queueFigures(out)})
    return {queues: {execution: {write: pool(n.write), read: pool(n.read)}}}
  }
  const pool = (out: number): Document => (kind === 'wiredTiger-queues' ? {...ticketPool(out), ...queueFigures(out)} : ticketPool(out))
  return {wiredTiger: {concurrentTransactions: {write: pool(n.write), read: pool(n.read)}}}
}

function long(n: number): Long {
  return Long.fromNumber(n)
}

/**
 * globalLock: `currentQueue` counts the operations waiting for a lock, readers and writers by the mode of
 * their global lock (the sim's own per-collection write queue counts as writers too); `activeClients`
 * the operations running, without those waiting.
 */
function globalLock(proc: SimProcess): Document {
  let readers = 0
  let writers = 0
  for (const c of proc.connections.values()) {
    if (!c.op || c.op.spec.monitoring) continue
    if (c.op.spec.write) writers++
    else readers++
  }
  const queuedWriters = proc.locks.waitingWriters + proc.locks.queued.writers
  const queuedReaders = proc.locks.queued.readers
  const activeReaders = readers - Math.min(readers, queuedReaders)
  const activeWriters = writers - Math.min(writers, queuedWriters)
  return {
    totalTime: long(Number((process.hrtime.bigint() - proc.counters.startedHr) / 1000n)),
    currentQueue: {total: queuedReaders + queuedWriters, readers: queuedReaders, writers: queuedWriters},
    activeClients: {total: activeReaders + activeWriters, readers: activeReaders, writers: activeWriters},
  }
}

function security(proc: SimProcess): Document {
  const mechanisms: Document = {}
  for (const [mech, c] of Object.entries(proc.counters.auth)) {
    mechanisms[mech] = {
      speculativeAuthenticate: {received: long(c.speculativeAuthenticate.received), successful: long(c.speculativeAuthenticate.successful)},
      authenticate: {received: long(c.authenticate.received), successful: long(c.authenticate.successful)},
    }
  }
  mechanisms['MONGODB-X509'] = {
    speculativeAuthenticate: {received: long(0), successful: long(0)},
    authenticate: {received: long(0), successful: long(0)},
  }
  const authentication: Document = {}
  if (proc.profile.saslSupportedMechsReceived) authentication.saslSupportedMechsReceived = long(proc.counters.saslSupportedMechsReceived)
  if (proc.profile.authMechanismCounters) authentication.mechanisms = mechanisms
  return {authentication}
}

export function replSection(proc: SimProcess): Document | undefined {
  const rs = proc.replSet
  if (!rs) return undefined
  const doc: Document = {topologyVersion: topologyVersionDoc(proc), ...proc.replSetHelloLists(), setName: rs.setName, setVersion: rs.setVersion}
  const writable = proc.isPrimaryMember
  if (proc.profile.name === '4.4') doc.ismaster = writable
  else doc.isWritablePrimary = writable
  doc.secondary = proc.isSecondaryMember
  const primary = proc.primaryHost()
  if (primary) doc.primary = primary
  Object.assign(doc, proc.selfMemberFields())
  doc.me = proc.hostPort
  if (writable) doc.electionId = rs.electionId
  doc.rbid = 1
  return doc
}

function metrics(proc: SimProcess): Document {
  const commands: Document = {}
  if (proc.counters.unknownCommands > 0) commands['<UNKNOWN>'] = long(proc.counters.unknownCommands)
  for (const name of [...proc.counters.commands.keys()].sort()) {
    const c = proc.counters.commands.get(name)!
    commands[name] = {failed: long(c.failed), total: long(c.total)}
  }
  return {
    commands,
    cursor: {timedOut: long(0), open: {noTimeout: long(0), pinned: long(0), total: long(proc.cursors.openCount)}},
  }
}

/** Resource types in the order mongod reports them (ResourceType / ResourceGlobalId order, oplog appended last). */
const LOCK_ORDER = [
  'ParallelBatchWriterMode',
  'FeatureCompatibilityVersion',
  'MultiDocumentTransactionsBarrier',
  'ReplicationStateTransition',
  'Global',
  'Database',
  'Collection',
  'Metadata',
  'DDLDatabase',
  'DDLCollection',
  'Mutex',
  'oplog',
]

/**
 * serverStatus.locks: the process's counters, plus what follows from them — the
 * FeatureCompatibilityVersion lock (5.0, 7.0 profiles), taken with every global lock in its intent mode, and 7.0+'s `Mutex` r per
 * read (7.0 profiler and currentOp output show both); on a replica-set primary, `oplog` w once per write
 * (lock_stats.cpp reports the oplog's collection lock under its own name, `oplog`).
 */
function locksSection(proc: SimProcess): Document {
  const doc = proc.locks.toDocument()
  // The process counts PBWM with every global lock (storage/locks.ts); 7.1+ has no such lock.
  if (!proc.profile.pbwmLock) delete doc.ParallelBatchWriterMode
  // 7.1+ (8.0): DDL locks are lock-manager resources. The sim's are exclusive (database and collection
  // alike, so DDL in one database serialises as on 7.0; 8.0 takes the database one in IX for collection DDL).
  const ddl = ddlLockStatsOf(proc)
  if (ddl) {
    for (const [type, s] of [['DDLDatabase', ddl.database], ['DDLCollection', ddl.collection]] as const) {
      if (s.acquireCount === 0) continue
      const entry: Document = {acquireCount: {W: long(s.acquireCount)}}
      if (s.acquireWaitCount > 0) {
        entry.acquireWaitCount = {W: long(s.acquireWaitCount)}
        entry.timeAcquiringMicros = {W: long(s.timeAcquiringMicros)}
      }
      doc[type] = entry
    }
  }
  if (hasFcvLock(proc.profile) && doc.Global) doc.FeatureCompatibilityVersion = intentModesOf(doc.Global as Document)
  const collectionCounts = doc.Collection?.acquireCount as Document | undefined
  if (hasReadMutex(proc.profile) && collectionCounts?.r) doc.Mutex = {acquireCount: {r: collectionCounts.r}}
  if (proc.replSet && proc.isPrimaryMember && collectionCounts?.w) doc.oplog = {acquireCount: {w: collectionCounts.w}}
  const ordered: Document = {}
  for (const k of [...LOCK_ORDER, ...Object.keys(doc)]) if (doc[k] !== undefined && !(k in ordered)) ordered[k] = doc[k]
  return ordered
}

/** A global lock entry's counters folded onto the intent modes (S, IS → IS; X, IX → IX): the FCV lock's, taken in the global lock's intent mode. */
function intentModesOf(global: Document): Document {
  const out: Document = {}
  for (const [metric, modes] of Object.entries(global)) {
    const folded: Record<string, number> = {}
    for (const [mode, v] of Object.entries(modes as Document)) {
      const intent = mode === 'R' || mode === 'r' ? 'r' : 'w'
      folded[intent] = (folded[intent] ?? 0) + Number(v)
    }
    out[metric] = Object.fromEntries(Object.entries(folded).map(([m, v]) => [m, long(v)]))
  }
  return out
}

/** `sections` lets a caller drop top-level sections ({repl: 0, locks: 0, …}) like mongod. */
export function buildServerStatus(proc: SimProcess, exclude: Set<string>): Document {
  const c = proc.counters
  const uptimeMs = Date.now() - c.startedAt
  const doc: Document = {
    host: proc.hostPort,
    version: proc.profile.version,
    process: proc.role === 'mongos' ? 'mongos' : 'mongod',
    pid: long(process.pid),
    // A double in server_status.cpp: (double)(time(nullptr) - started).
    uptime: exactDouble(Math.floor(uptimeMs / 1000)),
    uptimeMillis: long(uptimeMs),
    uptimeEstimate: long(Math.floor(uptimeMs / 1000)),
    localTime: new Date(),
  }
  const sections: Array<[string, () => Document | undefined]> = [
    ['asserts', () => ({regular: 0, warning: 0, msg: 0, user: 0, rollovers: 0})],
    ['connections', () => connectionsSection(proc)],
    // A router has no lock manager: the globalLock and locks sections are mongod's (src/mongo/db/),
    // absent from a mongos's serverStatus in every version.
    ['globalLock', () => (proc.role === 'mongos' ? undefined : globalLock(proc))],
    ['locks', () => (proc.role === 'mongos' ? undefined : locksSection(proc))],
    [
      'mem',
      // Read only when the section is asked for: process.memoryUsage() gathers V8's heap statistics too.
      () => {
        const mem = process.memoryUsage()
        return {bits: 64, resident: Math.round(mem.rss / 1048576), virtual: Math.round((mem.rss + mem.external) / 1048576), supported: true}
      },
    ],
    [
      'network',
      () => ({
        bytesIn: long(c.bytesIn),
        bytesOut: long(c.bytesOut),
        physicalBytesIn: long(c.bytesIn),
        physicalBytesOut: long(c.bytesOut),
        numSlowDNSOperations: long(0),
        numSlowSSLOperations: long(0),
        numRequests: long(c.numRequests),
      }),
    ],
    [
      'opcounters',
      () => ({
        insert: long(c.opcounters.insert),
        query: long(c.opcounters.query),
        update: long(c.opcounters.update),
        delete: long(c.opcounters.delete),
        getmore: long(c.opcounters.getmore),
        command: long(c.opcounters.command),
      }),
    ],
    ['opcountersRepl', () => (proc.replSet ? {insert: long(0), query: long(0), update: long(0), delete: long(0), getmore: long(0), command: long(0)} : undefined)],
    ['repl', () => replSection(proc)],
    ['security', () => security(proc)],
    ['sharding', () => shardingStatusOf(proc)],
    // Tickets are mongod's (the storage engine's, then execution control's from 8.0): none on a router.
    ['queues', () => (proc.role === 'mongos' ? undefined : ticketSections(proc).queues)],
    ['wiredTiger', () => (proc.role === 'mongos' ? undefined : ticketSections(proc).wiredTiger)],
    ['metrics', () => metrics(proc)],
  ]
  for (const [name, build] of sections) {
    if (exclude.has(name)) continue
    const v = build()
    if (v !== undefined) doc[name] = v
  }
  doc.ok = 1
  return doc
}
