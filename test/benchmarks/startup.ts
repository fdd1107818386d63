/**
 * npm run bench:startup — a benchmark, not a test.
 *
 * What a start costs before any work: the CPU (user + system) and the wall time of
 * `pooltool --version`, `--help`, `bench --help`, `conns list --help` and a usage error
 * (`bench --concurrency abc`), each as a ratio to `node -e 0` on the same machine at the same
 * moment (issue 27 goals: at most 2.0x for --version and a usage error, 2.5x for any --help).
 *
 * Method: one round runs, for every case, one pair — the case and `node -e 0` — back to back,
 * the order alternating from round to round, so that a load that comes and goes falls on both
 * sides of a pair. The first --warmup rounds are discarded (a cold page cache). A case's figure
 * is the median of its paired ratios, with a 95 % confidence interval from a bootstrap over the
 * pairs (resampled with replacement, the median taken each time): test/benchmarks/paired.ts's
 * pairedFigure, the figures every benchmark prints, from which bench-startup.json is written too.
 *
 * Node gives a parent no child's resource usage (no wait4), so each child reports its own:
 * `--require` loads a few lines (the same for both sides) that write process.resourceUsage() to
 * a file named by an environment variable from an 'exit' listener, which runs on process.exit()
 * too. Wall time is measured here, from spawn to the child's exit. The CLI is the built one
 * (bin/run.js, as installed): run `npm run build` first.
 *
 * Flags: --rounds N (25) --warmup N (3) --out FILE (test-output/bench-startup.json)
 *        --bin PATH (bin/run.js: another build's entry, to measure a before and an after)
 */
import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

import {benchRecord, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, type Figure as TableFigure, machine, pairedFigure} from './paired.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const {values} = parseArgs({
  options: {
    rounds: {type: 'string', default: '25'},
    warmup: {type: 'string', default: '3'},
    out: {type: 'string', default: path.join(root, 'test-output', 'bench-startup.json')},
    bin: {type: 'string', default: path.join(root, 'bin', 'run.js')},
  },
})
const rounds = Number(values.rounds)
const warmup = Number(values.warmup)
if (!(Number.isInteger(rounds) && rounds >= 20) || !(Number.isInteger(warmup) && warmup >= 0)) {
  throw new Error('--rounds must be an integer of at least 20 (measured rounds, after --warmup), --warmup an integer ≥ 0')
}
const bin = path.resolve(values.bin!)

interface Case {
  name: string
  args: string[]
  goal: number
  /** The exit code the case must end with: a benchmark of a start that failed otherwise measures nothing. */
  exitCode: number
}

const CASES: Case[] = [
  {name: '--version', args: ['--version'], goal: 2.0, exitCode: 0},
  {name: '--help', args: ['--help'], goal: 2.5, exitCode: 0},
  {name: 'bench --help', args: ['bench', '--help'], goal: 2.5, exitCode: 0},
  {name: 'conns list --help', args: ['conns', 'list', '--help'], goal: 2.5, exitCode: 0},
  {name: 'bench --concurrency abc', args: ['bench', '--concurrency', 'abc'], goal: 2.0, exitCode: 2},
]

const scratch = mkdtempSync(path.join(tmpdir(), 'pooltool-startup-'))
const reporter = path.join(scratch, 'report-usage.cjs')
// CommonJS, no imports beyond what Node has loaded already: the same few microseconds on both sides.
writeFileSync(
  reporter,
  "process.on('exit', () => { const u = process.resourceUsage(); require('node:fs').writeFileSync(process.env.STARTUP_USAGE_FILE, `${u.userCPUTime} ${u.systemCPUTime}`) })\n",
)

interface Sample {
  cpuMs: number
  wallMs: number
}

let serial = 0
/** One start of `node [args]`: its CPU from its own report, its wall from here. */
function measure(args: string[], expectedExit: number): Promise<Sample> {
  const usageFile = path.join(scratch, `usage-${serial++}`)
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, ['--require', reporter, ...args], {
      cwd: scratch,
      env: {...process.env, STARTUP_USAGE_FILE: usageFile, NO_COLOR: '1'},
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6
      if (code !== expectedExit) {
        reject(new Error(`node ${args.join(' ')}: exit ${code}, expected ${expectedExit}\n${stderr}`))
        return
      }
      const [user, system] = readFileSync(usageFile, 'utf8').split(' ').map(Number)
      rmSync(usageFile)
      resolve({cpuMs: (user! + system!) / 1000, wallMs})
    })
  })
}

const baseline = ['-e', '0']
// Started before the rounds: its record holds the load average at the start and at the end (the machine may be shared).
const record = benchRecord('startup', {pairs: rounds, warmupPairs: warmup, order: 'node first on even round + case index', slice: 'one whole process start'})
console.log(record.header)
const startLoad = machine().loadavg
const pairs = new Map<string, {node: Sample; pooltool: Sample}[]>(CASES.map((c) => [c.name, []]))
const total = warmup + rounds
for (let round = 0; round < total; round++) {
  for (const [index, testCase] of CASES.entries()) {
    // Alternate which side goes first, by round and by case, so neither side always follows the other.
    const nodeFirst = (round + index) % 2 === 0
    const first = nodeFirst ? await measure(baseline, 0) : await measure([bin, ...testCase.args], testCase.exitCode)
    const second = nodeFirst ? await measure([bin, ...testCase.args], testCase.exitCode) : await measure(baseline, 0)
    if (round >= warmup) pairs.get(testCase.name)!.push(nodeFirst ? {node: first, pooltool: second} : {node: second, pooltool: first})
  }
  process.stderr.write(`\rround ${round + 1}/${total}${round < warmup ? ' (warm-up)' : ''}   `)
}
process.stderr.write('\n')
rmSync(scratch, {recursive: true, force: true})

// The figures are paired.ts's (median of the per-pair ratios, its seeded bootstrap interval), so `npm run bench`
// puts start-up in its one table; bench-startup.json says the same figures in its own shape.
const figures = new Map(
  CASES.map((testCase) => {
    const run = {sides: ['node', 'pooltool'] as const, pairs: pairs.get(testCase.name)!.map((pair) => ({node: {...pair.node}, pooltool: {...pair.pooltool}})), warmupPairs: warmup}
    const figure = (metric: keyof Sample) =>
      pairedFigure(run, {label: `pooltool ${testCase.name} ${metric === 'cpuMs' ? 'CPU' : 'wall'}, to node -e 0`, metric, a: 'node', b: 'pooltool', goal: testCase.goal})
    return [testCase.name, {cpu: figure('cpuMs'), wall: figure('wallMs')}]
  }),
)

const round3 = (x: number) => Math.round(x * 1000) / 1000
function summaryOf(figure: TableFigure) {
  return {
    ratio: round3(figure.value),
    ci95: figure.interval.map(round3) as [number, number],
    goal: figure.goal,
    withinGoal: figure.met,
    medianMs: round3(figure.sides!.pooltool!),
    nodeMedianMs: round3(figure.sides!.node!),
  }
}

const results = CASES.map((testCase) => {
  const {cpu, wall} = figures.get(testCase.name)!
  return {case: `pooltool ${testCase.name}`, pairs: cpu.pairs, cpu: summaryOf(cpu), wall: summaryOf(wall)}
})

const document = {
  benchmark: 'startup',
  bin: path.relative(root, bin) || bin,
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  rounds,
  warmup,
  method: `paired ratio to node -e 0 per round, order alternating; median of ratios, bootstrap 95% CI (${BOOTSTRAP_RESAMPLES} resamples, seed ${BOOTSTRAP_SEED}; test/benchmarks/paired.ts)`,
  loadavg: {start: startLoad, end: machine().loadavg},
  results,
}
const out = path.resolve(values.out!)
mkdirSync(path.dirname(out), {recursive: true})
const temporary = `${out}.${process.pid}.tmp`
writeFileSync(temporary, `${JSON.stringify(document, null, 2)}\n`)
renameSync(temporary, out)
console.log(`wrote ${path.relative(process.cwd(), out) || out}`)

// Each figure printed once, as every benchmark prints it (formatFigure), and written to test-output/bench/startup.json for the table.
await record.finish(CASES.flatMap((testCase) => [figures.get(testCase.name)!.cpu, figures.get(testCase.name)!.wall]))
