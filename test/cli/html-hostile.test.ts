/**
 * Hostile strings in the HTML reports, opened in headless Chromium: a crafted bench
 * result file (markup in runs[].errors, pool.created, concurrency, maxPoolSize, model,
 * config.workload, target.uri and a series' host name) given to `report html`, and hostile data
 * given to each renderer directly. In every page: no injected element, no extra script, no
 * dialog, no request, no CSP violation, the title pooltool wrote, the payloads shown as text, the
 * charts still drawn (the page's own scripts run under its Content-Security-Policy), and a script
 * added after load refused by that policy. One Chromium for the file; the input bench and the second
 * `report html` run in-process (test/helpers/in-process.ts, the path bin/run.js takes), the first
 * `report html` is spawned to prove the real process.
 */
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import type {Browser} from 'puppeteer-core'

import type {BenchResult} from '../../src/bench/types.js'
import {loadChartLibrary} from '../../src/report/html-assets.js'
import {renderBenchHtml, renderConnsHtml, renderLocksHtml} from '../../src/reporters/html.js'
import {hostileBenchData, hostileConnsData, hostileLocksData, payload} from '../fixtures/hostile-reports.js'
import {assertNothingInjected, browserMissing, launchBrowser, openReportPage} from '../helpers/browser.js'
import {runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'

const missing = browserMissing()

describe('HTML reports with hostile strings, in a browser', {skip: missing, timeout: 240_000}, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-html-hostile-'))
  const file = (name: string) => path.join(dir, name)
  let browser: Browser
  let result: BenchResult

  before(async () => {
    // A real result with a sweep (two concurrencies of one model), so the grid is drawn too: an input
    // only, so in-process, while the browser starts; half-second runs, a series point every 125 ms.
    const [launched, run] = await Promise.all([launchBrowser(), runInProcess(['bench', '--warmup', '0', '--concurrency', '2,4', '--duration', '500ms', '--series-interval', '125ms', '--out', file('real.json')])])
    browser = launched
    assert.equal(run.code, 0, run.stderr)
    result = JSON.parse(readFileSync(file('real.json'), 'utf8')) as BenchResult
  })
  after(async () => {
    await browser?.close()
  })

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

  /** The bench report's charts: the spectrum, then a panel per run for each metric that run has something for. */
  const benchCharts = (r: BenchResult) => {
    const ids = (metric: string, has: (run: BenchResult['runs'][number]) => boolean = () => true) => r.runs.flatMap((run, i) => ((run.series ?? []).length > 0 && has(run) ? [`${metric}-${i}`] : []))
    return ['spectrum', ...ids('throughput'), ...ids('checkout', (run) => run.series!.some((p) => p.checkoutWaitP99Us !== undefined)), ...ids('connections'), ...ids('errors', (run) => run.series!.some((p) => p.errors > 0))]
  }
  const benchTitle = (hostile: BenchResult) => `pooltool bench · ${hostile.config.workload} · ${hostile.target.uri} · ${hostile.runs.length} runs`

  it('report html: markup in a result file\'s strings (model, workload, URI, host name) is shown, never run', async () => {
    const hostile = hostileStrings()
    writeFileSync(file('strings.json'), JSON.stringify(hostile))
    // Spawned: report html in the real process (exit 0).
    const made = await runCli(['report', 'html', file('strings.json'), '--out', file('strings.html')])
    assert.equal(made.code, 0, made.stderr)
    const state = await openReportPage(browser, file('strings.html'))
    assertNothingInjected(state, {title: benchTitle(hostile), texts: ['config.workload', 'target.uri', 'runs.model', 'series.host'].map(payload), charts: benchCharts(hostile)})
  })

  it('report html: markup where numbers belong (errors, pool.created, concurrency, maxPoolSize) is refused or shown, never run', async () => {
    const hostile = hostileStrings()
    const run = hostile.runs[0]! as unknown as Record<string, unknown> & {pool: Record<string, unknown>}
    run.errors = payload('runs.errors')
    run.pool.created = payload('runs.pool.created')
    run.concurrency = payload('runs.concurrency')
    run.maxPoolSize = payload('runs.maxPoolSize')
    writeFileSync(file('numbers.json'), JSON.stringify(hostile))
    const made = await runInProcess(['report', 'html', file('numbers.json'), '--out', file('numbers.html')])
    if (made.code !== 0) {
      // Input validation may refuse a string where a number belongs: a usage error naming the
      // field, and no page. The renderer's own safety is tested below with such data anyway.
      assert.equal(made.code, 2, made.stderr)
      assert.match(made.stderr, /runs\[0\]\.\w+/)
      assert.ok(!existsSync(file('numbers.html')))
      return
    }
    const state = await openReportPage(browser, file('numbers.html'))
    assertNothingInjected(state, {title: benchTitle(hostile), texts: ['runs.errors', 'runs.pool.created', 'runs.concurrency', 'runs.maxPoolSize', 'runs.model'].map(payload), charts: benchCharts(hostile)})
  })

  it('each renderer given hostile data directly (bench, conns watch, locks watch): shown, never run', async () => {
    const library = await loadChartLibrary()
    writeFileSync(file('bench.html'), renderBenchHtml(hostileBenchData(), library))
    assertNothingInjected(await openReportPage(browser, file('bench.html')), {
      title: payload('title'),
      texts: ['title', 'sources', 'runs.label', 'runs.errors', 'runs.connectionsCreated', 'sweep.model', 'sweep.concurrency', 'sweep.poolSize', 'cell.p99Ms', 'series.host', 'lock.name'].map(payload),
      charts: ['spectrum', 'throughput-0', 'checkout-0', 'connections-0', 'errors-0', 'timeline'],
    })
    writeFileSync(file('conns.html'), renderConnsHtml(hostileConnsData(), library))
    assertNothingInjected(await openReportPage(browser, file('conns.html')), {title: payload('title'), texts: ['title', 'sources', 'host', 'role', 'alert.at', 'alert.host', 'alert.rule', 'alert.value', 'zoneText', 'holder', 'verdict', 'advice'].map(payload), charts: ['current', 'created', 'holders-0']})
    writeFileSync(file('locks.html'), renderLocksHtml(hostileLocksData(), library))
    assertNothingInjected(await openReportPage(browser, file('locks.html')), {title: payload('title'), texts: ['title', 'sources', 'lock.name'].map(payload), charts: ['timeline']})
  })
})
