/** What the benchmarks read of a process from /proc (Linux): CPU time, to tell a process's idle cost. */
import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], {encoding: 'utf8'}).trim()) || 100

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
