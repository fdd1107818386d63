/**
 * The watches' metrics as Prometheus sees them: Debian's `prometheus` (.ci/run
 * installs it, as it does Chromium) scrapes `conns watch --metrics-port` and
 * `locks watch --metrics-port` running on the embedded cluster, and the test
 * reads the series back through Prometheus' HTTP API: one per host, a
 * holder's, and a distributed lock gone stale (the dead-lock-holder scenario's
 * holder stops pinging; --lock-expiry makes that stale within seconds).
 * `promtool check metrics` lints both expositions. The watches are then
 * stopped with Ctrl-C: exit 0, the port free again.
 */
import assert from 'node:assert/strict'
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {type CliRun, REPO_ROOT, runCli} from '../helpers/cli.js'
import {CliOutput} from '../helpers/output.js'

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus'
const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool'

/** Why this tier cannot run here, or undefined when it can. In CI a missing Prometheus is a failure, not a skip. */
function prometheusMissing(): string | undefined {
  if (existsSync(PROMETHEUS) && existsSync(PROMTOOL)) return undefined
  const why = `no prometheus/promtool at ${PROMETHEUS} (apt-get install prometheus, or set PROMETHEUS_PATH and PROMTOOL_PATH)`
  if (process.env.CI) throw new Error(`${why}: .ci/run installs it`)
  return why
}

/** A port nobody listens on now, for Prometheus' own web listener (it takes no port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address() as {port: number}
      server.close(() => resolve(port))
    })
  })
}

/** Resolves once `check` returns a value (polled; no deadline of its own: the test runner's timeout is the bound). */
async function eventually<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check().catch(() => undefined)
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

interface Watch {
  out: CliOutput
  done: Promise<CliRun>
  url: string
  port: number
}

async function startWatch(args: string[]): Promise<Watch> {
  const out = new CliOutput()
  const done = runCli(args, {onSpawn: out.attach, timeoutMs: 240_000})
  const match = await out.until(/metrics: serving (http:\/\/127\.0\.0\.1:(\d+)\/metrics)/)
  return {out, done, url: match[1]!, port: Number(match[2])}
}

async function query(base: string, promql: string): Promise<Array<{metric: Record<string, string>; value: [number, string]}>> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)
  const body = (await response.json()) as {status: string; data: {result: Array<{metric: Record<string, string>; value: [number, string]}>}}
  assert.equal(body.status, 'success')
  return body.data.result
}

function valueOf(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

function hostsOf(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`)).map((l) => /host="([^"]*)"/.exec(l)?.[1] ?? '').sort()
}

describe('Prometheus scrapes the watches', {skip: prometheusMissing(), timeout: 300_000}, () => {
  let dir: string
  let conns: Watch
  let locks: Watch
  let prometheus: ChildProcess | undefined
  let base: string

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'pooltool-prometheus-'))
    ;[conns, locks] = await Promise.all([
      startWatch(['conns', 'watch', '--metrics-port', '0', '--no-view', '--interval', '500ms']),
      startWatch(['locks', 'watch', '--metrics-port', '0', '--no-view', '--interval', '250ms', '--sim-profile', '4.4', '--sim-scenario', 'dead-lock-holder', '--lock-expiry', '5s']),
    ])
    const webPort = await freePort()
    const config = path.join(dir, 'prometheus.yml')
    writeFileSync(config, [
      'global: {scrape_interval: 1s, scrape_timeout: 1s}',
      'scrape_configs:',
      `  - {job_name: pooltool-conns, static_configs: [{targets: ['127.0.0.1:${conns.port}']}]}`,
      `  - {job_name: pooltool-locks, static_configs: [{targets: ['127.0.0.1:${locks.port}']}]}`,
      '',
    ].join('\n'))
    prometheus = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${webPort}`], {stdio: 'ignore'})
    base = `http://127.0.0.1:${webPort}`
    await eventually(async () => ((await fetch(`${base}/-/ready`)).ok ? true : undefined))
  })

  after(async () => {
    prometheus?.kill('SIGTERM')
    for (const watch of [conns, locks]) if (watch) watch.out.signal()
    await Promise.all([conns?.done, locks?.done])
    if (dir) rmSync(dir, {recursive: true, force: true})
  })

  it('has a connections series for every host the watch polls, and a holder series', async () => {
    // The first round in: the watch publishes its topology's series before it.
    const exposition = await eventually(async () => {
      const text = await (await fetch(conns.url)).text()
      return valueOf(text, 'pooltool_conns_poll_hosts') === undefined ? undefined : text
    })
    const polled = valueOf(exposition, 'pooltool_conns_poll_hosts')
    assert.ok(polled !== undefined && polled >= 3, `the watch polls the embedded cluster's hosts: ${polled}`)
    const hosts = await eventually(async () => {
      const series = await query(base, 'pooltool_connections_current{job="pooltool-conns"}')
      return series.length === polled ? series.map((s) => s.metric.host!).sort() : undefined
    })
    // Every host the round polled (a host's first answer may come a round later than its discovery).
    assert.deepEqual(hosts, hostsOf(exposition, 'pooltool_host_up'))
    const holders = await eventually(async () => {
      const series = await query(base, 'pooltool_holder_connections{job="pooltool-conns"}')
      return series.length > 0 ? series : undefined
    })
    assert.ok(holders.every((s) => s.metric.app_name !== undefined && s.metric.kind !== undefined && Number(s.value[1]) > 0))
  })

  it('has a stale-lock series once the dead holder\'s ping is past the expiry', async () => {
    const stale = await eventually(async () => {
      const series = await query(base, 'pooltool_distributed_lock_held_seconds{job="pooltool-locks", verdict="stale"}')
      return series.length > 0 ? series : undefined
    })
    assert.equal(stale[0]!.metric.lock, 'scenario.orders')
    const counted = await query(base, 'pooltool_distributed_locks{job="pooltool-locks", verdict="stale"}')
    assert.ok(counted.some((s) => Number(s.value[1]) >= 1))
  })

  it('promtool check metrics passes on both expositions', async () => {
    for (const watch of [conns, locks]) {
      const text = await (await fetch(watch.url)).text()
      const lint = spawnSync(PROMTOOL, ['check', 'metrics'], {input: text, encoding: 'utf8'})
      assert.equal(lint.status, 0, `${watch.url}: ${lint.stdout}${lint.stderr}`)
    }
  })

  it('a scrape during the polls always sees whole rounds', async () => {
    const texts: string[] = []
    // Scrapes in flight across at least two more rounds.
    const rounds = valueOf(await (await fetch(conns.url)).text(), 'pooltool_conns_poll_rounds_total')!
    while (valueOf(texts.at(-1) ?? '', 'pooltool_conns_poll_rounds_total') === undefined || valueOf(texts.at(-1)!, 'pooltool_conns_poll_rounds_total')! < rounds + 2) {
      texts.push(...(await Promise.all(Array.from({length: 8}, async () => (await fetch(conns.url)).text()))))
    }
    for (const text of texts) {
      const polled = valueOf(text, 'pooltool_conns_poll_hosts')
      const up = hostsOf(text, 'pooltool_host_up')
      assert.equal(up.length, polled, 'every host of the round, and only once')
      const answered = text.split('\n').filter((l) => l.startsWith('pooltool_host_up{') && l.endsWith(' 1')).map((l) => /host="([^"]*)"/.exec(l)![1]!).sort()
      assert.deepEqual(hostsOf(text, 'pooltool_connections_current'), answered)
    }
  })

  it('every query of the Grafana dashboard in docs/ runs in this Prometheus, and its main panels have data', async () => {
    const dashboard = JSON.parse(readFileSync(path.join(REPO_ROOT, 'docs/grafana/pooltool-dashboard.json'), 'utf8')) as {panels: Array<{title: string; targets?: Array<{expr: string}>}>}
    const cluster = (await query(base, 'pooltool_conns_poll_rounds_total'))[0]!.metric.cluster!
    const withData = new Set<string>()
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) {
        // query() asserts the API's status: a query Prometheus cannot parse fails here.
        const series = await query(base, target.expr.replaceAll('$cluster', cluster))
        if (series.length > 0) withData.add(panel.title)
      }
    }
    for (const title of ['Connections per host', 'Who holds the connections (top holders)', 'Outgoing pools in use, per remote']) assert.ok(withData.has(title), `${title}: no data`)
  })

  it('Ctrl-C ends each watch with 0 and frees its port', async () => {
    for (const watch of [conns, locks]) {
      watch.out.signal()
      const run = await watch.done
      assert.equal(run.code, 0, run.stderr)
      await new Promise<void>((resolve, reject) => {
        const server = createServer()
        server.once('error', reject)
        server.listen(watch.port, '127.0.0.1', () => server.close(() => resolve()))
      })
    }
  })
})
