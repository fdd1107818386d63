/** pooltool as a library: the same functions the commands call. */
export {runBench, matrixOf, type BenchHooks, type BenchCell} from './bench/run-bench.js'
export {toBenchConfig} from './bench/config.js'
export type {BenchConfig, BenchResult, RunResult, PoolModel, WorkloadName} from './bench/types.js'
export {startSimCluster, type SimCluster} from './sim/host.js'
export type {SimOptions, SimFault, SimClusterInfo} from './sim/types.js'
export {resolveTarget, type Target} from './target.js'
export {PoolToolError, EXIT_CODES} from './errors.js'
export {redactUri} from './redact.js'
