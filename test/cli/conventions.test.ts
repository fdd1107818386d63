/**
 * CLI conventions a user tries first: -h, -v and `version`, shell completion, and "did you mean"
 * for a mistyped command (test/cli/bad-input.test.ts checks its one-line error).
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'

import {REPO_ROOT, runCli} from '../helpers/cli.js'

const {version} = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {version: string}

describe('CLI conventions', () => {
  it('-v and `version` print the version; -h the help', async () => {
    for (const args of [['-v'], ['--version'], ['version']]) {
      const run = await runCli(args)
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, new RegExp(`^pooltool/${version.replaceAll('.', '\\.')} `), args.join(' '))
    }
    const help = await runCli(['-h'])
    assert.equal(help.code, 0, help.stderr)
    assert.match(help.stdout, /^COMMANDS$/m)
    assert.match(help.stdout, /^ {2}bench /m)
    const benchHelp = await runCli(['bench', '-h'])
    assert.match(benchHelp.stdout, /--timeout-side=<option>[\s\S]*<options: client\|server>/, 'flag choices are listed')
  })

  it('shell completion is one command away', async () => {
    const run = await runCli(['autocomplete', 'bash'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /pooltool autocomplete/)
  })
})
