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

describe('watch times: local time with its zone, or --utc', () => {
  /** HH:MM:SS of `at` in Asia/Kolkata (UTC+05:30, no daylight saving). */
  const kolkata = (at: number) => new Date(at + 5.5 * 3_600_000).toISOString().slice(11, 19)
  const utc = (at: number) => new Date(at).toISOString().slice(11, 19)
  const watch = (extra: string[]) => runCli(['conns', 'watch', '--sim-topology', 'standalone', '--count', '1', ...extra], {env: {TZ: 'Asia/Kolkata'}})

  it('conns watch prints its rounds in local time and says the zone; --utc in UTC', async () => {
    for (const [flags, clock, zone] of [[[], kolkata, /times are local, UTC\+05:30 \(Asia\/(Kolkata|Calcutta)\); --utc for UTC/], [['--utc'], utc, /times are UTC/]] as const) {
      const before = Math.floor(Date.now() / 1000) * 1000
      const run = await watch([...flags])
      const after = Date.now()
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stderr, zone)
      const printed = /^(\d\d:\d\d:\d\d) #1 /m.exec(run.stdout)?.[1]
      // The round happened while the command ran: its time of day is one of the seconds in between.
      const seconds = Array.from({length: Math.floor((after - before) / 1000) + 1}, (_, i) => clock(before + i * 1000))
      assert.ok(printed !== undefined && seconds.includes(printed), `${printed} is among ${seconds.join(', ')} (${flags.join(' ') || 'local'})`)
    }
  })
})
