/**
 * `pooltool locks list` on every topology, over real TCP against the embedded cluster:
 * a standalone and a replica set read the node locks of every data-bearing node (no distributed
 * locks there: said, and their fields absent); a sharded cluster reads every shard and config
 * primary beside the distributed locks. A node that cannot be read is listed with its error, never
 * as "no contention". A write held by fsyncLock waits behind the fsyncLockWorker: the root blocker.
 * `locks pings` still refuses a replica set, naming the document that cannot exist there.
 *
 * Most runs go through this process, by the path bin/run.js takes (test/helpers/in-process.ts: the
 * same code over real TCP, output and exit code captured), sparing a Node start and CLI load each;
 * the episode watch stays a real process (Ctrl-C ends it, and its timing is the server's, not this
 * busy process's). The other exit paths are spawned in bad-input and locks-dead-holder44.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {waitForState} from '../helpers/sim.js'

const DISTRIBUTED_FIELDS = ['entry', 'model', 'expiryMS', 'locks', 'pings', 'inMemory']

describe('locks list on a standalone', {timeout: 60_000}, () => {
  const cluster = useCluster({topology: 'standalone'})

  it('exits 0 with the node view; distributed locks are not applicable and their fields absent', async () => {
    const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
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
    const text = await runInProcess(['locks', 'list', '--uri', cluster.uri])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /── node \S+ \(standalone/)
    assert.match(text.stdout, /no operation waits for a lock on the nodes read/)
  })

  it('locks watch polls the node (exit 0): no distributed-lock fields, no episode where nothing waited', async () => {
    const run = await runInProcess(['locks', 'watch', '--json', '--uri', cluster.uri, '--duration', '1s', '--interval', '200ms'])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.topology, 'standalone')
    assert.match(r.distributedLocks, /^not applicable/)
    for (const field of ['entry', 'model', 'events', 'locks']) assert.ok(!(field in r), `${field} is absent on a standalone`)
    assert.equal(r.failedPolls, 0)
    assert.ok(r.polls >= 2, `${r.polls} polls`)
    assert.equal(r.nodePolls.hosts.length, 1)
    assert.equal(r.nodeEpisodes.episodesTotal, 0)
    assert.equal(r.nodeEpisodes.nodes[0].polls, r.polls)
  })
})

describe('locks list on a replica set', {timeout: 90_000}, () => {
  const cluster = useCluster({topology: 'replset', members: 3})

  it('exits 0 with a view of every member', async () => {
    const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
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

  it('fsyncLock: the fsyncLockWorker holding Global S is the root blocker of the write waiting for IX', async () => {
    const primary = cluster.sim.info.processes.find((p) => p.memberState === 'primary')!.host
    const client = new MongoClient(`mongodb://${primary}/?directConnection=true`)
    try {
      await client.db('admin').command({fsync: 1, lock: true})
      const write = client.db('app').collection('orders').insertOne({n: 1})
      try {
        const [waiting] = await waitForState(
          'the insert waits for the lock',
          () => client.db('admin').aggregate([{$currentOp: {allUsers: true}}, {$match: {waitingForLock: true}}]).toArray(),
          (ops) => ops.length > 0,
        )
        const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
        assert.equal(run.code, 0, run.stderr)
        const r = parseJson(run)
        const node = r.nodes.find((n: any) => n.host === primary)
        const [chain] = node.view.blocking.chains
        assert.ok(chain, JSON.stringify(node.view.blocking))
        assert.equal(chain.root.operation.desc, 'fsyncLockWorker')
        assert.deepEqual(chain.root.children.map((c: any) => [c.operation.opid, c.operation.commandName, c.edge.resource.type, c.edge.waiterMode, c.edge.blockerMode]), [[waiting!.opid, 'insert', 'Global', 'IX', 'S']])
        assert.deepEqual(r.rootBlockers.map((b: any) => [b.host, b.opid]), [[primary, chain.root.operation.opid]])
        const text = await runInProcess(['locks', 'list', '--uri', cluster.uri])
        assert.match(text.stdout, new RegExp(`^root blocker: opid ${chain.root.operation.opid} on \\S+ \\(primary\\) blocks 1 operation\\(s\\)`, 'm'))
        assert.match(text.stdout, /fsyncLockWorker/)
      } finally {
        await client.db('admin').command({fsyncUnlock: 1})
        await write
      }
    } finally {
      await client.close()
    }
  })

  it('locks pings refuses a replica set, naming the document that cannot exist there (exit 7)', async () => {
    const run = await runInProcess(['locks', 'pings', '--uri', cluster.uri])
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
    const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri, '--timeout-ms', '2000'])
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
    const text = await runInProcess(['locks', 'list', '--uri', cluster.uri, '--timeout-ms', '2000'])
    assert.match(text.stdout, new RegExp(`── node ${down.replace(/\./g, '\\.')} .*\\n\\s*locks unknown: not read \\(`))
    assert.match(text.stdout, /\(1 node\(s\) unknown: not read\)/)
  })
})

describe('locks list on a sharded cluster', {timeout: 90_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, mongos: 1})

  it('exits 0 with every shard primary and the config primary beside the distributed locks', async () => {
    const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
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
    const run = await runInProcess(['locks', 'list', '--json', '--uri', `mongodb://${shard}/?directConnection=true`])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.topology, 'sharded')
    assert.equal(r.distributedLocks, 'read')
    assert.equal(r.entry, 'config-server')
    assert.ok(r.notes.some((n: string) => n === `the URI reached shard member ${shard}: the distributed locks were read on its config server's primary ${config}`), JSON.stringify(r.notes))
    assert.equal(r.nodes.length, 3)
  })
})

/**
 * Who blocks whom on one node: on the embedded replica set, an index build holds the collection lock (the
 * sim's lock-hold fault: `lockInfo` shows it granted, the writes pending) while two inserts wait.
 */
describe('a blocker holding a collection lock with two waiters, on the embedded replica set', {timeout: 120_000}, () => {
  const cluster = useCluster({topology: 'replset', members: 1})
  const NS = 'app.orders'

  /** The inserts waiting on the primary, as a test's own $currentOp sees them. */
  const waitingInserts = (client: MongoClient) =>
    client.db('admin').aggregate([{$currentOp: {allUsers: true}}, {$match: {waitingForLock: true, ns: NS}}]).toArray()

  it('locks list shows the chain: the build is the root blocker, the two inserts wait under it; --json carries the same', async () => {
    const primary = cluster.sim.info.processes[0]!.host
    const client = new MongoClient(`mongodb://${primary}/?directConnection=true`)
    try {
      await client.db('app').collection('orders').insertOne({n: 0})
      // Held until the test ends it (ms 0), so the list cannot race its end.
      await cluster.sim.control({kind: 'lock-hold', ns: NS, mode: 'W', ms: 120_000, hosts: [primary]})
      const writes = [client.db('app').collection('orders').insertOne({n: 1}), client.db('app').collection('orders').insertOne({n: 2})]
      try {
        const waiting = await waitForState('two inserts wait for the collection lock', () => waitingInserts(client), (ops) => ops.length === 2)
        const waiterOpids = waiting.map((op) => op.opid).sort()
        const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
        assert.equal(run.code, 0, run.stderr)
        const r = parseJson(run)
        const node = r.nodes.find((n: any) => n.host === primary)
        assert.equal(node.lockInfo, 'read')
        const {chains} = node.view.blocking
        assert.equal(chains.length, 1, JSON.stringify(node.view.blocking))
        const [chain] = chains
        assert.equal(chain.root.operation.commandName, 'createIndexes')
        assert.equal(chain.root.operation.ns, NS)
        assert.equal(chain.root.operation.locks.Collection, 'W')
        assert.equal(chain.waiterCount, 2)
        assert.deepEqual(chain.root.children.map((c: any) => c.operation.opid).sort(), waiterOpids)
        for (const child of chain.root.children) {
          assert.equal(child.operation.commandName, 'insert')
          assert.deepEqual([child.edge.resource.type, child.edge.resource.name, child.edge.blockerMode, child.edge.kind], ['Collection', NS, 'X', 'holds'])
        }
        const rootOpid = chain.root.operation.opid
        // The root is an index build's thread: the manual's killOp says not to kill it but to drop its indexes on the primary.
        assert.deepEqual(r.rootBlockers.map((b: any) => [b.host, b.opid, b.waiterCount, b.killOpHint]), [[primary, rootOpid, 2, null]])
        const ABORT_BUILD = 'an index build: abort it on the primary (4.4+) with db.getSiblingDB("app").runCommand({dropIndexes: "orders", index: [<names in its command.indexes>]}), not killOp'
        assert.ok(r.rootBlockers[0].stopHint.startsWith(ABORT_BUILD), r.rootBlockers[0].stopHint)
        assert.equal(chain.stopHint, r.rootBlockers[0].stopHint)

        // The text says the same: the root blocker first, with the hint, and each waiter under it.
        const text = await runInProcess(['locks', 'list', '--uri', cluster.uri])
        assert.equal(text.code, 0, text.stderr)
        const lines = text.stdout.split('\n')
        assert.match(lines[2]!, new RegExp(`^root blocker: opid ${rootOpid} on ${primary.replace(/\./g, '\\.')} \\(primary\\) blocks 2 operation\\(s\\)`))
        assert.ok(lines[3]!.startsWith(`  hint: ${ABORT_BUILD}`), lines[3])
        assert.match(lines[3]!, /\(pooltool never kills\)$/)
        assert.doesNotMatch(text.stdout, /db\.killOp/)
        for (const opid of waiterOpids) assert.match(text.stdout, new RegExp(`[├└]─ opid ${opid} waits ≤\\S+ for IX on Collection app\\.orders \\(${rootOpid} holds X\\)`))
      } finally {
        await cluster.sim.control({kind: 'lock-hold', ns: NS, mode: 'W', ms: 0, hosts: [primary]})
        await Promise.all(writes)
      }
    } finally {
      await client.close()
    }
  })

  it('locks watch records one episode, its root blocker and two waiters, its duration right within one poll interval', async () => {
    const primary = cluster.sim.info.processes[0]!.host
    const client = new MongoClient(`mongodb://${primary}/?directConnection=true`)
    const intervalMS = 250
    // How long the waiters waited, as the server counted it (serverStatus.locks), not as this busy test process
    // timed its inserts: on a loaded machine the client's own clock adds its event-loop delays to the wait.
    let truth: {waits: number; meanWaitMS: number} | undefined
    let failed: unknown
    try {
      const run = await runCli(['locks', 'watch', '--uri', cluster.uri, '--ndjson', '--interval', `${intervalMS}ms`, '--duration', '90s'], {
        timeoutMs: 110_000,
        // Stopped (Ctrl-C) once the episode has ended: its summary comes last.
        interruptWhen: /"kind":"episode-end"/,
        onSpawn: (child) => {
          let out = ''
          let started = false
          child.stdout!.on('data', (chunk) => {
            out += chunk
            // The hold starts once the watch has polled the node without contention: the episode begins in the watch.
            if (started || !/"type":"nodes"/.test(out)) return
            started = true
            void (async () => {
              // Two pooled connections before the hold, so the two inserts reach the server together (no handshake
              // between them): their mean wait is then the episode's length.
              await Promise.all([client.db('admin').command({ping: 1}), client.db('admin').command({ping: 1})])
              const before = await collectionIxWaits(client)
              await cluster.sim.control({kind: 'lock-hold', ns: NS, mode: 'W', ms: 5000, hosts: [primary]})
              await Promise.all([client.db('app').collection('orders').insertOne({n: 3}), client.db('app').collection('orders').insertOne({n: 4})])
              const after = await collectionIxWaits(client)
              truth = {waits: after.count - before.count, meanWaitMS: (after.micros - before.micros) / (after.count - before.count) / 1000}
            })().catch((error: unknown) => (failed = error))
          })
        },
      })
      assert.equal(failed, undefined)
      assert.ok(truth, `the inserts finished\n${run.stdout.slice(-2000)}\n${run.stderr}`)
      const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as {type: string; [key: string]: any})
      assert.equal(lines[0]!.type, 'start')
      assert.equal(lines[0]!.topology, 'replset')
      const summary = lines.at(-1)!
      assert.equal(summary.type, 'summary')
      const episodes = summary.nodeEpisodes.episodes
      assert.equal(episodes.length, 1, JSON.stringify(lines.filter((l) => l.type === 'episode')))
      const [episode] = episodes
      assert.equal(episode.node, primary)
      // The build is its root blocker (the first root); as the build lets go, the waiters can be seen still waiting for a
      // moment with no visible blocker: the same episode (a root change), not a second one.
      assert.equal(episode.roots[0].root.commandName, 'createIndexes', JSON.stringify(episode.roots))
      assert.ok(episode.roots.slice(1).every((r: any) => r.root === null), JSON.stringify(episode.roots))
      assert.equal(episode.peakWaiters.count, 2)
      assert.ok(episode.endedAt !== null && episode.previousPollAt !== null, JSON.stringify(episode))
      assert.deepEqual(episode.resources.map((r: any) => [r.type, r.name]), [['Collection', NS]])
      // The streamed events are the summary's episode: start then end, same id.
      const streamed = lines.filter((l) => l.type === 'episode')
      assert.deepEqual([streamed[0]!.kind, streamed.at(-1)!.kind], ['episode-start', 'episode-end'])
      assert.equal(streamed.at(-1)!.durationMS, episode.durationMS)
      // Right within one poll interval: the waiters waited (as the server counted it) between the episode's bounds, and
      // its duration is off by at most the largest gap between two of the node's polls (a loaded machine stretches the
      // interval; the bounds follow the polls as they were).
      assert.equal(truth!.waits, 2, 'each insert waited once for its IX on the collection')
      const waitedMS = truth!.meanWaitMS
      const readAts = lines.filter((l) => l.type === 'nodes').map((l) => Date.parse(l.nodes[0].readAt))
      const gaps = readAts.slice(1).map((t, i) => t - readAts[i]!)
      const widest = Math.max(intervalMS, ...gaps)
      assert.ok(episode.durationMinMS <= waitedMS, `at least ${episode.durationMinMS} ms ≤ ${waitedMS} ms waited`)
      assert.ok(episode.durationMaxMS >= waitedMS, `at most ${episode.durationMaxMS} ms ≥ ${waitedMS} ms waited`)
      assert.ok(Math.abs(episode.durationMS - waitedMS) <= widest, `${episode.durationMS} ms within ${widest} ms of ${waitedMS} ms waited: ${JSON.stringify(episode)}`)
    } finally {
      await client.close()
    }
  })
})

/** serverStatus.locks.Collection: how many IX (w) acquisitions waited, and for how long in all, on this node. */
async function collectionIxWaits(client: MongoClient): Promise<{count: number; micros: number}> {
  const status = await client.db('admin').command({serverStatus: 1})
  const collection = status.locks?.Collection ?? {}
  return {count: Number(collection.acquireWaitCount?.w ?? 0), micros: Number(collection.timeAcquiringMicros?.w ?? 0)}
}
