/**
 * npm run bench [-- --quick] — every comparative benchmark, one after the other, then one table:
 * figure, ratio (or value), 95% interval, goal, met or not. Each benchmark is a child process (its
 * own embedded cluster, its own heap) that writes test-output/bench/<name>.json by the method of
 * paired.ts; its full output goes to test-output/bench/<name>.log (the per-pair lines only there).
 * The table is printed and written as test-output/bench/summary.md and summary.json.
 *
 * The list tolerates absence: a benchmark whose file is not there is skipped (startup.ts is
 * written separately), and one that wrote no JSON shows as a row saying so.
 *
 * Flags: --quick (fewer pairs: about 2 minutes) --only name,name --table-only (run nothing: the table of the JSON files there)
 */
import {spawn} from 'node:child_process'
import {createWriteStream, existsSync, readFileSync, rmSync} from 'node:fs'
import {mkdir} from 'node:fs/promises'
import path from 'node:path'
import {parseArgs} from 'node:util'

import {writeJsonAtomically, writeTextAtomically} from '../../src/output.js'
import {BENCH_OUTPUT_DIR, type BenchJson, type Figure, loadText, machine, ROOT} from './paired.js'

const {values} = parseArgs({options: {quick: {type: 'boolean', default: false}, only: {type: 'string'}, 'table-only': {type: 'boolean', default: false}}})
/** In the order they run; the cheap ones whose figures are absolute come last. */
const BENCHMARKS = ['overhead', 'open-loop', 'workers', 'rss', 'locks-list', 'conns-poll', 'startup']
const only = values.only?.split(',')
const HERE = path.join(ROOT, 'test', 'benchmarks')

function runOne(name: string): Promise<{code: number | null; seconds: number}> {
  const file = path.join(HERE, `${name}.ts`)
  // A benchmark that knows no --quick (startup.ts, written apart) gets no flag it would refuse.
  const args = values.quick && readFileSync(file, 'utf8').includes('quick') ? ['--quick'] : []
  const log = createWriteStream(path.join(BENCH_OUTPUT_DIR, `${name}.log`))
  const started = performance.now()
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']})
  let pending = ''
  child.stdout.on('data', (chunk: Buffer) => {
    log.write(chunk)
    pending += chunk.toString('utf8')
    const lines = pending.split('\n')
    pending = lines.pop()!
    // The per-pair lines stay in the log: the terminal gets headers, figures and the table.
    for (const line of lines) if (!/^(\d+\/s )?(pair|warm-up|round) /.test(line)) console.log(`  ${line}`)
  })
  child.stderr.on('data', (chunk: Buffer) => {
    log.write(chunk)
    process.stderr.write(chunk)
  })
  return new Promise((resolve) => {
    child.on('close', (code) => {
      if (pending) console.log(`  ${pending}`)
      log.end()
      resolve({code, seconds: (performance.now() - started) / 1000})
    })
  })
}

/** JSON has no NaN: a figure with no value (every pair left out) reads null there. */
const cell = (n: number | null, unit: string) => (n === null || !Number.isFinite(n) ? '—' : unit === '×' ? n.toFixed(3) : n >= 100 ? n.toFixed(0) : n.toFixed(2))
const goalText = (f: Figure) => (f.goal === null ? '—' : `≤ ${f.goal}${f.unit === '×' ? '' : ` ${f.unit}`}${f.upperGoal === undefined ? '' : ` (hi ≤ ${f.upperGoal})`}`)
const hasValue = (f: Figure) => f.value !== null && Number.isFinite(f.value)
const metText = (f: Figure) => (f.goal === null ? 'n/a' : f.met === null || !hasValue(f) ? 'unknown' : f.met ? 'met' : 'NOT met')

await mkdir(BENCH_OUTPUT_DIR, {recursive: true})
const start = machine()
const date = new Date().toISOString()
const started = performance.now()
console.log(`npm run bench${values.quick ? ' --quick' : ''} · ${date} · ${start.cores} × ${start.cpu} · node ${start.node} · ${loadText()}`)
const rows: {benchmark: string; figure?: Figure; missing?: string}[] = []
const runs: Record<string, {code: number | null; seconds: number; loadavg?: BenchJson['loadavg']}> = {}
const written: BenchJson[] = []
for (const name of BENCHMARKS) {
  if (only && !only.includes(name)) continue
  if (!existsSync(path.join(HERE, `${name}.ts`))) continue
  const jsonFile = path.join(BENCH_OUTPUT_DIR, `${name}.json`)
  if (!values['table-only']) {
    rmSync(jsonFile, {force: true}) // a stale file must not stand in for this run
    console.log(`\n== ${name} (${loadText()})`)
  }
  const outcome = values['table-only'] ? {code: existsSync(jsonFile) ? 0 : null, seconds: 0} : await runOne(name)
  runs[name] = outcome
  if (!existsSync(jsonFile)) {
    rows.push({benchmark: name, missing: outcome.code === 0 ? 'wrote no figures (not on the paired method)' : `failed (exit ${outcome.code}; see ${path.relative(ROOT, path.join(BENCH_OUTPUT_DIR, `${name}.log`))})`})
    continue
  }
  const json = JSON.parse(readFileSync(jsonFile, 'utf8')) as BenchJson
  runs[name]!.loadavg = json.loadavg
  written.push(json)
  for (const figure of json.figures) rows.push({benchmark: name, figure})
}

const header = ['benchmark', 'figure', 'ratio / median', '95% interval', 'pairs', 'goal', 'met']
const lines = rows.map((r) =>
  r.figure
    ? [r.benchmark, r.figure.label, `${cell(r.figure.value, r.figure.unit)}${r.figure.unit === '×' ? '' : ` ${r.figure.unit}`}`, `[${cell(r.figure.interval[0], r.figure.unit)}, ${cell(r.figure.interval[1], r.figure.unit)}]`, String(r.figure.pairs), goalText(r.figure), metText(r.figure)]
    : [r.benchmark, r.missing!, '', '', '', '', ''],
)
const table = [header, header.map(() => '---'), ...lines].map((cols) => `| ${cols.join(' | ')} |`).join('\n')
const minutes = (performance.now() - started) / 60_000
const end = machine()
const utc = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`
const summary = values['table-only']
  ? // The files' own dates and load, not this moment's.
    `the benchmarks' JSON files of ${utc(written.map((j) => j.date).sort()[0] ?? date)} to ${utc(written.map((j) => j.date).sort().at(-1) ?? date)}, ${start.cores} × ${start.cpu}, node ${start.node}, ` +
    `load average ${written[0]?.loadavg.start.join(' ') ?? '?'} at the first start, ${written.at(-1)?.loadavg.end.join(' ') ?? '?'} at the last end`
  : `npm run bench${values.quick ? ' --quick' : ''}, ${utc(date)}, ${start.cores} × ${start.cpu}, node ${start.node}, ` +
    `${minutes.toFixed(1)} min, load average ${start.loadavg.join(' ')} at the start, ${end.loadavg.join(' ')} at the end`
console.log(`\n${summary}\n\n${table}\n`)
await writeTextAtomically(path.join(BENCH_OUTPUT_DIR, 'summary.md'), `${summary}\n\n${table}\n`)
await writeJsonAtomically(path.join(BENCH_OUTPUT_DIR, 'summary.json'), {date, quick: values.quick, minutes, machine: start, loadavgEnd: end.loadavg, runs, rows})
process.exitCode = Object.values(runs).some((r) => r.code !== 0) ? 1 : 0
