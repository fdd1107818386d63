/**
 * Connection classes and verdicts (who holds the connections; a client that leaks MongoClients) over `$currentOp` documents of a client-per-request
 * leak built from the SDAM/CMAP specifications (test/fixtures/conns-documents.ts says why they are
 * built, not quoted), grouped by the holders' own pipeline run in the embedded cluster's engine.
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {clientLeakVerdicts, clusterHolders, LEAK_MIN_CLIENTS} from '../../src/conns/cluster-holders.js'
import {holdersCurrentOp, holdersFromGroups, splitHolder} from '../../src/conns/holders.js'
import {heldBy, neverShrankVerdict} from '../../src/conns/never-shrank-advice.js'
import type {Holder} from '../../src/conns/types.js'
import {renderList, renderNeverShrank, surprisingValueNotes} from '../../src/reporters/conns.js'
import {runPipeline} from '../../src/sim/storage/aggregate.js'
import {ibmConnectionsSample, leakCurrentOp} from '../fixtures/conns-documents.js'

const MEMBERS = ['db1:27017', 'db2:27017', 'db3:27017'] as const
const holdersOn = (member: (typeof MEMBERS)[number], clients: number): Holder[] =>
  holdersFromGroups(runPipeline(leakCurrentOp(member, clients), holdersCurrentOp(false).pipeline ?? []), 'pooltool-conns')

describe('classifying the connections of one host', () => {
  test('parked awaitable hellos are monitors; as many idle connections are their RTT connections; the rest is the pool', () => {
    const holders = holdersOn('db1:27017', 12)
    const leak = holders.find((h) => h.appName === 'checkout-svc')!
    assert.deepEqual(leak, {appName: 'checkout-svc', client: '10.0.0.5', driver: 'nodejs', count: 36, kind: 'application', monitors: 12, rttPingers: 12, pool: 12})
    const orders = holders.find((h) => h.appName === 'orders-api')!
    assert.deepEqual({monitors: orders.monitors, rttPingers: orders.rttPingers, pool: orders.pool}, {monitors: 1, rttPingers: 1, pool: 8}, 'a busy pooled connection is not a monitor')
    assert.equal(holders.find((h) => h.driver === 'NetworkInterfaceTL')!.kind, 'internal')
    assert.equal(holders.find((h) => h.appName === 'pooltool-conns')!.kind, 'pooltool')
    assert.equal(holders.some((h) => h.appName === '(none)' && h.client === undefined), false, 'internal threads without a client are not holders')
  })

  test('the oplog fetcher is internal; a secondary nobody reads from holds only monitoring connections of the leak', () => {
    const holders = holdersOn('db2:27017', 12)
    assert.equal(holders.find((h) => h.appName === 'OplogFetcher')!.kind, 'internal')
    const leak = holders.find((h) => h.appName === 'checkout-svc')!
    assert.deepEqual({count: leak.count, monitors: leak.monitors, rttPingers: leak.rttPingers, pool: leak.pool}, {count: 24, monitors: 12, rttPingers: 12, pool: 0})
  })

  test('RTT connections are never more than the idle connections, nor than the monitors', () => {
    assert.deepEqual(splitHolder(10, 4, 2), {monitors: 4, rttPingers: 2, pool: 4})
    assert.deepEqual(splitHolder(10, 0, 10), {monitors: 0, rttPingers: 0, pool: 10})
  })

  test('groups read without the classification (an older snapshot): monitors unknown, not 0', () => {
    const [holder] = holdersFromGroups([{_id: {appName: 'a', client: '10.0.0.1:5', driver: 'nodejs'}, count: 3}])
    assert.equal(holder!.monitors, undefined)
    assert.equal(holder!.pool, undefined)
    const cluster = clusterHolders([{host: 'db1:27017', state: 'ok', holders: [holder!]}])
    assert.equal(cluster.holders[0]!.impliedClients, undefined)
    assert.equal(cluster.totals.monitoring, undefined)
    assert.deepEqual(clientLeakVerdicts(cluster), [])
  })
})

describe('cluster-wide holders and the client-per-request verdict', () => {
  const clients = 12
  const hosts = MEMBERS.map((host) => ({host, state: 'ok', holders: holdersOn(host, clients)}))

  test('summed over the members: per holder, app, client host and driver; the clients the monitors imply', () => {
    const cluster = clusterHolders([...hosts, {host: 'db4:27017', state: 'unreachable'}])
    assert.deepEqual(cluster.hostsRead, [...MEMBERS])
    assert.deepEqual(cluster.hostsUnread, ['db4:27017'], 'a host not read is unknown, not none')
    const leak = cluster.holders[0]!
    assert.equal(leak.appName, 'checkout-svc')
    assert.equal(leak.count, 36 + 24 + 24)
    assert.deepEqual(leak.perHost, {'db1:27017': 36, 'db2:27017': 24, 'db3:27017': 24})
    assert.equal(leak.monitoring, 2 * clients * 3)
    assert.equal(leak.pool, clients)
    assert.equal(leak.impliedClients, clients)
    assert.deepEqual(cluster.byApp[0], {name: 'checkout-svc', count: 84, hosts: 3, monitoring: 72})
    assert.equal(cluster.byClient.find((c) => c.name === '10.0.0.5')!.count, 84)
    assert.equal(cluster.byDriver.find((d) => d.name === 'nodejs')!.count, 84 + 14 + 3)
    assert.equal(cluster.totals.internal, 5, 'three heartbeats and two oplog fetchers')
  })

  test('the verdict names the pattern, the fix and its evidence; a healthy app gets none', () => {
    const verdicts = clientLeakVerdicts(clusterHolders(hosts))
    assert.equal(verdicts.length, 1, JSON.stringify(verdicts))
    const [v] = verdicts
    assert.equal(v!.kind, 'client-per-request')
    assert.equal(v!.impliedClients, clients)
    assert.match(v!.verdict, /^≈12 MongoClient instances from checkout-svc@10\.0\.0\.5: create one client per process and reuse it/)
    assert.match(v!.evidence, /72 of its 84 connections over 3 hosts are monitoring connections .*12 on db1:27017, 12 on db2:27017, 12 on db3:27017/)
    assert.deepEqual(clientLeakVerdicts(clusterHolders(MEMBERS.map((host) => ({host, state: 'ok', holders: holdersOn(host, LEAK_MIN_CLIENTS - 1)})))), [], 'a few clients from one host are a few processes')
  })

  test('conns list text: the ranking over the hosts and the verdict with its evidence', () => {
    const cluster = clusterHolders(hosts)
    const text = renderList({
      target: {uri: 'mongodb://db1:27017/', source: '--uri', simulated: false},
      topology: {kind: 'replset', setName: 'rs0', sources: ['hello'], warnings: [], staleRouters: []},
      at: '2026-11-27T23:00:00.000Z',
      roundMS: 4,
      hosts: hosts.map((h) => ({...h, role: 'secondary', state: 'ok', current: 40, available: 60, totalCreated: 1_209_600, uptimeSec: 1_209_600, createdPerSecSinceStart: 1})) as never,
      clusterHolders: cluster,
      verdicts: clientLeakVerdicts(cluster),
      notes: [],
      interrupted: false,
    } as never)
    assert.match(text, /cluster-wide holders over 3 hosts: applications ×\d+ \(\d+ monitoring, \d+ pooled\)/)
    assert.match(text, /1\. checkout-svc@10\.0\.0\.5 \(nodejs\) ×84 on 3 hosts: 72 monitoring \(≈12 clients\), 12 pooled/)
    assert.match(text, /by app: checkout-svc ×84 \(72 monitoring\), orders-api ×14/)
    assert.match(text, /VERDICT ≈12 MongoClient instances from checkout-svc@10\.0\.0\.5: create one client per process/)
    assert.match(text, /evidence: 72 of its 84 connections/)
    assert.match(text, /db1:27017: 1,209,600 created in 14 days = 1\.0\/s/, 'the churn baseline')
  })
})

describe('never shrank: the advice follows the classification', () => {
  const detail = {levelAtQuiet: 84, minSinceQuiet: 84, baseline: 4, quietForMS: 120_000}

  test('held mostly by monitoring connections: one client per process, not maxIdleTimeMS', () => {
    const held = heldBy(holdersOn('db2:27017', 40))
    assert.equal(held!.applicationMonitoring, 82)
    const verdict = neverShrankVerdict('db2:27017', {...detail, heldBy: held})
    assert.equal(verdict.kind, 'client-per-request')
    assert.equal(verdict.impliedClients, 40)
    const line = renderNeverShrank('db2:27017', {...detail, heldBy: held})
    assert.match(line, /≈40 MongoClient instances from checkout-svc@10\.0\.0\.5 monitor db2:27017: create one client per process and reuse it/)
    assert.doesNotMatch(line, /set maxIdleTimeMS/)
    assert.match(verdict.evidence, /82 of the applications' 82 are monitoring connections/)
  })

  test('held by an idle pool: maxIdleTimeMS, with the pooled share as evidence', () => {
    const held = heldBy(holdersOn('db1:27017', 1))
    const verdict = neverShrankVerdict('db1:27017', {...detail, heldBy: held})
    assert.equal(verdict.kind, 'idle-pool')
    assert.match(verdict.verdict, /held by application clients: set maxIdleTimeMS on them/)
    assert.match(verdict.evidence, /9 of the applications' 13 are pooled/)
  })
})

describe('footnotes where a value surprises', () => {
  test("active made of parked monitor hellos is said so (IBM Cloud's published serverStatus sample)", () => {
    const [note] = surprisingValueNotes([{host: 'db2:27017', state: 'ok', ...ibmConnectionsSample}])
    assert.match(note!, /active 9 counts 6 parked monitor hellos \(awaiting topology 6\): one per client monitoring this member, not work/)
    assert.deepEqual(surprisingValueNotes([{host: 'db1:27017', state: 'ok', ...ibmConnectionsSample, active: 40}]), [], 'a busy member: active is work')
  })
})
