/**
 * A sharded cluster seen from outside Kubernetes, reached through a port-forward to its router:
 * the embedded cluster started with `advertiseHost` names every process `sh.pooltool.invalid:PORT`
 * (RFC 2606: never resolves) in hello, listShards, config.mongos, getShardMap and serverStatus.sharding,
 * while listening on 127.0.0.1 (and reaching its own processes there). `conns list` and `locks list`
 * given the router's address with directConnection: the router's figures are read and shown under its
 * cluster name, every other process is "not reachable from here" with the name error (never a
 * timeout: nothing waits for a name that does not resolve), and the runs succeed (exit 0).
 *
 * Both runs go through the in-process runner (test/helpers/in-process.ts), the path bin/run.js takes,
 * without a process start (about 1 CPU-s each): neither is about the process itself.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const NAME = 'sh.pooltool.invalid'
const NAMED = /^sh\.pooltool\.invalid:\d+/

describe('a sharded cluster through a port-forward to its router (processes advertise names that do not resolve)', () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', auth: true, mongos: 1, shards: 1, shardMembers: 2, configMembers: 1, advertiseHost: NAME})
  const routerUri = () => {
    const router = cluster.sim.info.processes.find((p) => p.role === 'mongos')!
    const {username, password} = cluster.sim.info.credentials!
    return {router, uri: `mongodb://${username}:${password}@127.0.0.1:${router.port}/?directConnection=true&authSource=admin`}
  }

  it("conns list: the router's figures under its cluster name, the shard and config members not reachable from here, exit 0", async () => {
    const {router, uri} = routerUri()
    const run = await runInProcess(['conns', 'list', '--uri', uri, '--timeout-ms', '2000', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.topology.kind, 'sharded')
    assert.equal(result.hosts.length, 4, JSON.stringify(result.hosts.map((h: {host: string}) => h.host)))
    const [first, ...others] = result.hosts
    assert.equal(first.host, router.advertisedAs)
    assert.equal(first.address, `127.0.0.1:${router.port}`)
    assert.equal(first.entry, true)
    assert.equal(first.role, 'mongos')
    assert.equal(first.state, 'ok')
    assert.equal(typeof first.current, 'number')
    // The router's own pools, read through its connPoolStats (its ShardRegistry connections to the config server).
    assert.ok(first.pools.totals.created > 0, JSON.stringify(first.pools))
    assert.deepEqual(others.map((h: {role: string}) => h.role).sort(), ['config', 'shard', 'shard'])
    for (const h of others) {
      assert.match(h.host, NAMED)
      assert.equal(h.state, 'unreachable', JSON.stringify(h))
      assert.equal(h.reachedFromHere, false)
      assert.match(h.error, /ENOTFOUND|does not resolve|EAI_AGAIN/, 'the name error, not a timeout')
    }
    assert.ok(result.notes.some((n: string) => n.startsWith('not reachable from here (never answered): ')), result.notes.join('\n'))
  })

  it('locks list: read through the router, lock pings named by the advertised names, exit 0', async () => {
    const {uri} = routerUri()
    const run = await runInProcess(['locks', 'list', '--uri', uri, '--timeout-ms', '2000', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.serverVersion, '4.4.29')
    // 4.4: the router and both shard members ping as host:port:epoch:random, the config server as ConfigServer.
    const processes = (result.pings as Array<{process: string}>).map((p) => p.process)
    assert.equal(processes.filter((p) => NAMED.test(p)).length, 3, processes.join(', '))
    assert.ok(processes.includes('ConfigServer'), processes.join(', '))
    assert.ok(processes.every((p) => !p.startsWith('127.0.0.1')), processes.join(', '))
  })
})
