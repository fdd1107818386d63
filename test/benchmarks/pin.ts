/**
 * Benchmarks pin the load generator and the embedded cluster to a core each (taskset, when there
 * are two or more): otherwise they fight over the same cores and figures swing from round to round.
 */
import {execFileSync} from 'node:child_process'
import {availableParallelism} from 'node:os'

/** Pin a process (all its threads) to one core, or to a list of cores ('0,1'); false when taskset is missing. */
export function pin(pid: number, core: number | string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}

/** This process on core 0, the cluster's on core 1; false when there is one core or no taskset. */
export function pinClientAndServer(serverPid: number): boolean {
  // Ask before pinning: availableParallelism() follows this process's own affinity.
  return availableParallelism() >= 2 && pin(process.pid, 0) && pin(serverPid, 1)
}
