/**
 * Headless Chromium for the HTML report tests: Debian's package (`.ci/run` installs it when
 * missing), driven by puppeteer-core over the DevTools protocol; never a downloaded browser.
 */
import assert from 'node:assert/strict'
import {existsSync} from 'node:fs'
import {pathToFileURL} from 'node:url'

import puppeteer, {type Browser} from 'puppeteer-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Why the browser tests cannot run here, or undefined when they can. In CI a missing browser is a failure, not a skip. */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined
  const why = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
  if (process.env.CI) throw new Error(`${why}: .ci/run installs it`)
  return why
}

export function launchBrowser(): Promise<Browser> {
  // --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
  return puppeteer.launch({executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage']})
}

/** What a report page holds once loaded, for the hostile-input tests. */
export interface ReportPageState {
  title: string
  text: string
  images: number
  scripts: number
  charts: Array<{id: string; points: number}>
  violations: string[]
  /** Whether a <script> added after load, which the page did not ship, ran: the policy must refuse it. */
  foreignScriptRan: boolean
  problems: string[]
  dialogs: string[]
}

/** Opens a report file and reports what it holds; dialogs, errors and requests other than the file are collected, not fatal. */
export async function openReportPage(browser: Browser, html: string): Promise<ReportPageState> {
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
export function assertNothingInjected(state: ReportPageState, expected: {title: string; texts: string[]; charts: string[]}): void {
  assert.deepEqual(state.dialogs, [], 'no dialog opened')
  assert.equal(state.images, 0, 'no injected <img>')
  assert.equal(state.scripts, 3, "the data block, uPlot and the report's script: no injected <script>")
  assert.deepEqual(state.violations, [], 'no CSP violation (nothing injected tried to run)')
  assert.equal(state.foreignScriptRan, false, 'the Content-Security-Policy refuses a script the page did not ship')
  assert.deepEqual(state.problems, [], 'no console error, page error or request')
  assert.equal(state.title, expected.title, 'the title pooltool wrote')
  for (const text of expected.texts) assert.ok(state.text.includes(text), `shown as text: ${text}`)
  // The page's own scripts ran under its policy: each chart drew.
  assert.deepEqual(state.charts.map((chart) => chart.id), expected.charts)
  for (const chart of state.charts) assert.ok(chart.points > 0, `${chart.id} drew points`)
}
