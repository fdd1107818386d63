/**
 * The embedded cluster's one door: everything outside src/sim (target.ts, run-sim.ts, the commands' flags,
 * replay, the tests beyond the unit tests) imports from here, so what the cluster offers is this list and
 * its insides can move freely. `.dependency-cruiser.cjs` (rule one-door-sim) keeps it so.
 *
 * The cluster itself runs in a child process (child.ts, forked by host.ts): importing this door loads the
 * parent's side only (the host, the options and their types, the scenario names, the listener replay serves on).
 */
export {startSimCluster, unexpectedExitError, type SimCluster, type SimExit} from './host.js'
export * from './types.js'
export {DEAD_LOCK_HOLDER, SCENARIOS, UPGRADED_FROM_34} from './sharding/scenario.js'
export {type ListenerHooks, SimListener} from './server/listener.js'
