#!/usr/bin/env node
/**
 * `npm run lint:imports`: checks the import rules of .dependency-cruiser.cjs with dependency-cruiser's API.
 * Not its CLI: the CLI refuses to start on Node 20 (its own engines check), which this project supports;
 * the API does the same work there.
 *
 * Usage: node test/check-imports.mjs [--base DIR] [PATH…]   (default paths: src commands bin test)
 * Prints each violation (rule name, from → to) and exits 1 if there is any; 0 when all rules hold.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {cruise} from 'dependency-cruiser'
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
let base = repo
const baseAt = args.indexOf('--base')
if (baseAt !== -1) {
  base = path.resolve(args[baseAt + 1])
  args.splice(baseAt, 2)
}
const paths = (args.length > 0 ? args : ['src', 'commands', 'bin', 'test']).filter((p) => existsSync(path.join(base, p)))

process.chdir(base)
const options = await extractDepcruiseOptions(path.join(repo, '.dependency-cruiser.cjs'))
// The tree's own tsconfig.json: how its `./x.js` specifiers resolve to `x.ts`.
const tsConfig = extractTSConfig(path.join(base, 'tsconfig.json'))
// In the repository, a cache keyed on the files' contents (in dist/, which the build owns and git ignores):
// a run after a small change re-reads only what changed.
// A tree elsewhere (the checker's own test plants one) is read afresh.
if (base === repo) options.cache = {folder: 'dist/.import-rules-cache', strategy: 'content', compress: false}
const started = performance.now()
const result = await cruise(paths, {...options, validate: true, outputType: 'err'}, undefined, {tsConfig})
process.stdout.write(result.output)
const seconds = ((performance.now() - started) / 1000).toFixed(1)
if (result.exitCode === 0) process.stdout.write(`import rules hold: ${paths.join(', ')} (${seconds} s)\n`)
process.exitCode = result.exitCode === 0 ? 0 : 1
