/**
 * The embedded cluster's one door: everything outside src/sim (target.ts, run-sim.ts, the commands' flags,
 * replay, the tests beyond the unit tests) imports from here, so what the cluster offers is this list and
 * its insides can move freely. `.dependency-cruiser.cjs` (rule one-door-sim) keeps it so.
 *
 * The cluster itself runs in a child process (child.ts, forked by host.ts): importing this door loads the
 * parent's side only (the host, the options with their types and scenario names, the listener replay serves
 * on), a few small files on Node's own modules; keep it so, since every command that takes a target loads it.
 */
export {startSimCluster, unexpectedExitError, type SimCluster, type SimExit} from './host.js'
export * from './types.js'
export {type ListenerHooks, SimListener} from './server/listener.js'
