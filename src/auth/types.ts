/**
 * `pooltool auth`: configuration and the `--json` result. Field names of the
 * result contract are fixed (scripts read them): target, mechanisms[].{mechanism,
 * connections, parallel, setupUs, tcpConnectUs, authUs, roundTrips,
 * connectionsPerSec, serverAuthCounters}, pooledPingUs, costInPooledOps; the
 * envelope (target, notes, interrupted) is every command's (src/result.ts).
 */
import type {HostRole, TopologyKind} from '../probes/topology.js'
import type {ResultEnvelope} from '../result.js'

export const AUTH_MECHANISMS = ['none', 'SCRAM-SHA-1', 'SCRAM-SHA-256'] as const
export type AuthMechanismName = (typeof AUTH_MECHANISMS)[number]

export interface AuthConfig {
  /** Mechanisms asked for; undefined = what the server offers and the credentials allow. */
  readonly mechanisms?: readonly AuthMechanismName[]
  /** New connections per mechanism, per pass (one at a time, and again in storms), per path (driver-free, driver). */
  readonly connections: number
  /** Connections opened at once in a storm. */
  readonly parallel: number
  /** Pooled pings through one warm client (the baseline of costInPooledOps). */
  readonly pings: number
}

export interface PercentilesUs {
  p50: number
  p99: number
}

export interface SetupPercentilesUs extends PercentilesUs {
  max: number
}

/** One storm pass (connections opened --parallel at a time). */
export interface StormResult {
  /** Connections per second over the storms' wall time (storms back to back). */
  connectionsPerSec: number | null
  setupUs: SetupPercentilesUs | null
  /** Driver-free only. */
  authUs?: PercentilesUs | null
  errors: Record<string, number>
}

export interface MechanismResult {
  mechanism: AuthMechanismName
  /** Connections per pass (each path opens this many one at a time and this many in storms). */
  connections: number
  parallel: number
  /** Every connection this mechanism opened: 2 paths × 2 passes × connections (failed attempts included). */
  connectionsOpened: number
  /** Of those: completed (set-up and ping) … */
  connectionsSucceeded: number
  /** … failed (the sum of `errors`) … */
  connectionsFailed: number
  /** … or cut short by Ctrl-C. The three add up to connectionsOpened. */
  connectionsAborted: number
  /**
   * Set-up of one new connection, one at a time, through the official driver:
   * connectionCreated → connectionReady (TCP connect, handshake, auth), timed by
   * pooltool's listeners on those two events (durationMS covers the same interval in whole ms).
   * The driver caches PBKDF2 per process, so only its first connection pays the iteration count.
   */
  setupUs: SetupPercentilesUs | null
  /** Same figure, named for what it is. */
  driverSetupUs: SetupPercentilesUs | null
  /** The driver's own connectionReady.durationMS for the same connections (whole milliseconds: ±1 ms), in µs. */
  connectionReadyDurationUs: SetupPercentilesUs | null
  /** The driver's first connection with this mechanism in this process (PBKDF2 not cached yet); null when unknown. */
  driverFirstSetupUs: number | null
  /** Driver-free (raw TCP), one at a time: TCP connect + handshake + auth. */
  driverFreeSetupUs: SetupPercentilesUs | null
  /** Driver-free: TCP connect (SYN → established). */
  tcpConnectUs: PercentilesUs | null
  /** Driver-free: the handshake round trip (isMaster, carrying the first SCRAM step when speculative). */
  handshakeUs: PercentilesUs | null
  /** Driver-free: authentication after the handshake (PBKDF2 every time + the remaining SCRAM round trips); 0 for none. */
  authUs: PercentilesUs | null
  /** Driver-free: the client's PBKDF2 alone (part of authUs). */
  keyDerivationUs: PercentilesUs | null
  /** Request/reply exchanges from the handshake until authenticated (TCP not counted). */
  roundTrips: number | null
  /** The first SCRAM step rode in the handshake (speculativeAuthenticate, servers 4.4+). */
  speculative: boolean | null
  /** `i=` the server sent in its first SCRAM message: the count this user's credential was created with. */
  iterationCount: number | null
  /** Sustained in the storms, official driver (a new MongoClient per connection). */
  connectionsPerSec: number | null
  storm: {driver: StormResult; driverFree: StormResult | null}
  /** serverStatus.security.authentication.mechanisms.<mechanism> delta while this mechanism ran; null when not readable. */
  serverAuthCounters: {received: number; successful: number; speculativeReceived?: number; speculativeSuccessful?: number} | null
  /** Authentications pooltool performed with this mechanism (what the counters should show). */
  authenticationsExpected: number
  /** Why serverAuthCounters is missing. */
  serverAuthCountersUnavailable?: string
  /** One new connection (driver, setupUs.p50) in pooled pings (pooledPingUs.p50). */
  costInPooledOps: number | null
  /** The same with the driver-free set-up (PBKDF2 every time: a fresh process pays this). */
  costInPooledOpsDriverFree: number | null
  errors: Record<string, number>
}

/** The host every measured connection went to, as discovery named it. */
export interface MeasuredHostSummary {
  /** "host:port": where every connection went (the URI's address for a node reached through a port-forward). */
  host: string
  /** The cluster's name for it, when that is not `host`. */
  clusterName?: string
  /** `primary` of a replica set, `standalone`, or `mongos` (the router the URI names). */
  role: HostRole
  topology: TopologyKind
  serverVersion: string
  maxWireVersion: number | null
}

/** The common envelope (src/result.ts: target, notes, interrupted) plus auth's own figures. */
export interface AuthResult extends ResultEnvelope {
  /** null when Ctrl-C came before discovery had named the host. */
  measuredHost: MeasuredHostSummary | null
  config: {connections: number; parallel: number; pings: number; mechanismsRequested: AuthMechanismName[] | 'default'}
  mechanisms: MechanismResult[]
  /** Pings through one warm MongoClient (directConnection to the same host), measured after the connection passes. */
  pooledPingUs: (PercentilesUs & {count: number}) | null
  /** The headline: one new connection with `headlineMechanism` costs this many pooled pings (driver set-up p50 / pooled ping p50). */
  costInPooledOps: number | null
  /** The same for a fresh process (driver-free set-up p50, PBKDF2 every time). */
  costInPooledOpsDriverFree: number | null
  /** The mechanism the URI's client would use (authMechanism, else SCRAM-SHA-256 when the user has it, else SCRAM-SHA-1), else none. */
  headlineMechanism: AuthMechanismName | null
  /** The server's iteration counts for new passwords (getParameter); figures absent when not readable. */
  serverIterationCounts: {scramIterationCount?: number; scramSHA256IterationCount?: number; unavailable?: string}
  /** Whether the driver-free timing ran (it needs plain TCP). */
  driverFree: {available: boolean; reason?: string}
  serverCounters: {available: boolean; reason?: string}
  /**
   * Present when the run stopped early because the host stopped answering for
   * --timeout-ms (UNREACHABLE, exit 4) or the server refused the credentials it had
   * accepted at the start (AUTH_FAILED, exit 5): the figures above are what was
   * measured until then.
   */
  error?: {code: string; message: string; hint: string; exitCode: number}
}
