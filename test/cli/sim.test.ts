/**
 * `pooltool sim` as a user runs it: the printed URI serves the official
 * driver; with --auth the printed credentials log in with SCRAM-SHA-256 and a
 * wrong password fails; Ctrl-C stops it; fired faults are printed; a killed
 * cluster or a port in use ends it with one classified line.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {createServer} from 'node:net'
import path from 'node:path'
import {describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {REPO_ROOT, parseJson, runCli} from '../helpers/cli.js'

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

/** Start `pooltool sim …` (no --json added) and wait for output lines. */
function spawnSim(args: string[]) {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/run.js'), 'sim', ...args], {cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe']})
  const out = {stdout: '', stderr: ''}
  const waiters: Array<() => void> = []
  const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    out[stream] += chunk.toString()
    for (const w of [...waiters]) w()
  }
  child.stdout.on('data', onData('stdout'))
  child.stderr.on('data', onData('stderr'))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  /** Resolves once `stream` matches; rejects if the command ends first. */
  const waitFor = (stream: 'stdout' | 'stderr', pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(out[stream])) {
          waiters.splice(waiters.indexOf(check), 1)
          resolve()
        }
      }
      waiters.push(check)
      check()
      void exited.then((code) => reject(new Error(`sim exited ${code} before ${stream} matched ${pattern}\nstdout: ${out.stdout}\nstderr: ${out.stderr}`)))
    })
  return {child, out, exited, waitFor}
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

  it('--ndjson: the started line, then one line per fired fault; each fault also on stderr', async () => {
    const sim = spawnSim(['--ndjson', '--fault', 'latency:1ms@0s', '--fault', 'stall:100ms@200ms', '--fault', 'drop-connections@300ms'])
    try {
      await sim.waitFor('stdout', /"kind":"drop-connections"/)
      await sim.waitFor('stderr', /drop-connections: every client socket closed/)
    } finally {
      sim.child.kill('SIGINT')
    }
    assert.equal(await sim.exited, 0, sim.out.stderr)
    const lines = sim.out.stdout.trim().split('\n').map((line) => JSON.parse(line))
    assert.equal(lines[0].type, 'started')
    assert.match(lines[0].uri, /^mongodb:\/\/127\.0\.0\.1:\d+\//)
    assert.deepEqual(
      lines.slice(1).map((l) => [l.type, l.atMS, l.fault.kind, l.ok]),
      [
        ['fault', 0, 'latency', true],
        ['fault', 200, 'stall', true],
        ['fault', 300, 'drop-connections', true],
      ],
    )
    assert.match(sim.out.stderr, /^pooltool sim: fault @0s fired: latency 1 ms per operation from now on$/m)
    assert.match(sim.out.stderr, /^pooltool sim: fault @0\.2s fired: stall: every reply held for 100 ms$/m)
  })

  it('--fault lock-hold: an index build holds a collection lock, announced like every fault; a bad spec is one usage line', async () => {
    const sim = spawnSim(['--ndjson', '--topology', 'replset', '--members', '1', '--fault', 'lock-hold:app.orders:W:2s@0s'])
    try {
      await sim.waitFor('stdout', /"kind":"lock-hold"/)
      await sim.waitFor('stderr', /fired: lock-hold/)
    } finally {
      sim.child.kill('SIGINT')
    }
    assert.equal(await sim.exited, 0, sim.out.stderr)
    const fired = sim.out.stdout.trim().split('\n').map((line) => JSON.parse(line)).find((l) => l.type === 'fault')
    assert.deepEqual([fired.fault, fired.ok], [{kind: 'lock-hold', ns: 'app.orders', mode: 'W', ms: 2000}, true])
    assert.match(sim.out.stderr, /^pooltool sim: fault @0s fired: lock-hold: an index build holds app\.orders's collection lock in mode W for 2000 ms$/m)
    const bad = await runCli(['sim', '--fault', 'lock-hold:orders:W:5s@1s'], {timeoutMs: 20_000})
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /^Error \[USAGE\]: --fault 'lock-hold:orders:W:5s@1s': 'orders' is not a namespace \(db\.collection\)/m)
    assert.doesNotMatch(bad.stderr, /^\s+at /m)
  })

  it('--ndjson: each scenario announces what it left and where, after the started line and on stderr', async () => {
    const sim = spawnSim(['--ndjson', '--topology', 'sharded', '--version-profile', '4.4', '--mongos', '1', '--shards', '2', '--shard-members', '1', '--config-members', '1',
      '--scenario', 'upgraded-from-3.4', '--scenario', 'dead-lock-holder'])
    let lines: any[] = []
    let locks: any[] = []
    try {
      await sim.waitFor('stdout', /"scenario":"dead-lock-holder"/)
      lines = sim.out.stdout.trim().split('\n').map((line) => JSON.parse(line))
      const client = new MongoClient(lines[0].uri)
      try {
        locks = await client.db('config').collection('locks').find({}).toArray()
      } finally {
        await client.close()
      }
    } finally {
      sim.child.kill('SIGINT')
    }
    assert.equal(await sim.exited, 0, sim.out.stderr)
    assert.deepEqual(lines.map((l) => [l.type, l.scenario]), [['started', undefined], ['scenario', 'upgraded-from-3.4'], ['scenario', 'dead-lock-holder']])
    const [, balancer, dead] = lines
    const shard02 = lines[0].processes.find((p: any) => p.setName === 'shard02')
    assert.equal(dead.facts.holder, shard02.host, 'names the process that held the lock')
    assert.notEqual(dead.facts.pingsAs, dead.facts.lockProcess, '4.4: the restarted shard pings under a new process id')
    const held = locks.find((l) => l._id === dead.facts.namespace)
    assert.equal(held?.process, dead.facts.lockProcess, 'the announced lock process is the one config.locks shows')
    assert.equal(locks.find((l) => l._id === 'balancer')?.when.toISOString(), balancer.facts.when)
    for (const event of [balancer, dead]) {
      assert.ok(sim.out.stderr.split('\n').includes(`pooltool sim: scenario ${event.scenario} fired: ${event.summary}`), sim.out.stderr)
    }
    assert.ok(dead.summary.startsWith(`shard02's primary ${shard02.host} took the distributed lock on scenario.orders`), dead.summary)
    assert.ok(dead.summary.includes(`as process ${dead.facts.lockProcess} and crashed without unlocking; it came back pinging as ${dead.facts.pingsAs}`), dead.summary)
    assert.match(balancer.summary, /^config\.locks holds the 3\.4 balancer lock/)
  })

  it('exits 9 with one line when its cluster process is killed', async () => {
    const sim = spawnSim(['--json'])
    await sim.waitFor('stdout', /"pid": \d+/)
    const pid = Number(/"pid": (\d+)/.exec(sim.out.stdout)![1])
    process.kill(pid, 'SIGKILL')
    assert.equal(await sim.exited, 9)
    const error = JSON.parse(sim.out.stdout.slice(sim.out.stdout.indexOf('{\n  "error"'))).error
    assert.equal(error.code, 'SERVER_ERROR')
    assert.match(error.message, new RegExp(`embedded cluster \\(pid ${pid}\\) was killed by SIGKILL`))

    const text = spawnSim([])
    await text.waitFor('stdout', /child pid \d+/)
    process.kill(Number(/child pid (\d+)/.exec(text.out.stdout)![1]), 'SIGKILL')
    assert.equal(await text.exited, 9)
    assert.match(text.out.stderr, /^Error \[SERVER_ERROR\]: the embedded cluster \(pid \d+\) was killed by SIGKILL[^\n]*\n$/)
  })

  it('--port in use is a one-line usage error (exit 2), also under --json', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = String((blocker.address() as {port: number}).port)
    try {
      const text = await runCli(['sim', '--port', port], {timeoutMs: 20_000})
      assert.equal(text.code, 2, text.stderr)
      assert.match(text.stderr, new RegExp(`^Error \\[USAGE\\]: the embedded cluster could not start: cannot listen on 127\\.0\\.0\\.1:${port}: address already in use \\(hint: pick another --port, or --port 0 for free ports\\)\n$`))
      const json = await runCli(['sim', '--port', port, '--json'], {timeoutMs: 20_000})
      assert.equal(json.code, 2)
      assert.deepEqual({...parseJson(json).error, message: undefined}, {code: 'USAGE', message: undefined, hint: 'pick another --port, or --port 0 for free ports', exitCode: 2})
    } finally {
      blocker.close()
    }
  })

  it('rejects impossible flag values with a usage exit code', async () => {
    for (const args of [['--time-scale', '0'], ['--fault', 'explode@1s'], ['--topology', 'ring'], ['--scenario', 'dead-lock-holder']]) {
      const run = await runCli(['sim', ...args], {timeoutMs: 20_000})
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      assert.doesNotMatch(run.stderr, /^\s+at /m)
    }
    const badValue = await runCli(['sim', '--fault', 'stall:1s@5s', '--fault', 'latency:5ms,x@1s'], {timeoutMs: 20_000})
    assert.equal(badValue.code, 2)
    assert.match(badValue.stderr, /^Error \[USAGE\]: --fault 'latency:5ms,x@1s': '5ms,x' is not a duration/m, 'the error names the whole --fault spec')
  })
})
