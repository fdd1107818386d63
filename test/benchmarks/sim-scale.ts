/**
 * Cost of a large embedded cluster: starts a sharded cluster (default 8 routers, 64 shards of 3
 * members, 3 config members: 203 processes in one child process), lets it settle, then measures the
 * child's CPU while nothing talks to it, from /proc/<pid>/stat (utime + stime, in clock ticks) over
 * a window (default 10 s), and prints processes, listeners, idle CPU as % of one core, start time
 * and RSS. Informational (Linux only): it asserts nothing about timings.
 *
 *   npm run bench:sim-scale [-- --mongos 8 --shards 64 --shard-members 3 --config-members 3 --window 10s --profile 4.4]
 */
import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'
import {parseArgs} from 'node:util'

import {SIM_VERSION_PROFILES, type SimVersionProfile, startSimCluster} from '../../src/sim/index.js'
import {cpuPercentOver} from './proc.js'

const {values} = parseArgs({
  options: {
    mongos: {type: 'string', default: '8'},
    shards: {type: 'string', default: '64'},
    'shard-members': {type: 'string', default: '3'},
    'config-members': {type: 'string', default: '3'},
    /** Seconds to measure idle CPU over. */
    window: {type: 'string', default: '10'},
    /** Seconds to let start-up work (first pings, config.mongos reports) finish before measuring. */
    settle: {type: 'string', default: '3'},
    profile: {type: 'string', default: '7.0'},
  },
})
const seconds = (v: string) => Number(v.replace(/s$/, ''))
const profile = values.profile as SimVersionProfile
if (!SIM_VERSION_PROFILES.includes(profile)) throw new Error(`--profile must be one of ${SIM_VERSION_PROFILES.join(', ')}`)

function rssMB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024
}

/** Listening TCP sockets the child holds (its inodes in /proc/net/tcp with state 0A). */
function listeners(pid: number): number {
  const fds = execFileSync('ls', ['-l', `/proc/${pid}/fd`], {encoding: 'utf8'})
  const inodes = new Set([...fds.matchAll(/socket:\[(\d+)\]/g)].map((m) => m[1]))
  let n = 0
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = ''
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    for (const row of text.split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/)
      if (cols[3] === '0A' && inodes.has(cols[9])) n++
    }
  }
  return n
}

const options = {
  topology: 'sharded' as const,
  versionProfile: profile,
  mongos: Number(values.mongos),
  shards: Number(values.shards),
  shardMembers: Number(values['shard-members']),
  configMembers: Number(values['config-members']),
}
const started = performance.now()
const sim = await startSimCluster(options)
const startMS = Math.round(performance.now() - started)
try {
  const pid = sim.info.pid
  await sleep(seconds(values.settle) * 1000)
  const windowS = seconds(values.window)
  const {percent, elapsedS: elapsed} = await cpuPercentOver(pid, windowS)
  const {mongos, shards, shardMembers, configMembers} = options
  console.log(`sim scale (${profile}): ${mongos} routers, ${shards} shards x ${shardMembers} members, ${configMembers} config members`)
  console.log(`  processes:     ${sim.info.processes.length}`)
  console.log(`  listeners:     ${listeners(pid)}`)
  console.log(`  start time:    ${startMS} ms`)
  console.log(`  idle CPU:      ${percent.toFixed(2)} % of one core over ${elapsed.toFixed(1)} s`)
  console.log(`  RSS:           ${rssMB(pid).toFixed(0)} MB (child pid ${pid})`)
} finally {
  await sim.stop()
}
