/**
 * The CLI glue, without running the CLI: every duration flag of every command
 * is the one duration flag type (milliseconds, a unit required, the same
 * errors), its default and help come from src/defaults.ts, and no core module
 * imports the glue. Flags are parsed through oclif's own parser, as a command
 * does, so the error a user sees is the one checked here.
 */
import assert from 'node:assert/strict'
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

import {type Command, Parser} from '@oclif/core'

import Auth from '../../commands/auth.js'
import Bench from '../../commands/bench.js'
import ConnsList from '../../commands/conns/list.js'
import ConnsWatch from '../../commands/conns/watch.js'
import LocksList from '../../commands/locks/list.js'
import LocksPings from '../../commands/locks/pings.js'
import LocksWatch from '../../commands/locks/watch.js'
import Sim from '../../commands/sim.js'
import {FlagValueError} from '../../src/cli/flags.js'
import {BENCH_DEFAULTS, CONNECTION_DEFAULTS, CONNS_DEFAULTS, LOCKS_DEFAULTS} from '../../src/defaults.js'
import {PoolToolError} from '../../src/errors.js'
import {DEFAULT_CONNECTION} from '../../src/target.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

type AnyCommand = typeof Command & {baseFlags?: Record<string, unknown>}

/** Each command and the duration flags it must have: the whole list, so a new one written as a plain string shows up. */
const DURATION_FLAGS: Array<[string, AnyCommand, string[]]> = [
  ['bench', Bench, ['duration', 'warmup', 'slo', 'sample-interval', 'series-interval', 'sim-latency', 'op-timeout']],
  ['conns watch', ConnsWatch, ['interval', 'duration', 'idle-window']],
  ['conns list', ConnsList, []],
  ['locks list', LocksList, ['lock-expiry']],
  ['locks pings', LocksPings, ['lock-expiry']],
  ['locks watch', LocksWatch, ['duration', 'interval', 'lock-expiry']],
  ['sim', Sim, ['latency', 'setup-cost', 'duration', 'replay-clock-offset']],
  ['auth', Auth, []],
]

/** Names that say "a length of time"; `--timeout-ms` and friends carry their unit in the name and take a number. */
const SOUNDS_LIKE_A_DURATION = /(^|-)(duration|interval|warmup|latency|slo|expiry|cost|window|wait|delay|timeout)($|-)/

type FlagDefinition = {type: string; helpValue?: string | string[]; summary?: string; default?: unknown; options?: readonly string[]}

function flagsOf(command: AnyCommand): Record<string, FlagDefinition> {
  return {...command.baseFlags, ...command.flags} as Record<string, FlagDefinition>
}

async function parse(command: AnyCommand, argv: string[]): Promise<Record<string, unknown>> {
  const {flags} = await Parser.parse(argv, {flags: flagsOf(command) as never, strict: true})
  return flags
}

/** What a user reads: BaseCommand reports a FlagValueError as the parser wrote it (`original`), not as oclif rewrote it. */
async function refusal(command: AnyCommand, argv: string[]): Promise<PoolToolError> {
  try {
    await parse(command, argv)
  } catch (error) {
    assert.ok(error instanceof FlagValueError, `${argv.join(' ')}: a FlagValueError, not ${String(error)}`)
    return error.original
  }
  assert.fail(`${argv.join(' ')} was accepted`)
}

describe('one duration flag type on every command', () => {
  for (const [name, command, expected] of DURATION_FLAGS) {
    it(`${name}: ${expected.length === 0 ? 'has no duration flag' : expected.map((flag) => `--${flag}`).join(', ')}`, () => {
      const flags = flagsOf(command)
      const durations = Object.keys(flags).filter((flag) => flags[flag]!.helpValue === '<duration>')
      assert.deepEqual(durations.sort(), [...expected].sort(), `${name}: the duration flags`)
      for (const [flag, definition] of Object.entries(flags)) {
        // A choice flag (--timeout-side client|server) lists its values: no duration hides there.
        if (!SOUNDS_LIKE_A_DURATION.test(flag) || flag.endsWith('-ms') || definition.options !== undefined) continue
        assert.ok(durations.includes(flag), `${name} --${flag} sounds like a duration: make it a durationFlag (or name its unit, like --timeout-ms)`)
        assert.equal(definition.type, 'option', `${name} --${flag} takes a value`)
      }
    })
  }

  for (const [name, command, flags] of DURATION_FLAGS) {
    for (const flag of flags) {
      it(`${name} --${flag}: milliseconds from any unit; a bare number refused with the units`, async () => {
        assert.equal((await parse(command, [`--${flag}`, '750ms']))[flag], 750)
        assert.equal((await parse(command, [`--${flag}`, '2s']))[flag], 2000)
        assert.equal((await parse(command, [`--${flag}=1.5m`]))[flag], 90_000)
        assert.equal((await parse(command, [`--${flag}`, '1h']))[flag], 3_600_000)
        const bare = await refusal(command, [`--${flag}`, '500'])
        assert.equal(bare.code, 'USAGE')
        assert.equal(bare.exitCode, 2)
        assert.equal(bare.message, `--${flag} 500 has no unit`)
        assert.equal(bare.hint, 'say 500ms or 500s; the units are ms, s, m and h')
        const wrong = await refusal(command, [`--${flag}`, 'soon'])
        // bench --warmup also takes auto (its default), and says so when given neither.
        assert.equal(wrong.message, flag === 'warmup' ? `--${flag} 'soon' is neither auto nor a duration` : `--${flag} 'soon' is not a duration`)
        const tooLong = await refusal(command, [`--${flag}`, '600h'])
        assert.match(tooLong.message, /above the longest duration pooltool can time/)
      })
      it(`${name} --${flag}: the help names a unit`, () => {
        const summary = flagsOf(command)[flag]!.summary ?? ''
        assert.match(summary, /\b\d+(\.\d+)?(ms|s|m|h)\b/, `${name} --${flag}: give an example with its unit in the summary ("${summary}")`)
      })
    }
  }
})

describe('defaults in one place', () => {
  it('the duration flags default to src/defaults.ts, in milliseconds', async () => {
    const watch = await parse(ConnsWatch, [])
    assert.deepEqual([watch.interval, watch['idle-window'], watch.duration], [CONNS_DEFAULTS.intervalMS, CONNS_DEFAULTS.idleWindowMS, undefined])
    const locks = await parse(LocksWatch, [])
    assert.equal(locks.interval, LOCKS_DEFAULTS.intervalMS)
    const bench = await parse(Bench, [])
    assert.deepEqual([bench.warmup, bench['sample-interval'], bench.duration], [BENCH_DEFAULTS.warmup, BENCH_DEFAULTS.sampleIntervalMS, undefined])
    assert.equal((await parse(Bench, ['--warmup', 'auto'])).warmup, 'auto', 'auto can be given, as the default it is')
  })
  it('the connection flags and the library share them', async () => {
    const flags = await parse(Bench, [])
    assert.equal(flags['timeout-ms'], CONNECTION_DEFAULTS.timeoutMs)
    assert.equal(flags['app-name'], CONNECTION_DEFAULTS.appName)
    assert.deepEqual(DEFAULT_CONNECTION, {appName: CONNECTION_DEFAULTS.appName, timeoutMs: CONNECTION_DEFAULTS.timeoutMs})
  })
})

describe('src/cli holds the oclif glue only', () => {
  it('no module under src/ outside src/cli imports from src/cli', () => {
    const offenders: string[] = []
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, {withFileTypes: true})) {
        const file = path.join(dir, entry.name)
        if (entry.isDirectory()) {
          if (file !== path.join(ROOT, 'src', 'cli')) walk(file)
        } else if (entry.name.endsWith('.ts')) {
          for (const [index, line] of readFileSync(file, 'utf8').split('\n').entries()) {
            if (/from '(\.\.\/)+cli\/|from '\.\/cli\//.test(line)) offenders.push(`${path.relative(ROOT, file)}:${index + 1}: ${line.trim()}`)
          }
        }
      }
    }
    walk(path.join(ROOT, 'src'))
    assert.deepEqual(offenders, [], 'core modules import the glue: move what they need into the core (src/parse, src/defaults.ts)')
  })
})
