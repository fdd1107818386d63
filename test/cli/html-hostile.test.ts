/**
 * Hostile strings in the HTML reports, opened in headless Chromium (issue 23): a crafted bench
 * result file (markup in runs[].errors, pool.created, concurrency, maxPoolSize, model,
 * config.workload, target.uri and a series' host name) given to `report html`, and hostile data
 * given to each renderer directly. In every page: no injected element, no extra script, no
 * dialog, no request, no CSP violation, the title pooltool wrote, the payloads shown as text, the
 * charts still drawn (the page's own scripts run under its Content-Security-Policy), and a script
 * added after load refused by that policy.
 */
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {after, before, describe, it} from 'node:test'

import type {Browser} from 'puppeteer-core'

import type {BenchResult} from '../../src/bench/types.js'
import {loadChartLibrary} from '../../src/report/html-assets.js'
import {renderBenchHtml, renderConnsHtml, renderLocksHtml} from '../../src/reporters/html.js'
import {hostileBenchData, hostileConnsData, hostileLocksData, payload} from '../fixtures/hostile-reports.js'
import {browserMissing, launchBrowser} from '../helpers/browser.js'
import {runCli} from '../helpers/cli.js'

const missing = browserMissing()

interface PageState {
  title: string
  text: string
  images: number
  scripts: number
  charts: Array<{id: string; points: number}>
  violations: string[]
  /** Whether a <script> added after load, which the page did not ship, ran: the policy must refuse it. */
  foreignScriptRan: boolean
}

describe('HTML reports with hostile strings, in a browser', {skip: missing, timeout: 240_000}, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-html-hostile-'))
  const file = (name: string) => path.join(dir, name)
  let browser: Browser
  let result: BenchResult

  before(async () => {
    browser = await launchBrowser()
    // A real result with a sweep (two concurrencies of one model), so the grid is drawn too.
    const run = await runCli(['bench', '--warmup', '0', '--concurrency', '2,4', '--duration', '1s', '--series-interval', '250ms', '--out', file('real.json')], {timeoutMs: 120_000})
    assert.equal(run.code, 0, run.stderr)
    result = JSON.parse(readFileSync(file('real.json'), 'utf8')) as BenchResult
  })
  after(async () => {
    await browser?.close()
  })

  /** Opens a page and reports what it holds; dialogs, errors and requests other than the file are collected, not fatal. */
  async function open(html: string): Promise<PageState & {problems: string[]; dialogs: string[]}> {
    const page = await browser.newPage()
    const problems: string[] = []
    const dialogs: string[] = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`page: ${String(error)}`))
    page.on('request', (request) => {
      if (request.url() !== pathToFileURL(html).href) problems.push(`request: ${request.url()}`)
    })
    // Installed by DevTools before the page's own scripts, so the page's policy does not govern it.
    await page.evaluateOnNewDocument(() => {
      const w = window as unknown as {cspViolations: string[]}
      w.cspViolations = []
      document.addEventListener('securitypolicyviolation', (event) => w.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`))
    })
    await page.setViewport({width: 1200, height: 900})
    await page.goto(pathToFileURL(html).href, {waitUntil: 'load'})
    const state = await page.evaluate(() => {
      const w = window as unknown as {pooltoolCharts?: Array<{id: string; points: number}>; cspViolations: string[]}
      return {
        title: document.title,
        text: document.body.innerText,
        images: document.querySelectorAll('img').length,
        scripts: document.scripts.length,
        charts: (w.pooltoolCharts ?? []).map(({id, points}) => ({id, points})),
        violations: w.cspViolations,
      }
    })
    const seen = {problems: [...problems], dialogs: [...dialogs]}
    // A script the page did not ship, as an injection that escaped escaping would add: the policy
    // allows only the hashes of the page's own scripts, so it must not run.
    const foreignScriptRan = await page.evaluate(() => {
      const script = document.createElement('script')
      script.textContent = 'window.foreignScriptRan = true'
      document.body.append(script)
      return (window as unknown as {foreignScriptRan?: boolean}).foreignScriptRan === true
    })
    await page.close()
    return {...state, ...seen, foreignScriptRan}
  }

  /** What every hostile page must show: nothing ran or was added, and the payloads are there as text. */
  function assertSafe(state: Awaited<ReturnType<typeof open>>, expected: {title: string; texts: string[]; charts: string[]}) {
    assert.deepEqual(state.dialogs, [], 'no dialog opened')
    assert.equal(state.images, 0, 'no injected <img>')
    assert.equal(state.scripts, 3, 'the data block, uPlot and the report\'s script: no injected <script>')
    assert.deepEqual(state.violations, [], 'no CSP violation (nothing injected tried to run)')
    assert.equal(state.foreignScriptRan, false, 'the Content-Security-Policy refuses a script the page did not ship')
    assert.deepEqual(state.problems, [], 'no console error, page error or request')
    assert.equal(state.title, expected.title, 'the title pooltool wrote')
    for (const text of expected.texts) assert.ok(state.text.includes(text), `shown as text: ${text}`)
    // The page's own scripts ran under its policy: each chart drew.
    assert.deepEqual(state.charts.map((chart) => chart.id), expected.charts)
    for (const chart of state.charts) assert.ok(chart.points > 0, `${chart.id} drew points`)
  }

  /** The real result with markup in its string fields: a series host name, the model, the workload, the URI. */
  function hostileStrings(): BenchResult {
    const hostile = structuredClone(result)
    hostile.config.workload = payload('config.workload') as BenchResult['config']['workload']
    hostile.target.uri = payload('target.uri')
    for (const run of hostile.runs) run.model = payload('runs.model') as BenchResult['runs'][number]['model']
    for (const point of hostile.runs[0]!.series ?? []) {
      point.serverConnections = Object.fromEntries(Object.values(point.serverConnections).map((count) => [payload('series.host'), count]))
    }
    return hostile
  }

  const BENCH_CHARTS = ['spectrum', 'throughput', 'errors', 'checkout', 'connections']
  const benchTitle = (hostile: BenchResult) => `pooltool bench · ${hostile.config.workload} · ${hostile.target.uri}`

  it('report html: markup in a result file\'s strings (model, workload, URI, host name) is shown, never run', async () => {
    const hostile = hostileStrings()
    writeFileSync(file('strings.json'), JSON.stringify(hostile))
    const made = await runCli(['report', 'html', file('strings.json'), '--out', file('strings.html')])
    assert.equal(made.code, 0, made.stderr)
    const state = await open(file('strings.html'))
    assertSafe(state, {title: benchTitle(hostile), texts: ['config.workload', 'target.uri', 'runs.model', 'series.host'].map(payload), charts: BENCH_CHARTS})
  })

  it('report html: markup where numbers belong (errors, pool.created, concurrency, maxPoolSize) is refused or shown, never run', async () => {
    const hostile = hostileStrings()
    const run = hostile.runs[0]! as unknown as Record<string, unknown> & {pool: Record<string, unknown>}
    run.errors = payload('runs.errors')
    run.pool.created = payload('runs.pool.created')
    run.concurrency = payload('runs.concurrency')
    run.maxPoolSize = payload('runs.maxPoolSize')
    writeFileSync(file('numbers.json'), JSON.stringify(hostile))
    const made = await runCli(['report', 'html', file('numbers.json'), '--out', file('numbers.html')])
    if (made.code !== 0) {
      // Input validation may refuse a string where a number belongs: a usage error naming the
      // field, and no page. The renderer's own safety is tested below with such data anyway.
      assert.equal(made.code, 2, made.stderr)
      assert.match(made.stderr, /runs\[0\]\.\w+/)
      assert.ok(!existsSync(file('numbers.html')))
      return
    }
    const state = await open(file('numbers.html'))
    assertSafe(state, {title: benchTitle(hostile), texts: ['runs.errors', 'runs.pool.created', 'runs.concurrency', 'runs.maxPoolSize', 'runs.model'].map(payload), charts: BENCH_CHARTS})
  })

  it('each renderer given hostile data directly (bench, conns watch, locks watch): shown, never run', async () => {
    const library = await loadChartLibrary()
    writeFileSync(file('bench.html'), renderBenchHtml(hostileBenchData(), library))
    assertSafe(await open(file('bench.html')), {
      title: payload('title'),
      texts: ['title', 'sources', 'runs.label', 'runs.errors', 'runs.connectionsCreated', 'sweep.model', 'sweep.concurrency', 'sweep.poolSize', 'cell.p99Ms', 'series.host', 'lock.name'].map(payload),
      charts: [...BENCH_CHARTS, 'timeline'],
    })
    writeFileSync(file('conns.html'), renderConnsHtml(hostileConnsData(), library))
    assertSafe(await open(file('conns.html')), {title: payload('title'), texts: ['title', 'sources', 'host', 'role', 'alert.host', 'alert.rule', 'alert.value'].map(payload), charts: ['current', 'created']})
    writeFileSync(file('locks.html'), renderLocksHtml(hostileLocksData(), library))
    assertSafe(await open(file('locks.html')), {title: payload('title'), texts: ['title', 'sources', 'lock.name'].map(payload), charts: ['timeline']})
  })
})
