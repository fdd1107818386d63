/**
 * pooltool's defaults, in one place: the command flags show and apply them,
 * and the library applies the same values when a caller leaves an option out.
 * Durations are milliseconds (names end in MS, as in the JSON).
 *
 * Not here: facts about the server (the 15 min lock expiry and the 30 s lock
 * ping live with their parsers in src/locks/parse.ts), and the embedded
 * cluster's shape, whose defaults are DEFAULT_SIM_OPTIONS in src/sim/types.ts
 * (the sim is its own layer and runs in its own process).
 */

/** Every command that talks to a cluster: `--app-name`, `--timeout-ms`. */
export const CONNECTION_DEFAULTS = {
  /** Handshake appName; clients for one purpose add a suffix (`pooltool-admin`, `pooltool-conns`). */
  appName: 'pooltool',
  /** serverSelectionTimeoutMS and connectTimeoutMS, unless the URI sets them. */
  timeoutMs: 10_000,
} as const

/** `pooltool bench`. */
export const BENCH_DEFAULTS = {
  workload: 'find',
  /** `--workload mixed` without `--mix`. */
  mix: 'find=80,insert=20',
  model: 'pool',
  concurrency: 10,
  docSizeBytes: 256,
  seedDocs: 1000,
  db: 'pooltool_bench',
  /** Measured time per run unless `--ops` bounds it instead. */
  durationMS: 10_000,
  /**
   * Unmeasured warm-up before each run (each cell of a sweep, each run of a matrix): auto, until the load's
   * ops/s has settled and its pool stopped growing (src/bench/warmup.ts: at least 3 s, at most 30 s). A fixed
   * 5 s was not enough on the idle 2-core machine: after a few idle seconds the next run still went
   * 3,501 → 6,965 ops/s between the halves of its 5 s while the runs after it held 6,100–7,200.
   */
  warmup: 'auto',
  /** How often serverStatus is read on each host during a run. */
  sampleIntervalMS: 250,
} as const

/** One interval of each run's time series, unless `bench --series-interval` says otherwise. */
export const DEFAULT_SERIES_INTERVAL_MS = 1000

/** The most worker threads bench starts (`--workers`): a few per core of the largest machines, far below thread limits. */
export const MAX_WORKERS = 64

/** `bench --emit k8s-job`: the Secret name and key holding the connection string, unless `--uri-secret` names another. */
export const DEFAULT_URI_SECRET = {name: 'pooltool-uri', key: 'uri'}
/** Per pod, times --workers: one core per event loop; 512 MiB holds a process at a few thousand operations in flight (RSS about 180 MB at concurrency 64, bench:overhead; peak 600 MB at 10,000, bench:rss). */
export const DEFAULT_CPU_PER_WORKER = 1
export const DEFAULT_MEMORY_MIB_PER_WORKER = 512

/** `pooltool conns watch | list`. */
export const CONNS_DEFAULTS = {
  intervalMS: 1000,
  /** Polling more often than ten times a second measures pooltool's own load. */
  minIntervalMS: 100,
  idleWindowMS: 30_000,
  /** The embedded cluster's shape when no URI is given: conns is about many hosts. */
  simTopology: 'sharded',
  /** Holders named in metric labels (--top-holders): a leak's thousands of clients must not become thousands of series. */
  metricsTopHolders: 10,
} as const

/** `pooltool locks watch`. */
export const LOCKS_DEFAULTS = {
  intervalMS: 500,
  minIntervalMS: 10,
  /** Distributed locks named in metric labels (--top-locks); every lock is counted by verdict. */
  metricsTopLocks: 20,
} as const

/** `pooltool auth`. */
export const AUTH_DEFAULTS = {
  connections: 40,
  /** Connections opened at once in a storm, lowered to `connections` when that is smaller. */
  parallel: 10,
  pings: 200,
} as const
