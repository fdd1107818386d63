/**
 * The entry node is authoritative: a URI naming one host reaches the cluster through
 * an address the members do not know (a port-forward, an SSH tunnel, Docker, Kubernetes). The
 * embedded replica set started with `advertiseHost` names its members `rs.pooltool.invalid:PORT`
 * (RFC 2606: `.invalid` never resolves) while listening on 127.0.0.1, as a Kubernetes member seen
 * from outside: discovery must keep the address the user gave for the node it reached.
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {discoverCluster} from '../../src/probes/discovery.js'
import {connectAddress} from '../../src/probes/topology.js'
import {resolveTarget} from '../../src/target.js'
import {useCluster} from '../helpers/cluster.js'

const targetOf = (uri: string) => resolveTarget({flagUri: uri, connection: {appName: 'pooltool-test', timeoutMs: 5000}})

describe('discovery through a port-forward (members advertise names that do not resolve)', () => {
  const cluster = useCluster({topology: 'replset', members: 3, advertiseHost: 'rs.pooltool.invalid'})

  test('the printed URI reaches one member directly, by its listen address', () => {
    const first = cluster.sim.info.processes[0]!
    assert.equal(cluster.uri, `mongodb://${first.host}/?directConnection=true`)
    assert.equal(first.advertisedAs, `rs.pooltool.invalid:${first.port}`)
  })

  test('the entry keeps the address the user gave, named as the cluster names it; the others by their names', async () => {
    const secondary = cluster.sim.info.processes.find((p) => p.role === 'secondary')!
    const t = await discoverCluster(await targetOf(`mongodb://${secondary.host}/?directConnection=true`))
    assert.equal(t.kind, 'replset')
    const [entry, ...others] = t.hosts
    assert.deepEqual(entry, {host: secondary.advertisedAs, address: secondary.host, entry: true, role: 'secondary', setName: 'rs0'})
    assert.equal(connectAddress(entry!), secondary.host)
    assert.deepEqual(t.entry, {host: secondary.advertisedAs, address: secondary.host, role: 'secondary'})
    assert.deepEqual(
      others.map((h) => [h.host, h.role, h.address]).sort(),
      cluster.sim.info.processes
        .filter((p) => p !== secondary)
        .map((p) => [p.advertisedAs, p.role, undefined])
        .sort(),
    )
  })

  test('--no-discover: the entry only', async () => {
    const primary = cluster.sim.info.processes.find((p) => p.role === 'primary')!
    const t = await discoverCluster(await targetOf(`mongodb://${primary.host}/?directConnection=true`), {discover: false})
    assert.deepEqual(
      t.hosts.map((h) => [h.host, h.address, h.role]),
      [[primary.advertisedAs, primary.host, 'primary']],
    )
    assert.match(t.warnings.join('\n'), /--no-discover/)
  })
})

describe('discovery from a mongos named two ways', () => {
  const cluster = useCluster({topology: 'sharded', mongos: 2, shards: 1})

  test('a seed written as localhost is the router config.mongos lists as 127.0.0.1: one entry, not two', async () => {
    const router = cluster.sim.info.processes.find((p) => p.role === 'mongos')!
    const t = await discoverCluster(await targetOf(`mongodb://localhost:${router.port}/`))
    const routers = t.hosts.filter((h) => h.role === 'mongos')
    assert.equal(routers.length, 2, `routers: ${routers.map((h) => h.host).join(', ')}`)
    const {mongoVersion, ...entry} = routers[0]!
    assert.deepEqual(entry, {host: router.host, address: `localhost:${router.port}`, entry: true, role: 'mongos'})
    assert.match(String(mongoVersion), /^\d+\.\d+\.\d+$/, 'config.mongos gives the entry router its version')
    assert.equal(t.configMongosCount, 2)
  })

  test('from a config-server member, the entry is the config member, reached at its address', async () => {
    const config = cluster.sim.info.processes.find((p) => p.role === 'config')!
    const t = await discoverCluster(await targetOf(`mongodb://localhost:${config.port}/?directConnection=true`))
    assert.equal(t.kind, 'sharded')
    assert.deepEqual(t.entry, {host: config.host, address: `localhost:${config.port}`, role: 'config'})
    assert.equal(t.hosts.filter((h) => h.host === config.host).length, 1)
  })

  test('from a shard member, the entry is that shard member', async () => {
    const shard = cluster.sim.info.processes.find((p) => p.role === 'shard')!
    const t = await discoverCluster(await targetOf(`mongodb://localhost:${shard.port}/?directConnection=true`))
    assert.equal(t.kind, 'sharded')
    const entry = t.hosts.find((h) => h.entry)!
    assert.deepEqual([entry.host, entry.address, entry.role, entry.shard], [shard.host, `localhost:${shard.port}`, 'shard', shard.setName])
  })
})
