/**
 * `pooltool locks list` on every topology (issue 24), over real TCP against the embedded cluster:
 * a standalone and a replica set read the node locks of every data-bearing node (no distributed
 * locks there: said, and their fields absent); a sharded cluster reads every shard and config
 * primary beside the distributed locks. A node that cannot be read is listed with its error, never
 * as "no contention". Writes held by fsyncLock wait with no visible blocker: the list says so.
 * `locks pings` still refuses a replica set, naming the document that cannot exist there.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {waitForState} from '../helpers/sim.js'

const DISTRIBUTED_FIELDS = ['entry', 'model', 'expiryMS', 'locks', 'pings', 'inMemory']

describe('locks list on a standalone', {timeout: 60_000}, () => {
  const cluster = useCluster({topology: 'standalone'})

  it('exits 0 with the node view; distributed locks are not applicable and their fields absent', async () => {
    const run = await runCli(['locks', 'list', '--json', '--uri', cluster.uri])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.topology, 'standalone')
    assert.match(r.distributedLocks, /^not applicable: a standalone takes no distributed locks/)
    for (const field of DISTRIBUTED_FIELDS) assert.ok(!(field in r), `${field} is absent on a standalone`)
    assert.equal(r.nodes.length, 1)
    const [node] = r.nodes
    assert.equal(node.role, 'standalone')
    assert.ok(node.view && node.view.blocking && node.view.waits && node.view.tickets, JSON.stringify(node))
    assert.equal(typeof node.readAt, 'string')
    assert.match(node.lockInfo, /^(read|refused: .+)$/)
    assert.deepEqual(r.rootBlockers, [])
    const text = await runCli(['locks', 'list', '--uri', cluster.uri])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /── node \S+ \(standalone/)
    assert.match(text.stdout, /no operation waits for a lock on the nodes read/)
  })
})

describe('locks list on a replica set', {timeout: 90_000}, () => {
  const cluster = useCluster({topology: 'replset', members: 3})

  it('exits 0 with a view of every member', async () => {
    const run = await runCli(['locks', 'list', '--json', '--uri', cluster.uri])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.topology, 'replset')
    assert.match(r.distributedLocks, /^not applicable: replica set 'rs0'/)
    for (const field of DISTRIBUTED_FIELDS) assert.ok(!(field in r), `${field} is absent on a replica set`)
    const members = cluster.sim.info.processes.map((p) => p.host).sort()
    assert.deepEqual(r.nodes.map((n: any) => n.host).sort(), members)
    assert.deepEqual(r.nodes.map((n: any) => n.role).sort(), ['primary', 'secondary', 'secondary'])
    for (const node of r.nodes) assert.ok(node.view !== null && node.error === undefined, JSON.stringify(node))
  })

  it('writes held by fsyncLock wait with no visible blocker: listed as such, never a root blocker', async () => {
    const primary = cluster.sim.info.processes.find((p) => p.memberState === 'primary')!.host
    const client = new MongoClient(`mongodb://${primary}/?directConnection=true`)
    try {
      await client.db('admin').command({fsync: 1, lock: true})
      const write = client.db('app').collection('orders').insertOne({n: 1})
      try {
        await waitForState(
          'the insert waits for the lock',
          () => client.db('admin').aggregate([{$currentOp: {allUsers: true}}, {$match: {waitingForLock: true}}]).toArray(),
          (ops) => ops.length > 0,
        )
        const run = await runCli(['locks', 'list', '--json', '--uri', cluster.uri])
        assert.equal(run.code, 0, run.stderr)
        const r = parseJson(run)
        const node = r.nodes.find((n: any) => n.host === primary)
        const waiters = node.view.blocking.unexplainedWaiters
        assert.ok(waiters.some((w: any) => w.operation.commandName === 'insert' && w.operation.ns === 'app.orders'), JSON.stringify(node.view.blocking))
        assert.deepEqual(r.rootBlockers, [], 'no holder to name')
        const text = await runCli(['locks', 'list', '--uri', cluster.uri])
        assert.match(text.stdout, /no root blocker found: operations wait with no visible blocker/)
        assert.match(text.stdout, /opid \S+ waits .*with no visible blocker/)
      } finally {
        await client.db('admin').command({fsyncUnlock: 1})
        await write
      }
    } finally {
      await client.close()
    }
  })

  it('locks pings refuses a replica set, naming the document that cannot exist there (exit 7)', async () => {
    const run = await runCli(['locks', 'pings', '--uri', cluster.uri])
    assert.equal(run.code, 7, run.stderr)
    assert.equal(run.stdout, '')
    const lines = run.stderr.trim().split('\n')
    assert.equal(lines.length, 1, run.stderr)
    assert.match(lines[0]!, /^Error \[WRONG_TOPOLOGY\]: config\.lockpings cannot exist here: .* is a replica set member \(set 'rs0'\), and config\.lockpings is a collection of a sharded cluster's config server/)
    assert.match(lines[0]!, /hint: .*locks list.*node locks/)
  })

  // Last in this block: the member stays down until the cluster stops.
  it('a member that cannot be read is listed with its error: unknown, never "no contention"', async () => {
    const down = cluster.sim.info.processes.find((p) => p.memberState === 'secondary')!.host
    await cluster.sim.control({kind: 'restart', downMS: 60_000, hosts: [down]})
    const run = await runCli(['locks', 'list', '--json', '--uri', cluster.uri, '--timeout-ms', '2000'])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    const unread = r.nodes.find((n: any) => n.host === down)
    assert.ok(unread, JSON.stringify(r.nodes.map((n: any) => n.host)))
    assert.equal(unread.view, null)
    assert.equal(unread.readAt, null)
    assert.equal(unread.lockInfo, 'not read')
    assert.equal(typeof unread.error.code, 'string')
    assert.equal(typeof unread.error.message, 'string')
    assert.equal(r.nodes.filter((n: any) => n.view !== null).length, 2)
    assert.ok(r.notes.some((n: string) => /2 of 3 node\(s\) read, 1 unknown/.test(n)), JSON.stringify(r.notes))
    const text = await runCli(['locks', 'list', '--uri', cluster.uri, '--timeout-ms', '2000'])
    assert.match(text.stdout, new RegExp(`── node ${down.replace(/\./g, '\\.')} .*\\n\\s*locks unknown: not read \\(`))
    assert.match(text.stdout, /\(1 node\(s\) unknown: not read\)/)
  })
})

describe('locks list on a sharded cluster', {timeout: 90_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, mongos: 1})

  it('exits 0 with every shard primary and the config primary beside the distributed locks', async () => {
    const run = await runCli(['locks', 'list', '--json', '--uri', cluster.uri])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.topology, 'sharded')
    assert.equal(r.distributedLocks, 'read')
    assert.equal(r.entry, 'mongos')
    assert.equal(r.model, 'config.locks')
    assert.ok(Array.isArray(r.locks) && Array.isArray(r.pings))
    const primaries = cluster.sim.info.processes.filter((p) => (p.role === 'shard' || p.role === 'config') && p.memberState === 'primary').map((p) => p.host)
    assert.deepEqual(r.nodes.map((n: any) => n.host).sort(), [...primaries].sort())
    assert.deepEqual(r.nodes.map((n: any) => n.role).sort(), ['config primary', 'shard primary', 'shard primary'])
    assert.deepEqual(r.nodes.filter((n: any) => n.shard).map((n: any) => n.shard).sort(), ['shard01', 'shard02'])
    for (const node of r.nodes) assert.ok(node.view !== null, JSON.stringify(node))
  })

  it('entered through a shard member: the node locks, and the distributed locks read on its config server', async () => {
    const shard = cluster.sim.info.processes.find((p) => p.role === 'shard' && p.memberState === 'secondary')!.host
    const config = cluster.sim.info.processes.find((p) => p.role === 'config' && p.memberState === 'primary')!.host
    const run = await runCli(['locks', 'list', '--json', '--uri', `mongodb://${shard}/?directConnection=true`])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.topology, 'sharded')
    assert.equal(r.distributedLocks, 'read')
    assert.equal(r.entry, 'config-server')
    assert.ok(r.notes.some((n: string) => n === `the URI reached shard member ${shard}: the distributed locks were read on its config server's primary ${config}`), JSON.stringify(r.notes))
    assert.equal(r.nodes.length, 3)
  })
})
