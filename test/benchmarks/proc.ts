/** What the benchmarks read of a process from /proc (Linux): CPU time, to tell a process's idle cost, and CPU by thread. */
import {execFileSync} from 'node:child_process'
import {readdirSync, readFileSync} from 'node:fs'

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], {encoding: 'utf8'}).trim()) || 100
  } catch {
    return 100
  }
})()

/** utime + stime of a process in seconds (fields 14 and 15 of /proc/<pid>/stat, after the command name). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / clockTicks
}

/** The process's CPU over `seconds` of wall time, as a percentage of one core. */
export async function cpuPercentOver(pid: number, seconds: number): Promise<{percent: number; elapsedS: number}> {
  const before = cpuSeconds(pid)
  const t0 = performance.now()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const elapsedS = (performance.now() - t0) / 1000
  return {percent: ((cpuSeconds(pid) - before) / elapsedS) * 100, elapsedS}
}

/**
 * CPU (user + system, µs) of each thread of this process by thread id, from /proc/self/task (Linux); undefined
 * elsewhere. process.cpuUsage() sums every thread, and `node --cpu-prof` sees only threads running JavaScript:
 * this is what tells the main thread, worker threads and V8's background threads (concurrent compilation,
 * GC helpers; libuv's pool) apart. Its resolution is a clock tick (10 ms at USER_HZ 100) per thread.
 */
export function threadCpu(): Map<number, number> | undefined {
  let tids: string[]
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return undefined
  }
  const cpu = new Map<number, number>()
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      cpu.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks)
    } catch {
      // The thread ended between the listing and the read: its CPU is not in either mark.
    }
  }
  return cpu
}

/** Where a window's CPU went: this process's main thread, the worker threads, and the threads that were there before the run (V8's platform threads: background compilation and GC helpers). */
export interface ThreadSplit {
  main: number
  workers: number
  background: number
}

export function splitOf(from: Map<number, number>, to: Map<number, number>, before: ReadonlySet<number>): ThreadSplit {
  const split = {main: 0, workers: 0, background: 0}
  for (const [tid, cpu] of to) {
    const delta = cpu - (from.get(tid) ?? 0)
    if (tid === process.pid) split.main += delta
    else if (before.has(tid)) split.background += delta
    else split.workers += delta
  }
  return split
}
