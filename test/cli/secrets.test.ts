/**
 * No credential in any output: every command runs with a password in its URI
 * under every debug switch a user might reach for (DEBUG=*, NODE_DEBUG, the
 * driver's MONGODB_LOG_*) and in every output mode (text, --json, --ndjson,
 * --out FILE, --debug), plus failing runs (nothing listening, a wrong
 * password). All of stdout, stderr and every written file is searched for the
 * password as typed and URI-encoded.
 */
import assert from 'node:assert/strict'
import {mkdtemp, readFile, readdir, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {MongoClient} from 'mongodb'

import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {runCli} from '../helpers/cli.js'

/** Distinctive, and full of characters that must be percent-encoded in a URI. */
const PASSWORD = 'Zq7#Secr:t@p/ss?w&rd=9%Xy'
const WRONG_PASSWORD = 'Wr0ng#Pa:ss@w/rd?Qv'

/** Every debug switch at once: oclif's debug, Node's internal debug logs, the driver's logger. */
const DEBUG_ENV = {
  DEBUG: '*',
  NODE_DEBUG: 'child_process,net,tls,http,dns,stream',
  MONGODB_LOG_ALL: 'debug',
  MONGODB_LOG_PATH: 'stderr',
}

const forms = (secret: string) => [secret, encodeURIComponent(secret)]

function uriWith(password: string, hosts: string, user = 'secretive'): string {
  return `mongodb://${user}:${encodeURIComponent(password)}@${hosts}/?authSource=admin`
}

interface SecretRun {
  name: string
  args: (uri: string, outDir: string) => string[]
  /** Put the URI in this variable instead of --uri. */
  uriVariable?: 'POOLTOOL_URI' | 'MONGODB_URI'
  /** Which URI: the right password, a wrong one, or nothing listening. */
  target?: 'right' | 'wrong-password' | 'unreachable'
  exitCodes: number[]
}

const runs: SecretRun[] = []
const modes: Array<[string, string[]]> = [
  ['text', []],
  ['--json', ['--json']],
  ['--debug', ['--debug']],
]
const commands: Array<[string, string[]]> = [
  ['bench', ['bench', '--warmup', '0s', '--duration', '1s', '--concurrency', '2']],
  ['auth', ['auth', '--connections', '2', '--parallel', '2', '--pings', '5', '--mechanisms', 'none,SCRAM-SHA-256']],
  ['locks list', ['locks', 'list']],
  ['locks pings', ['locks', 'pings']],
  ['locks watch', ['locks', 'watch', '--duration', '1s', '--interval', '200ms']],
  ['conns list', ['conns', 'list']],
  ['conns watch', ['conns', 'watch', '--count', '1', '--interval', '200ms']],
]
for (const [command, words] of commands) {
  for (const [mode, flags] of modes) {
    runs.push({name: `${command} ${mode}`, args: (uri) => [...words, '--uri', uri, ...flags], exitCodes: [0]})
  }
}
runs.push(
  {name: 'bench --out FILE', args: (uri, dir) => ['bench', '--warmup', '0s', '--duration', '1s', '--concurrency', '2', '--uri', uri, '--out', path.join(dir, 'bench.json')], exitCodes: [0]},
  {name: 'conns watch --ndjson', args: (uri) => ['conns', 'watch', '--count', '1', '--interval', '200ms', '--uri', uri, '--ndjson'], exitCodes: [0]},
  {name: 'conns list --uri=URI', args: (uri) => ['conns', 'list', `--uri=${uri}`], exitCodes: [0]},
  {name: 'conns list with POOLTOOL_URI', args: () => ['conns', 'list', '--json'], uriVariable: 'POOLTOOL_URI', exitCodes: [0]},
  {name: 'locks list with MONGODB_URI', args: () => ['locks', 'list'], uriVariable: 'MONGODB_URI', exitCodes: [0]},
  // sim takes no URI, but it starts a child process that inherits the environment (NODE_DEBUG=child_process prints it).
  ...modes.map(([mode, flags]): SecretRun => ({name: `sim ${mode} with MONGODB_URI set`, args: () => ['sim', '--duration', '1s', ...flags], uriVariable: 'MONGODB_URI', exitCodes: [0]})),
  {name: 'sim --ndjson with MONGODB_URI set', args: () => ['sim', '--duration', '1s', '--ndjson'], uriVariable: 'MONGODB_URI', exitCodes: [0]},
  ...modes.map(([mode, flags]): SecretRun => ({name: `conns list, wrong password, ${mode}`, args: (uri) => ['conns', 'list', '--uri', uri, ...flags], target: 'wrong-password', exitCodes: [5]})),
  ...modes.map(([mode, flags]): SecretRun => ({name: `bench, wrong password, ${mode}`, args: (uri) => ['bench', '--warmup', '0s', '--duration', '1s', '--uri', uri, ...flags], target: 'wrong-password', exitCodes: [5]})),
  ...modes.map(([mode, flags]): SecretRun => ({name: `auth, nothing listening, ${mode}`, args: (uri) => ['auth', '--uri', uri, '--timeout-ms', '500', ...flags], target: 'unreachable', exitCodes: [4]})),
  {name: 'locks list, nothing listening, --json', args: (uri) => ['locks', 'list', '--uri', uri, '--timeout-ms', '500', '--json'], target: 'unreachable', exitCodes: [4]},
)

describe('no credential in any output, under any debug switch', {concurrency: 2}, () => {
  let sim: SimCluster
  let hosts: string
  let outRoot: string
  before(async () => {
    sim = await startSimCluster({topology: 'sharded', auth: true})
    const client = new MongoClient(sim.info.uri)
    try {
      await client.db('admin').command({createUser: 'secretive', pwd: PASSWORD, roles: ['root']})
    } finally {
      await client.close()
    }
    hosts = sim.info.uri.replace(/^mongodb:\/\/[^@]*@/, '').replace(/\/.*$/, '')
    outRoot = await mkdtemp(path.join(tmpdir(), 'pooltool-secrets-'))
  })
  after(async () => {
    await sim?.stop()
    if (outRoot) await rm(outRoot, {recursive: true, force: true})
  })

  it('the password is a working one (the runs below really authenticate with it)', async () => {
    const client = new MongoClient(uriWith(PASSWORD, hosts))
    try {
      assert.equal((await client.db('admin').command({ping: 1})).ok, 1)
    } finally {
      await client.close()
    }
  })

  for (const run of runs) {
    it(run.name, async () => {
      const password = run.target === 'wrong-password' ? WRONG_PASSWORD : PASSWORD
      const uri = run.target === 'unreachable' ? uriWith(password, '127.0.0.1:1') : uriWith(password, hosts)
      const outDir = await mkdtemp(path.join(outRoot, 'run-'))
      const env: Record<string, string> = {...DEBUG_ENV}
      if (run.uriVariable) env[run.uriVariable] = uri
      const result = await runCli(run.args(uri, outDir), {env, timeoutMs: 90_000})
      const where = `exit ${result.code}\nstderr (tail): ${result.stderr.slice(-2000)}`
      assert.ok(run.exitCodes.includes(result.code ?? -1), where)
      // The switches took effect: oclif's DEBUG output and Node's NODE_DEBUG output are there (redacted).
      assert.match(result.stderr, /oclif:/, 'DEBUG=* output is present')
      const files = await readdir(outDir)
      const written = await Promise.all(files.map((file) => readFile(path.join(outDir, file), 'utf8')))
      if (run.name.includes('--out')) assert.ok(written.length > 0, 'the --out file was written')
      const outputs: Array<[string, string]> = [
        ['stdout', result.stdout],
        ['stderr', result.stderr],
        ...files.map((file, index): [string, string] => [file, written[index]!]),
      ]
      for (const [where, text] of outputs) {
        for (const form of forms(password)) assert.ok(!text.includes(form), `${where} shows the password (${form})`)
      }
    })
  }
})
