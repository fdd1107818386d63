/**
 * The connections a real sharded cluster's processes hold to each other at rest, for an idle
 * 2-shard × 3-member cluster with 1 router and 3 config members (6.0 and 7.0 profiles).
 *
 * Expected figures, from the server source:
 * - Heartbeats: every member sends replSetHeartbeat to each other member of its set every 2 s over
 *   its ReplNetwork executor (src/mongo/db/repl/replication_coordinator_impl_heartbeat.cpp;
 *   `makeNetworkInterface("ReplNetwork")` in src/mongo/db/mongod_main.cpp): each member accepts one
 *   connection per peer (2) and holds 2 in connPoolStats `NetworkInterfaceTL-ReplNetwork`
 *   (src/mongo/db/commands/conn_pool_stats.cpp appends `ReplicationCoordinator::appendConnectionStats`).
 * - Oplog fetching: each secondary keeps one connection to its sync source, the primary at rest,
 *   as `_conn->connect(_source, "OplogFetcher")` (src/mongo/db/repl/oplog_fetcher.cpp), a
 *   DBClientConnection whose metadata is driver "MongoDB Internal Client" (src/mongo/client/dbclient_connection.cpp):
 *   a primary accepts 2.
 * - Replica set monitors (streamable, 4.4+: src/mongo/client/server_discovery_monitor.cpp streams
 *   hellos, server_ping_monitor.cpp measures round trips): 2 connections per monitored host. The router
 *   monitors every shard member and config member, every shard member the 3 config members, every
 *   config member the 6 shard members: a shard member accepts 2 (router) + 3 × 2 (config) = 8, a config
 *   member 2 (router) + 6 × 2 (shards) = 14.
 *   Its DBClientConnection counts in connPoolStats `numClientConnections` (`DBClientConnection::getNumConnections()`,
 *   src/mongo/db/commands/conn_pool_stats.cpp): 1 on each secondary.
 *   The streaming connection is one exhaust hello (`scheduleExhaustRemoteCommandOnAny` in
 *   server_discovery_monitor.cpp): the monitored side counts it in `connections.exhaustHello` and
 *   `awaitingTopologyChanges` (shard member 1 + 3 = 4, config member 1 + 6 = 7).
 * - The router's ShardingUptimeReporter writes config.mongos every 10 s over the ShardRegistry pool:
 *   one connection to the config primary (`NetworkInterfaceTL-ShardRegistry`).
 * - Every NetworkInterfaceTL connection says `driver: {name: "NetworkInterfaceTL", version: <server
 *   version>}` with no application (`initWireVersion("NetworkInterfaceTL", …)` in
 *   src/mongo/executor/connection_pool_tl.cpp → `ClientMetadata::serialize` in src/mongo/client/async_client.cpp).
 * So at rest: shard primary 2 + 8 NetworkInterfaceTL + 2 OplogFetcher, shard secondary 10, config
 * primary 2 + 14 + 1 = 17 NetworkInterfaceTL + 2 OplogFetcher, config secondary 16; a router accepts none.
 */
import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {Document} from 'bson'
import {MongoClient} from 'mongodb'
import {type SimCluster, type SimProcessInfo, startSimCluster} from '../../src/sim/index.js'
import {waitForState} from '../helpers/sim.js'

interface Holders {
  tl: number
  fetcher: number
  versions: string[]
  appNames: string[]
}

/** tl, fetcher: accepted connections by label; streams: monitors streaming exhaust hellos to it (1 router + 3 config, or 1 router + 6 shard members). */
const EXPECTED: Record<string, {tl: number; fetcher: number; streams: number}> = {
  'shard/primary': {tl: 10, fetcher: 2, streams: 4},
  'shard/secondary': {tl: 10, fetcher: 0, streams: 4},
  'config/primary': {tl: 17, fetcher: 2, streams: 7},
  'config/secondary': {tl: 16, fetcher: 0, streams: 7},
}

for (const versionProfile of ['6.0', '7.0'] as const) {
  describe(`internal connections of an idle 2×3 sharded cluster (${versionProfile})`, () => {
    let sim: SimCluster
    const clients = new Map<string, MongoClient>()
    const client = (p: SimProcessInfo) => {
      let c = clients.get(p.host)
      if (!c) {
        c = new MongoClient(`mongodb://${p.host}/?directConnection=true`, {maxPoolSize: 1})
        clients.set(p.host, c)
      }
      return c
    }

    before(async () => {
      sim = await startSimCluster({topology: 'sharded', mongos: 1, shards: 2, shardMembers: 3, configMembers: 3, versionProfile})
    })
    after(async () => {
      for (const c of clients.values()) await c.close()
      await sim?.stop()
    })

    /** Internal connections a process accepted, by label, from its own $currentOp with idle connections. */
    async function holders(p: SimProcessInfo): Promise<Holders> {
      const ops = await client(p).db('admin').aggregate([{$currentOp: {allUsers: true, idleConnections: true}}]).toArray()
      const internal = ops.filter((o: Document) => o.clientMetadata?.driver?.name !== 'nodejs')
      return {
        tl: internal.filter((o: Document) => o.clientMetadata?.driver?.name === 'NetworkInterfaceTL').length,
        fetcher: internal.filter((o: Document) => o.clientMetadata?.driver?.name === 'MongoDB Internal Client' && o.appName === 'OplogFetcher').length,
        versions: [...new Set(internal.map((o: Document) => String(o.clientMetadata?.driver?.version)))],
        appNames: [...new Set(internal.filter((o: Document) => o.clientMetadata?.driver?.name === 'NetworkInterfaceTL').map((o: Document) => String(o.appName)))],
      }
    }

    it('every member holds the connections a real member holds at rest, labelled as real internal clients', async () => {
      for (const p of sim.info.processes.filter((x) => x.role !== 'mongos')) {
        const want = EXPECTED[`${p.role}/${p.memberState}`]
        const got = await waitForState(`${p.role} ${p.memberState} ${p.host} at rest`, () => holders(p), (h) => h.tl === want.tl && h.fetcher === want.fetcher)
        assert.deepEqual(got.versions, [sim.info.serverVersion], `${p.host}: internal clients send the server's version`)
        assert.deepEqual(got.appNames, ['undefined'], `${p.host}: NetworkInterfaceTL sends no application name`)
      }
    })

    it('each side counts the sockets: serverStatus.connections on the accepting side, connPoolStats on the holding side', async () => {
      for (const p of sim.info.processes) {
        const admin = client(p).db('admin')
        if (p.role === 'mongos') {
          const pools = await waitForState('router ShardRegistry pool', () => admin.command({connPoolStats: 1}), (s) => s.pools?.['NetworkInterfaceTL-ShardRegistry']?.poolAvailable === 1)
          assert.equal(pools.pools['NetworkInterfaceTL-ReplNetwork'], undefined, 'a router has no replication executor')
          // Only the test's own driver sockets: nothing in the cluster connects to a router.
          const s = await admin.command({serverStatus: 1})
          assert.ok(s.connections.current <= 3, `router accepts only the test's sockets (${s.connections.current})`)
          continue
        }
        const want = EXPECTED[`${p.role}/${p.memberState}`]
        const s = await waitForState(
          `${p.host} connections.current and exhaustHello`,
          () => admin.command({serverStatus: 1}),
          (x) => x.connections.current >= want.tl + want.fetcher + 1 && x.connections.exhaustHello >= want.streams,
        )
        // The monitors' streams, plus at most the test driver's own streaming monitor.
        assert.ok(s.connections.exhaustHello - want.streams <= 1, `${p.host}: exhaustHello ${s.connections.exhaustHello}`)
        assert.ok(s.connections.awaitingTopologyChanges >= want.streams, `${p.host}: awaitingTopologyChanges ${s.connections.awaitingTopologyChanges}`)
        // The internal ones plus this test's driver (monitor, round-trip, pool: at most 3).
        assert.ok(s.connections.current - (want.tl + want.fetcher) <= 3, `${p.host}: current ${s.connections.current}`)
        const stats = await admin.command({connPoolStats: 1})
        const repl = stats.pools['NetworkInterfaceTL-ReplNetwork']
        assert.ok(repl, `${p.host}: NetworkInterfaceTL-ReplNetwork pool`)
        assert.equal(repl.poolAvailable + repl.poolInUse, 2, `${p.host}: one heartbeat connection per peer`)
        assert.equal(Object.keys(repl).filter((k) => k.includes(':')).length, 2)
        // The oplog fetcher is a DBClientConnection: counted in numClientConnections, in no pool.
        assert.equal(stats.numClientConnections, p.memberState === 'secondary' ? 1 : 0, `${p.host}: numClientConnections`)
      }
    })
  })
}

describe('internal connections of an idle 3-member replica set (7.0)', () => {
  let sim: SimCluster
  const clients: MongoClient[] = []
  before(async () => {
    sim = await startSimCluster({topology: 'replset', members: 3, versionProfile: '7.0'})
  })
  after(async () => {
    for (const c of clients) await c.close()
    await sim?.stop()
  })

  it('members heartbeat each other and secondaries fetch from the primary, as in the header above', async () => {
    for (const p of sim.info.processes) {
      const c = new MongoClient(`mongodb://${p.host}/?directConnection=true`, {maxPoolSize: 1})
      clients.push(c)
      const admin = c.db('admin')
      const want = p.memberState === 'primary' ? {tl: 2, fetcher: 2} : {tl: 2, fetcher: 0}
      await waitForState(`${p.memberState} ${p.host} at rest`, async () => {
        const ops = await admin.aggregate([{$currentOp: {allUsers: true, idleConnections: true}}]).toArray()
        const driver = (o: Document) => o.clientMetadata?.driver?.name
        return {tl: ops.filter((o) => driver(o) === 'NetworkInterfaceTL').length, fetcher: ops.filter((o) => driver(o) === 'MongoDB Internal Client' && o.appName === 'OplogFetcher').length}
      }, (h) => h.tl === want.tl && h.fetcher === want.fetcher)
      const repl = (await admin.command({connPoolStats: 1})).pools['NetworkInterfaceTL-ReplNetwork']
      assert.equal(repl.poolAvailable + repl.poolInUse, 2, `${p.host}: one heartbeat connection per peer`)
    }
  })
})

describe('internal connections after a member restarts (7.0, time scale 0.1)', () => {
  let sim: SimCluster
  const clients: MongoClient[] = []
  before(async () => {
    // Time scale 0.1: heartbeats every 200 ms, monitor checks every second.
    sim = await startSimCluster({topology: 'sharded', mongos: 1, shards: 2, shardMembers: 3, configMembers: 3, versionProfile: '7.0', timeScale: 0.1})
  })
  after(async () => {
    for (const c of clients) await c.close()
    await sim?.stop()
  })

  it('a restarted shard secondary gets its peers, monitors and pools back, and its old outbound connections are gone', async () => {
    const open = (p: SimProcessInfo) => {
      const c = new MongoClient(`mongodb://${p.host}/?directConnection=true`, {maxPoolSize: 1})
      clients.push(c)
      return c.db('admin')
    }
    const labels = async (admin: ReturnType<MongoClient['db']>) => {
      const ops = await admin.aggregate([{$currentOp: {allUsers: true, idleConnections: true}}]).toArray()
      const driver = (o: Document) => o.clientMetadata?.driver?.name
      return {tl: ops.filter((o) => driver(o) === 'NetworkInterfaceTL').length, fetcher: ops.filter((o) => driver(o) === 'MongoDB Internal Client').length}
    }
    const secondary = sim.info.processes.find((p) => p.role === 'shard' && p.memberState === 'secondary')!
    const primary = sim.info.processes.find((p) => p.role === 'shard' && p.memberState === 'primary' && p.setName === secondary.setName)!
    const onPrimary = open(primary)
    await waitForState('the primary at rest', () => labels(onPrimary), (h) => h.tl === 10 && h.fetcher === 2)
    await sim.control({kind: 'restart', downMS: 3000, hosts: [secondary.host]})
    // While it is down its oplog fetcher is gone from the primary.
    await waitForState('the primary without the fetcher of the down secondary', () => labels(onPrimary), (h) => h.fetcher === 1)
    const onSecondary = open(secondary)
    await waitForState('the restarted secondary at rest again', () => labels(onSecondary), (h) => h.tl === 10 && h.fetcher === 0)
    await waitForState('the primary at rest again', () => labels(onPrimary), (h) => h.tl === 10 && h.fetcher === 2)
  })
})
