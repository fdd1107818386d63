/**
 * The HTML reports' renderers (src/reporters/html.ts) with hostile data: no value of a
 * result file or a watch reaches the page as markup, a "number" that is a string cannot break out
 * of a style attribute or crash the renderer, and each page carries a Content-Security-Policy that
 * lets exactly its own inline scripts run.
 */
import assert from 'node:assert/strict'
import {createHash} from 'node:crypto'
import {before, describe, it} from 'node:test'

import {loadChartLibrary} from '../../src/report/html-assets.js'
import {type ChartLibrary, renderBenchHtml, renderConnsHtml, renderLocksHtml} from '../../src/reporters/html.js'
import {htmlSafe} from '../../src/reporters/escape.js'
import {FRAGMENTS_THAT_MUST_NOT_APPEAR, hostileBenchData, hostileConnsData, hostileLocksData, number, payload} from '../fixtures/hostile-reports.js'

/** Each inline <script>'s attributes and exact text, as the browser hashes it. */
function scriptsOf(html: string): Array<{attributes: string; text: string}> {
  return [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((match) => ({attributes: match[1]!, text: match[2]!}))
}

/** The CSP meta's policy, attribute entities decoded as the browser decodes them. */
function policyOf(html: string): string | undefined {
  const first = /<head>\s*(<[^>]*>)/.exec(html)?.[1] ?? ''
  const content = /^<meta http-equiv="Content-Security-Policy" content="([^"]*)">$/.exec(first)?.[1]
  return content?.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`

describe('HTML reports: hostile values', () => {
  let library: ChartLibrary
  before(async () => {
    library = await loadChartLibrary()
  })

  const pages = () => ({
    bench: renderBenchHtml(hostileBenchData(), library),
    conns: renderConnsHtml(hostileConnsData(), library),
    locks: renderLocksHtml(hostileLocksData(), library),
  })

  it('no payload reaches any page as markup, and no <script> is added', () => {
    for (const [kind, html] of Object.entries(pages())) {
      for (const fragment of FRAGMENTS_THAT_MUST_NOT_APPEAR) assert.ok(!html.includes(fragment), `${kind}: ${fragment} appears unescaped near …${html.slice(html.indexOf(fragment) - 80, html.indexOf(fragment) + 80)}…`)
      // The data block, uPlot, and the report's script: nothing else.
      assert.equal(html.match(/<script/g)?.length, 3, kind)
    }
  })

  it('the payloads are shown as text where their fields go (escaped, not dropped)', () => {
    const {bench, conns, locks} = pages()
    const text = (field: string) => htmlSafe(payload(field))
    for (const field of ['title', 'sources', 'runs.label', 'runs.errors', 'runs.connectionsCreated', 'runs.p50Ms', 'runs.p99Ms', 'runs.p999Ms', 'sweep.model', 'sweep.concurrency', 'sweep.poolSize', 'sweep.sloMs', 'cell.opsPerSec', 'cell.p99Ms', 'lock.name']) {
      assert.ok(bench.includes(text(field)), `bench shows ${field}`)
    }
    assert.ok(bench.includes(`<td>${text('runs.errors')}</td>`), 'errors in its cell')
    assert.ok(bench.includes(`data-ops="${text('cell.opsPerSec')}"`), 'a sweep cell\'s ops/s in its attribute')
    for (const field of ['title', 'sources', 'host', 'role', 'alert.at', 'alert.host', 'alert.rule', 'alert.value', 'zoneText', 'verdict', 'advice']) assert.ok(conns.includes(text(field)), `conns shows ${field}`)
    for (const field of ['title', 'sources', 'lock.name']) assert.ok(locks.includes(text(field)), `locks shows ${field}`)
  })

  it('style attributes hold only numbers: a string where a number belongs becomes 0', () => {
    const {bench, locks} = pages()
    // conns watch has no style attribute: its figures are charts. The bench report's legend keys are the palette's constants.
    for (const [kind, html] of Object.entries({bench, locks})) {
      const styles = [...html.matchAll(/style="([^"]*)"/g)].map((match) => match[1]!)
      assert.ok(styles.length > 0, kind)
      for (const style of styles) assert.match(style, /^(background: rgba\(46, 160, 67, [\d.]+\)|width: [\d.]+%|left: [\d.]+%; width: [\d.]+%|border-color: #[\da-f]{6}; border-style: (solid|dashed))$/, `${kind}: ${style}`)
    }
    // The comparison bar of a run whose ops/s is markup: width 0, not NaN and not the markup.
    assert.ok(bench.includes('<div style="width: 0.0%">'))
  })

  it('strings in the computed times (an axis\' end, a hold\'s bounds, an alert\'s time) neither crash it nor reach a style', () => {
    const data = hostileBenchData()
    data.lockTimelines[0]!.timeline = {endS: number('endS'), locks: [{name: 'db.a', holds: [{fromS: number('fromS'), toS: number('toS'), open: false, betweenPolls: false, holder: 'A'}]}]}
    const bench = renderBenchHtml(data, library)
    assert.ok(bench.includes('<div class="hold" style="left: 0.000%; width: 0.000%" title="db.a: A, 0.00 s → 0.00 s">'), 'the bar at 0, its times 0')
    const conns = hostileConnsData()
    conns.alerts[0]!.tS = number('alert.tS')
    // A result without the alert's time of day (an older data shape): its seconds, made a number.
    delete (conns.alerts[0] as {at?: string}).at
    assert.ok(renderConnsHtml(conns, library).includes('<tr class="alert"><td>0.0</td>'))
    const locks = hostileLocksData()
    locks.endS = number('endS')
    assert.ok(renderLocksHtml(locks, library).includes('<h2>Hold times per lock (0 to 0.0 s;'))
  })
})

describe('HTML reports: Content-Security-Policy', () => {
  let library: ChartLibrary
  before(async () => {
    library = await loadChartLibrary()
  })

  // A library with CR LF line ends and a "</script>" of its own: the hash must be of the text as embedded.
  const awkward: ChartLibrary = {script: 'window.uPlot = function () {};\r\n// a "</script>" in a comment\r\n', css: ''}

  for (const [kind, render] of [
    ['bench', (lib: ChartLibrary) => renderBenchHtml(hostileBenchData(), lib)],
    ['conns watch', (lib: ChartLibrary) => renderConnsHtml(hostileConnsData(), lib)],
    ['locks watch', (lib: ChartLibrary) => renderLocksHtml(hostileLocksData(), lib)],
  ] as const) {
    it(`${kind}: the policy is <head>'s first element and hashes exactly the page's inline scripts`, () => {
      for (const lib of [library, awkward]) {
        const html = render(lib)
        const policy = policyOf(html)
        assert.ok(policy, `a CSP meta first in <head>: ${html.slice(0, 300)}`)
        const directives = new Map(policy.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]))
        assert.deepEqual(directives.get('default-src'), ["'none'"])
        assert.deepEqual(directives.get('base-uri'), ["'none'"])
        assert.deepEqual(directives.get('form-action'), ["'none'"])
        const executed = scriptsOf(html).filter((script) => !/type="application\/json"/.test(script.attributes))
        assert.equal(executed.length, 2, 'uPlot and the report\'s script')
        // What the browser hashes: the text after the parser turned CR LF into LF.
        assert.deepEqual(directives.get('script-src')?.sort(), executed.map((script) => sha256(script.text.replace(/\r\n?/g, '\n'))).sort())
        assert.ok(!executed.some((script) => script.text.includes('\r')), 'no CR left to disagree on')
      }
    })
  }
})
