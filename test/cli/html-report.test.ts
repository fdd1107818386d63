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
import {browserMissing, launchBrowser} from '../helpers/browser.js'
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
    const tables = await page.evaluate(() => ({
      runRows: document.querySelectorAll('table.compare tr.run').length,
      sweepCells: [...document.querySelectorAll('table.sweep td.cell')].map((td) => Number(td.getAttribute('data-ops'))),
      knees: document.querySelectorAll('table.sweep td.knee').length,
      alertRows: document.querySelectorAll('table.alerts tr.alert').length,
      lanes: [...document.querySelectorAll('.timeline .lane .name')].map((span) => span.textContent),
    }))
    mkdirSync(SCREENSHOTS, {recursive: true})
    await page.screenshot({path: path.join(SCREENSHOTS, screenshot), fullPage: true})
    await page.close()
    assert.deepEqual(problems, [], 'no console error, no page error, nothing fetched')
    return {charts, tables}
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

  it('conns watch --html: current and created/s per host over the rounds, the alerts where they fired', async () => {
    const run = await runCli(['conns', 'watch', '--sim-topology', 'replset', '--count', '4', '--interval', '250ms', '--alert', 'current>0', '--json', '--html', file('conns.html')], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    const result = JSON.parse(run.stdout) as {hosts: Array<{host: string}>; alerts: Array<{round: number}>; rounds: number}
    const {charts, tables} = await openReport(file('conns.html'), 'conns-watch-html.png')
    assert.deepEqual(charts.map((chart) => chart.id), ['current', 'created'])
    assert.ok(result.alerts.length > 0, 'the rule fired')
    // current: every host answered every round, plus one alert point per round in which alerts fired.
    assert.equal(charts[0]!.points, result.hosts.length * result.rounds + new Set(result.alerts.map((alert) => alert.round)).size)
    assert.ok(charts[1]!.points > 0, 'created/s from the second round on')
    assert.equal(tables.alertRows, result.alerts.length)
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
