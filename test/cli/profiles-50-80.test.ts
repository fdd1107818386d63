/**
 * `locks list`, `locks watch` and `conns list` on the 5.0 and 8.0 profiles of the embedded cluster,
 * replica set and sharded: each exits 0 with the view that version's documents give.
 *
 * What differs (src/sim/README.md, "Version profiles"):
 * - 5.0: tickets in `wiredTiger.concurrentTransactions` (fixed 128: 0 available with a queue would be
 *   "exhausted"), ParallelBatchWriterMode and FeatureCompatibilityVersion with every global lock,
 *   `connections.threaded` without `rejected` / `loadBalanced`, config.locks written by the shards.
 * - 8.0: tickets in `queues.execution` (the 8.x manual's `queues` section; dynamic sizing from 7.0: never "exhausted"), no ParallelBatchWriterMode, no FCV lock,
 *   the MultiDocumentTransactionsBarrier beside an S/X global lock, DDLDatabase / DDLCollection in
 *   serverStatus.locks, `connections.queuedForEstablishment`, DDL locks in memory.
 *
 * The commands run in this process through the path bin/run.js takes (test/helpers/in-process.ts:
 * the same code over real TCP, output and exit code captured), sparing a Node start and CLI load
 * per run; these exit-0 runs are spawned as real processes in other files (locks list in
 * hostile-strings, locks watch in locks-dead-holder44 and locks-any-topology, conns list in
 * conns-pools-limits).
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import type {SimVersionProfile} from '../../src/sim/index.js'
import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {waitForState} from '../helpers/sim.js'

interface Expect {
  version: string
  tickets: 'wiredTiger.concurrentTransactions' | 'queues.execution'
  dynamicSizing: boolean
  /** Global resources beside Global and ReplicationStateTransition in serverStatus.locks / currentOp. */
  globalResources: string[]
  /** The fsyncLockWorker's locks, as currentOp lists them. */
  workerLocks: Record<string, string>
  /** serverStatus.connections fields present (beyond current, available, totalCreated). */
  connectionFields: string[]
  connectionFieldsAbsent: string[]
  model: 'config.locks' | 'in-memory'
}

const EXPECT: Record<'5.0' | '8.0', Expect> = {
  '5.0': {
    version: '5.0.30',
    tickets: 'wiredTiger.concurrentTransactions',
    dynamicSizing: false,
    globalResources: ['ParallelBatchWriterMode', 'FeatureCompatibilityVersion'],
    workerLocks: {ParallelBatchWriterMode: 'r', FeatureCompatibilityVersion: 'r', ReplicationStateTransition: 'w', Global: 'R'},
    connectionFields: ['active', 'threaded', 'exhaustIsMaster', 'exhaustHello', 'awaitingTopologyChanges'],
    connectionFieldsAbsent: ['rejected', 'loadBalanced', 'queuedForEstablishment'],
    model: 'config.locks',
  },
  '8.0': {
    version: '8.0.12',
    tickets: 'queues.execution',
    dynamicSizing: true,
    globalResources: ['MultiDocumentTransactionsBarrier'],
    workerLocks: {MultiDocumentTransactionsBarrier: 'R', ReplicationStateTransition: 'w', Global: 'R'},
    connectionFields: ['active', 'rejected', 'threaded', 'exhaustIsMaster', 'exhaustHello', 'awaitingTopologyChanges', 'loadBalanced', 'queuedForEstablishment'],
    connectionFieldsAbsent: [],
    model: 'in-memory',
  },
}

const GONE_IN_80 = ['ParallelBatchWriterMode', 'FeatureCompatibilityVersion']

function assertTickets(tickets: any, e: Expect, context: string): void {
  assert.equal(tickets.source, e.tickets, context)
  assert.equal(tickets.dynamicSizing, e.dynamicSizing, context)
  for (const pool of [tickets.read, tickets.write]) {
    assert.equal(pool.totalTickets, 128, context)
    assert.equal(pool.out + pool.available, 128, context)
    // Nothing runs out of tickets here: "exhausted" (before 7.0, 0 available and a queue) never shows.
    assert.equal(pool.verdict, 'ok', context)
  }
  if (e.dynamicSizing) assert.match(tickets.explanation, /^7\.0\+ sizes tickets dynamically/)
  else assert.match(tickets.explanation, /^before 7\.0 tickets are fixed/)
}

function assertConnections(host: any, e: Expect): void {
  for (const f of e.connectionFields) assert.equal(typeof host[f], 'number', `${f} on ${host.host} (${host.role}): ${JSON.stringify(host)}`)
  for (const f of e.connectionFieldsAbsent) assert.ok(!(f in host), `no ${f} on ${e.version}: ${JSON.stringify(host)}`)
}

for (const profile of ['5.0', '8.0'] as const satisfies readonly SimVersionProfile[]) {
  const e = EXPECT[profile]

  describe(`the ${profile} profile, replica set`, {timeout: 120_000}, () => {
    const cluster = useCluster({topology: 'replset', members: 2, versionProfile: profile})

    it(`locks list: the fsyncLockWorker blocks a write; ${profile}'s global resources and tickets (${e.tickets})`, async () => {
      const primary = cluster.sim.info.processes.find((p) => p.memberState === 'primary')!.host
      const client = new MongoClient(`mongodb://${primary}/?directConnection=true`)
      try {
        await client.db('app').collection('orders').insertOne({n: 0})
        await client.db('admin').command({fsync: 1, lock: true})
        const write = client.db('app').collection('orders').insertOne({n: 1})
        try {
          const [waiting] = await waitForState(
            'the insert waits behind fsyncLock',
            () => client.db('admin').aggregate([{$currentOp: {allUsers: true}}, {$match: {waitingForLock: true, ns: 'app.orders'}}]).toArray(),
            (ops) => ops.length === 1,
          )
          const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
          assert.equal(run.code, 0, run.stderr)
          const r = parseJson(run)
          assert.equal(r.topology, 'replset')
          assert.equal(r.serverVersion, e.version)
          const node = r.nodes.find((n: any) => n.host === primary)
          const [chain] = node.view.blocking.chains
          assert.ok(chain, JSON.stringify(node.view.blocking))
          assert.equal(chain.root.operation.desc, 'fsyncLockWorker')
          assert.deepEqual(chain.root.operation.locks, e.workerLocks)
          assert.deepEqual(
            chain.root.children.map((c: any) => [c.operation.opid, c.edge.resource.type, c.edge.waiterMode, c.edge.blockerMode]),
            [[waiting!.opid, 'Global', 'IX', 'S']],
          )

          assertTickets(node.view.tickets, e, `primary ${primary}`)
          // The waiting insert already holds its write ticket (taken before the global lock is granted).
          assert.equal(node.view.tickets.write.out, 1, JSON.stringify(node.view.tickets))

          const resources = new Set(node.view.waits.rows.map((row: any) => row.resource))
          for (const g of e.globalResources) assert.ok(resources.has(g), `${g} in serverStatus.locks on ${profile}: ${[...resources]}`)
          if (profile === '8.0') for (const g of GONE_IN_80) assert.ok(!resources.has(g), `no ${g} on 8.0: ${[...resources]}`)
          const globalWait = node.view.waits.rows.find((row: any) => row.resource === 'Global' && row.mode === 'w')
          assert.ok(globalWait.acquireWaitCount >= 1, JSON.stringify(globalWait))

          const text = await runInProcess(['locks', 'list', '--uri', cluster.uri])
          assert.equal(text.code, 0, text.stderr)
          assert.match(text.stdout, new RegExp(`^tickets \\(${e.tickets.replace(/\./g, '\\.')}\\):$`, 'm'))
          assert.doesNotMatch(text.stdout, /exhausted/)
        } finally {
          await client.db('admin').command({fsyncUnlock: 1})
          await write
        }
      } finally {
        await client.close()
      }
    })

    it('locks watch --ndjson polls every member and exits 0', async () => {
      const run = await runInProcess(['locks', 'watch', '--ndjson', '--uri', cluster.uri, '--duration', '600ms', '--interval', '200ms'])
      assert.equal(run.code, 0, run.stderr)
      const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as {type: string; [key: string]: unknown})
      assert.equal(lines[0]!.type, 'start')
      assert.equal(lines.at(-1)!.type, 'summary')
      assert.ok(lines.some((line) => line.type === 'nodes'), 'the node locks are polled')
      assert.ok(!lines.some((line) => line.type === 'nodeUnread'), JSON.stringify(lines.filter((line) => line.type === 'nodeUnread')))
    })

    it(`conns list: the connections fields ${profile} reports`, async () => {
      const run = await runInProcess(['conns', 'list', '--json', '--uri', cluster.uri])
      assert.equal(run.code, 0, run.stderr)
      const r = parseJson(run)
      assert.equal(r.hosts.length, 2)
      for (const host of r.hosts) {
        assert.equal(host.state, 'ok', JSON.stringify(host))
        assertConnections(host, e)
      }
      if (profile === '8.0') for (const host of r.hosts) assert.equal(host.queuedForEstablishment, 0)
    })
  })

  describe(`the ${profile} profile, sharded`, {timeout: 120_000}, () => {
    // Two shards (config.lockpings and the node views name each), each with one secondary: its oplog fetcher's reads are
    // what put Global (and 5.0's FCV lock) in an idle shard primary's serverStatus.locks. One config member, and no more
    // members than that: the views are of primaries, and each further member only adds its start and its polling.
    const cluster = useCluster({topology: 'sharded', versionProfile: profile, timeScale: 0.01, shards: 2, mongos: 1, shardMembers: 2, configMembers: 1})

    it(`locks list: the ${e.model} model beside every shard and config primary's node view`, async () => {
      const client = new MongoClient(cluster.uri, {serverSelectionTimeoutMS: 5000})
      try {
        await client.db(`p${profile.replace('.', '')}`).createCollection('c')
      } finally {
        await client.close()
      }
      const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
      assert.equal(run.code, 0, run.stderr)
      const r = parseJson(run)
      assert.equal(r.serverVersion, e.version)
      assert.equal(r.model, e.model)
      const db = `p${profile.replace('.', '')}`
      if (profile === '5.0') {
        // 5.0 as 6.0: the primary shard wrote config.locks under its shard name, with the shards' fixed lock
        // session id and its term (facts file §1.2, §1.4).
        const lock = r.locks.find((l: any) => l.name === db)
        assert.ok(lock, JSON.stringify(r.locks))
        assert.match(lock.process, /^shard0[12]$/)
        assert.equal(lock.ts, '020000000000000000000000')
        assert.equal(typeof lock.term, 'number')
        assert.deepEqual(r.pings.map((p: any) => p.process).sort(), ['config', 'shard01', 'shard02'])
      } else {
        assert.deepEqual(r.locks, [])
        // 7.1+: the primary shard counted its DDL locks in serverStatus.locks.
        const withDdl = r.inMemory.serverStatusLocks.filter((s: any) => s.resources.DDLDatabase && s.resources.DDLCollection)
        assert.equal(withDdl.length, 1, JSON.stringify(r.inMemory.serverStatusLocks))
        assert.match(r.inMemory.note, /serverStatus\.locks has DDL lock entries/)
      }
      const roles = r.nodes.map((n: any) => n.role).sort()
      assert.deepEqual(roles, ['config primary', 'shard primary', 'shard primary'])
      for (const node of r.nodes) {
        assert.equal(node.version, e.version)
        assertTickets(node.view.tickets, e, `${node.role} ${node.host}`)
        const resources = new Set(node.view.waits.rows.map((row: any) => row.resource))
        if (profile === '8.0') for (const g of GONE_IN_80) assert.ok(!resources.has(g), `no ${g} on 8.0: ${[...resources]}`)
        else assert.ok(resources.has('FeatureCompatibilityVersion'), `FCV lock on 5.0: ${[...resources]}`)
      }
    })

    it('locks watch --ndjson exits 0 with the version in its start line', async () => {
      const run = await runInProcess(['locks', 'watch', '--ndjson', '--uri', cluster.uri, '--duration', '600ms', '--interval', '200ms'])
      assert.equal(run.code, 0, run.stderr)
      const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as {type: string; [key: string]: unknown})
      assert.equal(lines[0]!.type, 'start')
      assert.equal(lines[0]!.serverVersion, e.version)
      assert.equal(lines.at(-1)!.type, 'summary')
      assert.ok(lines.some((line) => line.type === 'nodes'))
    })

    it('conns list: routers, shard and config members with the version\'s connections fields', async () => {
      const run = await runInProcess(['conns', 'list', '--json', '--uri', cluster.uri])
      assert.equal(run.code, 0, run.stderr)
      const r = parseJson(run)
      const reached = r.hosts.filter((h: any) => h.state === 'ok')
      assert.ok(reached.some((h: any) => h.role === 'mongos'), JSON.stringify(r.hosts.map((h: any) => [h.host, h.role, h.state])))
      assert.ok(reached.some((h: any) => h.role !== 'mongos'), JSON.stringify(r.hosts.map((h: any) => [h.host, h.role, h.state])))
      for (const host of reached) assertConnections(host, e)
    })
  })
}
