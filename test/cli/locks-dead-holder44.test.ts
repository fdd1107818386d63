/**
 * `pooltool locks list | pings | watch` against the embedded 4.4 cluster with a dead lock
 * holder, at time scale 0.01 (ping 300 ms, expiry 9 s, DDL lock wait 200 ms): the lock is
 * held, then stale after the expiry, and a later DDL overtakes it.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {MongoClient, MongoServerError} from 'mongodb'

import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import {parseJson, runCli} from '../helpers/cli.js'

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const EXPIRY_MS = 9000

describe('locks on the 4.4 profile with a dead lock holder', {timeout: 90_000}, () => {
  let sim: SimCluster
  let client: MongoClient
  let startedAt: number

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, scenarios: ['dead-lock-holder']})
    startedAt = Date.now()
    client = new MongoClient(sim.info.uri, {serverSelectionTimeoutMS: 5000})
  })

  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('shows the lock held, then stale after the expiry, then overtaken by a later DDL', async () => {
    const uri = sim.info.uri
    const first = parseJson(await runCli(['locks', 'list', '--json', '--uri', uri]))
    assert.equal(first.model, 'config.locks')
    assert.equal(first.serverVersion, '4.4.29')
    assert.equal(first.expiryMS, EXPIRY_MS)
    const held = first.locks.find((l: any) => l.name === 'scenario.orders')
    assert.ok(held, JSON.stringify(first.locks))
    assert.equal(held.state, 'locked')
    assert.equal(held.verdict, 'held', 'the holder died less than the expiry ago')
    assert.match(held.process, /^127\.0\.0\.1:\d+:\d+:\d+$/)
    assert.match(held.why, /^splitting chunk .* in scenario\.orders$/)
    for (const key of ['name', 'state', 'process', 'who', 'why', 'since', 'holderLastPing', 'verdict']) assert.ok(key in held, key)
    assert.equal(first.locks.find((l: any) => l.name === 'balancer')?.verdict, 'balancer')
    const deadPing = first.pings.find((p: any) => p.process === held.process)
    assert.ok(deadPing && typeof deadPing.ageMS === 'number')
    assert.ok(first.pings.some((p: any) => p.process === 'ConfigServer' && p.alive))

    // pings: the dead instance and its restarted successor on the same host:port.
    const pings = parseJson(await runCli(['locks', 'pings', '--json', '--uri', uri]))
    const hostPort = held.process.split(':').slice(0, 2).join(':')
    const sameHost = pings.pings.filter((p: any) => p.process.startsWith(`${hostPort}:`))
    assert.equal(sameHost.length, 2)
    const dead = sameHost.find((p: any) => p.process === held.process)
    assert.equal(dead.alive, false)
    assert.deepEqual(dead.holds, ['scenario.orders'])
    assert.ok(sameHost.some((p: any) => p.process !== held.process && p.alive))

    const watch = runCli(['locks', 'watch', '--json', '--uri', uri, '--db', 'scenario', '--interval', '200ms', '--duration', '16s'], {timeoutMs: 60_000})
    await delay(1500)

    // The first DDL finds the lock held and not yet expired in the config server's eyes: LockBusy after 20 s × 0.01.
    const t1 = Date.now()
    await assert.rejects(client.db('scenario').collection('orders').drop(), (e: unknown) => {
      assert.ok(e instanceof MongoServerError)
      assert.equal(e.code, 46)
      assert.equal(e.codeName, 'LockBusy')
      assert.equal(e.message, 'timed out waiting for scenario.orders')
      return true
    })

    await delay(Math.max(0, startedAt + EXPIRY_MS + 500 - Date.now()))
    const later = parseJson(await runCli(['locks', 'list', '--json', '--uri', uri, '--state', 'stale']))
    assert.deepEqual(later.locks.map((l: any) => [l.name, l.verdict]), [['scenario.orders', 'stale']])
    assert.ok(later.locks[0].holderPingAgeMS >= EXPIRY_MS)

    // Once the config server has watched the ping stand still for the expiry, a DDL overtakes the lock.
    await delay(Math.max(0, t1 + EXPIRY_MS + 300 - Date.now()))
    let dropped = false
    for (let attempt = 0; attempt < 5 && !dropped; attempt++) {
      try {
        await client.db('scenario').command({drop: 'orders'})
        dropped = true
      } catch (e) {
        if ((e as MongoServerError).code !== 46) throw e
        await delay(500)
      }
    }
    assert.ok(dropped, 'the later DDL overtook the stale lock')

    const watched = parseJson(await watch)
    const overtaken = watched.events.filter((e: any) => e.kind === 'overtaken' && e.name === 'scenario.orders')
    assert.equal(overtaken.length, 1, JSON.stringify(watched.events))
    assert.equal(overtaken[0].previousProcess, held.process)
    assert.equal(overtaken[0].process, 'ConfigServer')
    assert.equal(overtaken[0].why, 'dropCollection')
    assert.ok(overtaken[0].holdMS >= EXPIRY_MS)
    const summary = watched.locks.find((l: any) => l.name === 'scenario.orders')
    assert.equal(summary.overtaken, 1)
    assert.ok(summary.holdMS.count >= 1 && summary.holdMS.max >= EXPIRY_MS)

    const end = parseJson(await runCli(['locks', 'list', '--json', '--uri', uri, '--ns', 'scenario.orders']))
    assert.deepEqual(end.locks.map((l: any) => [l.verdict, l.process, l.why]), [['free', 'ConfigServer', 'dropCollection']])
  })
})
