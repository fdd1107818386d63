/**
 * The watch commands' Prometheus export, on crafted rounds and polls: what a
 * scrape says (figures the server did not send are absent, never 0), label
 * cardinality bounded (top N holders, the rest as "other"), labels private
 * (secrets scrubbed, --redact-hosts aliases stable), and the text format.
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

import {MetricsExport, type MetricsExportFlags} from '../../src/cli/metrics-export.js'
import type {ClusterHolder, HostSample, RoundSample} from '../../src/conns/types.js'
import type {LockRow, LocksPoll, NodeLocksEntry} from '../../src/locks/types.js'
import {ConnsMetrics} from '../../src/reporters/openmetrics/conns.js'
import {type MetricFamily, renderExposition, formatForAccept} from '../../src/reporters/openmetrics/families.js'
import {LabelPrivacy} from '../../src/reporters/openmetrics/label-privacy.js'
import {LocksMetrics} from '../../src/reporters/openmetrics/locks.js'
import type {Target} from '../../src/target.js'

const noPrivacy = () => new LabelPrivacy({redactHosts: false, secrets: []})

function host(overrides: Partial<HostSample>): HostSample {
  return {host: 'db1.example.net:27017', role: 'primary', setName: 'rs0', state: 'ok', current: 10, available: 90, totalCreated: 40, ...overrides} as HostSample
}

function holder(appName: string, count: number, kind: ClusterHolder['kind'] = 'application', extra: Partial<ClusterHolder> = {}): ClusterHolder {
  return {appName, client: '10.0.0.5', driver: 'nodejs', kind, count, hosts: 1, perHost: {}, ...extra}
}

function round(hosts: HostSample[], holders: ClusterHolder[] = [], extra: Partial<RoundSample> = {}): RoundSample {
  return {
    round: 3,
    at: '2026-11-28T01:00:00.000Z',
    elapsedMS: 2000,
    roundMS: 120,
    hosts,
    clusterHolders: {hostsRead: hosts.map((h) => h.host), hostsUnread: [], holders, byApp: [], byClient: [], byDriver: [], totals: {application: 0, internal: 0, pooltool: 0}},
    verdicts: [],
    ...extra,
  }
}

function samplesOf(families: MetricFamily[], name: string) {
  return families.find((f) => f.name === name)?.samples ?? []
}

describe('conns watch metrics', () => {
  it('gives each host its connection figures, and leaves out what the server did not send', () => {
    const metrics = new ConnsMetrics({cluster: 'rs0', topHolders: 10, privacy: noPrivacy()})
    // 4.0: no `active` before 4.0.7, no `rejected` before 6.3.
    metrics.observe(round([host({active: 3, rejected: 2}), host({host: 'db2.example.net:27017', role: 'secondary', active: undefined, rejected: undefined})]))
    const families = metrics.families()
    assert.deepEqual(samplesOf(families, 'pooltool_connections_current').map((s) => [s.labels.host, s.value]), [['db1.example.net:27017', 10], ['db2.example.net:27017', 10]])
    assert.deepEqual(samplesOf(families, 'pooltool_connections_rejected_total').map((s) => s.labels.host), ['db1.example.net:27017'])
    assert.deepEqual(samplesOf(families, 'pooltool_connections_active').map((s) => s.labels.host), ['db1.example.net:27017'])
    assert.deepEqual(samplesOf(families, 'pooltool_connections_created_total')[0]!.labels, {cluster: 'rs0', host: 'db1.example.net:27017', role: 'primary', set: 'rs0'})
  })

  it('an unreachable host is down with no figures (unknown, not zero), and its last answer stays', () => {
    const metrics = new ConnsMetrics({cluster: 'rs0', topHolders: 10, privacy: noPrivacy()})
    metrics.observe(round([host({})]))
    metrics.observe({...round([host({state: 'unreachable', current: undefined, available: undefined, totalCreated: undefined})]), round: 4, at: '2026-11-28T01:00:01.000Z'})
    const families = metrics.families()
    assert.deepEqual(samplesOf(families, 'pooltool_host_up').map((s) => s.value), [0])
    assert.equal(samplesOf(families, 'pooltool_connections_current').length, 0)
    assert.equal(samplesOf(families, 'pooltool_host_last_answer_timestamp_seconds')[0]!.value, Date.parse('2026-11-28T01:00:00.120Z') / 1000)
    assert.equal(samplesOf(families, 'pooltool_conns_poll_hosts_unreachable')[0]!.value, 1)
    assert.equal(samplesOf(families, 'pooltool_conns_poll_rounds_total')[0]!.value, 4)
  })

  it('names the top holders and sums the rest as one "other" series, whatever the number of clients', () => {
    const metrics = new ConnsMetrics({cluster: 'rs0', topHolders: 2, privacy: noPrivacy()})
    const many = Array.from({length: 500}, (_, i) => holder(`worker-${i}`, 1))
    metrics.observe(round([host({})], [holder('api', 300), holder('mongod', 40, 'internal'), ...many]))
    const rows = samplesOf(metrics.families(), 'pooltool_holder_connections')
    assert.deepEqual(rows.map((s) => [s.labels.app_name, s.labels.kind, s.value]), [['api', 'application', 300], ['mongod', 'internal', 40], ['other', 'application', 500]])
  })

  it('an "other" that mixes kinds says so', () => {
    const metrics = new ConnsMetrics({cluster: 'rs0', topHolders: 1, privacy: noPrivacy()})
    metrics.observe(round([host({})], [holder('api', 300), holder('a', 2), holder('NetworkInterfaceTL', 3, 'internal')]))
    const rows = samplesOf(metrics.families(), 'pooltool_holder_connections')
    assert.deepEqual(rows.at(-1)!.labels.kind, 'mixed')
    assert.equal(rows.at(-1)!.value, 5)
  })

  it('--redact-hosts: hosts and client addresses become stable aliases, ports kept; secrets never reach a label', () => {
    const privacy = new LabelPrivacy({redactHosts: true, secrets: ['s3cret-pw']})
    const metrics = new ConnsMetrics({cluster: 'prod', topHolders: 10, privacy})
    const hosts = [host({}), host({host: 'db2.example.net:27018'})]
    metrics.observe(round(hosts, [holder('app s3cret-pw', 3)]))
    assert.deepEqual(samplesOf(metrics.families(), 'pooltool_connections_current').map((s) => s.labels.host), ['host-1.redacted:27017', 'host-2.redacted:27018'])
    // The next round lists the hosts in another order: each keeps its alias.
    metrics.observe({...round([...hosts].reverse(), [holder('app s3cret-pw', 3)]), round: 4})
    const families = metrics.families()
    assert.deepEqual(samplesOf(families, 'pooltool_connections_current').map((s) => s.labels.host), ['host-2.redacted:27018', 'host-1.redacted:27017'])
    const text = JSON.stringify(families)
    assert.doesNotMatch(text, /example\.net|10\.0\.0\.5|s3cret-pw/)
    assert.equal(samplesOf(families, 'pooltool_holder_connections')[0]!.labels.client, 'client-1.redacted')
  })

  it('a client-per-request leak is a series of the MongoClient instances it implies', () => {
    const metrics = new ConnsMetrics({cluster: 'rs0', topHolders: 10, privacy: noPrivacy()})
    metrics.observe(round([host({})], [holder('leaky', 120, 'application', {impliedClients: 40})], {
      verdicts: [{kind: 'client-per-request', holder: {appName: 'leaky', client: '10.0.0.5', driver: 'nodejs'}, impliedClients: 40, verdict: 'v', evidence: 'e'}],
    }))
    const families = metrics.families()
    assert.deepEqual(samplesOf(families, 'pooltool_client_per_request_leak').map((s) => [s.labels.app_name, s.value]), [['leaky', 40]])
    assert.equal(samplesOf(families, 'pooltool_holder_implied_clients')[0]!.value, 40)
  })
})

function lockRow(name: string, verdict: LockRow['verdict'], heldMS: number, process = 'mongos-a.example.net:27017:1700000000:42'): LockRow {
  return {name, state: 'locked', process, who: null, why: 'migrate', since: null, sinceAgeMS: heldMS, whenMeans: 'taken', holderLastPing: null, verdict, ts: null, heldMS, holderPingAgeMS: verdict === 'stale' ? 20 * 60_000 : 1000, holder: null, whyKind: null}
}

describe('locks watch metrics', () => {
  it('counts distributed locks by verdict, names the stale one, and counts its holder as a stale pinger', () => {
    const metrics = new LocksMetrics({cluster: 'prod', topLocks: 20, privacy: noPrivacy()})
    const poll: LocksPoll = {poll: 1, at: '2026-11-28T01:00:00.000Z', held: [lockRow('app.orders', 'stale', 30 * 60_000), lockRow('app.users', 'held', 2000, 'mongos-b.example.net:27017:1:2')]}
    metrics.observePoll(poll)
    metrics.observePollEnd({poll: 1, startedAt: '2026-11-28T01:00:00.000Z', durationMS: 80, distributedOk: true, nodesRead: 0, nodesUnread: 0})
    const families = metrics.families()
    assert.deepEqual(samplesOf(families, 'pooltool_distributed_locks').map((s) => [s.labels.verdict, s.value]), [['held', 1], ['stale', 1], ['no-ping', 0], ['balancer', 0]])
    assert.equal(samplesOf(families, 'pooltool_distributed_lock_holders_stale')[0]!.value, 1)
    const held = samplesOf(families, 'pooltool_distributed_lock_held_seconds')
    assert.deepEqual(held.map((s) => [s.labels.lock, s.labels.verdict, s.labels.holder, s.value]), [['app.orders', 'stale', 'mongos-a.example.net:27017', 1800], ['app.users', 'held', 'mongos-b.example.net:27017', 2]])
  })

  it('a node that could not be read is down and has no lock figures; a failed poll is counted', () => {
    const metrics = new LocksMetrics({cluster: 'rs0', topLocks: 20, privacy: noPrivacy()})
    const unread: NodeLocksEntry = {host: 'db1:27017', role: 'primary', setName: 'rs0', readAt: null, view: null, lockInfo: 'not read'}
    metrics.observeNodes({poll: 1, nodes: [unread]})
    metrics.observePollEnd({poll: 1, startedAt: '2026-11-28T01:00:00.000Z', durationMS: 80, nodesRead: 0, nodesUnread: 1})
    const families = metrics.families()
    assert.deepEqual(samplesOf(families, 'pooltool_locks_node_up').map((s) => s.value), [0])
    assert.equal(samplesOf(families, 'pooltool_lock_waiters').length, 0)
    assert.equal(samplesOf(families, 'pooltool_locks_polls_failed_total')[0]!.value, 1)
    assert.equal(samplesOf(families, 'pooltool_locks_poll_last_success_timestamp_seconds').length, 0)
  })

  it('episodes: started over the watch and open now, per node', () => {
    const metrics = new LocksMetrics({cluster: 'rs0', topLocks: 20, privacy: noPrivacy()})
    const base = {node: 'db1:27017', root: null, at: '2026-11-28T01:00:00.000Z'}
    metrics.observeEpisode({...base, kind: 'episode-start', episodeId: 1, waiters: 2, resources: [], previousPollAt: null, inProgressAtFirstPoll: false, confirmedByLockInfo: true})
    metrics.observeEpisode({...base, kind: 'episode-start', episodeId: 2, waiters: 1, resources: [], previousPollAt: null, inProgressAtFirstPoll: false, confirmedByLockInfo: true})
    metrics.observeEpisode({...base, kind: 'episode-end', episodeId: 1, firstSeenAt: base.at, lastSeenAt: base.at, durationMS: 500, durationMinMS: 400, durationMaxMS: 600, peakWaiters: {count: 2, at: base.at}, resources: [], confirmedByLockInfo: true, mergedInto: null})
    metrics.observeNodes({poll: 1, nodes: [{host: 'db1:27017', role: 'primary', readAt: null, view: null, lockInfo: 'not read'}]})
    metrics.observePollEnd({poll: 1, startedAt: base.at, durationMS: 10, nodesRead: 0, nodesUnread: 1})
    const families = metrics.families()
    assert.equal(samplesOf(families, 'pooltool_lock_episodes_started_total')[0]!.value, 2)
    assert.equal(samplesOf(families, 'pooltool_lock_episodes_open')[0]!.value, 1)
  })
})

describe('exposition text', () => {
  it('escapes label values and gives HELP and TYPE; OpenMetrics ends with # EOF', async () => {
    const families: MetricFamily[] = [{name: 'pooltool_x_total', help: 'A counter.', type: 'counter', samples: [{labels: {app_name: 'a"b\\c\nd'}, value: 3}]}]
    const prometheus = await renderExposition(families, 'prometheus')
    assert.match(prometheus.contentType, /^text\/plain; version=0\.0\.4/)
    assert.match(prometheus.text, /^# HELP pooltool_x_total A counter\.\n# TYPE pooltool_x_total counter\npooltool_x_total\{app_name="a\\"b\\\\c\\nd"\} 3\n/)
    const openmetrics = await renderExposition(families, 'openmetrics')
    assert.match(openmetrics.contentType, /^application\/openmetrics-text/)
    assert.match(openmetrics.text, /# EOF\n?$/)
  })

  it('serves OpenMetrics only to a scraper that asks for it', () => {
    assert.equal(formatForAccept('application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5'), 'openmetrics')
    assert.equal(formatForAccept('text/plain'), 'prometheus')
    assert.equal(formatForAccept(undefined), 'prometheus')
  })
})

describe('the metrics documentation and dashboard', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
  const codeNames = new Set(
    ['conns.ts', 'locks.ts'].flatMap((file) => [...readFileSync(path.join(root, 'src/reporters/openmetrics', file), 'utf8').matchAll(/'(pooltool_[a-z_]+)'/g)].map((m) => m[1]!)),
  )

  it('docs/prometheus.md lists every metric the watches export, and no other', () => {
    const documented = new Set([...readFileSync(path.join(root, 'docs/prometheus.md'), 'utf8').matchAll(/^\| `(pooltool_[a-z_]+)` \|/gm)].map((m) => m[1]!))
    assert.ok(codeNames.size > 30)
    assert.deepEqual([...documented].sort(), [...codeNames].sort())
  })

  it('every query of the Grafana dashboard names metrics that exist', () => {
    const dashboard = JSON.parse(readFileSync(path.join(root, 'docs/grafana/pooltool-dashboard.json'), 'utf8')) as {panels: Array<{targets?: Array<{expr: string}>}>}
    const used = dashboard.panels.flatMap((panel) => panel.targets ?? []).flatMap((target) => [...target.expr.matchAll(/pooltool_[a-z_]+/g)].map((m) => m[0]))
    assert.ok(used.length > 15)
    for (const name of used) assert.ok(codeNames.has(name), `${name} is not exported`)
  })
})

describe('the cluster label', () => {
  const target = {seedHosts: ['mongos-a.example.net:27017', 'mongos-b.example.net:27017'], secrets: []} as unknown as Target
  const exportOf = (flags: Partial<MetricsExportFlags> = {}) => MetricsExport.open({once: true, 'redact-hosts': false, ...flags}, () => {})

  it('a replica set is named by its set; otherwise the URI\'s first host, as both watches see it', async () => {
    const metrics = (await exportOf())!
    assert.equal(metrics.clusterLabel(target, 'rs0'), 'rs0')
    assert.equal(metrics.clusterLabel(target, undefined), 'mongos-a.example.net:27017')
  })

  it('--metrics-cluster wins; --redact-hosts aliases the host', async () => {
    assert.equal((await exportOf({'metrics-cluster': 'prod-eu'}))!.clusterLabel(target, 'rs0'), 'prod-eu')
    assert.equal((await exportOf({'redact-hosts': true}))!.clusterLabel(target, undefined), 'host-1.redacted:27017')
  })
})
