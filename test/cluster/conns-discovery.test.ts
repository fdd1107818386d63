/** The one discovery (src/probes/discovery.ts) against the embedded cluster: every shape, from every kind of entry point. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {discoverCluster} from '../../src/probes/discovery.js'
import type {ReadEvent} from '../../src/probes/reader.js'
import {resolveTarget} from '../../src/target.js'
import {useCluster} from '../helpers/cluster.js'

const targetOf = (uri: string, recorder?: (event: ReadEvent) => void) => resolveTarget({flagUri: uri, connection: {appName: 'pooltool-test', timeoutMs: 5000}, recorder})

const rolesOf = (hosts: ReadonlyArray<{host: string; role: string}>) => hosts.map((h) => [h.host, h.role]).sort()

describe('discoverCluster: replica set', () => {
  const cluster = useCluster({topology: 'replset', members: 3})

  test('every member from hello, primary and secondaries', async () => {
    const t = await discoverCluster(await targetOf(cluster.uri))
    assert.equal(t.kind, 'replset')
    assert.equal(t.setName, 'rs0')
    assert.deepEqual(rolesOf(t.hosts), rolesOf(cluster.sim.info.processes))
  })

  test('from a single member seed (no replicaSet in the URI) still finds every member', async () => {
    const secondary = cluster.sim.info.processes.find((p) => p.role === 'secondary')!
    const t = await discoverCluster(await targetOf(`mongodb://${secondary.host}/?directConnection=true`))
    assert.equal(t.kind, 'replset')
    assert.equal(t.hosts.length, 3)
    assert.equal(t.hosts.find((h) => h.role === 'primary')!.host, cluster.sim.info.processes.find((p) => p.role === 'primary')!.host)
  })
})

describe('discoverCluster: standalone', () => {
  const cluster = useCluster({topology: 'standalone'})

  test('the one host', async () => {
    const t = await discoverCluster(await targetOf(cluster.uri))
    assert.equal(t.kind, 'standalone')
    assert.deepEqual(t.hosts, [{host: cluster.sim.info.processes[0]!.host, entry: true, role: 'standalone'}])
  })

  test('an aborted signal stops discovery before it reads', async () => {
    const events: ReadEvent[] = []
    const controller = new AbortController()
    controller.abort(new Error('stop requested'))
    await assert.rejects(discoverCluster(await targetOf(cluster.uri, (e) => events.push(e)), {signal: controller.signal}), /stop requested/)
    assert.equal(events.length, 0, `no read after the abort: ${events.map((e) => e.name).join(', ')}`)
  })
})

describe('discoverCluster: sharded', () => {
  const cluster = useCluster({topology: 'sharded', mongos: 2, shards: 2})

  test('from one mongos: every router, shard member and config member, each read through the read layer', async () => {
    const events: ReadEvent[] = []
    const router = cluster.sim.info.processes.find((p) => p.role === 'mongos')!
    const t = await discoverCluster(await targetOf(`mongodb://${router.host}/`, (e) => events.push(e)), {purpose: 'test'})
    assert.equal(t.kind, 'sharded')
    assert.deepEqual(rolesOf(t.hosts), rolesOf(cluster.sim.info.processes))
    for (const p of cluster.sim.info.processes.filter((x) => x.role === 'shard')) {
      assert.equal(t.hosts.find((h) => h.host === p.host)?.shard, p.setName, `${p.host} carries its shard id`)
    }
    assert.deepEqual(t.warnings, [])
    assert.deepEqual(t.staleRouters, [])
    assert.ok(t.sources.includes('config.mongos') && t.sources.includes('listShards'), `sources: ${t.sources.join(', ')}`)
    const reads = events.map((e) => e.name)
    assert.ok(reads.includes('hello') && reads.includes('config.mongos') && reads.includes('listShards'), `the recorder saw: ${reads.join(', ')}`)
  })

  for (const role of ['shard', 'config'] as const) {
    test(`from a ${role} member (directConnection): the config server's catalog leads to the whole cluster`, async () => {
      const entry = cluster.sim.info.processes.find((p) => p.role === role)!
      const t = await discoverCluster(await targetOf(`mongodb://${entry.host}/?directConnection=true`))
      assert.equal(t.kind, 'sharded')
      assert.deepEqual(rolesOf(t.hosts), rolesOf(cluster.sim.info.processes))
      // A shard member names its config server in serverStatus.sharding; a config member says configsvr in hello.
      assert.ok(t.sources.includes('config.shards'), `sources: ${t.sources.join(', ')}`)
    })
  }
})
