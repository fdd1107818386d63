// Sums the profiles suite-profiler.mjs wrote (see there): busy CPU by kind of process (test file, each CLI command,
// embedded-cluster child), by where the code lives, and by function (self time).
//
//   node test/benchmarks/summarize-suite-profile.mjs DIR [--top 60] [--kind 'sim child']
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {parseArgs} from 'node:util'

const {values, positionals} = parseArgs({allowPositionals: true, options: {top: {type: 'string', default: '60'}, kind: {type: 'string'}}})
const dir = positionals[0]
if (!dir) throw new Error('usage: summarize-suite-profile.mjs DIR [--top N] [--kind KIND]')

/** What a process was, from the arguments in its profile's name. */
function kindOf(file) {
  if (file.includes('run.js')) return `cli: ${file.match(/run\.js_([a-z]+)/)?.[1] ?? '?'}`
  if (file.includes('child')) return 'embedded-cluster child'
  if (file.includes('.test.')) return 'test file'
  return 'other'
}

function areaOf(url, name) {
  if (url === '') return name.startsWith('(') ? name : '(native)'
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  if (pkg) return pkg[1]
  if (url.startsWith('node:')) return 'node internals'
  const own = url.match(/\/((?:dist\/)?(?:src|commands|test)\/.*)$/)
  return own ? own[1] : url
}

const byKind = new Map()
const byArea = new Map()
const byFunction = new Map()
let total = 0
let profiles = 0
const add = (map, key, ms) => map.set(key, (map.get(key) ?? 0) + ms)
for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
  const kind = kindOf(file)
  if (values.kind !== undefined && kind !== values.kind) continue
  let profile
  try {
    profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8'))
  } catch {
    continue // cut short (a process that ended while writing)
  }
  profiles += 1
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  profile.samples.forEach((id, index) => {
    const {functionName, url, lineNumber} = nodes.get(id).callFrame
    if (functionName === '(idle)') return
    const ms = (profile.timeDeltas[index] ?? 0) / 1000
    const area = areaOf(url, functionName)
    total += ms
    add(byKind, kind, ms)
    add(byArea, area, ms)
    add(byFunction, `${functionName || '(anonymous)'} · ${area}:${lineNumber + 1}`, ms)
  })
}
const rows = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([key, ms]) => `${(ms / 1000).toFixed(1).padStart(8)} s ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${key}`)
    .join('\n')
const top = Number(values.top)
console.log(`${(total / 1000).toFixed(1)} CPU-s busy on the main threads of ${profiles} processes`)
console.log(`\nby kind of process:\n${rows(byKind, top)}\n\nby area:\n${rows(byArea, 30)}\n\nby function (self):\n${rows(byFunction, top)}`)
