/**
 * `snapshot` captures node locks on a replica set and a standalone, and `sim --replay` serves them: with an
 * index build holding a collection lock while two inserts wait (the sim's lock-hold fault), `locks list
 * --json` against the replay gives the chain, root blocker, waiters, modes, resources and ranking the live
 * `locks list` gave, frozen at capture (running times and waits as captured). The file keeps no command
 * values (the inserts' documents), says per node how its node-lock reads went, and a format-1 file without
 * them replays with the node locks unknown ("not captured"), never "no locks".
 *
 * The replays are real processes; `locks list` and `snapshot` run in this process by the path bin/run.js
 * takes (test/helpers/in-process.ts: the same code over real TCP, output and exit code captured), sparing
 * a Node start and CLI load each. Their real processes: snapshot against a cluster in snapshot-replay and
 * conns-pools-limits, locks list against a replay in snapshot-replay and against a cluster in hostile-strings.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {EJSON} from 'bson'

import {MongoClient} from '../../src/mongo/driver.js'
import {rewriteNames} from '../../src/snapshot/rewrite.js'
import {parseJson} from '../helpers/cli.js'
import {type ClusterHandle, useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {type ReplayHandle, startReplay} from '../helpers/replay.js'
import {waitForState} from '../helpers/sim.js'

const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-snapshot-locks-'))
after(() => rmSync(dir, {recursive: true, force: true}))

const NS = 'app.orders'
/** In the waiting inserts' documents: user data, which must not reach the file. */
const SECRET = 'card-4111-1111-1111-1111'

const asReplayed = (view: unknown, replay: ReplayHandle): any => rewriteNames(view, new Map(Object.entries(replay.hosts)))

/** A chain as a DBA reads it: who, doing what, holding or waiting for which lock in which mode, under whom. */
function shape(node: any): any {
  const op = node.operation
  return {
    opid: op.opid,
    commandName: op.commandName,
    op: op.op,
    ns: op.ns,
    locks: op.locks,
    waitingForLock: op.waitingForLock,
    ...(node.edge ? {edge: {resource: node.edge.resource, waiterMode: node.edge.waiterMode, blockerMode: node.edge.blockerMode, kind: node.edge.kind, evidence: node.edge.evidence}} : {}),
    children: node.children.map(shape),
  }
}

const chainsOf = (result: any, host: string) => {
  const node = result.nodes.find((n: any) => n.host === host)
  assert.ok(node?.view, `${host} was read: ${JSON.stringify(node)}`)
  return {node, chains: node.view.blocking.chains.map((c: any) => ({waiterCount: c.waiterCount, killOpHint: c.killOpHint, stopHint: c.stopHint, root: shape(c.root)}))}
}

const ranking = (result: any) => result.rootBlockers.map((b: any) => [b.host, b.role, b.opid, b.waiterCount, b.killOpHint, b.stopHint])

interface Captured {
  primary: string
  waiterOpids: unknown[]
  live: any
  file: string
  summary: any
  snapshot: any
}

/** Holds the collection lock on the node, two inserts wait, `locks list` then `snapshot` run; the hold ends after both. */
async function captureBlocked(cluster: ClusterHandle, name: string): Promise<Captured> {
  const primary = cluster.sim.info.processes.find((p) => p.role === 'primary' || p.role === 'standalone')?.host ?? cluster.sim.info.processes[0]!.host
  const client = new MongoClient(`mongodb://${primary}/?directConnection=true`)
  const file = path.join(dir, `${name}.json`)
  try {
    await client.db('app').collection('orders').insertOne({n: 0})
    // Held until the capture is done (ms 0 ends it), so neither read can race its end.
    await cluster.sim.control({kind: 'lock-hold', ns: NS, mode: 'W', ms: 120_000, hosts: [primary]})
    const writes = [1, 2].map((n) => client.db('app').collection('orders').insertOne({n, card: SECRET}))
    try {
      const waiting = await waitForState(
        'two inserts wait for the collection lock',
        () => client.db('admin').aggregate([{$currentOp: {allUsers: true}}, {$match: {waitingForLock: true, ns: NS}}]).toArray(),
        (ops) => ops.length === 2,
      )
      const run = await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri])
      assert.equal(run.code, 0, run.stderr)
      const capture = await runInProcess(['snapshot', '--json', '--out', file, '--uri', cluster.uri])
      assert.equal(capture.code, 0, capture.stderr)
      return {primary, waiterOpids: waiting.map((op) => op.opid).sort(), live: parseJson(run), file, summary: parseJson(capture), snapshot: EJSON.parse(readFileSync(file, 'utf8'), {relaxed: true})}
    } finally {
      await cluster.sim.control({kind: 'lock-hold', ns: NS, mode: 'W', ms: 0, hosts: [primary]})
      await Promise.all(writes)
    }
  } finally {
    await client.close()
  }
}

/** A format-1 file of the same capture: no node-lock reads, no `nodeLocks` (what an older pooltool wrote). */
function asFormatOne(file: string, out: string): void {
  const doc = JSON.parse(readFileSync(file, 'utf8'))
  doc.formatVersion = 1
  for (const host of doc.hosts) {
    delete host.nodeLocks
    host.reads = host.reads.filter((r: any) => r.name !== 'lockInfo' && !(r.name === '$currentOp' && r.request.pipeline.length === 1))
  }
  delete doc.views['locks list']
  writeFileSync(out, JSON.stringify(doc, null, 2))
}

for (const topology of ['replset', 'standalone'] as const) {
  describe(`snapshot and replay of node locks on the embedded ${topology === 'replset' ? 'replica set' : 'standalone'}: a blocker with two waiters`, {timeout: 180_000}, () => {
    const cluster = useCluster({topology})
    let captured: Captured
    let replay: ReplayHandle

    before(async () => {
      captured = await captureBlocked(cluster, topology)
      replay = await startReplay(captured.file)
    })

    after(async () => {
      assert.equal(await replay?.stop(), 0)
    })

    it('the live list saw the chain: the build holds X on the collection, the two inserts wait under it', () => {
      const {chains} = chainsOf(captured.live, captured.primary)
      assert.equal(chains.length, 1, JSON.stringify(chains))
      assert.equal(chains[0].root.commandName, 'createIndexes')
      assert.equal(chains[0].waiterCount, 2)
      assert.deepEqual(chains[0].root.children.map((c: any) => c.opid).sort(), captured.waiterOpids)
    })

    it('the file holds every node\'s node-lock reads, says how they went, and keeps no command value', () => {
      assert.equal(captured.snapshot.formatVersion, 2)
      assert.ok(captured.summary.views.includes('locks list'), JSON.stringify(captured.summary.views))
      const nodes = captured.snapshot.views['locks list'].nodes.map((n: any) => n.host).sort()
      assert.deepEqual(captured.snapshot.hosts.filter((h: any) => h.nodeLocks).map((h: any) => h.host).sort(), nodes, 'every node locks list reads, and only those')
      for (const host of captured.snapshot.hosts.filter((h: any) => h.nodeLocks)) {
        assert.deepEqual(host.nodeLocks, {currentOp: 'captured', serverStatus: 'captured', lockInfo: 'captured'}, host.host)
        const summary = captured.summary.hosts.find((h: any) => h.host === host.host)
        assert.deepEqual(summary.nodeLocks, host.nodeLocks)
      }
      const text = readFileSync(captured.file, 'utf8')
      assert.ok(!text.includes(SECRET), 'the inserts\' documents are not in the file')
      const ops = captured.snapshot.hosts.find((h: any) => h.host === captured.primary).reads.find((r: any) => r.name === '$currentOp' && r.request.pipeline.length === 1).reply
      const inserts = ops.filter((op: any) => op.waitingForLock)
      assert.equal(inserts.length, 2)
      for (const op of inserts) assert.deepEqual(op.command, {insert: 'orders', $db: 'app'}, 'the command\'s name (and the collection it names), nothing else')
    })

    it('locks list against the replay gives the live chain, root blocker, waiters, modes, resources and ranking', async () => {
      const run = await runInProcess(['locks', 'list', '--json', '--uri', replay.uri])
      assert.equal(run.code, 0, run.stderr)
      const replayed = parseJson(run)
      const listener = replay.hosts[captured.primary]!
      const live = asReplayed(captured.live, replay)
      assert.deepEqual(chainsOf(replayed, listener).chains, chainsOf(live, listener).chains)
      assert.deepEqual(ranking(replayed), ranking(live))
      assert.deepEqual(
        replayed.nodes.map((n: any) => [n.host, n.role, n.lockInfo]),
        live.nodes.map((n: any) => [n.host, n.role, n.lockInfo]),
      )
      // Frozen at capture: running times, waits since start and tickets are those the capture's own list computed.
      const view = asReplayed(captured.snapshot.views['locks list'], replay)
      const node = replayed.nodes.find((n: any) => n.host === listener)
      const then = view.nodes.find((n: any) => n.host === listener)
      assert.deepEqual(node.view.blocking, then.view.blocking)
      assert.deepEqual(node.view.waits, then.view.waits)
      assert.deepEqual(node.view.tickets, then.view.tickets)

      const text = await runInProcess(['locks', 'list', '--uri', replay.uri])
      assert.equal(text.code, 0, text.stderr)
      const rootOpid = chainsOf(replayed, listener).chains[0].root.opid
      assert.match(text.stdout, new RegExp(`root blocker: opid ${rootOpid} on ${listener.replace(/\./g, '\\.')} \\(\\w+\\) blocks 2 operation\\(s\\)`))
    })

    it('a format-1 file of the same capture replays with the node locks unknown: not captured, never "no locks"', async () => {
      const old = path.join(dir, `${topology}-format1.json`)
      asFormatOne(captured.file, old)
      const oldReplay = await startReplay(old)
      try {
        const run = await runInProcess(['locks', 'list', '--json', '--uri', oldReplay.uri])
        assert.equal(run.code, 0, run.stderr)
        const r = parseJson(run)
        assert.ok(r.nodes.length > 0)
        for (const node of r.nodes) {
          assert.equal(node.view, null, `${node.host} is unknown, not empty`)
          assert.match(node.error.message, /\$currentOp operations were not captured in .*format1\.json: this node's locks and operations are unknown, not none \(a format-1 snapshot/)
        }
        assert.deepEqual(r.rootBlockers, [])
        const text = await runInProcess(['locks', 'list', '--uri', oldReplay.uri])
        assert.equal(text.code, 0, text.stderr)
        assert.match(text.stdout, /locks unknown: not read \(.*not captured/)
        assert.match(text.stdout, /node locks unknown: none of the \d+ node\(s\) could be read/)
        assert.doesNotMatch(text.stdout, /no operation waits for a lock/)
      } finally {
        await oldReplay.stop()
      }
    })
  })
}
