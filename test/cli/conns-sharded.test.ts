/**
 * The issue's end-to-end case against the embedded sharded cluster: `conns
 * watch --duration 10s --json` finds every mongos, shard and config listener;
 * while `pooltool bench --model per-op` runs, the routers' creation rate rises
 * and a rate alert fires; a router pool held open after its load stops is
 * flagged neverShrank and one with maxIdleTimeMS is not; mongos pools come
 * from connPoolStats. The watch is open-ended: the load starts once it has
 * printed its second round and it is stopped (Ctrl-C) once the held pool is
 * flagged and one more round is in.
 *
 * The watches are real processes: they are stopped by a signal. The bench (the load the issue names)
 * and the conns list go through the in-process runner (test/helpers/in-process.ts), the path bin/run.js
 * takes, without a process start (about 1 CPU-s each; the two share one load of the CLI).
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {CliOutput} from '../helpers/output.js'

async function poolLoad(client: MongoClient, concurrency: number, forMs: number): Promise<void> {
  const until = Date.now() + forMs
  await Promise.all(
    Array.from({length: concurrency}, async () => {
      while (Date.now() < until) await client.db('admin').command({ping: 1})
    }),
  )
}

interface HostJson {
  host: string
  role: string
  shard?: string
  samples: number
  unreachableRounds: number
  current: {min: number; max: number; last: number}
  totalCreatedRate: {max: number; mean: number}
  neverShrank: boolean
  pools?: {totals: {inUse: number; available: number; created: number; refreshing: number}; shards: Array<{shard: string}>}
  holders: Array<{appName: string; client: string; driver: string; count: number}>
}

describe('conns watch against the embedded sharded cluster', () => {
  // Two routers (one pool held, one reaped) and two shards; one member per replica set: what is watched is the
  // routers' pools, and every further member only adds its polling to every round.
  const cluster = useCluster({topology: 'sharded', mongos: 2, shards: 2, shardMembers: 1, configMembers: 1})

  it('finds every listener; per-op load raises the routers\' rate and fires the alert; held pools never shrink', async () => {
    const {sim} = cluster
    const routers = sim.info.processes.filter((p) => p.role === 'mongos').map((p) => p.host)
    const [heldRouter, reapedRouter] = routers as [string, string]
    const out = new CliOutput()
    const watching = runCli(
      ['conns', 'watch', '--uri', sim.info.uri, '--interval', '500ms', '--alert', 'rate>5/s', '--idle-window', '2s', '--json', '--verbose'],
      {timeoutMs: 90_000, onSpawn: out.attach},
    )
    await out.until(/round 2: /)
    const bench = await runInProcess(['bench', '--warmup', '0s', '--uri', sim.info.uri, '--model', 'per-op', '--workload', 'ping', '--concurrency', '4', '--duration', '1s', '--json'])
    assert.equal(bench.code, 0, bench.stderr)

    await sim.control({kind: 'latency', ms: 40, hosts: routers})
    const held = new MongoClient(`mongodb://${heldRouter}/?directConnection=true`, {maxPoolSize: 15, appName: 'held-pool'})
    const reaped = new MongoClient(`mongodb://${reapedRouter}/?directConnection=true`, {maxPoolSize: 15, maxIdleTimeMS: 400, appName: 'reaped-pool'})
    try {
      await Promise.all([poolLoad(held, 15, 1500), poolLoad(reaped, 15, 1500)])
      await sim.control({kind: 'latency', ms: 0, hosts: routers})
      await out.until(new RegExp(`NEVER-SHRANK ${heldRouter.replaceAll('.', '\\.')}: `))
      await out.until(/round \d+: /, out.mark())
      out.signal()
      const run = await watching
      assert.equal(run.code, 0, run.stderr)
      const result = parseJson<{topology: {kind: string; sources: string[]}; rounds: number; interrupted: boolean; hosts: HostJson[]; alerts: Array<{host: string; rule: string; value: number}>; alertCounts: Record<string, number>}>(run)

      // Every mongos, shard and config listener, with its role (and shard id).
      assert.equal(result.topology.kind, 'sharded')
      assert.deepEqual(
        result.hosts.map((h) => [h.host, h.role]).sort(),
        sim.info.processes.map((p) => [p.host, p.role]).sort(),
      )
      for (const p of sim.info.processes.filter((x) => x.role === 'shard')) {
        assert.equal(result.hosts.find((h) => h.host === p.host)!.shard, p.setName)
      }
      assert.equal(result.interrupted, true)
      for (const h of result.hosts) assert.equal(h.samples + h.unreachableRounds, result.rounds, `${h.host}: every round is a sample or a marked round`)
      for (const h of result.hosts) assert.ok(h.samples >= 2, `${h.host} samples ${h.samples} of ${result.rounds}`)

      // The storm shows on the routers and fires the alert there.
      const routerHosts = result.hosts.filter((h) => h.role === 'mongos')
      assert.ok(routerHosts.some((h) => h.totalCreatedRate.max > 5), JSON.stringify(routerHosts.map((h) => h.totalCreatedRate)))
      const fired = result.alerts.filter((a) => a.rule === 'rate>5/s' && routers.includes(a.host))
      assert.ok(fired.length >= 1, JSON.stringify(result.alerts))
      assert.ok(result.alertCounts['rate>5/s']! >= 1, JSON.stringify(result.alertCounts))

      // mongos: connPoolStats totals and per-shard pools.
      for (const h of routerHosts) {
        assert.ok(h.pools, `${h.host} has pools`)
        for (const key of ['inUse', 'available', 'created', 'refreshing'] as const) assert.equal(typeof h.pools!.totals[key], 'number')
        assert.ok(h.pools!.shards.some((s) => s.shard === 'config'), JSON.stringify(h.pools!.shards))
      }

      // Held pool vs maxIdleTimeMS.
      const h = result.hosts.find((x) => x.host === heldRouter)!
      const r = result.hosts.find((x) => x.host === reapedRouter)!
      assert.equal(h.neverShrank, true, JSON.stringify(h))
      assert.ok(h.holders.some((x) => x.appName === 'held-pool' && x.count >= 5), JSON.stringify(h.holders))
      assert.equal(r.neverShrank, false, JSON.stringify(r))
      assert.ok(r.current.last < r.current.max, `reaped pool shrank: ${JSON.stringify(r.current)}`)

      // The config server's holders are the routers' internal pools.
      const config = result.hosts.find((x) => x.role === 'config')!
      assert.ok(config.holders.length >= 1, 'the config server has holders')
    } finally {
      await Promise.all([held.close(), reaped.close()])
    }
  })

  it('list: one snapshot of every host with mongos pools', async () => {
    const {sim} = cluster
    const run = await runInProcess(['conns', 'list', '--uri', sim.info.uri, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.hosts.length, sim.info.processes.length)
    for (const h of result.hosts.filter((x: {role: string}) => x.role === 'mongos')) assert.ok(h.pools, `${h.host} has pools`)
  })
})

describe("a shard member held by the router's pools never shrinks: the advice is the router's pool parameters", {timeout: 120_000}, () => {
  // One process per role: the router's pool to the shard primary is what is watched.
  const cluster = useCluster({topology: 'sharded', mongos: 1, shards: 1, shardMembers: 1, configMembers: 1})

  it("reads ShardingTaskExecutorPool* from the router and names them, not maxIdleTimeMS", async () => {
    const {sim} = cluster
    const router = sim.info.processes.find((p) => p.role === 'mongos')!.host
    const shardPrimary = sim.info.processes.find((p) => p.role === 'shard' && p.memberState === 'primary')!.host
    // Each find waits 40 ms on the shard primary: 20 at once through the router need 20 of its pooled connections there.
    await sim.control({kind: 'latency', ms: 40, hosts: [shardPrimary]})
    const app = new MongoClient(`mongodb://${router}/`, {maxPoolSize: 20, appName: 'through-router'})
    try {
      await app.db('routed').collection('c').insertOne({_id: 1})
      const out = new CliOutput()
      const watching = runCli(['conns', 'watch', '--uri', sim.info.uri, '--interval', '300ms', '--idle-window', '2s', '--json', '--verbose'], {timeoutMs: 60_000, onSpawn: out.attach})
      await out.until(/round 2: /)
      const until = Date.now() + 1500
      await Promise.all(Array.from({length: 20}, async () => {
        while (Date.now() < until) await app.db('routed').collection('c').findOne({_id: 1})
      }))
      // The router keeps its pool to the shard primary for ShardingTaskExecutorPoolHostTimeoutMS (5 min): it never shrinks here.
      await out.until(new RegExp(`NEVER-SHRANK ${shardPrimary.replaceAll('.', '\\.')}: `))
      out.signal()
      const run = await watching
      assert.equal(run.code, 0, run.stderr)
      const host = parseJson(run).hosts.find((h: {host: string}) => h.host === shardPrimary)
      assert.ok(host.neverShrankDetail.heldBy.cluster > host.neverShrankDetail.heldBy.applications, JSON.stringify(host.neverShrankDetail))
      assert.deepEqual(host.neverShrankDetail.routerPools, {
        router,
        parameters: {
          ShardingTaskExecutorPoolMinSize: 1,
          ShardingTaskExecutorPoolMaxSize: 32767,
          ShardingTaskExecutorPoolMaxConnecting: 2,
          ShardingTaskExecutorPoolHostTimeoutMS: 300000,
          ShardingTaskExecutorPoolRefreshRequirementMS: 60000,
          ShardingTaskExecutorPoolRefreshTimeoutMS: 20000,
        },
      })
      assert.match(run.stderr, /held by the cluster's own pools .*ShardingTaskExecutorPoolHostTimeoutMS \(300,000 ms\) .*ShardingTaskExecutorPoolMinSize \(1\) .*lower them with setParameter on the routers/)
    } finally {
      await app.close()
    }
  })
})
