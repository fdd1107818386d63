/**
 * `pooltool report html` and `bench --html`, opened in headless Chromium: the page loads with no
 * console error and no request leaves the file, every chart drew the points its data has, the
 * sweep grid and the run table have a row per run; a screenshot of each report kind is saved
 * under test-output/screenshots/.
 */
import assert from 'node:assert/strict'
import {mkdirSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {after, before, describe, it} from 'node:test'

import type {Browser} from 'puppeteer-core'

import type {BenchResult} from '../../src/bench/types.js'
import {assertNothingInjected, browserMissing, launchBrowser, openReportPage} from '../helpers/browser.js'
import {REPO_ROOT, runCli} from '../helpers/cli.js'

const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'screenshots')
const missing = browserMissing()

interface ChartRecord {
  id: string
  title: string
  series: number
  points: number
}

describe('HTML reports in a browser', {skip: missing, timeout: 240_000}, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-html-'))
  const file = (name: string) => path.join(dir, name)
  let browser: Browser

  before(async () => {
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  /** Opens a report; fails on a console error, a page error or any request other than the file itself. */
  async function openReport(html: string, screenshot: string) {
    const page = await browser.newPage()
    const problems: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`page: ${String(error)}`))
    page.on('request', (request) => {
      if (request.url() !== pathToFileURL(html).href) problems.push(`request: ${request.url()}`)
    })
    await page.setViewport({width: 1200, height: 900})
    await page.goto(pathToFileURL(html).href, {waitUntil: 'load'})
    const charts = await page.evaluate(() => (window as unknown as {pooltoolCharts?: ChartRecord[]}).pooltoolCharts ?? [])
    const xLabels = await page.evaluate(() => (window as unknown as {pooltoolXLabels?: Record<string, string[]>}).pooltoolXLabels ?? {})
    const tables = await page.evaluate(() => ({
      runRows: document.querySelectorAll('table.compare tr.run').length,
      sweepCells: [...document.querySelectorAll('table.sweep td.cell')].map((td) => Number(td.getAttribute('data-ops'))),
      knees: document.querySelectorAll('table.sweep td.knee').length,
      alertRows: document.querySelectorAll('table.alerts tr.alert').length,
      lanes: [...document.querySelectorAll('.timeline .lane .name')].map((span) => span.textContent),
      verdicts: [...document.querySelectorAll('ul.verdicts li')].map((li) => li.textContent),
      legends: [...document.querySelectorAll('.u-legend .u-series .u-label')].map((label) => label.textContent),
    }))
    mkdirSync(SCREENSHOTS, {recursive: true})
    await page.screenshot({path: path.join(SCREENSHOTS, screenshot), fullPage: true})
    await page.close()
    assert.deepEqual(problems, [], 'no console error, no page error, nothing fetched')
    return {charts, tables, xLabels}
  }

  it('report html over a sweep and an open-loop run: every chart has its points, the grid a cell per run', async () => {
    const bench = async (out: string, args: string[]) => {
      const run = await runCli(['bench', '--warmup', '0', '--out', file(out), ...args], {timeoutMs: 120_000})
      assert.equal(run.code, 0, run.stderr)
      return JSON.parse(readFileSync(file(out), 'utf8')) as BenchResult
    }
    const sweep = await bench('sweep.json', ['--concurrency', '2,8', '--max-pool-size', '2,8', '--duration', '2s'])
    const openLoop = await bench('open.json', ['--rate', '300', '--concurrency', '16', '--duration', '3s'])
    const made = await runCli(['report', 'html', file('sweep.json'), file('open.json'), '--out', file('report.html')])
    assert.equal(made.code, 0, made.stderr)
    const {charts, tables} = await openReport(file('report.html'), 'report-html-sweep-and-open-loop.png')

    assert.deepEqual(charts.map((chart) => chart.id), ['spectrum', 'throughput', 'errors', 'checkout', 'connections'])
    for (const chart of charts) assert.ok(chart.points > 0, `${chart.id} drew points: ${JSON.stringify(chart)}`)
    const runs = [...sweep.runs, ...openLoop.runs]
    // The spectrum: one series per run, plus the corrected one of the open-loop run.
    assert.equal(charts[0]!.series, runs.length + 1)
    // Over time: ops/s and p99 per run; the points are the intervals that had a value.
    const intervals = runs.reduce((sum, run) => sum + (run.series ?? []).length, 0)
    const withP99 = runs.reduce((sum, run) => sum + (run.series ?? []).filter((point) => point.latencyP99Us !== undefined).length, 0)
    assert.equal(charts[1]!.points, intervals + withP99)
    assert.equal(charts[2]!.points, intervals)
    const withCheckouts = runs.reduce((sum, run) => sum + (run.series ?? []).filter((point) => point.checkoutWaitP99Us !== undefined).length, 0)
    assert.equal(charts[3]!.points, withCheckouts)
    assert.equal(tables.runRows, runs.length)
    assert.deepEqual(tables.sweepCells.sort((a, b) => a - b), sweep.runs.map((run) => run.opsPerSec).sort((a, b) => a - b))
    assert.equal(tables.knees, sweep.knee ? 1 : 0)
  })

  it('bench --html writes the same report beside the run', async () => {
    const run = await runCli(['bench', '--model', 'pool,single,per-op,fixed', '--concurrency', '4', '--duration', '2s', '--series-interval', '250ms', '--warmup', '0', '--html', file('bench.html')], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    const {charts, tables} = await openReport(file('bench.html'), 'bench-html-models.png')
    assert.deepEqual(charts.map((chart) => chart.id), ['spectrum', 'throughput', 'errors', 'checkout', 'connections'])
    for (const chart of charts) assert.ok(chart.points > 0, `${chart.id} drew points`)
    assert.equal(tables.runRows, 4)
  })

  it('conns watch --html: per host over clock time, stacked by holder, the verdicts, every series visible', async () => {
    const run = await runCli(['conns', 'watch', '--sim-topology', 'replset', '--count', '4', '--interval', '250ms', '--alert', 'current>0', '--utc', '--json', '--html', file('conns.html')], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    const result = JSON.parse(run.stdout) as {target: {uri: string}; hosts: Array<{host: string; holders: unknown[]}>; alerts: Array<{round: number; at: string}>; rounds: number}
    const {charts, tables, xLabels} = await openReport(file('conns.html'), 'conns-watch-html.png')
    const holderCharts = result.hosts.map((_, i) => `holders-${i}`)
    assert.deepEqual(charts.map((chart) => chart.id), ['current', 'created', ...holderCharts], 'the overview charts, then one stacked chart per host')
    assert.ok(result.alerts.length > 0, 'the rule fired')
    // current: every host answered every round, plus one alert point per round in which alerts fired.
    assert.equal(charts[0]!.points, result.hosts.length * result.rounds + new Set(result.alerts.map((alert) => alert.round)).size)
    assert.ok(charts[1]!.points > 0, 'created/s from the second round on')
    for (const chart of charts.slice(2)) assert.ok(chart.points >= result.rounds && chart.series >= 1, `${chart.id} stacks its holders round by round: ${JSON.stringify(chart)}`)
    // The x axis is the servers' clock, as times of day (UTC, as the page says), not seconds since the start.
    for (const id of ['current', 'created', ...holderCharts]) {
      const labels = xLabels[id] ?? []
      assert.ok(labels.length > 0 && labels.every((label) => /^\d{2}:\d{2}:\d{2}(\.\d{3})?$/.test(label)), `${id}: ${JSON.stringify(labels)}`)
    }
    const first = new Date(result.alerts[0]!.at)
    const hour = String(first.getUTCHours()).padStart(2, '0')
    assert.ok(xLabels.current!.some((label) => label.startsWith(hour + ':') || label.startsWith(String((first.getUTCHours() + 1) % 24).padStart(2, '0') + ':')), `clock times of the watch (${first.toISOString()}): ${xLabels.current}`)
    assert.equal(tables.alertRows, result.alerts.length)
    // A host whose series is another's is said, not hidden under it.
    const html = readFileSync(file('conns.html'), 'utf8')
    const data = JSON.parse(html.match(/<script id="report-data" type="application\/json">(.*?)<\/script>/s)![1]!) as {hosts: Array<{host: string; current: number[]; sameAs?: string}>}
    for (const [i, h] of data.hosts.entries()) {
      const twin = data.hosts.slice(0, i).find((o) => JSON.stringify(o.current) === JSON.stringify(h.current))
      assert.equal(h.sameAs, twin?.host, `${h.host}: same as ${twin?.host}`)
      if (twin) assert.ok(tables.legends.some((l) => l?.includes(`same as ${twin.host}`)), `the legend says ${h.host} is drawn over ${twin.host}`)
    }
    // The holders the watch read, in the legends: pooltool's own polling connections at least.
    assert.ok(tables.legends.some((l) => l?.startsWith('pooltool conns (this watch)@')), JSON.stringify(tables.legends))
    assertNothingInjected(await openReportPage(browser, file('conns.html')), {
      title: `pooltool conns watch · ${result.target.uri}`,
      texts: ['Verdicts', 'Connections per host by holder', 'times of day on the servers\' clock'],
      charts: ['current', 'created', ...holderCharts],
    })
  })

  it('conns watch --html on many hosts: one small stacked chart per host, every series styled apart', async () => {
    const run = await runCli(['conns', 'watch', '--sim-topology', 'sharded', '--count', '3', '--interval', '300ms', '--json', '--html', file('conns-sharded.html')], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    const result = JSON.parse(run.stdout) as {hosts: unknown[]}
    assert.ok(result.hosts.length > 4, `a sharded cluster has many hosts: ${result.hosts.length}`)
    const {charts, xLabels} = await openReport(file('conns-sharded.html'), 'conns-watch-html-many-hosts.png')
    assert.deepEqual(charts.map((chart) => chart.id), ['current', 'created', ...result.hosts.map((_, i) => `holders-${i}`)])
    assert.ok(Object.values(xLabels).every((labels) => labels.every((label) => /^\d{2}:\d{2}:\d{2}/.test(label))))
    const html = readFileSync(file('conns-sharded.html'), 'utf8')
    assert.match(html, /<div class="holder-charts small">/)
  })

  it('locks watch --html: each lock\'s holds on one time axis', async () => {
    const run = await runCli(['locks', 'watch', '--sim-profile', '4.4', '--sim-scenario', 'dead-lock-holder', '--duration', '1s', '--interval', '200ms', '--json', '--html', file('locks.html')], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    const result = JSON.parse(run.stdout) as {events: Array<{name: string; kind: string}>}
    const {charts, tables} = await openReport(file('locks.html'), 'locks-watch-html.png')
    const names = [...new Set(result.events.filter((e) => e.kind !== 'stale' && e.kind !== 'waiting').map((e) => e.name))]
    assert.ok(names.includes('scenario.orders'), JSON.stringify(result.events))
    assert.deepEqual(tables.lanes, names, 'a lane per lock, in the order they first appear')
    assert.equal(charts[0]!.id, 'timeline')
    assert.ok(charts[0]!.points >= names.length, 'every lock has its holds drawn')
  })
})
