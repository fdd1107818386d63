/**
 * Help without oclif (src/cli/fast-help.ts) prints exactly what oclif prints. For every page the
 * build rendered (bare `pooltool`, `--help`, every topic's and every one of pooltool's commands'
 * `--help`), both paths run in one child process per terminal setting: the fast path's writes
 * against oclif's (the same executePooltool bin/run.js reaches, stdout and stderr captured, the
 * exit code), at a pipe's default and with COLUMNS 33/60/120, NO_COLOR and FORCE_COLOR, and on a
 * terminal (isTTY and columns as Node sets them, before oclif loads) 80, 120 and 200 columns wide.
 * Where the fast path does not serve (a terminal width not rendered, OCLIF_COLUMNS, -h, `help x`,
 * a plugin's command) it must say so, so oclif answers; spawned runs of bin/run.js prove the wiring.
 * Needs `npm run build` (it renders dist/help).
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, it} from 'node:test'
import {pathToFileURL} from 'node:url'

import {REPO_ROOT} from '../helpers/cli.js'
import {runScript, writeOclifOnlyScript} from '../helpers/oclif-only.js'

const scratch = mkdtempSync(path.join(tmpdir(), 'pooltool-fast-help-'))
after(() => rmSync(scratch, {recursive: true, force: true}))
const dist = (file: string) => pathToFileURL(path.join(REPO_ROOT, 'dist/src/cli', file)).href
const index = JSON.parse(readFileSync(path.join(REPO_ROOT, 'dist/help/index.json'), 'utf8')) as {widths: number[]; pages: Record<string, string>}

/** A child that runs both paths for each invocation and env overlay it is given, under one terminal setting. */
const both = path.join(scratch, 'both-paths.mjs')
writeFileSync(
  both,
  `import {readFileSync, writeFileSync} from 'node:fs'
const job = JSON.parse(readFileSync(process.env.JOB, 'utf8'))
if (job.ttyColumns) {
  // What Node sets on a terminal, before anything reads it (oclif reads its width as it loads).
  Object.defineProperty(process.stdout, 'isTTY', {value: true})
  process.stdout.columns = job.ttyColumns
  process.stdout.rows = 40
  process.stdout.getWindowSize = () => [job.ttyColumns, 40]
}
const {installSecretGuard} = await import(${JSON.stringify(dist('secret-guard.js'))})
installSecretGuard()
const {renderHelp} = await import(${JSON.stringify(dist('fast-help.js'))})
const {executePooltool} = await import(${JSON.stringify(dist('main.js'))})
const write = {stdout: process.stdout.write, stderr: process.stderr.write}
const results = []
for (const {argv, env} of job.runs) {
  const saved = {...process.env}
  Object.assign(process.env, env)
  const fast = await renderHelp(argv, process.env, process.stdout)
  const out = {stdout: '', stderr: ''}
  for (const key of ['stdout', 'stderr']) process[key].write = (chunk, ...rest) => { out[key] += String(chunk); rest.find((a) => typeof a === 'function')?.(); return true }
  process.exitCode = undefined
  let code
  try {
    // The directory as bin/run.js gives it: oclif loads a fresh config (its help rewrites command ids in place).
    code = (await executePooltool([...argv], ${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'bin', 'run.js')).href)})) ?? process.exitCode ?? 0
  } finally {
    process.stdout.write = write.stdout
    process.stderr.write = write.stderr
    process.exitCode = undefined
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
    Object.assign(process.env, saved)
  }
  results.push({argv, env, fast: fast === undefined ? null : fast.join(''), oclif: {...out, code}})
}
writeFileSync(process.env.RESULTS, JSON.stringify(results))
`,
)

interface Result {
  argv: string[]
  env: Record<string, string>
  fast: string | null
  oclif: {stdout: string; stderr: string; code: number}
}

let serial = 0
/** Both paths, for each invocation and env overlay, in one child under `ttyColumns` (undefined: a pipe) and `env`. */
function bothPaths(runs: {argv: string[]; env: Record<string, string>}[], ttyColumns: number | undefined, env: Record<string, string> = {}): Promise<Result[]> {
  const job = path.join(scratch, `job-${serial}.json`)
  const results = path.join(scratch, `results-${serial++}.json`)
  writeFileSync(job, JSON.stringify({runs, ttyColumns}))
  const childEnv: NodeJS.ProcessEnv = {...process.env, JOB: job, RESULTS: results, ...env}
  // The developer's shell must not decide the case: no width, colour or URI from it.
  for (const name of ['COLUMNS', 'OCLIF_COLUMNS', 'NO_COLOR', 'FORCE_COLOR', 'POOLTOOL_URI', 'MONGODB_URI', 'DEBUG']) if (!(name in env)) delete childEnv[name]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [both], {env: childEnv, stdio: ['ignore', 'pipe', 'pipe']})
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`both-paths child: exit ${code}\n${stderr}`))
      else resolve(JSON.parse(readFileSync(results, 'utf8')) as Result[])
    })
  })
}

const pages = Object.keys(index.pages).map((key) => (key === '' ? [] : key.split(' ')))

function assertIdentical(results: Result[], served: boolean): void {
  for (const result of results) {
    const label = `pooltool ${result.argv.join(' ')} ${JSON.stringify(result.env)}`
    assert.equal(result.oclif.code, 0, label)
    assert.equal(result.oclif.stderr, '', label)
    if (served) assert.equal(result.fast, result.oclif.stdout, label)
    else assert.equal(result.fast, null, `${label}: the fast path must leave this to oclif`)
  }
}

describe('help without oclif is byte-identical to oclif’s', () => {
  it('has a page for every topic and every one of pooltool’s commands', () => {
    const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {hasDynamicHelp?: boolean}>}
    const ids = Object.keys(manifest.commands)
    const topics = new Set(ids.flatMap((id) => id.split(':').slice(0, -1).map((_, n, words) => words.slice(0, n + 1).join(':'))))
    const expected = [...ids.filter((id) => !manifest.commands[id]!.hasDynamicHelp), ...topics].map((id) => `${id.replaceAll(':', ' ')} --help`)
    for (const key of ['', '--help', ...expected]) assert.ok(key in index.pages, `no page for 'pooltool ${key}'`)
    assert.ok(ids.length >= 10, 'the manifest lists the commands')
  })

  it('on a pipe: by default, with COLUMNS 33, 60 and 120, NO_COLOR and FORCE_COLOR', async () => {
    const overlays = [{}, {COLUMNS: '33'}, {COLUMNS: '60'}, {COLUMNS: '120'}, {NO_COLOR: '1'}, {FORCE_COLOR: '1'}]
    assertIdentical(await bothPaths(pages.flatMap((argv) => overlays.map((env) => ({argv, env}))), undefined), true)
  })

  for (const columns of [80, 120, 200]) {
    it(`on a terminal ${columns} columns wide`, async () => {
      assertIdentical(await bothPaths(pages.map((argv) => ({argv, env: {}})), columns), true)
    })
  }

  it('leaves to oclif a terminal width it did not render, and OCLIF_COLUMNS', async () => {
    const sample = [[], ['bench', '--help'], ['conns', '--help']]
    assert.ok(!index.widths.includes(61))
    assertIdentical(await bothPaths(sample.map((argv) => ({argv, env: {}})), 61), false)
    assertIdentical(await bothPaths(sample.map((argv) => ({argv, env: {}})), undefined, {OCLIF_COLUMNS: '120'}), false)
  })

  it('leaves to oclif every other form: -h, help <command>, flags, plugins’ commands, a scoped variable', async () => {
    const {renderHelp} = (await import(dist('fast-help.js'))) as {renderHelp(argv: string[], env: NodeJS.ProcessEnv, stream: unknown): Promise<string[] | undefined>}
    const pipe = {isTTY: false}
    for (const argv of [
      ['-h'],
      ['bench', '-h'],
      ['help'],
      ['help', 'bench'],
      ['bench', '--json', '--help'],
      ['bench', '--help', '--json'],
      ['--help', 'bench'],
      ['bench', '--debug', '--help'],
      ['autocomplete', '--help'],
      ['version', '--help'],
      ['bnech', '--help'],
      ['conns'],
      ['--', '--help'],
    ]) {
      assert.equal(await renderHelp(argv, {}, pipe), undefined, `pooltool ${argv.join(' ')}`)
    }
    for (const env of [{DEBUG: '*'}, {POOLTOOL_DISABLE_THEME: '1'}, {POOLTOOL_CONFIG_DIR: scratch}, {OCLIF_COLUMNS: '80'}, {NODE_ENV: 'development'}, {MONGODB_LOG_ALL: 'debug'}]) {
      assert.equal(await renderHelp(['bench', '--help'], env, pipe), undefined, JSON.stringify(env))
    }
    // A user theme (oclif's config directory) or user plugins (its data directory) change help.
    const home = mkdtempSync(path.join(scratch, 'home-'))
    assert.notEqual(await renderHelp(['bench', '--help'], {HOME: home}, pipe), undefined, 'an empty home: served')
    for (const [dir, file] of [['.config/pooltool', 'theme.json'], ['.local/share/pooltool', 'package.json']] as const) {
      const user = mkdtempSync(path.join(scratch, 'home-'))
      mkdirSync(path.join(user, dir), {recursive: true})
      writeFileSync(path.join(user, dir, file), '{}')
      assert.equal(await renderHelp(['bench', '--help'], {HOME: user}, pipe), undefined, `${dir}/${file}`)
    }
    // POOLTOOL_URI is read by commands, never by help: served.
    assert.notEqual(await renderHelp(['bench', '--help'], {POOLTOOL_URI: 'mongodb://h'}, pipe), undefined)
  })

  it('bin/run.js prints the same bytes, on stdout only, exit 0, as the oclif path alone', async () => {
    const oclifOnly = writeOclifOnlyScript(scratch)
    const run = (script: string, argv: string[], env: Record<string, string>) => {
      const childEnv: NodeJS.ProcessEnv = {...process.env, ...env}
      for (const name of ['COLUMNS', 'OCLIF_COLUMNS', 'NO_COLOR', 'FORCE_COLOR', 'DEBUG']) if (!(name in env)) delete childEnv[name]
      return runScript(script, argv, childEnv)
    }
    for (const [argv, env] of [
      [[], {}],
      [['bench', '--help'], {}],
      [['conns', 'list', '--help'], {COLUMNS: '60'}],
    ] as const) {
      const fast = await run(path.join(REPO_ROOT, 'bin', 'run.js'), [...argv], env)
      const oclif = await run(oclifOnly, [...argv], env)
      assert.deepEqual(fast, oclif, `pooltool ${argv.join(' ')}`)
      assert.equal(fast.code, 0)
      assert.ok(fast.stdout.includes('USAGE'))
    }
  })
})
