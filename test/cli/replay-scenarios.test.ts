/**
 * Replay scenarios from published MongoDB documents (test/fixtures/replay/*.json, see its
 * README): each fixture is served by `pooltool sim --replay` (startReplay), the commands its
 * verdicts name run against it as a user runs them, and each verdict a DBA would draw is
 * checked loosely: a field present with a value, an array holding a matching element, a
 * phrase in a note. The fixture files themselves are checked too: sources cited, what was
 * assembled said, every captured host answering hello, no credentials.
 *
 * The replays are real processes; the verdicts' commands (all exit 0: conns list, locks list,
 * locks pings) run in this process through the path bin/run.js takes (test/helpers/in-process.ts:
 * the same code over real TCP, output and exit code captured), sparing a Node start and CLI
 * load for each. Spawned runs of these commands against a replay are in conns-replay-findings,
 * replay-refusal and snapshot-node-locks.
 */
import assert from 'node:assert/strict'
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'
import {EJSON} from 'bson'

import {parseJson, REPO_ROOT} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'
import {startReplay} from '../helpers/replay.js'

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'replay')
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()

/** Bounds each command's reads: the hosts a fixture did not capture do not resolve, so they fail fast anyway. */
const TIMEOUT_MS = '3000'

interface Verdict {
  argv: string[]
  exit: number
  conclusion: string
  json?: unknown
  mentions?: string[]
}

interface Fixture {
  format: string
  formatVersion: number
  entry: {uri: string; seedHosts: string[]}
  hosts: Array<{host: string; address?: string; role: string; reads: Array<{name: string; reply?: unknown; error?: unknown}>}>
  source: {title: string; citations: Array<{url: string; what: string}>; assembled: string}
  verdicts: Record<string, Verdict>
}

const load = (file: string): Fixture => JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as Fixture

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const show = (v: unknown) => {
  const text = JSON.stringify(v)
  return text === undefined ? 'absent' : text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/**
 * Where `actual` fails the loose `expected` (the verdict language of the fixtures' README), or
 * undefined when it matches.
 */
function mismatch(expected: unknown, actual: unknown, at = '$'): string | undefined {
  if (isObject(expected) && Object.keys(expected).some((k) => k.startsWith('$'))) {
    for (const [op, operand] of Object.entries(expected)) {
      const fail = (what: string) => `${at}: expected ${what}, got ${show(actual)}`
      if (op === '$contains') {
        if (typeof actual !== 'string' || !actual.toLowerCase().includes(String(operand).toLowerCase())) return fail(`a string containing "${operand}"`)
      } else if (op === '$gt') {
        if (typeof actual !== 'number' || !(actual > Number(operand))) return fail(`a number above ${operand}`)
      } else if (op === '$present') {
        if (actual === undefined || actual === null) return fail('a value')
      } else if (op === '$capturedTime') {
        // A replay serves every captured time moved on by the time since it began (frozen at capture).
        const moved = typeof actual === 'string' ? Date.parse(actual) - Date.parse(String(operand)) : Number.NaN
        if (!(moved >= 0 && moved < 10 * 60_000)) return fail(`${operand} moved on by the replay's running time`)
      } else if (op === '$length') {
        if (!Array.isArray(actual) || actual.length !== operand) return fail(`an array of length ${operand}`)
      } else {
        return `${at}: unknown verdict operator ${op}`
      }
    }
    return undefined
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${at}: expected an array, got ${show(actual)}`
    for (const element of expected) {
      if (!actual.some((candidate) => mismatch(element, candidate) === undefined)) {
        const nearest = actual.map((candidate, j) => mismatch(element, candidate, `${at}[${j}]`)).join('\n    ')
        return `${at}: no element matches ${show(element)}\n    ${nearest || '(empty array)'}`
      }
    }
    return undefined
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return `${at}: expected an object, got ${show(actual)}`
    for (const [key, value] of Object.entries(expected)) {
      const failure = mismatch(value, actual[key], `${at}.${key}`)
      if (failure) return failure
    }
    return undefined
  }
  return Object.is(expected, actual) ? undefined : `${at}: expected ${show(expected)}, got ${show(actual)}`
}

describe('the verdict matcher', () => {
  it('matches loosely and fails on a missing field, a wrong value, an absent element or a missing phrase', () => {
    const out = {model: 'config.locks', locks: [{name: 'a', verdict: 'held', heldMS: 12}, {name: 'b', verdict: 'stale'}], notes: ['Router versions differ']}
    assert.equal(mismatch({model: 'config.locks', locks: [{name: 'b', verdict: 'stale'}], notes: [{$contains: 'versions'}]}, out), undefined)
    assert.equal(mismatch({locks: [{name: 'a', heldMS: {$gt: 10}}], notes: {$length: 1}}, out), undefined)
    assert.match(mismatch({entry: 'config-server'}, out) ?? '', /\$\.entry: expected "config-server", got absent/)
    assert.match(mismatch({locks: [{name: 'a', verdict: 'stale'}]}, out) ?? '', /no element matches/)
    assert.match(mismatch({notes: [{$contains: 'not reachable from here'}]}, out) ?? '', /no element matches/)
    assert.match(mismatch({locks: [{name: 'a', heldMS: {$gt: 12}}]}, out) ?? '', /no element matches/)
    assert.match(mismatch({locks: {$length: 0}}, out) ?? '', /array of length 0/)
  })
})

describe('replay fixtures', () => {
  it('has at least 8 scenarios covering 4.4, 5.0, 6.0, 7.0 and 8.0 through mongos, config-server and shard-member entries', () => {
    assert.ok(FILES.length >= 8, `${FILES.length} fixtures`)
    const versions = new Set<string>()
    const entryRoles = new Set<string>()
    for (const file of FILES) {
      const fixture = load(file)
      const seed = fixture.entry.seedHosts[0]
      const entry = fixture.hosts.find((h) => h.host === seed || h.address === seed)
      assert.ok(entry, `${file}: the entry ${seed} is a captured host`)
      entryRoles.add(entry.role)
      for (const host of fixture.hosts) {
        const version = (host.reads.find((r) => r.name === 'buildInfo')?.reply as {version?: string} | undefined)?.version
        if (version) versions.add(version.split('.').slice(0, 2).join('.'))
      }
    }
    for (const version of ['4.4', '5.0', '6.0', '7.0', '8.0']) assert.ok(versions.has(version), `a fixture runs ${version} (have ${[...versions]})`)
    for (const role of ['mongos', 'config', 'shard']) assert.ok(entryRoles.has(role), `a fixture enters through a ${role} (have ${[...entryRoles]})`)
  })

  for (const file of FILES) {
    it(`${file}: cites its sources, says what it assembled, every captured host answers hello, no credentials`, () => {
      const text = readFileSync(path.join(DIR, file), 'utf8')
      const fixture = load(file)
      assert.equal(fixture.format, 'pooltool-snapshot')
      assert.equal(fixture.formatVersion, 1)
      // Canonical Extended JSON: every document parses with its BSON types.
      const typed = EJSON.parse(text, {relaxed: false}) as {capturedAt: unknown; hosts: Array<{clock: {serverTime: unknown}}>}
      assert.ok(typed.capturedAt instanceof Date, 'capturedAt is a date')
      for (const host of typed.hosts) assert.ok(host.clock.serverTime instanceof Date, 'each host has its clock')
      assert.ok(fixture.source.title.length > 0)
      assert.ok(fixture.source.citations.length > 0, 'cites at least one source')
      for (const citation of fixture.source.citations) {
        assert.match(citation.url, /^https:\/\//, 'each citation has a URL')
        assert.ok(citation.what.length > 20, `citation ${citation.url} says which documents came from it`)
      }
      assert.ok(fixture.source.assembled.length > 20, 'says what was assembled')
      assert.ok(fixture.hosts.length > 0)
      for (const host of fixture.hosts) {
        const hello = host.reads.find((r) => r.name === 'hello')
        assert.ok(hello && isObject(hello.reply), `${host.host} has a hello reply`)
        for (const r of host.reads) assert.ok((r.reply === undefined) !== (r.error === undefined), `${host.host} ${r.name}: a reply or an error`)
      }
      assert.doesNotMatch(fixture.entry.uri, /@/, 'the entry URI carries no credentials')
      assert.doesNotMatch(text, /password|passwd|P#ssw0rd/i)
      assert.ok(Object.keys(fixture.verdicts).length > 0, 'carries verdicts')
      for (const [command, verdict] of Object.entries(fixture.verdicts)) {
        assert.ok(verdict.argv.includes('--json'), `${command}: runs with --json`)
        assert.equal(typeof verdict.exit, 'number', `${command}: an exit code`)
        assert.ok(verdict.conclusion.length > 20, `${command}: says what a DBA concludes`)
        assert.ok(verdict.json !== undefined || (verdict.mentions ?? []).length > 0, `${command}: something to check`)
      }
    })
  }
})

for (const file of FILES) {
  const fixture = load(file)
  describe(`replay ${file.replace(/\.json$/, '')}: ${fixture.source.title}`, {timeout: 180_000}, () => {
    let replay: Awaited<ReturnType<typeof startReplay>>

    before(async () => {
      replay = await startReplay(path.join(DIR, file))
    })

    after(async () => {
      await replay?.stop()
    })

    for (const [command, verdict] of Object.entries(fixture.verdicts)) {
      it(`${command}: ${verdict.conclusion}`, async () => {
        const run = await runInProcess([...verdict.argv, '--uri', replay.uri, '--timeout-ms', TIMEOUT_MS])
        const output = `stdout:\n${run.stdout.slice(0, 4000)}\nstderr:\n${run.stderr.slice(0, 2000)}`
        assert.equal(run.code, verdict.exit, `exit code\n${output}`)
        if (verdict.json !== undefined) {
          const failure = mismatch(verdict.json, parseJson(run))
          assert.equal(failure, undefined, `${failure}\n${output}`)
        }
        const said = `${run.stdout}\n${run.stderr}`.toLowerCase()
        for (const phrase of verdict.mentions ?? []) assert.ok(said.includes(phrase.toLowerCase()), `says "${phrase}"\n${output}`)
      })
    }
  })
}
