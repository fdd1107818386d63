/**
 * The 3.4 balancer lock belongs to clusters upgraded from 3.4, not to every 4.4 cluster:
 * a fresh cluster's config.locks holds no lock; `--scenario upgraded-from-3.4`
 * adds the held `balancer` lock as the manual's config.locks example shows it, dated
 * relative to the cluster's start.
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {MongoClient} from 'mongodb'

import {type FiredScenario, startSimCluster} from '../../src/sim/index.js'
import {useCluster} from '../helpers/cluster.js'

async function configLocks(uri: string) {
  const client = new MongoClient(uri)
  try {
    return await client.db('config').collection('locks').find({}).toArray()
  } finally {
    await client.close()
  }
}

describe('a fresh 4.4 cluster', () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', mongos: 1, shards: 1, shardMembers: 1, configMembers: 1})

  test('holds no lock at all', async () => {
    assert.deepEqual(await configLocks(cluster.uri), [])
  })
})

describe('--scenario upgraded-from-3.4', () => {
  const startedAt = Date.now()
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', mongos: 1, shards: 1, shardMembers: 1, configMembers: 1, scenarios: ['upgraded-from-3.4']})

  test('the balancer lock held by ConfigServer since long before the start', async () => {
    const [balancer, ...others] = await configLocks(cluster.uri)
    assert.deepEqual(others, [])
    assert.deepEqual(
      {id: balancer?._id, state: balancer?.state, process: balancer?.process, who: balancer?.who, why: balancer?.why},
      {id: 'balancer', state: 2, process: 'ConfigServer', who: 'ConfigServer:Balancer', why: 'CSRS Balancer'},
    )
    const ageDays = (startedAt - (balancer!.when as Date).getTime()) / 86_400_000
    assert.ok(ageDays > 365, `held since the upgrade, years ago: ${ageDays} days`)
    assert.equal(balancer!.ts.getTimestamp().getTime(), Math.floor((balancer!.when as Date).getTime() / 1000) * 1000, 'the lock id is from the same moment')
  })
})

test('upgraded-from-3.4 needs the 4.4 profile (later versions keep no balancer lock in config.locks use)', async () => {
  await assert.rejects(startSimCluster({topology: 'sharded', versionProfile: '6.0', scenarios: ['upgraded-from-3.4']}), /needs --version-profile 4\.4/)
})

describe('dead-lock-holder announces itself as the lock model of each version leaves it', () => {
  for (const versionProfile of ['6.0', '7.0'] as const) {
    test(versionProfile, async () => {
      const sim = await startSimCluster({topology: 'sharded', versionProfile, mongos: 1, shards: 2, shardMembers: 1, configMembers: 1, scenarios: ['dead-lock-holder']})
      try {
        const fired: FiredScenario[] = []
        sim.onScenarioFired((event) => fired.push(event))
        assert.deepEqual(fired.map((e) => e.scenario), ['dead-lock-holder'], 'fired during start, replayed to a late listener')
        const [event] = fired
        const held = (await configLocks(sim.info.uri)).find((l) => l._id === 'scenario.orders')
        if (versionProfile === '6.0') {
          assert.equal(event.facts.lockProcess, 'shard02', '6.0: the lock is held under the shard name')
          assert.equal(event.facts.pingsAs, 'shard02')
          assert.equal(held?.process, 'shard02')
          assert.match(event.summary, /it came back pinging as shard02 again, so the lock never looks stale$/)
        } else {
          assert.equal(held, undefined, '7.0 keeps DDL locks in memory')
          assert.equal(event.facts.lockProcess, undefined)
          assert.match(event.summary, /no lock was left behind/)
        }
      } finally {
        await sim.stop()
      }
    })
  }
})
