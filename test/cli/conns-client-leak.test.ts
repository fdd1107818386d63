/**
 * Find a connection leak: a small app that creates a new MongoClient (appName
 * `checkout-svc`) every 50 ms and never closes it runs against the embedded 3-member replica set
 * until every member shows the clients it created (their parked monitor hellos in `$currentOp`:
 * waited for, never slept on); then `conns list` must name the leak and its fix, count the clients
 * within ±10%, and sum the app's connections over the three members. Every client is closed after.
 * `conns list --json` and `conns watch` are spawned (each command's real process, exit 0); the text
 * list and the help run in-process (test/helpers/in-process.ts, the path bin/run.js takes).
 */
import assert from 'node:assert/strict'
import {after, describe, it} from 'node:test'

import {MongoClient} from '../../src/mongo/driver.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const APP = 'checkout-svc'
/** Clients the leaking app creates. */
const CLIENTS = 24
const EVERY_MS = 50

/** checkout-svc's connections and parked awaitable hellos on one member, as `$currentOp` shows them. */
async function seenOn(observer: MongoClient): Promise<{connections: number; monitors: number}> {
  const [doc] = await observer
    .db('admin')
    .aggregate([
      {$currentOp: {idleConnections: true, allUsers: true}},
      {$match: {appName: APP}},
      {$group: {_id: null, connections: {$sum: 1}, monitors: {$sum: {$cond: [{$ne: [{$ifNull: ['$command.maxAwaitTimeMS', null]}, null]}, 1, 0]}}}},
    ])
    .toArray()
  return {connections: Number(doc?.connections ?? 0), monitors: Number(doc?.monitors ?? 0)}
}

/** Resolves once `check` holds, polling; rejects with the last state after `timeoutMs`. */
async function waitFor<T>(read: () => Promise<T>, check: (state: T) => boolean, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const state = await read()
    if (check(state)) return state
    if (Date.now() > until) throw new Error(`not reached in ${timeoutMs} ms: ${JSON.stringify(state)}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe('conns list finds a client-per-request leak', () => {
  const cluster = useCluster({topology: 'replset', members: 3})
  const leaked: MongoClient[] = []
  const observers: MongoClient[] = []
  after(async () => {
    await Promise.all([...leaked, ...observers].map((client) => client.close().catch(() => undefined)))
  })

  it('names ≈N MongoClient instances from checkout-svc@host, the fix, the evidence, and the app summed over the 3 members', async () => {
    const {sim} = cluster
    const members = sim.info.processes.map((p) => p.host)
    assert.equal(members.length, 3)
    // The leaking app: a client per "request", one query each, never closed. A 2 s heartbeat (the
    // default is 10 s) brings each client's round-trip-time connection up sooner.
    for (let i = 0; i < CLIENTS; i++) {
      const client = new MongoClient(sim.info.uri, {appName: APP, heartbeatFrequencyMS: 2000, serverSelectionTimeoutMS: 10_000})
      leaked.push(client)
      void client.db('shop').collection('orders').findOne({}).catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS))
    }
    for (const member of members) observers.push(new MongoClient(`mongodb://${member}/?directConnection=true`, {appName: 'leak-test-observer'}))
    // Every member shows every client: its parked monitor hello, and its RTT connection beside it.
    const seen = await Promise.all(observers.map((observer) => waitFor(() => seenOn(observer), (s) => s.monitors >= CLIENTS && s.connections >= 2 * CLIENTS, 60_000)))

    // Spawned: conns list in the real process (exit 0).
    const run = await runCli(['conns', 'list', '--uri', sim.info.uri, '--json'], {timeoutMs: 60_000})
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    const verdict = result.verdicts.find((v: {kind: string; holder?: {appName: string}}) => v.kind === 'client-per-request' && v.holder?.appName === APP)
    assert.ok(verdict, `a client-per-request verdict on ${APP}: ${JSON.stringify(result.verdicts)}`)
    assert.ok(Math.abs(verdict.impliedClients - CLIENTS) <= CLIENTS * 0.1, `≈${verdict.impliedClients} clients implied, ${CLIENTS} created`)
    assert.match(verdict.verdict, new RegExp(`^≈${verdict.impliedClients} MongoClient instances from ${APP}@127\\.0\\.0\\.1: create one client per process and reuse it`))
    assert.match(verdict.evidence, /are monitoring connections \(parked awaitable hellos: \d+ on .*, \d+ on .*, \d+ on /)
    assert.equal(result.verdicts.some((v: {verdict: string}) => /set maxIdleTimeMS/.test(v.verdict)), false, 'not the idle-pool advice')

    // The cluster-wide sum: the app's connections over the 3 members, as each member's holders have them.
    const perHost = Object.fromEntries(
      result.hosts.map((h: {host: string; holders: Array<{appName: string; count: number}>}) => [h.host, h.holders.filter((x) => x.appName === APP).reduce((n, x) => n + x.count, 0)]),
    )
    const app = result.clusterHolders.byApp.find((a: {name: string}) => a.name === APP)
    const holder = result.clusterHolders.holders.find((h: {appName: string}) => h.appName === APP)
    assert.equal(app.hosts, 3)
    assert.equal(app.count, Object.values(perHost).reduce((n: number, c) => n + (c as number), 0), JSON.stringify(perHost))
    assert.deepEqual(holder.perHost, perHost)
    for (const [i, member] of members.entries()) assert.ok(perHost[member] >= seen[i]!.connections - 2, `${member}: ${perHost[member]} listed, ${seen[i]!.connections} seen before`)
    assert.ok(holder.monitoring >= 2 * CLIENTS * 3 * 0.9, `monitoring connections: ${holder.monitoring} (2 per member per client)`)
    assert.ok(holder.monitoring > holder.pool, JSON.stringify(holder))
    assert.equal(result.clusterHolders.byApp[0].name, APP, 'the leak ranks first')

    const text = await runInProcess(['conns', 'list', '--uri', sim.info.uri])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, new RegExp(`cluster-wide holders over 3 hosts: .*\\n  1\\. ${APP}@127\\.0\\.0\\.1 \\(nodejs\\) ×\\d+ on 3 hosts: \\d+ monitoring \\(≈\\d+ clients\\)`))
    assert.match(text.stdout, new RegExp(`VERDICT ≈\\d+ MongoClient instances from ${APP}@127\\.0\\.0\\.1: create one client per process and reuse it`))
    assert.match(text.stdout, /\n {2}evidence: \d+ of its \d+ connections over 3 hosts are monitoring connections/)
    assert.match(text.stdout, /created in \d+ s = [\d.]+\/s/, 'the churn baseline')

    // The watch says the same from its last round, with the churn baseline beside the rate during the watch.
    // Spawned: conns watch in the real process (exit 0).
    const watched = await runCli(['conns', 'watch', '--uri', sim.info.uri, '--interval', '500ms', '--count', '2', '--json'], {timeoutMs: 60_000})
    assert.equal(watched.code, 0, watched.stderr)
    const summary = parseJson(watched)
    const again = summary.verdicts.find((v: {kind: string; holder?: {appName: string}}) => v.kind === 'client-per-request' && v.holder?.appName === APP)
    assert.ok(again && Math.abs(again.impliedClients - CLIENTS) <= CLIENTS * 0.1, JSON.stringify(summary.verdicts))
    assert.equal(summary.clusterHolders.byApp[0].name, APP)
    for (const h of summary.hosts) {
      assert.ok(h.uptimeSec > 0 && h.createdPerSecSinceStart > 0 && h.totalCreatedSinceStart >= CLIENTS * 2, JSON.stringify(h))
    }
  })
})

describe('conns list --help explains every column', () => {
  it('from the one field table: active counts parked monitor hellos; awaiting topology and exhaust hello are client monitors', async () => {
    const run = await runInProcess(['conns', 'list', '--help'])
    assert.equal(run.code, 0, run.stderr)
    const help = run.stdout.replace(/\s+/g, ' ')
    assert.match(help, /active: connections with an operation in progress, a parked awaitable hello included/)
    assert.match(help, /awaiting topology \(awaitingTopologyChanges\): parked awaitable hellos: one per MongoClient/)
    assert.match(help, /exhaust hello \(exhaustHello\): connections streaming hello replies: one per client monitor/)
    assert.match(help, /created \(total\) \(totalCreated\): .*churn baseline/)
    assert.match(help, /lock queue \/ active \(lockQueue, activeClients\)/)
  })
})
