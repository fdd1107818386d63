/**
 * Pools and limits in full against the embedded clusters, with the built CLI:
 * - a replica set with a passive member, a hidden one and an arbiter, started with
 *   net.maxIncomingConnections 300: `conns list` lists the arbiter, the passive member and the hidden
 *   one (from replSetGetConfig: hello lists no hidden member) with their roles, every member's
 *   connPoolStats by pool name (NetworkInterfaceTL-ReplNetwork) and by remote host, and each
 *   connection limit explained (300 = net.maxIncomingConnections, read with getCmdLineOpts, below
 *   80% of hostInfo.extra.maxOpenFiles);
 * - `snapshot` of that set, then `conns list` against `sim --replay`: the same roles, pools and
 *   limit explanations (the replay answers getCmdLineOpts from the capture);
 * - a sharded cluster: the router's pools by name (ShardRegistry) and per shard, the shard and
 *   config members' own pools, and every limit explained.
 *
 * Every run goes through the in-process runner (test/helpers/in-process.ts), the path bin/run.js takes,
 * without a process start (about 1 CPU-s each): nothing here is about the process itself. The replay is
 * still `sim --replay` in its own process (test/helpers/replay.ts).
 */
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, it} from 'node:test'

import {EJSON} from 'bson'

import {rewriteNames} from '../../src/snapshot/rewrite.js'
import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {startReplay} from '../helpers/replay.js'

const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-pools-limits-'))
after(() => rmSync(dir, {recursive: true, force: true}))

const MAX_CONNECTIONS = 300
const SIM_MAX_OPEN_FILES = 1_048_576

/** Sorted by host name as the replay names them (the JSON sorts by the names it was given). */
const byName = (list: any[] | undefined) => list?.map((x) => ({...x, ...(x.hosts ? {hosts: byName(x.hosts)} : {})})).sort((a, b) => String(a.host ?? a.pool).localeCompare(String(b.host ?? b.pool)))

/** What must survive a snapshot and replay: who each host is, its pools and its limit. */
const figures = (result: any) =>
  result.hosts.map((h: any) => ({host: h.host, role: h.role, passive: h.passive, hidden: h.hidden, pools: byName(h.pools?.byPool), byHost: byName(h.pools?.byHost), incomingLimit: h.incomingLimit}))

describe('conns list on a replica set with a passive, a hidden member and an arbiter', {timeout: 180_000}, () => {
  const cluster = useCluster({
    topology: 'replset',
    members: 4,
    maxIncomingConnections: MAX_CONNECTIONS,
    memberOptions: [{member: 2, priority: 0}, {member: 3, hidden: true}, {member: 4, arbiter: true}],
  })

  it('lists every member with its role, its pools by name and by remote host, and its limit explained', async () => {
    const run = await runInProcess(['conns', 'list', '--json', '--uri', cluster.uri])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const byRole = (role: string) => result.hosts.filter((h: any) => h.role === role)
    assert.equal(byRole('arbiter').length, 1, 'the arbiter is listed, not dropped')
    assert.equal(byRole('primary').length, 1)
    assert.equal(result.hosts.filter((h: any) => h.passive && !h.hidden).length, 1, 'the passive member is marked (the hidden one is priority 0 too)')
    assert.equal(result.hosts.length, 4, 'the hidden member too, from replSetGetConfig')
    const hidden = result.hosts.filter((h: any) => h.hidden)
    assert.equal(hidden.length, 1, 'the hidden member is marked')
    assert.equal(hidden[0].role, 'secondary')
    assert.equal(result.topology.hiddenMembersVisible, true)
    assert.ok(result.topology.sources.includes('replSetGetConfig'), result.topology.sources)
    for (const h of result.hosts) {
      assert.equal(h.state, 'ok', `${h.host}: ${h.error}`)
      const repl = h.pools?.byPool?.find((p: any) => p.pool === 'NetworkInterfaceTL-ReplNetwork')
      assert.ok(repl, `${h.host} ${h.role}: ReplNetwork pool from its connPoolStats (${JSON.stringify(h.pools)})`)
      assert.ok(repl.created > 0 && repl.hosts.length > 0, `${h.host}: ${JSON.stringify(repl)}`)
      assert.ok(h.pools.byHost.length > 0, `${h.host}: per remote host`)
      assert.ok(!h.pools.byHost.some((r: any) => r.host === h.host), `${h.host}: its remote hosts are other members`)
      assert.deepEqual(
        {effective: h.incomingLimit.effective, max: h.incomingLimit.maxIncomingConnections, files: h.incomingLimit.maxOpenFiles, cap: h.incomingLimit.openFilesCap, binds: h.incomingLimit.binds, inferred: h.incomingLimit.inferred},
        {effective: MAX_CONNECTIONS, max: MAX_CONNECTIONS, files: SIM_MAX_OPEN_FILES, cap: 838_860, binds: 'maxIncomingConnections', inferred: undefined},
        h.host,
      )
    }
  })

  it('shows roles, pools by name, remote hosts and the limit in the text view within the width', async () => {
    const run = await runInProcess(['conns', 'list', '--uri', cluster.uri], {env: {COLUMNS: '110'}})
    assert.equal(run.code, 0, run.stderr)
    const flat = run.stdout.replaceAll(/\n +/g, ' ')
    assert.match(flat, /replica set rs0, 4 hosts \(from hello, replSetGetConfig\)/)
    assert.match(run.stdout, /127\.0\.0\.1:\d+ +secondary passive hidden /)
    assert.match(run.stdout, /127\.0\.0\.1:\d+ +arbiter /)
    assert.match(run.stdout, /127\.0\.0\.1:\d+ +secondary passive /)
    assert.match(flat, /outgoing pools \(connPoolStats; in use\/available\/created\/refreshing\):/)
    assert.match(flat, /total \d+\/\d+\/\d+\/\d+ · ReplNetwork \d+\/\d+\/\d+\/\d+/)
    assert.match(flat, / to 127\.0\.0\.1:\d+ \d+\/\d+\/\d+\/\d+/)
    assert.match(flat, /limit 300 = net\.maxIncomingConnections \(getCmdLineOpts\); 80% of open files 1,048,576 = 838,860 \(hostInfo\.extra\.maxOpenFiles\)/)
    for (const line of run.stdout.split('\n')) assert.ok([...line].length <= 110, line)
  })

  it('a snapshot keeps them: conns list against sim --replay gives the same roles, pools and limits', async () => {
    const file = path.join(dir, 'replset.json')
    const capture = await runInProcess(['snapshot', '--json', '--out', file, '--uri', cluster.uri])
    assert.equal(capture.code, 0, capture.stderr)
    const snapshot = EJSON.parse(readFileSync(file, 'utf8'), {relaxed: true})
    assert.ok(
      snapshot.hosts.every((h: any) => h.reads.some((r: any) => r.name === 'getCmdLineOpts' && r.reply)),
      'getCmdLineOpts captured on every host',
    )
    const replay = await startReplay(file)
    try {
      const run = await runInProcess(['conns', 'list', '--json', '--uri', replay.uri])
      assert.equal(run.code, 0, run.stderr)
      const replayed = parseJson(run)
      const captured = rewriteNames(snapshot.views['conns list'], new Map(Object.entries(replay.hosts))) as any
      assert.deepEqual(figures(replayed), figures(captured))
      assert.ok(replayed.hosts.some((h: any) => h.role === 'arbiter'), 'the arbiter is replayed with its role')
      assert.ok(replayed.hosts.some((h: any) => h.hidden), 'the hidden member is replayed, marked')
      assert.ok(
        replayed.hosts.every((h: any) => h.incomingLimit.binds === 'maxIncomingConnections' && h.incomingLimit.maxIncomingConnections === MAX_CONNECTIONS && h.incomingLimit.inferred === undefined),
        JSON.stringify(replayed.hosts.map((h: any) => h.incomingLimit)),
      )
      assert.ok(replayed.hosts.every((h: any) => h.pools.byPool.length > 0))
    } finally {
      assert.equal(await replay.stop(), 0)
    }
  })
})

describe('conns list on a sharded cluster: every node answers connPoolStats', {timeout: 120_000}, () => {
  const cluster = useCluster({topology: 'sharded', mongos: 1, shards: 2})

  it("the router's pools by name and per shard, the members' own pools, every limit explained", async () => {
    const run = await runInProcess(['conns', 'list', '--json', '--uri', cluster.uri])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const router = result.hosts.find((h: any) => h.role === 'mongos')
    assert.ok(router.pools.byPool.some((p: any) => p.pool === 'NetworkInterfaceTL-ShardRegistry'), JSON.stringify(router.pools))
    assert.ok(router.pools.shards.some((s: any) => s.shard === 'config'), 'the router summary per shard is kept')
    for (const role of ['shard', 'config']) {
      const members = result.hosts.filter((h: any) => h.role === role)
      assert.ok(members.length > 0, role)
      for (const h of members) assert.ok(h.pools?.byPool?.length > 0 && h.pools.byHost.length > 0, `${h.host} ${role}: ${JSON.stringify(h.pools ?? h.poolsUnavailable)}`)
    }
    for (const h of result.hosts) assert.equal(h.incomingLimit?.binds, 'maxIncomingConnections', `${h.host}: ${JSON.stringify(h.incomingLimit)}`)
    const text = await runInProcess(['conns', 'list', '--uri', cluster.uri], {env: {COLUMNS: '120'}})
    assert.match(text.stdout.replaceAll(/\n +/g, ' '), /ShardRegistry \d+\/\d+\/\d+\/\d+ · .*by shard config \d+\/\d+\/\d+\/\d+/)
  })
})
