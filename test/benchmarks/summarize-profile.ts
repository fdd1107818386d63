/**
 * Self time of a V8 .cpuprofile (node --cpu-prof) by function and by where the code lives, so two
 * profiles (bare loop, engine) can be put side by side: the engine's extra per-operation work is what
 * it has and the bare loop has not. Idle, GC and program time are shown apart.
 *
 *   node --import tsx test/benchmarks/summarize-profile.ts a.cpuprofile [b.cpuprofile …] [--top 25] [--windows a.json,b.json …]
 *
 * bench:overhead's windows alone, each side's process profiled:
 *   OVERHEAD_WINDOWS_DIR=DIR node --cpu-prof --cpu-prof-dir DIR --import tsx test/benchmarks/overhead.ts --pairs 16
 *   then DIR holds bare-<pid>.json and engine-<pid>.json beside each process's CPU.*.<pid>.0.001.cpuprofile
 */
import {readFileSync} from 'node:fs'
import {parseArgs} from 'node:util'

interface ProfileNode {
  id: number
  callFrame: {functionName: string; url: string; lineNumber: number}
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

const {values, positionals} = parseArgs({allowPositionals: true, options: {top: {type: 'string', default: '25'}, windows: {type: 'string'}}})
const top = Number(values.top)
/**
 * --windows a.json,b.json (one per profile, in order): [[startUs, endUs], …] on the monotonic clock the profile stamps
 * its samples with (process.hrtime), as bench:overhead's side processes write them (OVERHEAD_WINDOWS_DIR); only the
 * samples inside a window count, and the figures are also given in ms per window.
 */
const windowFiles = values.windows?.split(',')
if (windowFiles && windowFiles.length !== positionals.length) throw new Error(`--windows names ${windowFiles.length} files for ${positionals.length} profiles`)

/** Where a frame's code lives: our source, the driver, bson, node's own, V8's pseudo-frames. */
function areaOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)'
  if (url.includes('/node_modules/mongodb/')) return 'mongodb driver'
  if (url.includes('/node_modules/bson/')) return 'bson'
  if (url.includes('/node_modules/hdr-histogram-js/')) return 'hdr-histogram-js'
  if (url.includes('/node_modules/')) return `node_modules/${url.split('/node_modules/')[1]!.split('/')[0]}`
  if (url.startsWith('node:')) return 'node internals'
  const src = /\/(src|test)\/(.*)$/.exec(url)
  return src ? `${src[1]}/${src[2]}` : url
}

for (const [index, file] of positionals.entries()) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const windows = windowFiles ? (JSON.parse(readFileSync(windowFiles[index]!, 'utf8')) as Array<[number, number]>) : undefined
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    if (windows && !windows.some(([from, to]) => at >= from && at < to)) return
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const byFunction = new Map<string, number>()
  const byArea = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!
    const {functionName, url, lineNumber} = node.callFrame
    const area = areaOf(url, functionName)
    const key = `${functionName || '(anonymous)'} · ${area}${url ? `:${lineNumber + 1}` : ''}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + us)
    byArea.set(area, (byArea.get(area) ?? 0) + us)
  }
  const idle = byArea.get('(idle)') ?? 0
  const busy = total - idle
  const perWindow = (us: number) => (windows ? `  ${(us / 1000 / windows.length).toFixed(2).padStart(7)} ms/window` : '')
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)} %${perWindow(us)}`
  console.log(`\n${file}: ${(total / 1e6).toFixed(2)} s sampled${windows ? ` in ${windows.length} windows` : ''}, ${(busy / 1e6).toFixed(2)} s busy${perWindow(busy)} (percentages of busy time)`)
  console.log('by area:')
  for (const [area, us] of [...byArea].filter(([a]) => a !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${area}`)
  console.log('by function (self):')
  for (const [key, us] of [...byFunction].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${key}`)
}
