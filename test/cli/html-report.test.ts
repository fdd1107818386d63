/**
 * `pooltool report html` and `bench --html`, opened in headless Chromium: the page loads with no
 * console error and no request leaves the file, every chart drew the points its data has, the
 * sweep grid and the run table have a row per run; a screenshot of each report kind is saved
 * under test-output/screenshots/. The bench report is read as a reader would (issue 26): a panel
 * per run for each metric, no colour twice in a chart, static legends, no empty chart, clock-time
 * axes per run, a title naming the inputs.
 *
 * One Chromium for the file, each report read in one page. Only the first `report html` and both
 * `conns watch --html` (the second for its timing, see there) are spawned: the report html run proves
 * a real process writes the page (exit 0); the bench results that are only inputs, the second
 * `report html`, `bench --html` and `locks watch --html` run in this process
 * (test/helpers/in-process.ts, the path bin/run.js takes), which saves each one's module loading
 * (measured: about 2 CPU-s for the file). The closed-loop sweep and the open-loop run serve both
 * `report html` cases. A bench runs for its --duration whatever the machine, so the runs are as short
 * as what is checked allows (a series interval of a quarter of the run gives every chart several
 * points), and the closed-loop ones run with a 5-ms simulated service time (--sim-latency): a bench's CPU
 * goes by its operations, and what is checked needs points in every chart, not thousands of operations;
 * `bench --html` and `locks watch --html` start with the browser (neither reads on a
 * deadline; the conns watches do, see there, so they are spawned and run alone).
 */
import assert from 'node:assert/strict'
import {copyFileSync, mkdirSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {after, before, describe, it} from 'node:test'

import type {Browser, Page} from 'puppeteer-core'

import type {BenchResult} from '../../src/bench/types.js'
import {assertNothingInjected, browserMissing, launchBrowser, openReportPage} from '../helpers/browser.js'
import {type CliRun, parseJson, REPO_ROOT, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'

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
  let benchHtml: Promise<CliRun>
  let locksHtml: Promise<CliRun>

  before(async () => {
    // In this process (report html's spawned run proves a real process writes the page), awaited by its test.
    benchHtml = runInProcess(['bench', '--model', 'pool,single,per-op,fixed', '--concurrency', '4', '--duration', '500ms', '--series-interval', '125ms', '--sim-latency', '5ms', '--warmup', '0', '--html', file('bench.html'), '--json'])
    // In this process too, queued behind bench --html; awaited by its test.
    locksHtml = runInProcess(['locks', 'watch', '--sim-profile', '4.4', '--sim-scenario', 'dead-lock-holder', '--duration', '1s', '--interval', '200ms', '--json', '--html', file('locks.html')])
    // Not left unhandled if the file fails before their tests await them.
    for (const run of [benchHtml, locksHtml]) run.catch(() => undefined)
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
  })

  /** Opens a report; fails on a console error, a page error or any request other than the file itself. `inspect` reads more of the same page. */
  async function openReport<T = undefined>(html: string, screenshot: string, inspect?: (page: Page) => Promise<T>) {
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
    const more = (await inspect?.(page)) as T
    mkdirSync(SCREENSHOTS, {recursive: true})
    await page.screenshot({path: path.join(SCREENSHOTS, screenshot), fullPage: true})
    await page.close()
    assert.deepEqual(problems, [], 'no console error, no page error, nothing fetched')
    return {charts, tables, xLabels, more}
  }

  /**
   * What every bench report must be to read (issue 26), measured in the page: a panel per run for each metric,
   * no colour twice in one chart, static legends (no "--"), no chart without points, time axes in clock time,
   * and a title that names the inputs.
   */
  async function benchStructure(html: string, screenshot: string) {
    const opened = await openReport(html, screenshot, (page) => page.evaluate(() => ({
      title: document.title,
      panels: Object.fromEntries([...document.querySelectorAll('.panels')].map((row) => [row.getAttribute('data-metric'), [...row.querySelectorAll('.panel')].map((panel) => ({id: panel.id, drawn: panel.querySelector('.uplot canvas') !== null}))])),
      // Each chart's legend: the markers' colours and the text shown (hidden value cells are not shown text).
      legends: [...document.querySelectorAll('.uplot')].map((chart) => ({
        text: (chart.querySelector('.u-legend') as HTMLElement | null)?.innerText ?? '',
        colours: [...chart.querySelectorAll('.u-legend .u-series .u-marker')].map((marker) => (marker as HTMLElement).style.borderColor).filter((colour) => colour !== ''),
      })),
      legendRows: [...document.querySelectorAll('.legend-row')].map((row) => (row as HTMLElement).innerText),
      noErrors: document.querySelector('p.no-errors') !== null,
      errorPanels: document.querySelectorAll('.panels[data-metric="errors"] .panel').length,
      uplots: document.querySelectorAll('.uplot').length,
    })))
    const structure = opened.more
    const charts = opened.charts as Array<ChartRecord & {strokes?: string[]}>
    for (const chart of charts) {
      assert.ok(chart.points > 0, `no empty chart: ${JSON.stringify(chart)}`)
      if (chart.id === 'timeline' || chart.id.startsWith('timeline-')) continue
      const colours = (chart.strokes ?? []).map((stroke) => stroke.split(' ')[0])
      assert.equal(colours.length, chart.series, `${chart.id}: a stroke per series`)
      assert.equal(new Set(colours).size, colours.length, `${chart.id}: no colour twice in one chart: ${JSON.stringify(chart.strokes)}`)
    }
    for (const legend of structure.legends) {
      assert.ok(!legend.text.includes('--'), `a static legend, not uPlot's hover value: ${JSON.stringify(legend.text)}`)
      assert.equal(new Set(legend.colours).size, legend.colours.length, `no colour twice in a legend: ${JSON.stringify(legend)}`)
    }
    assert.equal(structure.uplots, charts.filter((chart) => !chart.id.startsWith('timeline')).length, 'every chart element drew')
    for (const [metric, panels] of Object.entries(structure.panels)) for (const panel of panels) assert.ok(panel.drawn, `${metric}: ${panel.id} drew`)
    return {...opened, structure}
  }

  /** Each run's panels: the runs in order (file by file), one panel per run with a series. */
  const panelIds = (metric: string, runs: ReadonlyArray<{series?: unknown[]}>, has: (index: number) => boolean = () => true) =>
    runs.flatMap((_, index) => (has(index) ? [`${metric}-${index}`] : []))

  /** A bench result that is only an input to report html: in-process (a real process writing a page is proven by the first report html). */
  const bench = async (out: string, args: string[]) => {
    const run = await runInProcess(['bench', '--warmup', '0', '--out', file(out), ...args])
    assert.equal(run.code, 0, run.stderr)
    return JSON.parse(readFileSync(file(out), 'utf8')) as BenchResult
  }
  /** One open-loop run for both report html cases: open.json in the first, open-long.json in the second. */
  let openLong: Promise<BenchResult> | undefined
  const openLoopRun = () => (openLong ??= bench('open-long.json', ['--rate', '200', '--concurrency', '8', '--duration', '4s']))
  /** One closed-loop sweep (4 runs of 1 s) for both: sweep.json in the first, closed.json in the second. */
  let sweepResult: Promise<BenchResult> | undefined
  const sweepRun = () => (sweepResult ??= bench('sweep.json', ['--concurrency', '2,8', '--max-pool-size', '2,8', '--duration', '1s', '--series-interval', '250ms', '--sim-latency', '5ms']))

  it('report html over a sweep and an open-loop run: a panel per run for each metric, every chart has its points, the grid a cell per run', async () => {
    const sweep = await sweepRun()
    const openLoop = await openLoopRun()
    copyFileSync(file('open-long.json'), file('open.json'))
    // Spawned: report html in the real process (exit 0).
    const made = await runCli(['report', 'html', file('sweep.json'), file('open.json'), '--out', file('report.html'), '--json'])
    assert.equal(made.code, 0, made.stderr)
    const {charts, tables, structure, xLabels} = await benchStructure(file('report.html'), 'report-html-sweep-and-open-loop.png')
    const runs = [...sweep.runs, ...openLoop.runs]
    const has = (pick: (point: NonNullable<BenchResult['runs'][number]['series']>[number]) => boolean) => (index: number) => (runs[index]!.series ?? []).some(pick)
    const checkoutPanels = panelIds('checkout', runs, has((point) => point.checkoutWaitP99Us !== undefined))
    const errorPanels = panelIds('errors', runs, has((point) => point.errors > 0))
    assert.deepEqual(charts.map((chart) => chart.id), ['spectrum', ...panelIds('throughput', runs), ...checkoutPanels, ...panelIds('connections', runs), ...errorPanels])
    assert.deepEqual(structure.panels.throughput!.map((panel) => panel.id), panelIds('throughput', runs), 'one ops/s panel per run')
    assert.equal(structure.noErrors, errorPanels.length === 0, 'no errors: a line says so, no chart is drawn')
    assert.deepEqual(parseJson<{charts: string[]}>(made).charts, ['spectrum', 'throughput', ...(checkoutPanels.length > 0 ? ['checkout'] : []), 'connections', ...(errorPanels.length > 0 ? ['errors'] : [])])
    // The spectrum: one series per run, plus the corrected one of the open-loop run (6: they fit one chart).
    assert.equal(charts[0]!.series, runs.length + 1)
    // Over time, per run: ops/s and p99; the points are the intervals that had a value.
    for (const [index, run] of runs.entries()) {
      const points = run.series ?? []
      assert.equal(charts.find((chart) => chart.id === `throughput-${index}`)!.points, points.length + points.filter((point) => point.latencyP99Us !== undefined).length)
      // Clock time: the run's own wall clock from its start.
      assert.ok(run.startedAt, 'the run says when it started')
      const labels = xLabels[`throughput-${index}`] ?? []
      assert.ok(labels.length > 0 && labels.every((label) => /^\d{2}:\d{2}:\d{2}$/.test(label)), `throughput-${index}: ${JSON.stringify(labels)}`)
      // The pool's last point is the pool as the run ended (closed loop: every worker's connection in use), not after it.
      if (run.rate === null) assert.ok(points.at(-1)!.poolInUse > 0, `pool in use at the end of ${run.model} c=${run.concurrency}: ${JSON.stringify(points.map((point) => point.poolInUse))}`)
    }
    assert.equal(structure.title, `pooltool bench · 2 files (5 runs): sweep.json, open.json · find · ${sweep.target.uri === openLoop.target.uri ? sweep.target.uri : '2 targets'}`)
    assert.equal(tables.runRows, runs.length)
    assert.deepEqual(tables.sweepCells.sort((a, b) => a - b), sweep.runs.map((run) => run.opsPerSec).sort((a, b) => a - b))
    assert.equal(tables.knees, sweep.knee ? 1 : 0)
  })

  it('report html over 12 runs of different lengths (13 latency curves): the spectrum too is a panel per run, each run on its own time axis', async () => {
    // 7 half-second cells, the 4-s open-loop run and the first case's sweep of four 1-s closed-loop runs as closed.json:
    // 12 runs of three lengths without benching again what is already on disk.
    const cells = await bench('cells.json', ['--concurrency', '1,2,3,4,6,8,16', '--max-pool-size', '8', '--duration', '500ms', '--series-interval', '125ms', '--sim-latency', '5ms'])
    const open = await openLoopRun()
    const closed = await sweepRun()
    copyFileSync(file('sweep.json'), file('closed.json'))
    const made = await runInProcess(['report', 'html', file('cells.json'), file('open-long.json'), file('closed.json'), '--out', file('many.html')])
    assert.equal(made.code, 0, made.stderr)
    const {charts, structure, xLabels} = await benchStructure(file('many.html'), 'report-html-many-runs.png')
    const runs = [...cells.runs, ...open.runs, ...closed.runs]
    assert.equal(runs.length, 12)
    // 12 measured curves and the open-loop run's corrected one: more than one chart's 12 colours.
    assert.deepEqual(structure.panels.spectrum!.map((panel) => panel.id), panelIds('spectrum', runs))
    assert.ok(!charts.some((chart) => chart.id === 'spectrum'), 'no overlay of more curves than colours')
    assert.equal(charts.find((chart) => chart.id === `spectrum-${cells.runs.length}`)!.series, 2, 'the open-loop panel: measured and corrected')
    for (const metric of ['throughput', 'connections']) assert.deepEqual(structure.panels[metric]!.map((panel) => panel.id), panelIds(metric, runs), `${metric}: one panel per run`)
    // Each run on its own axis: a half-second cell's labels span at most a second, the 4-s run's about four.
    const span = (labels: string[]) => {
      const seconds = labels.map((label) => label.split(':').map(Number)).map(([h, m, s]) => h! * 3600 + m! * 60 + s!)
      return Math.max(...seconds) - Math.min(...seconds)
    }
    assert.ok(span(xLabels['throughput-0'] ?? []) <= 1, JSON.stringify(xLabels['throughput-0']))
    assert.ok(span(xLabels[`throughput-${cells.runs.length}`] ?? []) >= 2, JSON.stringify(xLabels[`throughput-${cells.runs.length}`]))
    assert.match(structure.title, /^pooltool bench · 3 files \(12 runs\): cells\.json, open-long\.json, closed\.json · find · /)
  })

  it('bench --html writes the same report beside the run', async () => {
    // Started in this process at the start of the file (see before).
    const run = await benchHtml
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson<BenchResult>(run)
    const {charts, tables, structure} = await benchStructure(file('bench.html'), 'bench-html-models.png')
    assert.deepEqual(charts.filter((chart) => chart.id.startsWith('throughput')).map((chart) => chart.id), panelIds('throughput', result.runs))
    assert.equal(structure.title, `pooltool bench · find · ${result.target.uri} · 4 runs`)
    assert.equal(tables.runRows, 4)
  })

  it('conns watch --html: per host over clock time, stacked by holder, the verdicts, every series visible', async () => {
    // Spawned: conns watch --html in the real process (exit 0).
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
    // Spawned, though conns watch's real process is proven above: every host must be read within the round's
    // 500-ms deadline, and in this process the watch would share its event loop with the test runner and the
    // browser's DevTools client (run here at load ~16, it once missed one host's holders in all three rounds).
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
    // Started in this process at the start of the file (see before).
    const run = await locksHtml
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
