/**
 * The HTML report: one self-contained file (uPlot and its CSS inlined, the data as JSON inside;
 * nothing is fetched when it is viewed). Pure: the data and the chart library's text come in.
 *
 * Charts (uPlot, https://github.com/leeoniya/uPlot, MIT: small, no dependencies, fast on long
 * series, log axes). bench: the latency spectrum, ops/s and p99, errors, checkout wait, the client
 * pool and server connections over time; the sweep grid and the run comparison are tables coloured
 * by value; a ddl run's lock timeline. conns watch: current and created/s per host on the servers' clock
 * with the alerts, connections per host stacked by holder, the verdicts and advice.
 * locks watch: each lock's holds as bars on one axis (HTML, not uPlot). Every chart and timeline
 * registers itself in `window.pooltoolCharts` ({id, title, series, points}) from what it drew, so
 * a browser test can check that each one has its points.
 *
 * Hostile input: every value interpolated into the markup goes through htmlSafe, numbers
 * included (a result file's numbers are whatever its author wrote), and numbers in style attributes
 * are coerced to finite ones; each page's Content-Security-Policy lets only its own scripts run.
 */
import {createHash} from 'node:crypto'

import type {ChartLibrary} from '../report/html-assets.js'
import type {ReportData} from '../report/html-data.js'
import type {ConnsReportData, LocksReportData, LockTimeline} from '../report/watch-html-data.js'
import {htmlSafe} from './escape.js'

export type {ChartLibrary}

/**
 * A number for arithmetic and style attributes: a result file's "numbers" are whatever its author
 * wrote, so anything not finite is 0 (a string can never reach `style="width: …%"`).
 */
const finite = (value: unknown): number => {
  const number = Number(value)
  return Number.isFinite(number) ? number : 0
}

/** A number with fixed decimals, as text (toFixed on a string from a file would throw). */
const fixed = (value: unknown, digits: number): string => finite(value).toFixed(digits)

/** JSON inside a <script>: no "</script>" or "<!--" can close or open anything. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')

/** Keeps a library's text from closing the <script> or <style> it is inlined in. */
const inlineSafe = (text: string, tag: 'script' | 'style'): string => text.replace(new RegExp(`</${tag}`, 'gi'), `<\\/${tag}`)

function sweepTables(data: ReportData): string {
  return data.sweeps
    .map((sweep) => {
      const best = Math.max(...sweep.cells.map((cell) => finite(cell.opsPerSec)))
      const cellOf = (concurrency: number, pool: number | null) => sweep.cells.find((cell) => cell.concurrency === concurrency && cell.maxPoolSize === pool)
      const rows = sweep.concurrencies.map((concurrency) => {
        const tds = sweep.poolSizes.map((pool) => {
          const cell = cellOf(concurrency, pool)
          if (!cell) return '<td class="empty">–</td>'
          // Green by throughput; a p99 over the SLO is struck through.
          const share = best > 0 ? finite(cell.opsPerSec) / best : 0
          const mark = cell.knee ? '★ ' : cell.overSlo ? '› ' : ''
          return `<td class="cell${cell.overSlo ? ' over' : ''}${cell.knee ? ' knee' : ''}" style="background: rgba(46, 160, 67, ${fixed(0.1 + 0.6 * share, 2)})" data-ops="${htmlSafe(cell.opsPerSec)}">${mark}${htmlSafe(Math.round(finite(cell.opsPerSec)).toLocaleString('en-US'))} ops/s<br>p99 ${htmlSafe(cell.p99Ms)} ms</td>`
        })
        return `<tr><th>${htmlSafe(concurrency)}</th>${tds.join('')}</tr>`
      })
      const slo = sweep.sloMs === null ? '' : `; › p99 over the SLO ${htmlSafe(sweep.sloMs)} ms`
      return (
        `<h3>Sweep, ${htmlSafe(sweep.model)}: ops/s and p99 per cell (★ the knee${slo})</h3>` +
        `<table class="sweep" data-model="${htmlSafe(sweep.model)}"><tr><th>concurrency \\ ${sweep.model === 'fixed' ? 'connections' : 'pool size'}</th>${sweep.poolSizes.map((pool) => `<th>${htmlSafe(pool ?? 'default')}</th>`).join('')}</tr>${rows.join('')}</table>`
      )
    })
    .join('')
}

function comparisonTable(data: ReportData): string {
  const best = Math.max(1, ...data.runs.map((run) => finite(run.opsPerSec)))
  const rows = data.runs.map(
    (run) =>
      `<tr class="run"><td>${htmlSafe(run.label)}</td><td class="bar"><div style="width: ${fixed((100 * finite(run.opsPerSec)) / best, 1)}%"></div><span>${htmlSafe(Math.round(finite(run.opsPerSec)).toLocaleString('en-US'))}</span></td>` +
      `<td>${htmlSafe(run.p50Ms)}</td><td>${htmlSafe(run.p99Ms)}</td><td>${htmlSafe(run.p999Ms)}</td><td>${htmlSafe(run.errors)}</td><td>${htmlSafe(run.connectionsCreated)}</td></tr>`,
  )
  return `<table class="compare"><tr><th>run</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>errors</th><th>connections created</th></tr>${rows.join('')}</table>`
}

/**
 * What every report's page script starts with: the data, a palette, and chart(), which draws one
 * uPlot chart and registers it in window.pooltoolCharts with the points its data holds.
 */
const CHART_PRELUDE = String.raw`
const data = JSON.parse(document.getElementById('report-data').textContent);
const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'];
const color = (i) => palette[i % palette.length];
window.pooltoolCharts = [];
const width = () => Math.min(1100, document.body.clientWidth - 40);
function chart(id, title, opts, chartData) {
  const holder = document.getElementById(id);
  const u = new uPlot(Object.assign({title, width: width(), height: 320}, opts), chartData, holder);
  const ys = u.data.slice(1);
  const points = ys.reduce((sum, ys1) => sum + ys1.filter((v) => v !== null && v !== undefined && Number.isFinite(v)).length, 0);
  window.pooltoolCharts.push({id, title, series: ys.length, points});
  return u;
}
`

/** The bench report's charts. */
const BENCH_SCRIPT = String.raw`
// Latency spectrum: x = 1/(1-p) on a log axis, labelled as percentiles.
// Ticks at p0, p50, p90, p99, p99.9 …: 1/(1-p) = 1, 2, 10, 100, 1000 …
const pct = (x) => { const p = 100 * (1 - 1 / x); return 'p' + (p <= 0 ? '0' : String(Math.round(p * 1000) / 1000)); };
const spectrumTicks = (u, axis, min, max) => [1, 2, ...Array.from({length: 12}, (_, k) => 10 ** (k + 1))].filter((x) => x >= min && x <= max);
chart('spectrum', 'Latency by percentile (ms; corrected for coordinated omission beside the measured, in open loop)', {
  scales: {x: {distr: 3, time: false}, y: {distr: 3}},
  // Labels from our own ticks: uPlot rounds the ticks it passes on a log axis to powers of ten (2 would read p0).
  axes: [{splits: spectrumTicks, values: (u) => spectrumTicks(u, 0, u.scales.x.min, u.scales.x.max).map(pct), label: 'percentile'}, {label: 'ms'}],
  series: [{label: '1/(1-p)'}, ...data.spectrum.series.map((s, i) => ({label: s.label, stroke: color(i), width: 2, dash: s.label.endsWith('(corrected)') ? [6, 4] : undefined}))],
}, [data.spectrum.x, ...data.spectrum.series.map((s) => s.valuesMs)]);
// Over time: one x grid (the longest run's), each run's values where it has them.
const longest = data.series.reduce((a, s) => (s.tS.length > a.length ? s.tS : a), []);
const on = (values) => longest.map((_, i) => (i < values.length ? values[i] : null));
if (data.series.length > 0) {
  chart('throughput', 'Operations per second and p99 over time', {
    scales: {x: {time: false}, ms: {}},
    axes: [{label: 's'}, {label: 'ops/s'}, {scale: 'ms', side: 1, label: 'p99 ms', grid: {show: false}}],
    series: [{label: 's'}, ...data.series.flatMap((s, i) => [{label: s.label + ' ops/s', stroke: color(i), width: 2}, {label: s.label + ' p99', stroke: color(i), dash: [4, 4], scale: 'ms'}])],
  }, [longest, ...data.series.flatMap((s) => [on(s.opsPerSec), on(s.p99Ms)])]);
  chart('errors', 'Errors per interval', {
    scales: {x: {time: false}},
    axes: [{label: 's'}, {label: 'errors'}],
    series: [{label: 's'}, ...data.series.map((s, i) => ({label: s.label, stroke: color(i), width: 2}))],
  }, [longest, ...data.series.map((s) => on(s.errors))]);
  chart('checkout', 'Checkout wait p99 (ms): how long operations waited for a pooled connection', {
    scales: {x: {time: false}},
    axes: [{label: 's'}, {label: 'ms'}],
    series: [{label: 's'}, ...data.series.map((s, i) => ({label: s.label, stroke: color(i), width: 2}))],
  }, [longest, ...data.series.map((s) => on(s.checkoutWaitP99Ms))]);
  const hosts = [...new Set(data.series.flatMap((s) => Object.keys(s.serverConnections)))];
  chart('connections', 'Client pool (in use, total) and server connections per host', {
    scales: {x: {time: false}},
    axes: [{label: 's'}, {label: 'connections'}],
    series: [{label: 's'}, ...data.series.flatMap((s, i) => [{label: s.label + ' pool in use', stroke: color(i), width: 2}, {label: s.label + ' pool total', stroke: color(i), dash: [4, 4]}]),
      ...data.series.flatMap((s, i) => hosts.filter((h) => h in s.serverConnections).map((h, j) => ({label: s.label + ' server ' + h, stroke: color(data.series.length + i * hosts.length + j), width: 1})))],
  }, [longest, ...data.series.flatMap((s) => [on(s.poolInUse), on(s.poolTotal)]), ...data.series.flatMap((s) => hosts.filter((h) => h in s.serverConnections).map((h) => on(s.serverConnections[h])))]);
}
`

const PAGE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px; color: #222; }
h1 { font-size: 18px; } h2 { font-size: 16px; margin-top: 28px; } h3 { font-size: 14px; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.bar { position: relative; min-width: 220px; } td.bar div { position: absolute; left: 0; top: 0; bottom: 0; background: rgba(31, 119, 180, 0.25); } td.bar span { position: relative; }
td.over { text-decoration: line-through; } td.knee { outline: 2px solid #d62728; }
.sources { color: #555; }
.timeline { position: relative; border-left: 1px solid #999; border-bottom: 1px solid #999; margin: 8px 0 8px 260px; }
.timeline .lane { position: relative; height: 22px; border-top: 1px dotted #ddd; }
.timeline .lane .name { position: absolute; right: 100%; width: 250px; margin-right: 8px; text-align: right; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font-size: 12px; }
.timeline .hold { position: absolute; top: 4px; height: 14px; background: #1f77b4; min-width: 2px; }
.timeline .hold.open { background: repeating-linear-gradient(45deg, #1f77b4, #1f77b4 4px, #6baed6 4px, #6baed6 8px); }
.timeline .hold.between { background: #ff7f0e; }
.holder-charts.small { display: flex; flex-wrap: wrap; gap: 12px; }
`

/** A script's hash as a CSP source: sha256 over the exact text between its <script> and </script>. */
const scriptHashSource = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`

/**
 * The page's Content-Security-Policy: only its own inlined scripts run (by hash: an injected
 * <script> or onerror= is refused even if some value escaped escaping), nothing is fetched or
 * submitted anywhere. Styles inline: uPlot and the bars set style attributes, which no hash covers.
 * The JSON data block is not executed, so it needs no hash.
 */
function contentSecurityPolicy(scripts: readonly string[]): string {
  return [
    "default-src 'none'",
    `script-src ${scripts.map(scriptHashSource).join(' ')}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ')
}

/** One self-contained page: the library and its CSS inlined, the data as JSON, the prelude and the report's script. */
function htmlPage(title: string, body: string, data: unknown, script: string, library: ChartLibrary): string {
  // Line breaks as the HTML parser leaves them (it turns CR LF and CR into LF before a hash is taken).
  const scripts = [inlineSafe(library.script, 'script'), `${CHART_PRELUDE}${script}`].map((text) => text.replace(/\r\n?/g, '\n'))
  // The policy comes first in <head>: a <meta> policy governs only what the parser meets after it.
  return `<!doctype html>
<html lang="en">
<head>
<meta http-equiv="Content-Security-Policy" content="${htmlSafe(contentSecurityPolicy(scripts))}">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${htmlSafe(title)}</title>
<style>${inlineSafe(library.css, 'style')}</style>
<style>${PAGE_STYLE}</style>
</head>
<body>
<h1>${htmlSafe(title)}</h1>
${body}
<script id="report-data" type="application/json">${scriptJson(data)}</script>
${scripts.map((text) => `<script>${text}</script>`).join('\n')}
</body>
</html>
`
}

export function renderBenchHtml(data: ReportData, library: ChartLibrary): string {
  const timeCharts = data.series.length > 0
    ? '<h2>Over time</h2><div id="throughput"></div><div id="errors"></div><div id="checkout"></div><div id="connections"></div>'
    : '<p>These results carry no time series (an older file).</p>'
  const locks = data.lockTimelines.map(
    ({label, timeline, eventsNotKept}) =>
      `<h3>${htmlSafe(label)}: the bench database's locks (0 to ${fixed(timeline.endS, 1)} s; ${TIMELINE_LEGEND})${finite(eventsNotKept) > 0 ? `; ${htmlSafe(eventsNotKept)} later transitions not kept` : ''}</h3>${timelineHtml(timeline)}`,
  )
  const body = `<ul class="sources">${data.sources.map((source) => `<li>${htmlSafe(source)}</li>`).join('')}</ul>
<h2>Runs</h2>
${comparisonTable(data)}
${sweepTables(data)}
<h2>Latency</h2>
<div id="spectrum"></div>
${timeCharts}
${locks.length > 0 ? `<h2>DDL locks</h2>${locks.join('')}` : ''}`
  return htmlPage(data.title, body, data, BENCH_SCRIPT + LOCKS_SCRIPT, library)
}

/**
 * conns watch: current and created/s per host over the servers' clock time, alerts as points where they
 * fired; each host's connections stacked by holder (one small chart per host when there are many). Every
 * series has its own colour and, past the palette, its own dash; a host whose series is another's is
 * drawn dashed over it and says so. The x axis labels are times of day in the zone the page names
 * (registered in window.pooltoolXLabels per chart, for the browser test).
 */
const CONNS_SCRIPT = String.raw`
const zone = (() => { try { new Intl.DateTimeFormat('en-GB', {timeZone: String(data.timeZone)}); return String(data.timeZone); } catch (e) { return 'UTC'; } })();
const clockFormat = new Intl.DateTimeFormat('en-GB', {hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZone: zone});
const clockText = (seconds) => { const d = new Date(seconds * 1000); const ms = d.getUTCMilliseconds(); return clockFormat.format(d) + (ms === 0 ? '' : '.' + String(ms).padStart(3, '0')); };
window.pooltoolXLabels = {};
const x = data.clockMS.map((ms) => ms / 1000);
const clockScale = {x: {time: true}};
const clockSeries = {label: 'time (' + data.zoneText + ')', value: (u, v) => (v === null || v === undefined ? '' : clockText(v))};
// Ticks on whole seconds (or minutes, hours), spaced for an "hh:mm:ss" label each.
const clockIncrs = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400];
const clockAxis = (id) => ({label: 'time of day, servers\' clock (' + data.zoneText + ')', space: 80, incrs: clockIncrs, values: (u, splits) => { const labels = splits.map(clockText); window.pooltoolXLabels[id] = labels; return labels; }});
const tzDate = (ts) => uPlot.tzDate(new Date(ts * 1000), zone);
// Past the palette's 10 colours, a dash tells series apart.
const dashes = [undefined, [8, 4], [2, 3], [12, 4, 2, 4], [4, 4]];
const dashOf = (i) => dashes[Math.floor(i / palette.length) % dashes.length];
const label = (h) => h.host + ' (' + h.role + ')' + (h.neverShrank ? ' · never shrank' : '') + (h.sameAs ? ' · same as ' + h.sameAs : '');
const hostSeries = (h, i, width) => ({label: label(h), stroke: color(i), width: h.neverShrank ? 3 : width, dash: h.sameAs ? [6, 6] : dashOf(i), points: {show: true, size: h.sameAs ? 9 : 5}});
const alertsOn = (metric) => data.tS.map((t, i) => {
  const fired = data.alerts.filter((a) => Math.abs(a.tS - t) < 1e-6);
  if (fired.length === 0) return null;
  const values = fired.map((a) => { const h = data.hosts.find((x) => x.host === a.host); return h ? h[metric][i] : null; }).filter((v) => v !== null);
  return values.length > 0 ? Math.max(...values) : null;
});
const alertSeries = {label: 'alerts', stroke: '#d62728', width: 0, paths: () => null, points: {show: true, size: 12, stroke: '#d62728', fill: '#fff', width: 3}};
chart('current', 'Server connections (current) per host', {
  tzDate, scales: clockScale, axes: [clockAxis('current'), {label: 'connections'}],
  series: [clockSeries, ...data.hosts.map((h, i) => hostSeries(h, i, 1.5)), alertSeries],
}, [x, ...data.hosts.map((h) => h.current), alertsOn('current')]);
chart('created', 'Connections created per second per host', {
  tzDate, scales: clockScale, axes: [clockAxis('created'), {label: 'created/s'}],
  series: [clockSeries, ...data.hosts.map((h, i) => ({...hostSeries(h, i, 1.5), width: 1.5})), alertSeries],
}, [x, ...data.hosts.map((h) => h.createdPerSec), alertsOn('createdPerSec')]);
// Connections by holder, stacked: each band is one holder; the same holder has the same colour on every host.
const holderNames = [...new Set(data.hosts.flatMap((h) => h.holders.map((k) => k.label)))];
const many = data.hosts.length > 4;
data.hosts.forEach((h, i) => {
  if (h.holders.length === 0) return;
  const stacked = [];
  h.holders.forEach((k, j) => stacked.push(k.counts.map((v, r) => (v === null ? null : v + (j === 0 ? 0 : stacked[j - 1][r] ?? 0)))));
  // The top band first: each band's fill is painted over by the ones below it.
  const order = h.holders.map((_, j) => j).reverse();
  const series = order.map((j) => {
    const k = h.holders[j];
    const c = holderNames.indexOf(k.label);
    return {label: k.label, stroke: color(c), dash: dashOf(c), fill: color(c) + '55', width: 1, points: {show: true, size: 4}, value: (u, v, si, r) => (r === null || r === undefined || k.counts[r] === null ? '' : String(k.counts[r]))};
  });
  const id = 'holders-' + i;
  chart(id, h.host + ' (' + h.role + '): connections by holder, stacked', {
    width: many ? Math.max(320, Math.floor((width() - 24) / 2)) : width(), height: many ? 220 : 300,
    // Stacked bands start at 0: a scale starting at the lowest band would hide it.
    tzDate, scales: {...clockScale, y: {range: (u, min, max) => [0, Math.max(1, max) * 1.1]}}, axes: [clockAxis(id), {label: 'connections'}], series: [clockSeries, ...series],
  }, [x, ...order.map((j) => stacked[j])]);
});
`

/** Verdicts and advice as a list; every line through htmlSafe. */
function lines(items: readonly unknown[], className: string, none: string): string {
  return items.length === 0 ? `<p>${htmlSafe(none)}</p>` : `<ul class="${className}">${items.map((item) => `<li>${htmlSafe(item)}</li>`).join('')}</ul>`
}

export function renderConnsHtml(data: ConnsReportData, library: ChartLibrary): string {
  const shrank = data.hosts.filter((h) => h.neverShrank)
  const alerts = data.alerts.length === 0
    ? '<p>No alert fired.</p>'
    : `<table class="alerts"><tr><th>at (${htmlSafe(data.zoneText)})</th><th>host</th><th>rule</th><th>value</th></tr>${data.alerts.map((a) => `<tr class="alert"><td>${htmlSafe(a.at ?? fixed(a.tS, 1))}</td><td>${htmlSafe(a.host)}</td><td>${htmlSafe(a.rule)}</td><td>${htmlSafe(a.value)}</td></tr>`).join('')}</table>`
  const withHolders = data.hosts.map((h, i) => ({h, i})).filter(({h}) => (h.holders ?? []).length > 0)
  const holderCharts = withHolders.length === 0
    ? '<p>Holders were not read (--no-holders, or $currentOp refused).</p>'
    : `<div class="holder-charts${data.hosts.length > 4 ? ' small' : ''}">${withHolders.map(({i}) => `<div id="holders-${htmlSafe(i)}"></div>`).join('')}</div>`
  const body = `<ul class="sources">${data.sources.map((source) => `<li>${htmlSafe(source)}</li>`).join('')}</ul>
<h2>Verdicts</h2>
${lines(data.verdicts ?? [], 'verdicts', 'No verdict: no host never shrank.')}
<h2>Advice</h2>
${lines(data.advice ?? [], 'advice', 'No advice beyond the verdicts.')}
<div id="current"></div>
<div id="created"></div>
<h2>Connections per host by holder</h2>
${holderCharts}
<h2>Alerts</h2>
${alerts}
<h2>Never shrank</h2>
${shrank.length === 0 ? '<p>No host.</p>' : `<ul class="never-shrank">${shrank.map((h) => `<li>${htmlSafe(h.host)} (${htmlSafe(h.role)})</li>`).join('')}</ul>`}`
  return htmlPage(data.title, body, data, CONNS_SCRIPT, library)
}

/** Lock timelines (locks watch, ddl runs) are HTML bars: registered like a chart, one entry per timeline. */
const LOCKS_SCRIPT = String.raw`
document.querySelectorAll('.timeline').forEach((timeline, i) => {
  window.pooltoolCharts.push({id: i === 0 ? 'timeline' : 'timeline-' + i, title: 'Hold times per lock', series: timeline.querySelectorAll('.lane').length, points: timeline.querySelectorAll('.hold').length});
});
`

/** Each lock a lane, each hold a bar placed on the timeline's axis; hovering a bar says who held it and when. */
function timelineHtml(data: LockTimeline): string {
  const span = finite(data.endS) > 0 ? finite(data.endS) : 1
  const pct = (seconds: unknown) => `${fixed((100 * finite(seconds)) / span, 3)}%`
  const lanes = data.locks.map((lock) => {
    const bars = lock.holds.map((hold) => {
      const kind = hold.betweenPolls ? ' between' : hold.open ? ' open' : ''
      const what = `${lock.name}: ${hold.holder}, ${fixed(hold.fromS, 2)} s → ${hold.open ? 'still held at the end' : `${fixed(hold.toS, 2)} s`}${hold.betweenPolls ? ' (between polls: at most this long)' : ''}`
      return `<div class="hold${kind}" style="left: ${pct(hold.fromS)}; width: ${pct(Math.max(0, finite(hold.toS) - finite(hold.fromS)))}" title="${htmlSafe(what)}"></div>`
    })
    return `<div class="lane"><span class="name" title="${htmlSafe(lock.name)}">${htmlSafe(lock.name)}</span>${bars.join('')}</div>`
  })
  return data.locks.length === 0 ? '<p>No lock was held.</p>' : `<div class="timeline">${lanes.join('')}</div>`
}

const TIMELINE_LEGEND = 'striped: still held at the end; orange: taken and freed between two polls, at most this long'

export function renderLocksHtml(data: LocksReportData, library: ChartLibrary): string {
  const body = `<ul class="sources">${data.sources.map((source) => `<li>${htmlSafe(source)}</li>`).join('')}</ul>
<h2>Hold times per lock (0 to ${fixed(data.endS, 1)} s; ${TIMELINE_LEGEND})</h2>
${timelineHtml(data)}`
  return htmlPage(data.title, body, data, LOCKS_SCRIPT, library)
}
