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
  },
}

export function profileFor(name: SimVersionProfile): VersionProfile {
  const p = VERSION_PROFILES[name]
  if (!p) throw new Error(`unknown version profile '${name}' (expected one of ${Object.keys(VERSION_PROFILES).join(', ')})`)
  return p
}
