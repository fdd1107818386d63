/**
 * Usage errors without oclif (src/cli/fast-usage.ts) print exactly what oclif prints. Every case of
 * the bad-input table (test/cli/bad-input-cases.ts), as text and under --json, goes to the fast
 * path's model; where it answers, the same command line runs through oclif in this process
 * (test/helpers/in-process.ts: the path bin/run.js takes once the fast paths pass, the secret guard
 * included) and stdout, stderr and the exit code must be the same bytes. Where it does not answer,
 * bin/run.js hands the line to oclif unchanged, so there is nothing to compare; which cases it
 * serves is listed here, so a change to the model shows. A few lines beyond the table cover the
 * parser's other forms, and spawned runs of bin/run.js prove the wiring. Needs `npm run build`
 * (it writes dist/help/usage.json).
 */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, it} from 'node:test'
import {pathToFileURL} from 'node:url'

import type {UsageAnswer, UsageSpec} from '../../src/cli/fast-usage.js'
import {REPO_ROOT} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'
import {runScript, writeOclifOnlyScript} from '../helpers/oclif-only.js'
import {cases} from './bad-input-cases.js'

const dist = (file: string) => pathToFileURL(path.join(REPO_ROOT, 'dist/src/cli', file)).href
const fast = (await import(dist('fast-usage.js'))) as {
  findUsageError(argv: readonly string[], env: NodeJS.ProcessEnv, spec: UsageSpec): Promise<UsageAnswer | undefined>
  readUsageSpec(): UsageSpec | undefined
  renderUsageError(answer: UsageAnswer): {stdout: string; stderr: string}
}
const guard = (await import(dist('secret-guard.js'))) as {makeScrubber(uris: readonly string[]): (text: string) => string; urisOfInvocation(argv: readonly string[], env: NodeJS.ProcessEnv): string[]}
const spec = fast.readUsageSpec()
assert.ok(spec, 'dist/help/usage.json: run npm run build')

/** The environment runInProcess gives a command (no URI from the developer's shell, no colour). */
function commandEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, FORCE_COLOR: '0'}
  delete env.POOLTOOL_URI
  delete env.MONGODB_URI
  return env
}

interface FastRun {
  code: number
  stdout: string
  stderr: string
}

/** The fast path's answer as bin/run.js writes it (through the secret guard), or undefined when it leaves the line to oclif. */
async function fastRun(argv: string[], env = commandEnv()): Promise<FastRun | undefined> {
  const answer = await fast.findUsageError(argv, env, spec!)
  if (!answer) return undefined
  const scrub = guard.makeScrubber(guard.urisOfInvocation(argv, env))
  const {stdout, stderr} = fast.renderUsageError(answer)
  return {code: answer.failure.exitCode, stdout: scrub(stdout), stderr: scrub(stderr)}
}

/** Both paths for one command line: the fast one must match oclif's byte for byte; returns whether it served. */
async function assertSame(argv: string[]): Promise<boolean> {
  const served = await fastRun(argv)
  if (!served) return false
  const oclif = await runInProcess(argv)
  assert.deepEqual(served, {code: oclif.code, stdout: oclif.stdout, stderr: oclif.stderr}, `pooltool ${argv.join(' ')}`)
  return true
}

/** The table's cases the fast path answers (text and --json alike); any other goes to oclif. */
const SERVED = [
  'bench: unknown flag',
  'auth: unknown flag',
  'locks list: unknown flag',
  'locks pings: unknown flag',
  'locks watch: unknown flag',
  'conns list: unknown flag',
  'conns watch: unknown flag',
  'sim: unknown flag',
  'bench: flag without its value',
  'conns watch: flag without its value',
  'sim: value not in options',
  'sim: version profile not in options',
  'conns list: --sim-topology not in options',
  'locks list: --state not in options',
  'bench: integer below min',
  'bench: not an integer',
  'auth: integer below min',
  'conns watch: integer below min',
  'sim: integer above max',
  'sim: integer below min',
  'locks list: misspelled flag',
  'bench: --timeout-ms 0',
  'locks pings: --timeout-ms not a number',
  'bench: concurrency not a number',
  'bench: duration not a duration',
  'bench: --slo not a duration',
  'locks list: --lock-expiry not a duration',
  'locks watch: --interval not a duration',
  'sim: latency not a duration',
  'conns watch: --interval without a unit',
  'locks watch: --interval without a unit',
  'bench: --duration without a unit',
  'bench: --sim-latency without a unit',
  'locks pings: --lock-expiry without a unit',
  'sim: --latency without a unit',
]

describe('usage errors without oclif are byte-identical to oclif’s', () => {
  it('every case of the bad-input table, as text and under --json', async () => {
    const served: string[] = []
    for (const badInput of cases) {
      // A case that needs the cluster names a live target: the fast path never answers those (a --uri it does not check).
      if (typeof badInput.args === 'function') continue
      const text = await assertSame([...badInput.command, ...badInput.args])
      const json = await assertSame([...badInput.command, '--json', ...badInput.args])
      assert.equal(json, text, `${badInput.name}: served as text and under --json alike`)
      if (text) served.push(badInput.name)
    }
    assert.deepEqual(served, SERVED)
  })

  it('the parser’s other forms: =, several unknown flags, a flag twice, a missing choice, --no-color, a secret in a value, durations', async () => {
    for (const argv of [
      ['bench', '--rate=0'],
      ['bench', '--bogus=1'],
      ['bench', '--bogus', '--other'],
      ['conns', 'list', '--json', '--nope', '--rate'],
      ['bench', '--concurrency', '4', '--concurrency', '8'],
      ['sim', '--topology'],
      ['sim', '--topology', '--json'],
      ['bench', '--no-color', '--concurrency', '1,x'],
      ['bench', '--concurrency', '0'],
      ['bench', '--concurrency', '8,', '--json'],
      ['bench', '--uri', 'mongodb://alice:hunter2@db.example:27017/', '--concurrency', 'abc'],
      ['sim', '--topology', 'mongodb://alice:hunter2@db.example:27017/'],
      ['locks', 'list', '--timeout-ms', '-5'],
      ['bench', '--warmup', 'soon'],
      ['bench', '--warmup', '7'],
      ['bench', '--warmup', 'AUTO', '--bogus'],
      ['bench', '--duration', '5s', '--rate', '0'],
      ['bench', '--duration=1000h', '--json'],
      ['conns', 'watch', '--interval', '2s', '--nope'],
    ]) {
      assert.ok(await assertSame(argv), `served: pooltool ${argv.join(' ')}`)
    }
  })

  it('leaves to oclif what it is not sure of', async () => {
    const notServed: Array<[string[], NodeJS.ProcessEnv?]> = [
      // Valid lines, and lines whose error the model does not name.
      [['bench', '--concurrency', '8']],
      [['bench']],
      [['bench', '--workload', 'nope']],
      [['bench', '--concurrency', 'abc', '--duration', '5s']],
      [['bench', '--concurrency', 'abc', '--workload', 'find']],
      [['conns', 'watch', '--interval', '10ms']],
      [['sim', '--fault', 'nope']],
      [['nosuch', '--bogus']],
      [['sim', 'extra']],
      [['report', 'compare', '--bogus']],
      // Two failing values: which one oclif names is a race between its promises.
      [['bench', '--rate', '0', '--doc-size', 'big']],
      [['bench', '--duration', 'xyz', '--rate', '0']],
      // Forms the model does not follow.
      [['bench', '--bogus', '--']],
      [['bench', '--debug', '--bogus']],
      [['bench', '--bogus', '-h']],
      [['bench', '--help', '--bogus']],
      [['bench', '--keep=yes']],
      [['bench', '-xyz']],
      [['autocomplete', '--bogus']],
      // An environment that changes what oclif does.
      [['bench', '--bogus'], {...commandEnv(), DEBUG: '*'}],
      [['bench', '--bogus'], {...commandEnv(), POOLTOOL_CONTENT_TYPE: 'json'}],
      [['bench', '--bogus'], {...commandEnv(), OCLIF_COLUMNS: '80'}],
      [['bench', '--bogus'], {...commandEnv(), MONGODB_LOG_ALL: 'debug'}],
      [['bench', '--bogus'], {...commandEnv(), NODE_ENV: 'development'}],
    ]
    for (const [argv, env] of notServed) assert.equal(await fastRun(argv, env), undefined, `pooltool ${argv.join(' ')} ${JSON.stringify(env?.DEBUG ?? '')}`)
  })

  it('bin/run.js prints the same bytes, with the same exit code, as the oclif path alone', async () => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'pooltool-fast-usage-'))
    after(() => rmSync(scratch, {recursive: true, force: true}))
    const oclifOnly = writeOclifOnlyScript(scratch)
    const run = (script: string, argv: string[]) => runScript(script, argv, commandEnv())
    for (const argv of [
      ['bench', '--concurrency', 'abc'],
      ['locks', 'list', '--json', '--bogus'],
      ['bench', '--uri', 'mongodb://alice:hunter2@db.example:27017/', '--concurrency', 'x'],
    ]) {
      assert.ok(await fastRun(argv), `the fast path serves pooltool ${argv.join(' ')}`)
      const viaBin = await run(path.join(REPO_ROOT, 'bin', 'run.js'), argv)
      assert.deepEqual(viaBin, await run(oclifOnly, argv), `pooltool ${argv.join(' ')}`)
      assert.equal(viaBin.code, 2)
      assert.doesNotMatch(viaBin.stdout + viaBin.stderr, /hunter2/)
    }
  })
})
