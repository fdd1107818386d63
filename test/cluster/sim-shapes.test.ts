/**
 * The shapes of the embedded cluster: 3-member shards and config servers by default (as deployed),
 * each member answering as a real member of its set does; replica-set members with priorities,
 * hidden members and arbiters as the hello and replSetGetStatus pages of the manual describe them.
 */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {MongoClient} from 'mongodb'

import {type SimCluster, type SimProcessInfo, startSimCluster} from '../../src/sim/index.js'
import {execFile} from 'node:child_process'
import path from 'node:path'

import {REPO_ROOT, runCli} from '../helpers/cli.js'

const direct = (host: string) => new MongoClient(`mongodb://${host}/?directConnection=true`, {serverSelectionTimeoutMS: 5000})

async function onDirect<T>(host: string, f: (c: MongoClient) => Promise<T>): Promise<T> {
  const c = direct(host)
  try {
    return await f(c)
  } finally {
    await c.close()
  }
}

describe('sharded cluster shape: 3-member shards and config server by default', {timeout: 60_000}, () => {
  let sim: SimCluster
  let client: MongoClient
  const members = (set: string): SimProcessInfo[] => sim.info.processes.filter((p) => p.setName === set)

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', mongos: 1, shards: 2})
    client = new MongoClient(sim.info.uri, {serverSelectionTimeoutMS: 5000})
  })
  after(async () => {
    await client?.close()
    await sim?.stop()
  })

  it('runs one router, 2 shards of 3 members and 3 config members, one primary per set', () => {
    const shape = sim.info.processes.map((p) => `${p.role}:${p.setName ?? ''}:${p.memberState ?? ''}`)
    assert.deepEqual(shape, [
      'mongos::',
      ...['shard01', 'shard02'].flatMap((s) => [`shard:${s}:primary`, `shard:${s}:secondary`, `shard:${s}:secondary`]),
      'config:configRepl:primary',
      'config:configRepl:secondary',
      'config:configRepl:secondary',
    ])
    assert.equal(new Set(sim.info.processes.map((p) => p.port)).size, 10)
  })

  it('hello on every member lists all members of its set, its primary and itself', async () => {
    for (const set of ['shard01', 'shard02', 'configRepl']) {
      const hosts = members(set).map((p) => p.host)
      for (const m of members(set)) {
        const hello = await onDirect(m.host, (c) => c.db('admin').command({hello: 1}))
        assert.deepEqual(hello.hosts, hosts, `${m.host} hosts`)
        assert.equal(hello.setName, set)
        assert.equal(hello.primary, hosts[0])
        assert.equal(hello.me, m.host)
        assert.equal(hello.secondary, m.memberState === 'secondary', `${m.host} secondary`)
        assert.equal(hello.isWritablePrimary, m.memberState === 'primary', `${m.host} isWritablePrimary`)
      }
    }
  })

  it('listShards and config.shards give shardN/h1,h2,h3; serverStatus.sharding names every config member', async () => {
    const {shards} = await client.db('admin').command({listShards: 1})
    const expected = ['shard01', 'shard02'].map((s) => [s, `${s}/${members(s).map((p) => p.host).join(',')}`])
    assert.deepEqual(shards.map((s: any) => [s._id, s.host]), expected)
    const catalog = await client.db('config').collection('shards').find().sort({_id: 1}).toArray()
    assert.deepEqual(catalog.map((s: any) => [s._id, s.host]), expected)
    const configString = `configRepl/${members('configRepl').map((p) => p.host).join(',')}`
    const routerStatus = await client.db('admin').command({serverStatus: 1})
    assert.equal(routerStatus.sharding.configsvrConnectionString, configString)
    const secondary = members('shard02')[2]!
    const memberStatus = await onDirect(secondary.host, (c) => c.db('admin').command({serverStatus: 1}))
    assert.equal(memberStatus.sharding.configsvrConnectionString, configString)
    assert.equal(memberStatus.repl.secondary, true)
    assert.deepEqual(memberStatus.repl.hosts, members('shard02').map((p) => p.host))
  })

  it('connPoolStats replicaSets lists every member with its state', async () => {
    const {replicaSets} = await client.db('admin').command({connPoolStats: 1})
    for (const set of ['shard01', 'shard02', 'configRepl']) {
      assert.deepEqual(
        replicaSets[set].hosts.map((h: any) => [h.addr, h.ismaster, h.secondary]),
        members(set).map((p) => [p.host, p.memberState === 'primary', p.memberState === 'secondary']),
        set,
      )
    }
  })

  it('routes writes to the primary; secondaries see the data and refuse writes as NotWritablePrimary', async () => {
    await client.db('shapes').collection('c').insertOne({_id: 1, v: 'x'})
    const {primary} = (await client.db('config').collection('databases').findOne({_id: 'shapes' as any}))!
    const [p, s1] = members(primary)
    const onPrimary = await onDirect(p!.host, (c) => c.db('admin').command({serverStatus: 1}))
    assert.ok(onPrimary.opcounters.insert >= 1, 'the insert ran on the primary')
    const onSecondary = await onDirect(s1!.host, async (c) => ({
      docs: await c.db('shapes').collection('c').find().toArray(),
      inserts: (await c.db('admin').command({serverStatus: 1})).opcounters.insert,
      write: await c.db('shapes').collection('c').insertOne({_id: 2}).then(
        () => undefined,
        (e: {code?: number}) => e.code,
      ),
    }))
    assert.deepEqual(onSecondary.docs, [{_id: 1, v: 'x'}])
    assert.equal(Number(onSecondary.inserts), 0, 'no insert ran on the secondary')
    assert.equal(onSecondary.write, 10107)
  })

  it('config secondaries answer config.* reads and $currentOp', async () => {
    const secondary = members('configRepl')[1]!
    const {shards, ops} = await onDirect(secondary.host, async (c) => ({
      shards: await c.db('config').collection('shards').countDocuments(),
      ops: await c.db('admin').aggregate([{$currentOp: {allUsers: true, idleConnections: true}}]).toArray(),
    }))
    assert.equal(shards, 2)
    assert.ok(ops.length >= 1)
  })

  it('a one-member shape is still available (shardMembers / configMembers 1)', async () => {
    const small = await startSimCluster({topology: 'sharded', mongos: 1, shards: 1, shardMembers: 1, configMembers: 1})
    try {
      assert.deepEqual(
        small.info.processes.map((p) => `${p.role}:${p.memberState ?? ''}`),
        ['mongos:', 'shard:primary', 'config:primary'],
      )
    } finally {
      await small.stop()
    }
  })
})

describe('a large sharded cluster in one child process: 8 routers, 64 shards x 3 members', {timeout: 120_000}, () => {
  let sim: SimCluster

  before(async () => {
    sim = await startSimCluster({topology: 'sharded', mongos: 8, shards: 64})
  })
  after(async () => {
    await sim?.stop()
  })

  it('starts 203 listeners; the router lists 64 shards and the last shard member answers as one', async () => {
    assert.equal(sim.info.processes.length, 8 + 64 * 3 + 3)
    assert.equal(new Set(sim.info.processes.map((p) => p.port)).size, 203)
    const c = new MongoClient(sim.info.uri, {serverSelectionTimeoutMS: 5000})
    try {
      const {shards} = await c.db('admin').command({listShards: 1})
      assert.equal(shards.length, 64)
      assert.equal(shards.at(-1)._id, 'shard64')
    } finally {
      await c.close()
    }
    const last = sim.info.processes.filter((p) => p.setName === 'shard64')
    const hello = await onDirect(last[2]!.host, (c) => c.db('admin').command({hello: 1}))
    assert.deepEqual(hello.hosts, last.map((p) => p.host))
    assert.equal(hello.primary, last[0]!.host)
  })
})

describe('replica-set member options: priority, hidden, arbiter', {timeout: 60_000}, () => {
  let sim: SimCluster
  const hosts = () => sim.info.processes.map((p) => p.host)

  before(async () => {
    // Member 1 a passive (priority 0), so member 2 (priority 2) is primary; 3 hidden, 4 an arbiter.
    sim = await startSimCluster({
      topology: 'replset',
      members: 4,
      memberOptions: [{member: 1, priority: 0}, {member: 2, priority: 2}, {member: 3, hidden: true}, {member: 4, arbiter: true}],
    })
  })
  after(async () => {
    await sim?.stop()
  })

  it('the highest priority member is primary; roles and states say which member is what', () => {
    assert.deepEqual(
      sim.info.processes.map((p) => `${p.role}:${p.memberState}:${p.hidden ?? false}`),
      ['secondary:secondary:false', 'primary:primary:false', 'secondary:secondary:true', 'arbiter:arbiter:false'],
    )
  })

  it('hello: hosts has electable members, passives priority 0, arbiters the arbiter, hidden nowhere', async () => {
    const [passive, primary, hidden, arbiter] = hosts() as [string, string, string, string]
    for (const h of hosts()) {
      const hello = await onDirect(h, (c) => c.db('admin').command({hello: 1}))
      assert.deepEqual(hello.hosts, [primary], `${h} hosts`)
      assert.deepEqual(hello.passives, [passive], `${h} passives`)
      assert.deepEqual(hello.arbiters, [arbiter], `${h} arbiters`)
      assert.equal(hello.primary, primary)
      assert.equal(hello.hidden, h === hidden ? true : undefined, `${h} hidden`)
      assert.equal(hello.arbiterOnly, h === arbiter ? true : undefined, `${h} arbiterOnly`)
      assert.equal(hello.passive, h === passive || h === hidden ? true : undefined, `${h} passive`)
      assert.equal(hello.secondary, h === passive || h === hidden, `${h} secondary`)
    }
  })

  it('replSetGetStatus and replSetGetConfig list every member, the hidden one and the arbiter included', async () => {
    const [, primary] = hosts() as [string, string]
    const {status, config} = await onDirect(primary, async (c) => ({
      status: await c.db('admin').command({replSetGetStatus: 1}),
      config: (await c.db('admin').command({replSetGetConfig: 1})).config,
    }))
    assert.deepEqual(status.members.map((m: any) => [m.name, m.stateStr]), hosts().map((h, i) => [h, ['SECONDARY', 'PRIMARY', 'SECONDARY', 'ARBITER'][i]]))
    assert.equal(status.votingMembersCount, 4)
    assert.equal(status.writableVotingMembersCount, 3)
    assert.deepEqual(
      config.members.map((m: any) => [m.host, Number(m.priority), m.hidden, m.arbiterOnly]),
      [[hosts()[0], 0, false, false], [primary, 2, false, false], [hosts()[2], 0, true, false], [hosts()[3], 0, false, true]],
    )
  })

  it('the arbiter holds no data: reads are refused (13436), the others read what the primary wrote', async () => {
    const [passive, primary, , arbiter] = hosts() as [string, string, string, string]
    await onDirect(primary, (c) => c.db('app').collection('c').insertOne({_id: 1}))
    assert.deepEqual(await onDirect(passive, (c) => c.db('app').collection('c').find().toArray()), [{_id: 1}])
    await assert.rejects(
      onDirect(arbiter, (c) => c.db('app').collection('c').find().toArray()),
      (e: {code?: number}) => e.code === 13436,
    )
  })

  it('a driver with replicaSet= finds the primary and never lists the hidden member', async () => {
    const c = new MongoClient(sim.info.uri, {serverSelectionTimeoutMS: 5000})
    try {
      await c.db('app').collection('d').insertOne({_id: 1})
      const hello = await c.db('admin').command({hello: 1})
      assert.equal(hello.me, hosts()[1])
    } finally {
      await c.close()
    }
  })
})

describe('pooltool sim: shape flags', {timeout: 60_000}, () => {
  it('--member-options that no replica set accepts is a usage error with a hint', async () => {
    const bad = await runCli(['sim', '--topology', 'replset', '--member-options', 'hidden@2,arbiter@9', '--duration', '1s'])
    assert.equal(bad.code, 2, bad.stderr)
    assert.match(bad.stderr, /member 9 does not exist/)
    const unparsable = await runCli(['sim', '--topology', 'replset', '--member-options', 'invisible@2', '--duration', '1s'])
    assert.equal(unparsable.code, 2, unparsable.stderr)
    assert.match(unparsable.stderr, /'invisible@2' does not parse/)
    assert.match(unparsable.stderr, /hidden@2,arbiter@3/)
  })

  it('a cluster larger than the open-file limit is a usage error that says so, not a crash', async () => {
    const run = await new Promise<{code: number | null; stderr: string}>((resolve) => {
      const script = `ulimit -n 150 && exec node ${JSON.stringify(path.join(REPO_ROOT, 'bin', 'run.js'))} sim --topology sharded --mongos 8 --shards 64 --duration 1s`
      execFile('sh', ['-c', script], {timeout: 60_000}, (error, _stdout, stderr) => resolve({code: error ? ((error as {code?: number}).code ?? null) : 0, stderr}))
    })
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /203 listeners need more open files .*raise ulimit -n/)
  })

  it('--shard-members and --config-members shape the sharded cluster', async () => {
    const r = await runCli(['sim', '--topology', 'sharded', '--mongos', '1', '--shards', '1', '--shard-members', '2', '--config-members', '1', '--json', '--duration', '1s'])
    assert.equal(r.code, 0, r.stderr)
    const started = JSON.parse(r.stdout)
    assert.deepEqual(
      started.processes.map((p: any) => p.role),
      ['mongos', 'shard', 'shard', 'config'],
    )
  })
})
