#!/usr/bin/env node
// The secret guard goes first: everything loaded after it (the DEBUG output of oclif included) prints through it.
import {installSecretGuard} from '../dist/src/cli/secret-guard.js'

installSecretGuard()
// --version is one line that needs neither oclif nor any command: answered without loading them.
const {answerVersion} = await import('../dist/src/cli/version.js')
if (!(await answerVersion(process.argv.slice(2), process.env, new URL('../package.json', import.meta.url)))) {
  const main = await import('../dist/src/cli/main.js')
  await main.runPooltool(import.meta.url)
}
