/**
 * `pooltool locks` from the entry points a real cluster offers besides a mongos, over real TCP
 * against the embedded cluster: a config-server member (hello `configsvr: 2`), where
 * config.locks and config.lockpings live, read directly; and a shard member: list and watch read
 * the distributed locks on the config server it names (serverStatus.sharding), pings is refused
 * with that config server's address. The 4.4 cluster carries the
 * permanent balancer lock of a cluster upgraded from 3.4 and a dead holder's lock.
 *
 * The commands run in this process through the path bin/run.js takes (test/helpers/in-process.ts:
 * the same code over real TCP, output and exit code captured), sparing a Node start and CLI load
 * per run; their real processes are in other files (exit 0: locks list and pings in hostile-strings,
 * locks watch in locks-dead-holder44; exit 7: bad-input).
 */
import assert from 'node:assert/strict'
import {before, describe, it} from 'node:test'

import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const direct = (host: string) => `mongodb://${host}/?directConnection=true`

describe('locks from a config-server member and a shard member (4.4)', {timeout: 90_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '4.4', timeScale: 0.01, scenarios: ['upgraded-from-3.4', 'dead-lock-holder'], mongos: 1})
  let config: string
  let shard: string
  before(() => {
    config = cluster.sim.info.processes.find((p) => p.role === 'config')!.host
    shard = cluster.sim.info.processes.find((p) => p.role === 'shard')!.host
  })

  it('locks list against the config server reads its config.locks directly, as through the mongos', async () => {
    const viaRouter = parseJson(await runInProcess(['locks', 'list', '--json', '--uri', cluster.uri]))
    const run = await runInProcess(['locks', 'list', '--json', '--uri', direct(config)])
    assert.equal(run.code, 0, run.stderr)
    const viaConfig = parseJson(run)
    assert.equal(viaConfig.entry, 'config-server')
    assert.equal(viaRouter.entry, 'mongos')
    assert.equal(viaConfig.model, 'config.locks')
    assert.equal(viaConfig.serverVersion, '4.4.29')
    assert.deepEqual(viaConfig.locks.map((l: any) => l.name), viaRouter.locks.map((l: any) => l.name))
    assert.ok(viaConfig.locks.some((l: any) => l.name === 'scenario.orders' && l.state === 'locked'), JSON.stringify(viaConfig.locks))
    assert.ok(viaConfig.pings.some((p: any) => p.process === 'ConfigServer' && p.alive), 'the config server pings')
    assert.ok(viaConfig.notes.some((n: string) => n.startsWith(`read directly on config server member ${config} (set 'configRepl')`)), JSON.stringify(viaConfig.notes))
    assert.equal(typeof viaConfig.clockSkewMS, 'number', 'the entry\'s clock against this machine\'s')
    assert.ok(!viaConfig.notes.some((n: string) => /'s clock is/.test(n)), 'no skew worth a note on one machine')
  })

  it('the upgraded cluster\'s balancer lock reads as by design; pings work from the config server too', async () => {
    const run = await runInProcess(['locks', 'list', '--uri', direct(config)])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /config primary step-up \d+d ago/)
    assert.match(run.stdout, /balancer: left by 3\.4, by design/)
    assert.match(run.stdout, /a cluster upgraded from 3\.4 shows it held by ConfigServer for years: by design, not a finding/)
    const pings = parseJson(await runInProcess(['locks', 'pings', '--json', '--uri', direct(config)]))
    assert.equal(pings.entry, 'config-server')
    assert.ok(pings.pings.some((p: any) => p.process === 'ConfigServer'), JSON.stringify(pings.pings))
  })

  it('locks watch against the config server starts with the locks held there, with verdicts', async () => {
    const run = await runInProcess(['locks', 'watch', '--json', '--uri', direct(config), '--duration', '1s', '--interval', '200ms'])
    assert.equal(run.code, 0, run.stderr)
    const watched = parseJson(run)
    assert.equal(watched.entry, 'config-server')
    const atStart = watched.events.filter((e: any) => e.kind === 'held-at-start')
    const dead = atStart.find((e: any) => e.name === 'scenario.orders')
    assert.ok(dead && ['held', 'stale'].includes(dead.verdict), JSON.stringify(watched.events))
    assert.equal(atStart.find((e: any) => e.name === 'balancer')?.verdict, 'balancer')
  })

  it('locks pings on a shard member exits 7 naming the config server, where config.lockpings is', async () => {
    const run = await runInProcess(['locks', 'pings', '--uri', direct(shard)])
    assert.equal(run.code, 7, run.stderr)
    assert.equal(run.stdout, '')
    const lines = run.stderr.trim().split('\n')
    assert.equal(lines.length, 1, run.stderr)
    assert.match(lines[0]!, new RegExp(`^Error \\[WRONG_TOPOLOGY\\]: locks need a mongos or a config server: .* of a sharded cluster whose config server is configRepl/${config.replace(/\./g, '\\.')}(,[^ ]+)* `))
    assert.match(lines[0]!, new RegExp(`hint: point --uri at a mongos, or at the config server: mongodb://${config.replace(/\./g, '\\.')}/\\?directConnection=true`))
  })

  it('locks list and watch on a shard member read the distributed locks on its config server, beside the node locks', async () => {
    const list = await runInProcess(['locks', 'list', '--json', '--uri', direct(shard)])
    assert.equal(list.code, 0, list.stderr)
    const r = parseJson(list)
    assert.equal(r.entry, 'config-server')
    assert.equal(r.distributedLocks, 'read')
    assert.ok(r.locks.some((l: any) => l.name === 'scenario.orders' && l.state === 'locked'), JSON.stringify(r.locks))
    assert.ok(r.nodes.some((n: any) => n.role === 'config primary'), JSON.stringify(r.nodes))
    const watch = await runInProcess(['locks', 'watch', '--json', '--uri', direct(shard), '--duration', '1s', '--interval', '200ms'])
    assert.equal(watch.code, 0, watch.stderr)
    const watched = parseJson(watch)
    assert.equal(watched.entry, 'config-server')
    assert.equal(watched.distributedLocks, 'read')
    assert.ok(watched.events.some((e: any) => e.kind === 'held-at-start' && e.name === 'scenario.orders'), JSON.stringify(watched.events))
    assert.ok(watched.nodePolls.hosts.length >= 3, JSON.stringify(watched.nodePolls))
  })
})

describe('locks from a config-server member on 7.0 (in-memory DDL locks)', {timeout: 60_000}, () => {
  const cluster = useCluster({topology: 'sharded', versionProfile: '7.0', timeScale: 0.01, mongos: 1})

  it('says the view covers that node\'s operations and reads every shard discovery finds', async () => {
    const config = cluster.sim.info.processes.find((p) => p.role === 'config')!.host
    const shards = cluster.sim.info.processes.filter((p) => p.role === 'shard' && p.memberState === 'primary').map((p) => p.host)
    const run = await runInProcess(['locks', 'list', '--json', '--uri', direct(config)])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.entry, 'config-server')
    assert.equal(r.model, 'in-memory')
    assert.equal(r.inMemory.ddlOpsFrom, 'config-server')
    assert.match(r.inMemory.note, /on this config server member, .*shows only its own operations/)
    assert.equal(r.inMemory.shardsFound, shards.length)
    assert.equal(r.inMemory.shardsRead, shards.length)
    assert.deepEqual(r.inMemory.serverStatusLocks.map((s: any) => s.host).sort(), [...shards].sort())
    assert.match(r.inMemory.note, new RegExp(`all ${shards.length} shard\\(s\\) read`))
    assert.ok(r.notes.some((n: string) => /config\.locks \/ config\.lockpings are gone from 6\.1/.test(n)), JSON.stringify(r.notes))
  })

  // Last in this block: the shard stays down until the cluster is stopped.
  it('a shard that cannot be read is unknown, never "no entries"; the note says how many were read', async () => {
    const config = cluster.sim.info.processes.find((p) => p.role === 'config')!.host
    const [down, up] = cluster.sim.info.processes.filter((p) => p.role === 'shard' && p.memberState === 'primary').map((p) => p.host)
    await cluster.sim.control({kind: 'restart', downMS: 60_000, hosts: [down!]})
    const run = await runInProcess(['locks', 'list', '--json', '--uri', direct(config), '--timeout-ms', '2000'])
    assert.equal(run.code, 0, run.stderr)
    const r = parseJson(run)
    assert.equal(r.inMemory.shardsFound, 2)
    assert.equal(r.inMemory.shardsRead, 1)
    const unread = r.inMemory.serverStatusLocks.find((s: any) => s.host === down)
    assert.ok(unread && typeof unread.unavailable === 'string' && !('resources' in unread), JSON.stringify(r.inMemory.serverStatusLocks))
    assert.ok(r.inMemory.serverStatusLocks.find((s: any) => s.host === up)?.resources, 'the other shard was read')
    assert.match(r.inMemory.note, /1 of 2 shard\(s\) read, 1 unknown/)
    const text = await runInProcess(['locks', 'list', '--uri', direct(config), '--timeout-ms', '2000'])
    assert.match(text.stdout, new RegExp(`\\(${down!.replace(/\./g, '\\.')}\\): DDL lock entries unknown \\(`))
  })
})
