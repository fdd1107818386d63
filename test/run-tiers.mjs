#!/usr/bin/env node
// `npm test` after the import check and the build (it runs on that build: the cli tier's commands and the
// embedded clusters' processes come from dist/): each tier of the suite in turn, two to four test files
// at a time (FILES_AT_ONCE), then one line per tier with its wall time and result, so a slow tier is seen
// at once. Every tier runs even when an earlier one failed; the exit code is the first failure's.
//   node test/run-tiers.mjs [tier ...]     (tiers: unit cluster cli real prometheus; default all)
import {spawn} from 'node:child_process'
import {mkdirSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {compiled, pruneCache} from './helpers/ts-hooks.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const TIERS = ['unit', 'cluster', 'cli', 'real', 'prometheus']
const chosen = process.argv.length > 2 ? process.argv.slice(2) : TIERS
for (const tier of chosen) {
  if (!TIERS.includes(tier)) {
    console.error(`run-tiers: unknown tier '${tier}' (tiers: ${TIERS.join(', ')})`)
    process.exit(2)
  }
}

function filesOf(tier) {
  return readdirSync(path.join(root, 'test', tier)).filter((name) => name.endsWith('.test.ts')).sort().map((name) => path.join('test', tier, name))
}

/**
 * Test files run at once, per tier, on the 2-core machines this suite is sized for. The cli tier's files
 * wait a third of their time (a fault's downtime, a timeout running out, the latency a test gives the
 * embedded cluster): at two at once the tier used 1.4 of the 2 cores. Three at once fill the waits:
 * 495 s -> 387 s on an idle machine (2026-11-28, same build, side by side). Once 20 of its files ran their
 * commands in-process (fewer processes, more waiting in each file), four at once: 332 s -> 294 s (2026-12-08).
 * The unit and cluster tiers are CPU-bound already (cluster: 50.6 s at two, 48.6 s at three), so they keep two.
 */
const FILES_AT_ONCE = {unit: 2, cluster: 2, cli: 4, real: 2, prometheus: 2}

/**
 * Tiers whose files run a few to a process (GROUPS[tier] processes), not one each: a test process costs
 * ~0.2 CPU-s for its loader and waits ~150 ms for the loader's thread before its first test, which for the
 * unit tier's 81 files was most of its time. Each group process imports report-guard.mjs first: without it
 * a test capturing stdout swallowed its neighbours' reports (three tests unreported, every count passing).
 * Name order deals the files round-robin, so each group gets a share of every kind.
 */
const GROUPS = {unit: 3}
const GROUP_DIR = path.join(root, 'node_modules', '.cache', 'pooltool-test-groups')

/** The entry files `node --test` runs for a grouped tier: each imports the guard, then its share of the files. */
function groupEntries(tier, files) {
  const count = Math.min(GROUPS[tier], files.length)
  rmSync(GROUP_DIR, {recursive: true, force: true})
  mkdirSync(GROUP_DIR, {recursive: true})
  const url = (file) => JSON.stringify(pathToFileURL(path.resolve(root, file)).href)
  return Array.from({length: count}, (_, group) => {
    const share = files.filter((_, index) => index % count === group)
    const entry = path.join(GROUP_DIR, `${tier}-${group + 1}-of-${count}.test.mjs`)
    const imports = [path.join('test', 'helpers', 'report-guard.mjs'), ...share].map((file) => `import ${url(file)}`)
    writeFileSync(entry, `// ${tier} tier, group ${group + 1} of ${count}: written by test/run-tiers.mjs\n${imports.join('\n')}\n`)
    return entry
  })
}

/** The TypeScript the test processes import, compiled into ts-hooks.mjs's cache in one go, so the first files of
 *  a tier do not each start esbuild for the same sources (on a fresh clone; afterwards only changed files compile). */
async function fillTransformCache() {
  const sources = ['src', 'commands', 'test'].flatMap((dir) =>
    readdirSync(path.join(root, dir), {recursive: true, withFileTypes: true})
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
      .map((entry) => path.join(entry.parentPath, entry.name))
      .filter((file) => !file.includes(`${path.sep}node_modules${path.sep}`)),
  )
  // A file esbuild cannot read fails where a test imports it, with the test's name on it: not here.
  await Promise.all(sources.map((file) => compiled(file).catch(() => {})))
  // The transforms of files as they were before an edit are never read again: without this the cache only grows.
  pruneCache()
}

const LOADER = path.join(root, 'test', 'helpers', 'ts-loader.mjs')

function runTier(tier, files) {
  return new Promise((resolve) => {
    // The embedded clusters the tests start fork the built child, bundled (src/sim/host.ts): `npm test` has just built it.
    const env = {...process.env, POOLTOOL_SIM_CHILD: path.join(root, 'dist', 'src', 'sim', 'child.bundle.js')}
    const child = spawn(process.execPath, ['--import', LOADER, '--test', `--test-concurrency=${FILES_AT_ONCE[tier]}`, ...files], {cwd: root, stdio: 'inherit', env})
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

const started = performance.now()
await fillTransformCache()
const results = []
for (const tier of chosen) {
  const files = filesOf(tier)
  const t0 = performance.now()
  const code = files.length === 0 ? 0 : await runTier(tier, GROUPS[tier] ? groupEntries(tier, files) : files)
  results.push({tier, files: files.length, seconds: (performance.now() - t0) / 1000, code})
}
const total = (performance.now() - started) / 1000
const line = (name, files, seconds, verdict) => `${name.padEnd(11)} ${String(files).padStart(5)}  ${seconds.toFixed(1).padStart(7)} s  ${verdict}`
console.log(`\ntier        files     wall     result`)
for (const r of results) console.log(line(r.tier, r.files, r.seconds, r.code === 0 ? 'pass' : `FAIL (exit ${r.code})`))
console.log(line('all tiers', results.reduce((n, r) => n + r.files, 0), total, results.every((r) => r.code === 0) ? 'pass' : 'FAIL'))
process.exitCode = results.find((r) => r.code !== 0)?.code ?? 0
