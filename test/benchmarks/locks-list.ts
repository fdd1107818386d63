/**
 * npm run bench:locks-list — a benchmark, not a test.
 *
 * `pooltool locks list` on a big cluster: 10,000 lock documents in config.locks and 500 pingers
 * in config.lockpings (4.4 shapes: host:port:epoch:random processes, most locks released, some
 * held by live pingers, some by dead ones), on the embedded sharded cluster, read through its
 * router. Each trial is a fresh process, as a user runs it: the CLI (text, and --json) beside a
 * bare driver script that reads the same two collections whole through the same router.
 *
 * Paired by the method of paired.ts: each pair runs bare, text, json in that order when even and
 * reversed when odd, warm-up pairs discarded; the figures are the medians of the per-pair ratios of
 * wall time (CLI / bare read) with bootstrap 95% intervals, goal (issue 14) ≤ 3 ×, and the CLI's own
 * wall time against 1 s on this machine. `--with-all` adds `--all` (every row as text), without a goal.
 *
 * Flags: --locks N (10000) --pingers N (500) --pairs N (20; --quick 6) --warmup-pairs N (1) --with-all
 */
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

import {ObjectId} from 'bson'

import {MongoClient} from '../../src/mongo/driver.js'
import {startSimCluster} from '../../src/sim/index.js'
import {benchRecord, type Figure, PAIRED_OPTIONS, pairedFigure, pairsOf, runPaired, type SliceValues, valueFigure} from './paired.js'

const {values} = parseArgs({options: {...PAIRED_OPTIONS, locks: {type: 'string', default: '10000'}, pingers: {type: 'string', default: '500'}, 'with-all': {type: 'boolean', default: false}}})
const lockCount = Number(values.locks)
const pingerCount = Number(values.pingers)
const {pairs, warmupPairs} = pairsOf(values, {full: 20, quick: 6, warmup: 1})
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
  const record = benchRecord('locks-list', {pairs, warmupPairs, order: 'bare, text, json forward in even pairs, reversed in odd ones', slice: 'one fresh process per side'})
  console.log(`bench:locks-list · ${lockCount} locks, ${pingerCount} pingers · MongoDB 4.4 shapes through the router · each trial a fresh process, wall time\n${record.header}`)
  type Side = 'bare' | 'text' | 'json' | 'all'
  const sides: [Side, Side, ...Side[]] = values['with-all'] ? ['bare', 'text', 'json', 'all'] : ['bare', 'text', 'json']
  const run = await runPaired<Side>({
    sides,
    pairs,
    warmupPairs,
    slice: async (side): Promise<SliceValues> => {
      if (side === 'bare') {
        const bare = timed(['--input-type=module', '-e', BARE_READ, uri])
        // The cluster's own locks and pings come on top of the inserted ones.
        if (Number(bare.stdout.trim()) < lockCount + pingerCount) throw new Error(`the bare read saw ${bare.stdout.trim()} documents`)
        return {ms: bare.ms}
      }
      const cli = timed([BIN, 'locks', 'list', '--uri', uri, ...(side === 'text' ? [] : [`--${side}`])])
      if (side === 'json') {
        const locks = (JSON.parse(cli.stdout) as {locks: unknown[]}).locks.length
        if (locks < lockCount) throw new Error(`--json listed ${locks} locks`)
      }
      return {ms: cli.ms, lines: cli.stdout.split('\n').length}
    },
    onPair: (index, v, measured) =>
      console.log(`${measured ? `pair ${index - warmupPairs + 1}` : `warm-up ${index + 1}`}: ` + sides.map((s) => `${s} ${v[s].ms!.toFixed(0)} ms`).join(' · ')),
  })
  console.log('')
  const figures: Figure[] = []
  for (const kind of ['text', 'json'] as const) {
    const label = kind === 'text' ? 'locks list' : 'locks list --json'
    figures.push(pairedFigure(run, {label: `${label} wall time (${lockCount} locks), CLI / bare read`, metric: 'ms', a: 'bare', b: kind, goal: 3}))
    figures.push(valueFigure({label: `${label} wall time (${lockCount} locks)`, unit: 'ms', samples: run.pairs.map((p) => p[kind].ms!), goal: 1000}))
  }
  if (values['with-all']) figures.push(pairedFigure(run, {label: `locks list --all wall time, CLI / bare read`, metric: 'ms', a: 'bare', b: 'all', goal: null}))
  await record.finish(figures)
} finally {
  await sim.stop()
}
