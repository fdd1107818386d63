/**
 * npm run bench:locks-list — a benchmark, not a test.
 *
 * `pooltool locks list` on a big cluster: 10,000 lock documents in config.locks and 500 pingers
 * in config.lockpings (4.4 shapes: host:port:epoch:random processes, most locks released, some
 * held by live pingers, some by dead ones), on the embedded sharded cluster, read through its
 * router. Each trial is a fresh process, as a user runs it: the CLI (text, then --json) beside a
 * bare driver script that reads the same two collections whole through the same router. Prints
 * the wall time of each (median of --rounds) and the CLI's ratio to the bare read. Goal:
 * at most 3 × the bare read, and under 1 s on this machine. `--all` (every row as text) is timed
 * beside them, without a goal.
 *
 * Flags: --locks N (10000) --pingers N (500) --rounds R (5)
 */
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

import {ObjectId} from 'bson'

import {MongoClient} from '../../src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'

const {values} = parseArgs({options: {locks: {type: 'string', default: '10000'}, pingers: {type: 'string', default: '500'}, rounds: {type: 'string', default: '5'}}})
const lockCount = Number(values.locks)
const pingerCount = Number(values.pingers)
const rounds = Number(values.rounds)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BIN = path.join(ROOT, 'bin', 'run.js')

/** The bare read, in a process of its own: connect, read both collections whole, exit. */
const BARE_READ = `
const {MongoClient} = await import(${JSON.stringify(path.join(ROOT, 'node_modules', 'mongodb', 'lib', 'index.js'))}).then((m) => m.default ?? m)
const client = new MongoClient(process.argv[1])
const config = client.db('config')
const [locks, pings] = await Promise.all([config.collection('locks').find().toArray(), config.collection('lockpings').find().toArray()])
await client.close()
console.log(locks.length + pings.length)
`

function timed(args: string[]): {ms: number; stdout: string} {
  const started = performance.now()
  const run = spawnSync(process.execPath, args, {encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: {...process.env, NO_COLOR: '1'}})
  const ms = performance.now() - started
  if (run.status !== 0) throw new Error(`${args.slice(0, 3).join(' ')} exited ${run.status}: ${run.stderr}`)
  return {ms, stdout: run.stdout}
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const sim = await startSimCluster({topology: 'sharded', versionProfile: '4.4'})
try {
  const configServer = sim.info.processes.find((p) => p.role === 'config')!
  const client = new MongoClient(`mongodb://${configServer.host}/?directConnection=true`)
  const config = client.db('config')
  const now = Date.now()
  const pingers = Array.from({length: pingerCount}, (_, i) => `10.0.${Math.floor(i / 250)}.${i % 250}:27018:${1_700_000_000 + i}:${1000 + i}`)
  // A tenth of the pingers are dead: their last ping is an hour old.
  await config.collection('lockpings').insertMany(pingers.map((process, i) => ({_id: process, ping: new Date(now - (i % 10 === 0 ? 3_600_000 : 5_000))})) as never[])
  await config.collection('locks').insertMany(
    Array.from({length: lockCount}, (_, i) => {
      const held = i % 20 === 0
      return {
        _id: `db${i % 50}.coll${i}`,
        state: held ? 2 : 0,
        ts: new ObjectId(),
        who: `${pingers[i % pingerCount]}:conn${i}`,
        process: pingers[i % pingerCount],
        when: new Date(now - (i % 3600) * 1000),
        why: held ? 'migrating chunk' : 'dropCollection',
      }
    }) as never[],
  )
  await client.close()
  const uri = sim.info.uri
  console.log(`bench:locks-list · ${lockCount} locks, ${pingerCount} pingers · MongoDB 4.4 shapes through the router · ${rounds} rounds, each trial a fresh process`)
  const trials = {bare: [] as number[], text: [] as number[], json: [] as number[], all: [] as number[]}
  let textLines = 0
  for (let round = 1; round <= rounds; round++) {
    const bare = timed(['--input-type=module', '-e', BARE_READ, uri])
    // The cluster's own locks and pings come on top of the inserted ones.
    if (Number(bare.stdout.trim()) < lockCount + pingerCount) throw new Error(`the bare read saw ${bare.stdout.trim()} documents`)
    const text = timed([BIN, 'locks', 'list', '--uri', uri])
    const json = timed([BIN, 'locks', 'list', '--uri', uri, '--json'])
    const all = timed([BIN, 'locks', 'list', '--uri', uri, '--all'])
    const locks = (JSON.parse(json.stdout) as {locks: unknown[]}).locks.length
    if (locks < lockCount) throw new Error(`--json listed ${locks} locks`)
    textLines = text.stdout.split('\n').length
    trials.bare.push(bare.ms)
    trials.text.push(text.ms)
    trials.json.push(json.ms)
    trials.all.push(all.ms)
    console.log(
      `round ${round}: bare read ${bare.ms.toFixed(0)} ms · locks list ${text.ms.toFixed(0)} ms (${textLines} lines) · --json ${json.ms.toFixed(0)} ms · ` +
        `--all ${all.ms.toFixed(0)} ms (${all.stdout.split('\n').length} lines)`,
    )
  }
  const bare = median(trials.bare)
  console.log('')
  for (const kind of ['text', 'json', 'all'] as const) {
    const ms = median(trials[kind])
    const label = {text: '(text, summarised)', json: '--json', all: '--all (every row as text)'}[kind]
    console.log(`locks list ${label}: ${ms.toFixed(0)} ms, ${(ms / bare).toFixed(2)} × the bare read's ${bare.toFixed(0)} ms${kind === 'all' ? '' : ' (goal ≤ 3 × and < 1000 ms)'}`)
  }
} finally {
  await sim.stop()
}
