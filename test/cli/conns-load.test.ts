/**
 * conns watch while load runs against an embedded replica set: a rate alert
 * fires during a connection storm (a new client per operation), and a pool
 * held open after its load stops is flagged neverShrank while one with
 * maxIdleTimeMS is not.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import {parseJson, runCli} from '../helpers/cli.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A new client (handshake, monitor, pooled connection) per ping until `untilMs`. */
async function perOpStorm(uri: string, forMs: number): Promise<number> {
  const until = Date.now() + forMs
  let ops = 0
  while (Date.now() < until) {
    const client = new MongoClient(uri, {maxPoolSize: 1, appName: 'storm', serverSelectionTimeoutMS: 3000})
    try {
      await client.db('admin').command({ping: 1})
      ops += 1
    } finally {
      await client.close()
    }
  }
  return ops
}

/** `concurrency` pings at once for `forMs` through one client: its pool grows to about `concurrency`. */
async function poolLoad(client: MongoClient, concurrency: number, forMs: number): Promise<void> {
  const until = Date.now() + forMs
  await Promise.all(
    Array.from({length: concurrency}, async () => {
      while (Date.now() < until) await client.db('admin').command({ping: 1})
    }),
  )
}

describe('conns watch under load', () => {
  let sim: SimCluster
  before(async () => {
    sim = await startSimCluster({topology: 'replset', members: 3})
  })
  after(async () => {
    await sim?.stop()
  })

  it('a rate alert fires on the member under a connection storm, and is counted', async () => {
    const primary = sim.info.processes.find((p) => p.role === 'primary')!.host
    const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--duration', '5s', '--interval', '500ms', '--alert', 'rate>5/s,current>90%', '--json'], {timeoutMs: 40_000})
    await sleep(1500)
    const ops = await perOpStorm(`mongodb://${primary}/?directConnection=true`, 2000)
    const run = await watching
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const host = result.hosts.find((h: {host: string}) => h.host === primary)
    assert.ok(host.totalCreatedRate.max > 5, `rate max ${host.totalCreatedRate.max} with ${ops} ops`)
    const fired = result.alerts.filter((a: {host: string; rule: string}) => a.host === primary && a.rule === 'rate>5/s')
    assert.ok(fired.length >= 1, JSON.stringify(result.alerts))
    assert.equal(fired[0].metric, 'rate')
    assert.ok(fired[0].value > 5)
    assert.equal(result.alertCounts['rate>5/s'], result.alerts.filter((a: {rule: string}) => a.rule === 'rate>5/s').length)
    assert.equal(result.alertCounts['current>90%'], 0)
    assert.ok(host.alerts >= 1)
    assert.match(run.stderr, /ALERT .* rate>5\/s/, 'printed as it fired, on stderr')
    assert.ok(host.holders.some((h: {appName: string}) => h.appName === 'pooltool-conns'))
  })

  it('a pool held open after its load stops is flagged neverShrank; one with maxIdleTimeMS is not', async () => {
    const [held, reaped] = sim.info.processes.filter((p) => p.role === 'secondary').map((p) => p.host)
    await sim.control({kind: 'latency', ms: 40, hosts: [held!, reaped!]})
    const heldClient = new MongoClient(`mongodb://${held}/?directConnection=true`, {maxPoolSize: 15, appName: 'held-pool'})
    const reapedClient = new MongoClient(`mongodb://${reaped}/?directConnection=true`, {maxPoolSize: 15, maxIdleTimeMS: 400, appName: 'reaped-pool'})
    try {
      const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--duration', '7s', '--interval', '300ms', '--idle-window', '2s', '--json'], {timeoutMs: 40_000})
      await sleep(1500)
      await Promise.all([poolLoad(heldClient, 15, 1500), poolLoad(reapedClient, 15, 1500)])
      // Load over; both clients stay open (and idle) until the watch ends.
      const run = await watching
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson(run)
      const byHost = Object.fromEntries(result.hosts.map((h: {host: string}) => [h.host, h]))
      const h = byHost[held!]
      const r = byHost[reaped!]
      assert.ok(h.current.max >= h.current.min + 5, `held pool grew: ${JSON.stringify(h.current)}`)
      assert.equal(h.neverShrank, true, JSON.stringify(h))
      assert.ok(h.neverShrankDetail.quietForMS >= 2000)
      assert.ok(h.holders.some((x: {appName: string; count: number}) => x.appName === 'held-pool' && x.count >= 5), JSON.stringify(h.holders))
      assert.ok(r.current.max >= r.current.min + 5, `reaped pool grew: ${JSON.stringify(r.current)}`)
      assert.ok(r.current.last < r.current.max, `reaped pool shrank: ${JSON.stringify(r.current)}`)
      assert.equal(r.neverShrank, false, JSON.stringify(r))
      const primary = result.hosts.find((x: {role: string}) => x.role === 'primary')
      assert.equal(primary.neverShrank, false)
      assert.ok(run.stderr.includes(`NEVER-SHRANK ${held}`), run.stderr)
      assert.ok(!run.stderr.includes(`NEVER-SHRANK ${reaped}`), run.stderr)
    } finally {
      await Promise.all([heldClient.close(), reapedClient.close()])
      await sim.control({kind: 'latency', ms: 0})
    }
  })
})
