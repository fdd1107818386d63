/**
 * No credential in any output: every command runs with a password in its URI
 * under every debug switch a user might reach for (DEBUG=*, NODE_DEBUG, the
 * driver's MONGODB_LOG_*) and in every output mode (text, --json, --ndjson,
 * --out FILE, --debug), plus failing runs (nothing listening, a wrong
 * password). All of stdout, stderr and every written file is searched for the
 * password as typed and URI-encoded.
 *
 * Most runs go through the in-process runner (test/helpers/in-process.ts: the secret guard's scrubbing,
 * oclif's parsing, the error lines and exit codes, as bin/run.js), which saves a process start per run.
 * DEBUG=* works there too: the `debug` package reads DEBUG when it loads, and this file sets it before
 * the runner loads oclif. What only a real process has stays spawned (each run's `spawned` says why):
 * NODE_DEBUG (Node reads it at start-up; in this process it is off, whatever a run's environment says),
 * the guard bin/run.js installs from the real argv and environment before anything loads, oclif's DEBUG
 * line of process.argv (here the test runner's, without the URI), and the embedded cluster's child
 * process, whose stderr is the process's own fd 2, past any capture here. Every spawned run has DEBUG=*
 * and NODE_DEBUG.
 * Every command and every exit code (0, 4, 5) has at least one spawned run.
 */
import assert from 'node:assert/strict'
import {mkdtemp, readFile, readdir, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {MongoClient} from 'mongodb'

import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'

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
  /** Why this run starts a real process (what only one has); without it, the run is in-process. */
  spawned?: string
}

const runs: SecretRun[] = []
const modes: Array<[string, string[]]> = [
  ['text', []],
  ['--json', ['--json']],
  ['--debug', ['--debug']],
]
/** The spawned run of each command that has none below (NODE_DEBUG's net/tls/stream output of its own connections). */
const SPAWNED_MODE: Record<string, string> = {
  'locks pings': 'text',
  'locks watch': 'text',
  'conns watch': '--json',
}
const commands: Array<[string, string[]]> = [
  // 300 ms of load: what is checked is what the run prints and writes, which a longer run only repeats.
  ['bench', ['bench', '--warmup', '0s', '--duration', '300ms', '--concurrency', '2']],
  ['auth', ['auth', '--connections', '2', '--parallel', '2', '--pings', '5', '--mechanisms', 'none,SCRAM-SHA-256']],
  ['locks list', ['locks', 'list']],
  ['locks pings', ['locks', 'pings']],
  ['locks watch', ['locks', 'watch', '--duration', '1s', '--interval', '200ms']],
  ['conns list', ['conns', 'list']],
  ['conns watch', ['conns', 'watch', '--count', '1', '--interval', '200ms']],
]
for (const [command, words] of commands) {
  for (const [mode, flags] of modes) {
    const spawned = SPAWNED_MODE[command] === mode ? `${command}'s real process: NODE_DEBUG (read at start-up) prints its own connections` : undefined
    runs.push({name: `${command} ${mode}`, args: (uri) => [...words, '--uri', uri, ...flags], exitCodes: [0], spawned})
  }
}
runs.push(
  {name: 'bench --out FILE', args: (uri, dir) => ['bench', '--warmup', '0s', '--duration', '300ms', '--concurrency', '2', '--uri', uri, '--out', path.join(dir, 'bench.json')], exitCodes: [0]},
  {name: 'conns watch --ndjson', args: (uri) => ['conns', 'watch', '--count', '1', '--interval', '200ms', '--uri', uri, '--ndjson'], exitCodes: [0]},
  // In this process: the guard's reading of --uri=URI is urisOfInvocation, here as in bin/run.js; the real argv's --uri is in every spawned run.
  {name: 'conns list --uri=URI', args: (uri) => ['conns', 'list', `--uri=${uri}`], exitCodes: [0]},
  {name: 'conns list with POOLTOOL_URI', args: () => ['conns', 'list', '--json'], uriVariable: 'POOLTOOL_URI', exitCodes: [0]},
  {name: 'locks list with MONGODB_URI', args: () => ['locks', 'list'], uriVariable: 'MONGODB_URI', exitCodes: [0], spawned: 'the guard bin/run.js installs finds the URI in the real environment, before anything loads'},
  // sim takes no URI, but it starts a child process that inherits the environment (NODE_DEBUG=child_process prints it).
  ...modes.map(([mode, flags]): SecretRun => ({
    name: `sim ${mode} with MONGODB_URI set`,
    args: () => ['sim', '--duration', '1s', ...flags],
    uriVariable: 'MONGODB_URI',
    exitCodes: [0],
    spawned: mode === 'text' ? "the embedded cluster's child writes to the process's own stderr (fd 2), which only a real process's capture holds" : undefined,
  })),
  {name: 'sim --ndjson with MONGODB_URI set', args: () => ['sim', '--duration', '1s', '--ndjson'], uriVariable: 'MONGODB_URI', exitCodes: [0]},
  ...modes.map(([mode, flags]): SecretRun => ({
    name: `conns list, wrong password, ${mode}`,
    args: (uri) => ['conns', 'list', '--uri', uri, ...flags],
    target: 'wrong-password',
    exitCodes: [5],
    // conns list's spawned run is a refused one: a conns list that logs in to every host of the cluster under
    // NODE_DEBUG ran past its 10 s connect timeout (exit 4) on this 2-core machine at load 15-20, spawned
    // in the original file as well (five such runs failed in one run there).
    spawned: mode === 'text' ? "conns list's real process: NODE_DEBUG prints its connection attempts and the refused login" : undefined,
  })),
  ...modes.map(([mode, flags]): SecretRun => ({
    name: `bench, wrong password, ${mode}`,
    args: (uri) => ['bench', '--warmup', '0s', '--duration', '1s', '--uri', uri, ...flags],
    target: 'wrong-password',
    exitCodes: [5],
    spawned: mode === '--debug' ? "exit 5 and bench's real process: NODE_DEBUG, and the driver's log under --debug with the stack of a refused login" : undefined,
  })),
  ...modes.map(([mode, flags]): SecretRun => ({
    name: `auth, nothing listening, ${mode}`,
    args: (uri) => ['auth', '--uri', uri, '--timeout-ms', '500', ...flags],
    target: 'unreachable',
    exitCodes: [4],
    spawned: mode === '--debug' ? "exit 4 and auth's real process: NODE_DEBUG's connection attempts, and the failure's stack under --debug" : undefined,
  })),
  {name: 'locks list, nothing listening, --json', args: (uri) => ['locks', 'list', '--uri', uri, '--timeout-ms', '500', '--json'], target: 'unreachable', exitCodes: [4]},
)

describe('no credential in any output, under any debug switch', () => {
  let sim: SimCluster
  let hosts: string
  let outRoot: string
  let debugBefore: string | undefined
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
    // Before the in-process runner loads oclif: the `debug` package reads DEBUG once, when it loads.
    debugBefore = process.env.DEBUG
    process.env.DEBUG = DEBUG_ENV.DEBUG
  })
  after(async () => {
    if (debugBefore === undefined) delete process.env.DEBUG
    else process.env.DEBUG = debugBefore
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

  const check = async (run: SecretRun) => {
    const password = run.target === 'wrong-password' ? WRONG_PASSWORD : PASSWORD
    const uri = run.target === 'unreachable' ? uriWith(password, '127.0.0.1:1') : uriWith(password, hosts)
    const outDir = await mkdtemp(path.join(outRoot, 'run-'))
    const env: Record<string, string> = {...DEBUG_ENV}
    if (run.uriVariable) env[run.uriVariable] = uri
    const result = run.spawned ? await runCli(run.args(uri, outDir), {env, timeoutMs: 90_000}) : await runInProcess(run.args(uri, outDir), {env})
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
  }

  // The spawned runs, two at a time, while this process only reads their output: a child under NODE_DEBUG
  // writes megabytes to stderr, a pipe it blocks on (synchronously) until this process reads it, so
  // in-process runs keeping this event loop busy at the same time would stall it past its connect timeout.
  describe('as real processes', {concurrency: 2}, () => {
    for (const run of runs.filter((r) => r.spawned)) it(`${run.name} (spawned: ${run.spawned})`, () => check(run))
  })

  // One at a time: the in-process runner runs one command at a time anyway.
  describe('in this process', () => {
    for (const run of runs.filter((r) => !r.spawned)) it(run.name, () => check(run))
  })
})
