/**
 * The contract between the embedded simulated cluster (which runs in a child
 * process, see `host.ts`) and everything that starts or steers it: the
 * `pooltool sim` command, the default target of every command, the tests and
 * the benchmarks. Plain data only: these values cross a process boundary.
 */

export type SimTopology = 'standalone' | 'replset' | 'sharded'

/** Which server release the simulated processes pretend to be. */
export type SimVersionProfile = '4.4' | '5.0' | '6.0' | '7.0' | '8.0'

export const SIM_VERSION_PROFILES: readonly SimVersionProfile[] = ['4.4', '5.0', '6.0', '7.0', '8.0']
export const SIM_TOPOLOGIES: readonly SimTopology[] = ['standalone', 'replset', 'sharded']

/**
 * The canned scenarios (`SimOptions.scenarios`, `pooltool sim --scenario`), by name. Here with the options
 * they are values of, so that the flags can list them without loading the scenarios (sharding/scenario.ts).
 */
export const DEAD_LOCK_HOLDER = 'dead-lock-holder'
export const UPGRADED_FROM_34 = 'upgraded-from-3.4'
export const SCENARIOS = [DEAD_LOCK_HOLDER, UPGRADED_FROM_34] as const

export interface SimOptions {
  topology: SimTopology
  versionProfile: SimVersionProfile
  /** Listen address; only loopback addresses make sense for a test server. */
  host: string
  /**
   * The host name the processes give themselves (hello `hosts`/`me`, serverStatus `host`) instead of
   * the listen address: a name that does not resolve here (`rs.pooltool.invalid`), as a Kubernetes
   * member seen through a port-forward. A standalone's or replica set's URI then names the first
   * process by its listen address with directConnection=true, the way such a member is reached; a
   * sharded cluster's names its routers' listen addresses. The processes' own connections dial the
   * listen addresses (sharding/wire-client.ts), never the name.
   */
  advertiseHost?: string
  /** First port; 0 picks free ephemeral ports for every listener. */
  basePort: number
  /** Replica-set members (replset topology) — default 3. */
  members: number
  /**
   * Replset topology: per-member settings (priority, hidden, arbiter), by 1-based member position.
   * The primary is the first member with the highest priority; hidden members and arbiters have priority 0.
   */
  memberOptions: SimMemberOption[]
  /** Sharded topology: number of mongos routers and shards. */
  mongos: number
  shards: number
  /** Sharded topology: members of each shard's replica set and of the config server's (default 3, as deployed). */
  shardMembers: number
  configMembers: number
  /** Require SCRAM authentication and create the default users. */
  auth: boolean
  /** Added to every operation's service time, in milliseconds. */
  latencyMs: number
  /** Added once per new connection before its first reply (thread creation, TLS …). */
  setupCostMs: number
  /** net.maxIncomingConnections: connections beyond it are closed at once and counted as rejected. */
  maxIncomingConnections: number
  /** scramIterationCount (SHA-1) and scramSHA256IterationCount, as on mongod. */
  scramIterationCount: number
  scramSHA256IterationCount: number
  /**
   * Multiplies every internal interval (lock pings 30 s, lock expiry 15 min …):
   * 0.01 turns 15 min into 9 s so lock expiry can be exercised in tests.
   */
  timeScale: number
  /** Named canned situations (e.g. 'dead-lock-holder'); empty for none. */
  scenarios: string[]
  /** Faults to apply at given offsets after start-up. */
  faultSchedule: ScheduledFault[]
}

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  topology: 'standalone',
  versionProfile: '7.0',
  host: '127.0.0.1',
  basePort: 0,
  members: 3,
  memberOptions: [],
  mongos: 2,
  shards: 2,
  shardMembers: 3,
  configMembers: 3,
  auth: false,
  latencyMs: 0,
  setupCostMs: 0,
  maxIncomingConnections: 65536,
  scramIterationCount: 10000,
  scramSHA256IterationCount: 15000,
  timeScale: 1,
  scenarios: [],
  faultSchedule: [],
}

/** Settings of one replica-set member (replSetGetConfig `members[n]`), by 1-based position. */
export interface SimMemberOption {
  member: number
  priority?: number
  hidden?: boolean
  arbiter?: boolean
}

/** A fault injected at run time through `SimCluster.control()` or scheduled at start. */
export type SimFault =
  /** Set the per-operation latency from now on. */
  | {kind: 'latency'; ms: number; hosts?: string[]}
  /** Hold every reply (in flight and new) until `ms` from now. */
  | {kind: 'stall'; ms: number; hosts?: string[]}
  /** Destroy every open client socket (the listener stays up). */
  | {kind: 'drop-connections'; hosts?: string[]}
  /** Close listeners and sockets, stay down for `downMS`, listen again on the same ports; counters restart, data survives. */
  | {kind: 'restart'; downMS: number; hosts?: string[]}
  /** Set the per-connection setup cost from now on. */
  | {kind: 'setup-cost'; ms: number; hosts?: string[]}
  /** Change the connection limit from now on. */
  | {kind: 'max-connections'; max: number; hosts?: string[]}
  /**
   * An index build on `ns` ("db.coll") holds the collection lock in `mode` (W: exclusive, R: shared) for `ms`
   * once granted, on every targeted mongod (routers and arbiters skipped): operations on the collection wait
   * behind it (status/system-ops.ts). Another lock-hold on the same namespace and mode sets its end to `ms`
   * from now (0 ends it now).
   */
  | {kind: 'lock-hold'; ns: string; mode: 'W' | 'R'; ms: number; hosts?: string[]}
  /**
   * End the faults that pass by themselves, now instead of when they run out: a restart's down time (the process
   * listens again, as at the end of `downMS`; resolves once it does) and a stall (held replies go out). Other
   * settings stay. For a caller that has seen what it waited for (a test that need not wait out a long down time);
   * not a `--fault` kind, since scheduled it is only a shorter fault.
   */
  | {kind: 'recover'; hosts?: string[]}

export interface ScheduledFault {
  atMs: number
  fault: SimFault
}

/** A replset member's role is its state; shard and config-server members keep 'shard' / 'config' (see `memberState`). */
export type SimProcessRole = 'standalone' | 'primary' | 'secondary' | 'arbiter' | 'mongos' | 'shard' | 'config'

export type SimMemberState = 'primary' | 'secondary' | 'arbiter'

export interface SimProcessInfo {
  /** "127.0.0.1:PORT": where it listens, and (unless `advertisedAs` is set) how it names itself in hello. */
  host: string
  /** With `advertiseHost`: the name it gives itself instead ("rs.pooltool.invalid:PORT"), which does not resolve. */
  advertisedAs?: string
  port: number
  role: SimProcessRole
  /** Replica set name for replset members, shard members and the config server. */
  setName?: string
  /** Replica-set members: PRIMARY, SECONDARY or ARBITER. */
  memberState?: SimMemberState
  /** A hidden member (not in hello `hosts`). */
  hidden?: true
}

export interface SimCredentials {
  username: string
  password: string
  authSource: string
}

/** What the child reports once every listener is up. */
export interface SimClusterInfo {
  /** The connection string for the driver: credentials included when auth is on. */
  uri: string
  topology: SimTopology
  versionProfile: SimVersionProfile
  /** Server version string reported by buildInfo, e.g. "7.0.14". */
  serverVersion: string
  processes: SimProcessInfo[]
  /** Present when auth is on: a root user with SCRAM-SHA-1 and SCRAM-SHA-256 credentials. */
  credentials?: SimCredentials
  /** Process id of the child process that serves the cluster. */
  pid: number
}

/** A scheduled fault (`SimOptions.faultSchedule`, `pooltool sim --fault`) as it fired in the child. */
export interface FiredFault {
  /** ISO time it was applied. */
  at: string
  /** Its scheduled offset after start-up. */
  atMS: number
  fault: SimFault
  /** false when applying it failed; `error` says why. */
  ok: boolean
  error?: string
}

/**
 * A canned scenario (`SimOptions.scenarios`, `pooltool sim --scenario`) as it fired in the child:
 * what it left in the cluster, so a user knows what to look for and where.
 */
export interface FiredScenario {
  /** ISO time it was set up. */
  at: string
  scenario: string
  /** One sentence: what happened and what it left behind. */
  summary: string
  /** The facts the summary names, for scripts: the namespace, the holder's host, its lock process id … */
  facts: Record<string, string>
}

/**
 * Why the child could not start, so the parent can classify it: a port in use or a
 * privileged port and a bad option are the caller's to fix (usage); `internal` is ours.
 */
export type StartFailureReason = 'address-in-use' | 'permission-denied' | 'invalid-options' | 'internal'

/**
 * Fire a fault from inside the cluster once one process has served `grows` more operations of
 * one kind than when it was armed: the fault lands at a point of the client's work, however
 * loaded the machine is (a test's own observer polling the server would race the client).
 */
export interface SimTrigger {
  /** The process to watch ("127.0.0.1:PORT", as SimProcessInfo.host). */
  host: string
  opcounter: 'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command'
  grows: number
}

/** Messages from parent to child. */
export type ParentMessage =
  | {type: 'start'; options: SimOptions}
  | {type: 'control'; id: number; fault: SimFault}
  | {type: 'arm'; id: number; fault: SimFault; trigger: SimTrigger}
  /** Answers with `fired`: whether the armed fault `armId` fired (it will not any more). */
  | {type: 'disarm'; id: number; armId: number}
  | {type: 'stop'}

/** Messages from child to parent. */
export type ChildMessage =
  | {type: 'ready'; info: SimClusterInfo}
  | {type: 'start-failed'; message: string; reason: StartFailureReason}
  | {type: 'control-result'; id: number; ok: boolean; message?: string; fired?: boolean}
  /** A scheduled fault fired (sent as it happens, in schedule order). */
  | {type: 'fault-fired'; event: FiredFault}
  /** A scenario was set up (sent during start-up, before `ready`). */
  | {type: 'scenario-fired'; event: FiredScenario}
  | {type: 'stopped'}
