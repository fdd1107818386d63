/**
 * What a start loads before a command runs (issue 27): help is rendered from the manifest, a usage
 * error is found by the command's flags, `--version` needs neither; none of them may load the
 * driver, the bench engine, the embedded cluster, zod, yaml or the HDR histograms. The built CLI
 * runs with a module hook that lists every module loaded, ESM and CommonJS alike; the test reads
 * the list, so a new top-level import of a heavy module in a command or in src/cli fails here
 * with the module named. A real command, up to its first connection, is held to what it needs too.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, it} from 'node:test'
import {pathToFileURL} from 'node:url'

import {REPO_ROOT} from '../helpers/cli.js'

const scratch = mkdtempSync(path.join(tmpdir(), 'pooltool-startup-loads-'))
after(() => rmSync(scratch, {recursive: true, force: true}))

const hooks = path.join(scratch, 'hooks.mjs')
writeFileSync(
  hooks,
  "import {appendFileSync} from 'node:fs'\n" +
    'export async function load(url, context, next) {\n' +
    "  appendFileSync(process.env.STARTUP_LOADS_LIST, url + '\\n')\n" +
    '  return next(url, context)\n' +
    '}\n',
)
const register = path.join(scratch, 'register.mjs')
writeFileSync(
  register,
  "import {appendFileSync} from 'node:fs'\n" +
    "import {createRequire, register} from 'node:module'\n" +
    `register(${JSON.stringify(pathToFileURL(hooks).href)})\n` +
    'const require = createRequire(import.meta.url)\n' +
    // require.cache: the CommonJS modules, which a CommonJS parent loads past the ESM hook.
    "process.on('exit', () => appendFileSync(process.env.STARTUP_LOADS_LIST, Object.keys(require.cache).join('\\n') + '\\n'))\n",
)

let serial = 0
/** The modules one start of the built CLI loaded (file paths and URLs), and its exit code. */
function loadedBy(args: string[]): Promise<{code: number | null; modules: string[]; stderr: string}> {
  const list = path.join(scratch, `loaded-${serial++}.txt`)
  writeFileSync(list, '')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(register).href, path.join(REPO_ROOT, 'bin', 'run.js'), ...args], {
      env: {...process.env, STARTUP_LOADS_LIST: list, NO_COLOR: '1'},
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, modules: readFileSync(list, 'utf8').split('\n').filter(Boolean), stderr}))
  })
}

/** What no start before a command's run() may load, by the path fragment that gives it away. */
const HEAVY = [
  '/node_modules/mongodb/',
  '/node_modules/zod/',
  '/node_modules/yaml/',
  '/node_modules/hdr-histogram-js/',
  '/dist/src/bench/engine.js',
  '/dist/src/bench/run-bench.js',
  '/dist/src/sim/',
  '/dist/src/mongo/driver.js',
]

function heavyIn(modules: readonly string[]): string[] {
  return modules.filter((module) => HEAVY.some((fragment) => module.replaceAll('\\', '/').includes(fragment)))
}

describe('what a start loads before a command runs', () => {
  for (const {args, code} of [
    {args: ['--version'], code: 0},
    {args: ['--help'], code: 0},
    {args: ['bench', '--help'], code: 0},
    {args: ['conns', 'list', '--help'], code: 0},
    {args: ['locks', '--help'], code: 0},
    {args: ['bench', '--concurrency', 'abc'], code: 2},
  ]) {
    it(`pooltool ${args.join(' ')}: not the driver, the engine, the embedded cluster, zod, yaml or HDR`, async () => {
      const run = await loadedBy(args)
      assert.equal(run.code, code, run.stderr)
      assert.ok(run.modules.some((module) => module.includes('run.js')), 'the hook saw the start')
      assert.deepEqual(heavyIn(run.modules), [])
    })
  }

  it('help is drawn from the manifest: no command module loads for it', async () => {
    for (const args of [['bench', '--help'], ['conns', 'watch', '--help'], ['locks', 'watch', '--help'], ['sim', '--help']]) {
      const run = await loadedBy(args)
      assert.equal(run.code, 0, run.stderr)
      assert.deepEqual(
        run.modules.filter((module) => module.replaceAll('\\', '/').includes('/dist/commands/')),
        [],
        `pooltool ${args.join(' ')}`,
      )
    }
  })

  // The fast paths (src/cli/version.ts, src/cli/fast-help.ts, src/cli/fast-usage.ts): no oclif, no command, and
  // for help at a pipe's default width not even the text fitter's width code (string-width, wrap-ansi).
  for (const {args, code} of [
    {args: ['--version'], code: 0},
    {args: [], code: 0},
    {args: ['--help'], code: 0},
    {args: ['bench', '--help'], code: 0},
    {args: ['conns', 'list', '--help'], code: 0},
    {args: ['locks', '--help'], code: 0},
    {args: ['bench', '--concurrency', 'abc'], code: 2},
    {args: ['locks', 'list', '--json', '--bogus'], code: 2},
    {args: ['sim', '--topology', 'ring'], code: 2},
  ]) {
    it(`pooltool ${args.join(' ')} loads no oclif`, async () => {
      const run = await loadedBy(args)
      assert.equal(run.code, code, run.stderr)
      assert.deepEqual(
        run.modules.filter((module) => ['/node_modules/@oclif/', '/dist/commands/', '/node_modules/string-width/', '/node_modules/wrap-ansi/'].some((fragment) => module.replaceAll('\\', '/').includes(fragment))),
        [],
      )
    })
  }

  // A real command up to its first connection, to a port nobody listens on (refused: exit 4). What it must not load
  // there, by the path fragment that gives it away: semver (oclif's index checks Node against oclif's own engines
  // with it; bin/run.js skips that check), saslprep's Unicode tables (built as the driver loads, used only by a
  // SCRAM-SHA-256 handshake with a password: src/mongo/lazy-saslprep.ts) and, where no cluster starts, the embedded
  // cluster's door (target.ts imports it where one starts).
  const SEMVER = '/node_modules/semver/'
  const SASLPREP_TABLES = ['/node_modules/@mongodb-js/saslprep/dist/memory-code-points.js', '/node_modules/sparse-bitfield/']
  const SIM_DOOR = '/dist/src/sim/'
  const unreachable = ['--uri', 'mongodb://127.0.0.1:1', '--timeout-ms', '200']
  for (const {args, mustNot} of [
    {args: ['locks', 'list', ...unreachable], mustNot: [SEMVER, ...SASLPREP_TABLES]},
    {args: ['conns', 'list', ...unreachable], mustNot: [SEMVER, ...SASLPREP_TABLES]},
    {args: ['bench', ...unreachable, '--duration', '1s'], mustNot: [SEMVER, ...SASLPREP_TABLES, SIM_DOOR]},
  ]) {
    it(`pooltool ${args.join(' ')} (no credentials): not ${mustNot.join(', ')}`, async () => {
      const run = await loadedBy(args)
      assert.equal(run.code, 4, run.stderr)
      assert.ok(run.modules.some((module) => module.includes('/node_modules/mongodb/')), 'the driver loaded: the run got as far as connecting')
      assert.deepEqual(
        run.modules.filter((module) => mustNot.some((fragment) => module.replaceAll('\\', '/').includes(fragment))),
        [],
      )
    })
  }

  it('a usage error the fast path is not sure of goes to oclif', async () => {
    // bench's own check is answered only beside flags that cannot fail before it: --duration is not one of them.
    const run = await loadedBy(['bench', '--concurrency', 'abc', '--duration', '5s'])
    assert.equal(run.code, 2, run.stderr)
    assert.ok(run.modules.some((module) => module.includes('/node_modules/@oclif/core/')))
  })

  it('help in another form goes to oclif (the fast path serves only what it is sure of)', async () => {
    const run = await loadedBy(['bench', '-h'])
    assert.equal(run.code, 0, run.stderr)
    assert.ok(run.modules.some((module) => module.includes('/node_modules/@oclif/core/')))
  })
})
