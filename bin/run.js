#!/usr/bin/env node
// The secret guard goes first: everything loaded after it (the DEBUG output of oclif included) prints through it.
import {installSecretGuard} from '../dist/src/cli/secret-guard.js'

installSecretGuard()
// --version is one line that needs neither oclif nor any command: answered without loading them.
const {answerVersion} = await import('../dist/src/cli/version.js')
// So is help for pooltool, a topic or one of its commands, from pages oclif rendered at build (src/cli/fast-help.ts); anything else goes to oclif.
const {answerHelp} = await import('../dist/src/cli/fast-help.js')
// And a bad command line whose usage error is sure from the flags oclif described at build (src/cli/fast-usage.ts): loaded only when asked.
const answerUsageError = async (argv, env) => (await import('../dist/src/cli/fast-usage.js')).answerUsageError(argv, env)
const argv = process.argv.slice(2)
if (!(await answerVersion(argv, process.env, new URL('../package.json', import.meta.url))) && !(await answerHelp(argv, process.env)) && !(await answerUsageError(argv, process.env))) {
  // oclif's index checks Node against oclif's own engines (>=18, below pooltool's >=20.19, so it never warns) with
  // semver: 47 files, about 6% of what loading oclif and a command costs. Skipped for that one import only.
  const skipEngineCheck = process.env.OCLIF_DISABLE_ENGINE_WARNING === undefined
  if (skipEngineCheck) process.env.OCLIF_DISABLE_ENGINE_WARNING = '1'
  const main = await import('../dist/src/cli/main.js')
  if (skipEngineCheck) delete process.env.OCLIF_DISABLE_ENGINE_WARNING
  await main.runPooltool(import.meta.url)
}
