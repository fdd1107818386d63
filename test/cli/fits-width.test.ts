/**
 * Every command's text output at COLUMNS=80 with NO_COLOR=1, against one embedded sharded cluster
 * (4.4 with auth: config.locks and config.lockpings have documents, a dead holder among them):
 * no line wider than 80 columns on stdout or stderr, and no escape sequence on either stream.
 * A line that is one word (a connection string) is left whole, so that it can be copied whole;
 * nothing else is excused. Each capture is saved under test-output/columns-80/ for review.
 *
 * Each command runs once as a real process (`spawned`: a pipe for stdout and stderr, COLUMNS from its
 * environment); its other runs and its help go through the in-process runner (test/helpers/in-process.ts),
 * which renders through the same path (oclif, the help class, stdoutLayout, fitText) in this process.
 * That process sees what a spawned one sees: COLUMNS and NO_COLOR from the run's environment, and stdout
 * and stderr that are not terminals (set below, before oclif loads: it reads the help width from
 * process.stdout when it loads, 80 off a terminal), so a width comes from COLUMNS and no spinner draws.
 */
import assert from 'node:assert/strict'
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import stringWidth from 'string-width'

import {type CliRun, REPO_ROOT, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const WIDTH = 80
const CAPTURES = path.join(REPO_ROOT, 'test-output', `columns-${WIDTH}`)
const ENV = {COLUMNS: String(WIDTH), NO_COLOR: '1'}

/** Lines wider than WIDTH, one-word lines excepted. */
function tooWide(text: string): string[] {
  return text.split('\n').filter((line) => stringWidth(line) > WIDTH && /\S\s+\S/.test(line.trim()))
}

function check(name: string, run: CliRun): void {
  mkdirSync(CAPTURES, {recursive: true})
  writeFileSync(path.join(CAPTURES, `${name}.txt`), `$ pooltool ${name}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`)
  assert.equal(run.code, 0, `${name}: ${run.stderr}`)
  assert.ok(run.stdout.trim().length > 0 || run.stderr.trim().length > 0, `${name} printed something`)
  for (const [stream, text] of [['stdout', run.stdout], ['stderr', run.stderr]] as const) {
    assert.deepEqual(tooWide(text), [], `${name}: ${stream} lines wider than ${WIDTH} columns`)
    assert.ok(!text.includes('\u001B'), `${name}: an escape sequence on ${stream} under NO_COLOR`)
  }
}

/** The command's real process: every command has one. */
const spawned = (args: string[]) => runCli(args, {env: ENV, timeoutMs: 90_000})
/** The same command in this process (see the top of the file). */
const cli = (args: string[]) => runInProcess(args, {env: ENV})

/** stdout and stderr as a spawned run has them, pipes: not terminals, so no terminal width applies. */
function likePipes(): () => void {
  const saved = [process.stdout.isTTY, process.stderr.isTTY]
  process.stdout.isTTY = false
  process.stderr.isTTY = false
  return () => {
    process.stdout.isTTY = saved[0]!
    process.stderr.isTTY = saved[1]!
  }
}

describe(`text output fits ${WIDTH} columns, without color`, {timeout: 300_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', auth: true, timeScale: 0.01, scenarios: ['upgraded-from-3.4', 'dead-lock-holder']})
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-width-'))
  let restore: (() => void) | undefined
  before(() => {
    restore = likePipes()
  })
  after(() => restore?.())

  it('bench: a model comparison, an open loop in stages, and the reports of its files', async () => {
    const out = path.join(dir, 'bench.json')
    check('bench', await spawned(['bench', '--uri', cluster.uri, '--model', 'pool,fixed,per-op', '--concurrency', '2', '--ops', '100', '--warmup', '0', '--out', out, '--fail-on', 'errors>0']))
    check('bench-open-loop', await cli(['bench', '--uri', cluster.uri, '--stages', '500ms:100/s,500ms:200/s', '--concurrency', '16', '--warmup', '0']))
    // Three readers of one finished file, started together.
    const [compare, hgrm, html] = await Promise.all([
      spawned(['report', 'compare', out, out]),
      spawned(['report', 'hgrm', out]),
      spawned(['report', 'html', out, '--out', path.join(dir, 'report.html')]),
    ])
    check('report-compare', compare)
    check('report-hgrm', hgrm)
    check('report-html', html)
    const startAt = new Date(Date.now() + 4000).toISOString()
    const segments = await Promise.all(
      [0, 1].map(async (index) => {
        // Both at once (the runner runs one in-process command at a time): one in this process, one spawned.
        const run = await (index === 0 ? cli : spawned)(['bench', '--warmup', '0s', '--uri', cluster.uri, '--concurrency', '4', '--duration', '500ms', '--segment', `${index}/2`, '--run-id', '0c0c0c80', '--start-at', startAt, '--json'])
        // Under --json an error is the JSON error object on stdout.
        assert.equal(run.code, 0, `${run.stderr}${run.stdout}`)
        const file = path.join(dir, `segment-${index}.json`)
        writeFileSync(file, run.stdout)
        return file
      }),
    )
    check('report-merge', await spawned(['report', 'merge', ...segments]))
  })

  it('auth', async () => {
    check('auth', await spawned(['auth', '--uri', cluster.uri, '--connections', '4', '--parallel', '2', '--pings', '20']))
  })

  it('conns list and conns watch (one line per host per round off a terminal)', async () => {
    check('conns-list', await spawned(['conns', 'list', '--uri', cluster.uri]))
    check('conns-watch', await spawned(['conns', 'watch', '--uri', cluster.uri, '--count', '2', '--interval', '200ms']))
  })

  it('locks list, locks pings and locks watch', async () => {
    check('locks-list', await spawned(['locks', 'list', '--uri', cluster.uri]))
    check('locks-pings', await spawned(['locks', 'pings', '--uri', cluster.uri]))
    check('locks-watch', await spawned(['locks', 'watch', '--uri', cluster.uri, '--duration', '600ms', '--interval', '200ms']))
  })

  it('snapshot, and sim serving it as a replay; sim starting a cluster of its own', async () => {
    const file = path.join(dir, 'snapshot.json')
    check('snapshot', await spawned(['snapshot', '--uri', cluster.uri, '--out', file]))
    check('sim-replay', await cli(['sim', '--replay', file, '--duration', '300ms']))
    check('sim', await spawned(['sim', '--topology', 'sharded', '--duration', '300ms']))
  })

  it('every command\'s help', async () => {
    for (const command of ['bench', 'auth', 'conns list', 'conns watch', 'locks list', 'locks pings', 'locks watch', 'report merge', 'report compare', 'report hgrm', 'report html', 'snapshot', 'sim']) {
      check(`${command.replace(' ', '-')}-help`, await cli([...command.split(' '), '--help']))
    }
  })
})
