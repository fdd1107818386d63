// Installs mongosh for the conformance tests (test/cli/conformance-mongosh.test.ts) from this folder's own
// lockfile when the pinned version is not there yet: `npm test` works on a fresh clone, and a user's
// `npm ci` at the top stays light. Only the npm registry is needed (.npmrc here skips native add-ons).
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const pinned = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')).dependencies.mongosh
const installedManifest = join(here, 'node_modules', 'mongosh', 'package.json')
const installed = existsSync(installedManifest) ? JSON.parse(readFileSync(installedManifest, 'utf8')).version : undefined
if (installed !== pinned) {
  process.stderr.write(`installing mongosh ${pinned} for the conformance tests into test/conformance (once)\n`)
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel', 'error'], {cwd: here, stdio: ['ignore', 'ignore', 'inherit']})
}
