/**
 * `pooltool sim` as a user runs it: the printed URI serves the official
 * driver; with --auth the printed credentials log in with SCRAM-SHA-256 and a
 * wrong password fails; Ctrl-C stops it.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import path from 'node:path'
import {describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {REPO_ROOT, runCli} from '../helpers/cli.js'

/** Start `pooltool sim …` and resolve with its parsed JSON once printed. */
function startSimCommand(args: string[]) {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/run.js'), 'sim', '--json', ...args], {cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const started = new Promise<any>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      try {
        resolve(JSON.parse(stdout))
      } catch {
        // not complete yet
      }
    })
    child.on('close', (code) => reject(new Error(`sim exited ${code} before printing its URI: ${stdout}`)))
  })
  return {child, started, exited}
}

describe('pooltool sim', () => {
  it('prints a URI the driver can use, and stops on Ctrl-C', async () => {
    const sim = startSimCommand(['--topology', 'replset', '--members', '2'])
    const info = await sim.started
    assert.match(info.uri, /^mongodb:\/\/127\.0\.0\.1:\d+,127\.0\.0\.1:\d+\/\?replicaSet=/)
    assert.equal(info.ports.length, 2)
    const client = new MongoClient(info.uri, {serverSelectionTimeoutMS: 5000})
    try {
      await client.db('t').collection('c').insertOne({a: 1})
      assert.equal(await client.db('t').collection('c').countDocuments(), 1)
    } finally {
      await client.close()
    }
    sim.child.kill('SIGINT')
    assert.equal(await sim.exited, 0)
  })

  it('with --auth prints credentials that log in with SCRAM-SHA-256; a wrong password fails', async () => {
    const sim = startSimCommand(['--auth'])
    const info = await sim.started
    assert.ok(info.credentials?.username, JSON.stringify(info))
    try {
      const good = new MongoClient(info.uri, {authMechanism: 'SCRAM-SHA-256', serverSelectionTimeoutMS: 5000})
      try {
        assert.equal((await good.db('admin').command({ping: 1})).ok, 1)
      } finally {
        await good.close()
      }
      const wrongUri = info.uri.replace(`:${encodeURIComponent(info.credentials.password)}@`, ':wrong-password@')
      assert.notEqual(wrongUri, info.uri)
      const bad = new MongoClient(wrongUri, {authMechanism: 'SCRAM-SHA-256', serverSelectionTimeoutMS: 5000})
      try {
        await assert.rejects(bad.db('admin').command({ping: 1}), (error: Error & {code?: number}) => error.code === 18 || /Authentication failed/.test(error.message))
      } finally {
        await bad.close()
      }
    } finally {
      sim.child.kill('SIGINT')
      await sim.exited
    }
  })

  it('rejects impossible flag values with a usage exit code', async () => {
    for (const args of [['--time-scale', '0'], ['--fault', 'explode@1s'], ['--topology', 'ring']]) {
      const run = await runCli(['sim', ...args], {timeoutMs: 20_000})
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      assert.doesNotMatch(run.stderr, /^\s+at /m)
    }
  })
})
