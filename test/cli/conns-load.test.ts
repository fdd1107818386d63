/**
 * conns watch while load runs against an embedded replica set: a rate alert
 * fires during a connection storm (a new client per operation), and a pool
 * held open after its load stops is flagged neverShrank while one with
 * maxIdleTimeMS is not. Each watch is open-ended: the load starts once it has
 * printed its second round, and it is stopped (Ctrl-C) once the state under
 * test is printed, so no step depends on how fast the machine is.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {CliOutput} from '../helpers/output.js'

/** A new client (handshake, monitor, pooled connection) per ping until `stop` settles. */
async function perOpStorm(uri: string, stop: Promise<unknown>): Promise<number> {
  let stopped = false
  void stop.finally(() => (stopped = true)).catch(() => undefined)
  let ops = 0
  while (!stopped) {
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
  const cluster = useCluster({topology: 'replset', members: 3})

  it('a rate alert fires on the member under a connection storm, and is counted', async () => {
    const {sim} = cluster
    const primary = sim.info.processes.find((p) => p.role === 'primary')!.host
    const out = new CliOutput()
    const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--interval', '500ms', '--alert', 'rate>5/s,current>90%', '--json', '--verbose'], {
      timeoutMs: 60_000,
      onSpawn: out.attach,
    })
    await out.until(/round 2: /)
    // The storm lasts until the alert is printed (a watch that never fires it ends at the timeout, and the test fails).
    const fired = out.until(new RegExp(`ALERT .* ${primary.replaceAll('.', '\\.')}: rate>5/s`))
    const ops = await perOpStorm(`mongodb://${primary}/?directConnection=true`, fired)
    await fired
    await out.until(/round \d+: /, out.mark())
    out.signal()
    const run = await watching
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.interrupted, true)
    const host = result.hosts.find((h: {host: string}) => h.host === primary)
    assert.ok(host.totalCreatedRate.max > 5, `rate max ${host.totalCreatedRate.max} with ${ops} ops`)
    const firings = result.alerts.filter((a: {host: string; rule: string}) => a.host === primary && a.rule === 'rate>5/s')
    assert.ok(firings.length >= 1, JSON.stringify(result.alerts))
    assert.equal(firings[0].metric, 'rate')
    assert.ok(firings[0].value > 5, `alert value ${firings[0].value}`)
    assert.equal(result.alertCounts['rate>5/s'], result.alerts.filter((a: {rule: string}) => a.rule === 'rate>5/s').length)
    assert.equal(result.alertCounts['current>90%'], 0)
    assert.ok(host.alerts >= 1, `alerts on ${primary}: ${host.alerts}`)
    assert.match(run.stderr, /ALERT .* rate>5\/s/, 'printed as it fired, on stderr')
    assert.ok(host.holders.some((h: {appName: string}) => h.appName === 'pooltool-conns'), JSON.stringify(host.holders))
  })

  it('a pool held open after its load stops is flagged neverShrank; one with maxIdleTimeMS is not', async () => {
    const {sim} = cluster
    const [held, reaped] = sim.info.processes.filter((p) => p.role === 'secondary').map((p) => p.host)
    await sim.control({kind: 'latency', ms: 40, hosts: [held!, reaped!]})
    const heldClient = new MongoClient(`mongodb://${held}/?directConnection=true`, {maxPoolSize: 15, appName: 'held-pool'})
    const reapedClient = new MongoClient(`mongodb://${reaped}/?directConnection=true`, {maxPoolSize: 15, maxIdleTimeMS: 400, appName: 'reaped-pool'})
    try {
      const out = new CliOutput()
      const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--interval', '300ms', '--idle-window', '2s', '--json', '--verbose'], {
        timeoutMs: 60_000,
        onSpawn: out.attach,
      })
      await out.until(/round 2: /)
      await Promise.all([poolLoad(heldClient, 15, 1500), poolLoad(reapedClient, 15, 1500)])
      // Load over; both clients stay open (and idle) until the watch ends, which is once the held pool is flagged and one more round is in.
      await out.until(new RegExp(`NEVER-SHRANK ${held!.replaceAll('.', '\\.')}: `))
      await out.until(/round \d+: /, out.mark())
      out.signal()
      const run = await watching
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson(run)
      const byHost = Object.fromEntries(result.hosts.map((h: {host: string}) => [h.host, h]))
      const h = byHost[held!]
      const r = byHost[reaped!]
      assert.ok(h.current.max >= h.current.min + 5, `held pool grew: ${JSON.stringify(h.current)}`)
      assert.equal(h.neverShrank, true, JSON.stringify(h))
      assert.ok(h.neverShrankDetail.quietForMS >= 2000, `quiet for ${h.neverShrankDetail.quietForMS} ms`)
      assert.ok(h.holders.some((x: {appName: string; count: number}) => x.appName === 'held-pool' && x.count >= 5), JSON.stringify(h.holders))
      // Held by an application's driver: the advice is maxIdleTimeMS, and no router parameter was read.
      assert.ok(h.neverShrankDetail.heldBy.applications > h.neverShrankDetail.heldBy.cluster, JSON.stringify(h.neverShrankDetail))
      assert.equal(h.neverShrankDetail.routerPools, undefined)
      assert.match(run.stderr, new RegExp(`NEVER-SHRANK ${held!.replaceAll('.', '\\.')}: .* held by application clients: set maxIdleTimeMS on them`))
      assert.ok(r.current.max >= r.current.min + 5, `reaped pool grew: ${JSON.stringify(r.current)}`)
      assert.ok(r.current.last < r.current.max, `reaped pool shrank: ${JSON.stringify(r.current)}`)
      assert.equal(r.neverShrank, false, JSON.stringify(r))
      const primary = result.hosts.find((x: {role: string}) => x.role === 'primary')
      assert.equal(primary.neverShrank, false, JSON.stringify(primary))
      assert.ok(run.stderr.includes(`NEVER-SHRANK ${held}`), run.stderr)
      assert.ok(!run.stderr.includes(`NEVER-SHRANK ${reaped}`), run.stderr)
    } finally {
      await Promise.all([heldClient.close(), reapedClient.close()])
      await sim.control({kind: 'latency', ms: 0})
    }
  })
})
