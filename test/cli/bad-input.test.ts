/**
 * The bad-input table: every command, every way a user can get the input
 * wrong, each run twice through the built CLI: in this process through the
 * path bin/run.js takes (test/helpers/in-process.ts: the same parsing, error
 * lines and exit codes, without a process start per case), and, for the first
 * case of each command and of each exit code, once more as a real process. In text mode a failure is
 * exactly one line on stderr, `Error [CODE]: message (hint: …)`, never a stack
 * trace; under --json it is `{"error": {code, message, hint, exitCode}}` on
 * stdout. Both exit with the code of the failure's class.
 *
 * Most cases fail before any connection (flag parsing, flag values, the URI's
 * shape, files the URI names), so the table is fast. The last group needs a
 * cluster to refuse something (a password, a privilege, a topology) and uses
 * one embedded cluster with auth.
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import {type AddressInfo, createServer as createTcpServer, type Server as TcpServer} from 'node:net'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'
import {createServer, type Server} from 'node:tls'

import {MongoClient} from 'mongodb'

import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {type CliRun, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'
import {type BadInput, cases, type Cluster, CLUSTER_COMMANDS, FIXTURES, SELF_SIGNED_CERT} from './bad-input-cases.js'

const NO_STACK = /^\s+at .+[(:]\d+/m
const ERROR_LINE = /^Error \[([A-Z_]+)\]: .+ \(hint: .+\)$/

function assertOneErrorLine(run: CliRun, expected: BadInput): void {
  const where = `\nstdout: ${run.stdout}\nstderr: ${run.stderr}`
  assert.equal(run.code, expected.exit, `exit code${where}`)
  assert.doesNotMatch(run.stderr, NO_STACK, `no stack trace${where}`)
  const lines = run.stderr.split('\n').filter((line) => line.length > 0)
  assert.equal(lines.length, 1, `exactly one line on stderr${where}`)
  const match = ERROR_LINE.exec(lines[0]!)
  assert.ok(match, `the line reads Error [CODE]: message (hint: …)${where}`)
  assert.equal(match[1], expected.code, where)
  if (expected.message) assert.match(lines[0]!, expected.message)
  if (expected.hint) assert.match(/\(hint: (.+)\)$/.exec(lines[0]!)?.[1] ?? '', expected.hint)
}

function assertJsonError(run: CliRun, expected: BadInput): void {
  const where = `\nstdout: ${run.stdout}\nstderr: ${run.stderr}`
  assert.equal(run.code, expected.exit, `exit code${where}`)
  assert.doesNotMatch(run.stderr + run.stdout, NO_STACK, `no stack trace${where}`)
  assert.doesNotMatch(run.stderr, /Error \[/, `the error is in the JSON, not on stderr${where}`)
  let document: {error?: Record<string, unknown>}
  try {
    document = JSON.parse(run.stdout)
  } catch {
    assert.fail(`stdout is one JSON document${where}`)
  }
  assert.deepEqual(Object.keys(document), ['error'], where)
  const error = document.error!
  assert.deepEqual(Object.keys(error).sort(), ['code', 'exitCode', 'hint', 'message'], where)
  assert.equal(error.code, expected.code, where)
  assert.equal(error.exitCode, expected.exit, where)
  assert.equal(typeof error.hint, 'string')
  assert.ok((error.hint as string).length > 0)
  assert.ok(!(error.message as string).includes('\n'), 'the message is one line')
  if (expected.message) assert.match(error.message as string, expected.message)
  if (expected.hint) assert.match(error.hint as string, expected.hint)
}

describe('bad input: one line, its exit code, its --json error object', {concurrency: 3}, () => {
  let sim: SimCluster
  let tlsServer: Server
  let closingServer: TcpServer
  let cluster: Cluster
  before(async () => {
    tlsServer = createServer({cert: readFileSync(SELF_SIGNED_CERT), key: readFileSync(path.join(FIXTURES, 'self-signed.key.pem'))}, (socket) => socket.end())
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve))
    closingServer = createTcpServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => closingServer.listen(0, '127.0.0.1', resolve))
    sim = await startSimCluster({auth: true})
    const {username, password} = sim.info.credentials!
    const client = new MongoClient(sim.info.uri)
    try {
      await client.db('admin').command({createUser: 'reader', pwd: 'reader-pw-1', roles: [{role: 'read', db: 'unrelated'}]})
    } finally {
      await client.close()
    }
    const hostPort = sim.info.uri.replace(/^mongodb:\/\/[^@]*@/, '').replace(/\/.*$/, '')
    cluster = {
      uri: sim.info.uri,
      wrongPasswordUri: `mongodb://${username}:not-${password}@${hostPort}/?authSource=admin`,
      weakUserUri: `mongodb://reader:reader-pw-1@${hostPort}/?authSource=admin`,
      tlsHost: `127.0.0.1:${(tlsServer.address() as AddressInfo).port}`,
      hostPort,
      closingHost: `127.0.0.1:${(closingServer.address() as AddressInfo).port}`,
    }
  })
  after(async () => {
    await sim?.stop()
    await new Promise((resolve) => tlsServer?.close(resolve))
    await new Promise((resolve) => closingServer?.close(resolve))
  })

  it('has at least 60 cases over every command', () => {
    assert.ok(cases.length >= 60, `${cases.length} cases`)
    const commands = new Set(cases.map((c) => c.command.join(' ')))
    for (const command of [...CLUSTER_COMMANDS.map((c) => c.join(' ')), 'sim']) assert.ok(commands.has(command), command)
  })

  for (const badInput of cases) {
    it(badInput.name, async () => {
      const args = typeof badInput.args === 'function' ? badInput.args(cluster) : badInput.args
      assertOneErrorLine(await runInProcess([...badInput.command, ...args]), badInput)
      assertJsonError(await runInProcess([...badInput.command, '--json', ...args]), badInput)
    })
  }

  // The real process, once per command and once per exit code: what bin/run.js adds to the in-process path
  // (the secret guard installed first, oclif's exit, the streams flushed before it) is proved here.
  const spawned = new Map<string, BadInput>()
  for (const badInput of cases) {
    for (const key of [`command ${badInput.command.join(' ')}`, `exit ${badInput.exit}`]) if (!spawned.has(key)) spawned.set(key, badInput)
  }
  for (const [key, badInput] of spawned) {
    it(`spawned (first of its ${key.split(' ')[0]}): ${badInput.name}`, async () => {
      const args = typeof badInput.args === 'function' ? badInput.args(cluster) : badInput.args
      const json = key.startsWith('exit')
      const run = await runCli([...badInput.command, ...(json ? ['--json'] : []), ...args], {timeoutMs: 30_000})
      if (json) assertJsonError(run, badInput)
      else assertOneErrorLine(run, badInput)
    })
  }
})
