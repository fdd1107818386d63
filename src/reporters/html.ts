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
      `<td>${htmlSafe(run.p50Ms)}</td><td>${htmlSafe(run.p99Ms)}</td><td>${htmlSafe(run.p999Ms)}</td><td>${htmlSafe(run.errors)}</td><td>${htmlSafe(run.connectionsCreated)}</td><td class="warmup${run.warmupSettled === false ? ' unsettled' : ''}">${htmlSafe(run.warmup)}</td></tr>`,
  )
  return `<table class="compare"><tr><th>run</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>errors</th><th>connections created</th><th>warm-up (not measured)</th></tr>${rows.join('')}</table>`
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
  // Static legends unless a chart says otherwise: uPlot's live legend shows the value under the cursor, "--" without one.
  const u = new uPlot(Object.assign({title, width: width(), height: 320, legend: {live: false}}, opts), chartData, holder);
  const ys = u.data.slice(1);
  const points = ys.reduce((sum, ys1) => sum + ys1.filter((v) => v !== null && v !== undefined && Number.isFinite(v)).length, 0);
  window.pooltoolCharts.push({id, title, series: ys.length, points});
  return u;
}
`

/**
 * The bench report's colours: 12 that tell apart (Tableau's 10, navy, olive). No bench chart has more series
 * than this (the spectrum overlays at most this many curves; a run's connections chart at most 10 lines).
 */
const BENCH_PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#000080', '#6b8e23']

/**
 * The bench report's charts (issue 26: many runs on one chart were unreadable). Small multiples: each run
 * (each file's run, each sweep cell) has its own small panel per metric, on its own time axis (the wall clock
 * from its start, UTC), so a 5-s run is not squeezed beside a 30-s one; the y scale of a metric is shared by
 * its panels so they compare at a glance. A chart never has more series than BENCH_PALETTE has colours, so no
 * two series of one chart share a colour (a dash marks a second kind of line, not a reused colour); legends are
 * static (no hover value); a chart with nothing to draw is not made (a line says so instead). The latency
 * spectrum overlays the runs while they fit the palette, else it too is one panel per run.
 */
const BENCH_SCRIPT = String.raw`
const benchPalette = ${JSON.stringify(BENCH_PALETTE)};
// Static legends: uPlot's live legend shows each series' value under the cursor, "--" when there is none.
const legend = {live: false};
// Panels whose series the row's own legend names (drawn once above the row) show none of their own.
const noLegend = {show: false};
// chart() as the bench report draws it: the registry also records each series' stroke and dash (the browser test checks none repeats).
function benchChart(id, title, opts, chartData) {
  const u = chart(id, title, opts, chartData);
  window.pooltoolCharts[window.pooltoolCharts.length - 1].strokes = opts.series.slice(1).map((s) => s.stroke + (s.dash ? ' dashed' : ''));
  return u;
}
const nums = (values) => values.filter((v) => typeof v === 'number' && Number.isFinite(v));
const maxOf = (arrays) => Math.max(0, ...arrays.flatMap(nums));
// A shared y range from 0: every panel of a metric on the same scale.
const sharedRange = (max) => () => [0, max > 0 ? max * 1.08 : 1];
// Columns by the number of runs with a time series (not of panels in a row), so every row's panels are one size.
const panelWidth = (count) => { const cols = count <= 1 ? 1 : count === 2 || count === 4 ? 2 : 3; return Math.max(300, Math.floor((width() - 16 * (cols - 1)) / cols)); };
// Clock time, UTC: each run on the wall clock from its own start. Older files (no start time): seconds from the start.
const clockFormat = new Intl.DateTimeFormat('en-GB', {hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZone: 'UTC'});
const clockText = (seconds) => clockFormat.format(new Date(seconds * 1000));
const clockIncrs = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400];
window.pooltoolXLabels = {};
const xOf = (s) => (s.startMS === null ? s.endS : s.endS.map((t) => s.startMS / 1000 + t));
const lengthText = (s) => (Math.round(10 * (s.endS[s.endS.length - 1] || 0)) / 10) + ' s';
// The axis says where the run sits in time: its start (UTC) and its length.
const xAxis = (s, id) => (s.startMS === null
  ? {label: 's from the start (' + lengthText(s) + ')', values: (u, splits) => { window.pooltoolXLabels[id] = splits.map(String); return splits; }}
  : {label: 'UTC, from ' + clockText(s.startMS / 1000) + ' (' + lengthText(s) + ')', space: 60, incrs: clockIncrs, values: (u, splits) => { const labels = splits.map(clockText); window.pooltoolXLabels[id] = labels; return labels; }});
// The axis spans the run from its start to its end (the first point is the first interval's end).
const xScale = (s) => { const x0 = s.startMS === null ? 0 : s.startMS / 1000; const x1 = x0 + (s.endS[s.endS.length - 1] || 1); return {time: s.startMS !== null, range: () => [x0, x1]}; };
const xSeries = (s) => ({label: s.startMS === null ? 's' : 'time (UTC)'});
const tzDate = (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
function panels(metric, draw) {
  const holders = [...document.querySelectorAll('.panels[data-metric="' + metric + '"] .panel')];
  const w = panelWidth(data.series.length);
  holders.forEach((holder) => draw(data.series[Number(holder.dataset.run)], holder.id, w));
}

// Latency spectrum: x = 1/(1-p) on a log axis, labelled as percentiles.
// Ticks at p0, p50, p90, p99, p99.9 …: 1/(1-p) = 1, 2, 10, 100, 1000 …
const pct = (x) => { const p = 100 * (1 - 1 / x); return 'p' + (p <= 0 ? '0' : String(Math.round(p * 1000) / 1000)); };
const spectrumTicks = (u, axis, min, max) => [1, 2, ...Array.from({length: 12}, (_, k) => 10 ** (k + 1))].filter((x) => x >= min && x <= max);
const spectrumAxes = [{splits: spectrumTicks, values: (u) => spectrumTicks(u, 0, u.scales.x.min, u.scales.x.max).map(pct), label: 'percentile'}, {label: 'ms'}];
const corrected = (s) => s.corrected === true;
if (document.getElementById('spectrum')) {
  benchChart('spectrum', 'Latency by percentile (ms)' + (data.spectrum.series.some(corrected) ? '; dashed: corrected for coordinated omission (open loop)' : ''), {
    legend, scales: {x: {distr: 3, time: false}, y: {distr: 3}},
    // Labels from our own ticks: uPlot rounds the ticks it passes on a log axis to powers of ten (2 would read p0).
    axes: spectrumAxes,
    series: [{label: '1/(1-p)'}, ...data.spectrum.series.map((s, i) => ({label: s.label, stroke: benchPalette[i], width: 2, dash: corrected(s) ? [6, 4] : undefined}))],
  }, [data.spectrum.x, ...data.spectrum.series.map((s) => s.valuesMs)]);
}
{
  // Too many curves for one chart: a panel per run (measured and corrected), all on the same scales.
  const holders = [...document.querySelectorAll('.panels[data-metric="spectrum"] .panel')];
  const all = nums(data.spectrum.series.flatMap((s) => s.valuesMs));
  // Whole decades, so every panel's log axis reads 1, 10, 100 … and not its own lowest value.
  const yRange = () => [10 ** Math.floor(Math.log10(Math.max(0.001, Math.min(...all)))), 10 ** Math.ceil(Math.log10(Math.max(0.001, ...all) * 1.01))];
  const w = panelWidth(holders.length);
  holders.forEach((holder) => {
    const run = Number(holder.dataset.run);
    const mine = data.spectrum.series.filter((s) => s.run === run);
    benchChart(holder.id, data.runs[run].label, {
      legend: noLegend, width: w, height: 220, scales: {x: {distr: 3, time: false}, y: {distr: 3, range: yRange}}, axes: spectrumAxes,
      series: [{label: '1/(1-p)'}, ...mine.map((s, i) => ({label: corrected(s) ? 'corrected' : 'measured', stroke: benchPalette[i], width: 2, dash: corrected(s) ? [6, 4] : undefined}))],
    }, [data.spectrum.x, ...mine.map((s) => s.valuesMs)]);
  });
}

// Over time, a panel per run.
const opsRange = sharedRange(maxOf(data.series.map((s) => s.opsPerSec)));
const p99Range = sharedRange(maxOf(data.series.map((s) => s.p99Ms)));
panels('throughput', (s, id, w) => benchChart(id, s.label, {
  legend: noLegend, width: w, height: 230, tzDate, scales: {x: xScale(s), y: {range: opsRange}, ms: {range: p99Range}},
  axes: [xAxis(s, id), {label: 'ops/s'}, {scale: 'ms', side: 1, label: 'p99 ms', grid: {show: false}}],
  series: [xSeries(s), {label: 'ops/s', stroke: benchPalette[0], width: 2}, {label: 'p99 ms', stroke: benchPalette[1], width: 1.5, dash: [4, 4], scale: 'ms'}],
}, [xOf(s), s.opsPerSec, s.p99Ms]));
const checkoutRange = sharedRange(maxOf(data.series.map((s) => s.checkoutWaitP99Ms)));
panels('checkout', (s, id, w) => benchChart(id, s.label, {
  legend: noLegend, width: w, height: 190, tzDate, scales: {x: xScale(s), y: {range: checkoutRange}}, axes: [xAxis(s, id), {label: 'ms'}],
  series: [xSeries(s), {label: 'checkout wait p99 ms', stroke: benchPalette[0], width: 2}],
}, [xOf(s), s.checkoutWaitP99Ms]));
const connectionsRange = sharedRange(maxOf(data.series.flatMap((s) => [s.poolInUse, s.poolTotal, ...Object.values(s.serverConnections), s.otherHosts ? s.otherHosts.values : []])));
panels('connections', (s, id, w) => {
  const hosts = Object.keys(s.serverConnections);
  benchChart(id, s.label, {
    legend, width: w, height: 240, tzDate, scales: {x: xScale(s), y: {range: connectionsRange}}, axes: [xAxis(s, id), {label: 'connections'}],
    series: [xSeries(s), {label: 'pool in use', stroke: benchPalette[0], width: 2}, {label: 'pool total', stroke: benchPalette[1], width: 2, dash: [4, 4]},
      ...hosts.map((h, j) => ({label: 'server ' + h, stroke: benchPalette[2 + j], width: 1})),
      ...(s.otherHosts ? [{label: s.otherHosts.count + ' other hosts (mean per host)', stroke: benchPalette[2 + hosts.length], width: 1, dash: [2, 3]}] : [])],
  }, [xOf(s), s.poolInUse, s.poolTotal, ...hosts.map((h) => s.serverConnections[h]), ...(s.otherHosts ? [s.otherHosts.values] : [])]);
});
const errorsRange = sharedRange(maxOf(data.series.map((s) => s.errors)));
panels('errors', (s, id, w) => benchChart(id, s.label, {
  legend: noLegend, width: w, height: 190, tzDate, scales: {x: xScale(s), y: {range: errorsRange}}, axes: [xAxis(s, id), {label: 'errors'}],
  series: [xSeries(s), {label: 'errors per interval', stroke: benchPalette[1], width: 2}],
}, [xOf(s), s.errors]));
`

const PAGE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px; color: #222; }
h1 { font-size: 18px; } h2 { font-size: 16px; margin-top: 28px; } h3 { font-size: 14px; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.bar { position: relative; min-width: 220px; } td.bar div { position: absolute; left: 0; top: 0; bottom: 0; background: rgba(31, 119, 180, 0.25); } td.bar span { position: relative; }
td.warmup { font-size: 0.9em; max-width: 28em; text-align: left; } td.warmup.unsettled { color: #b00020; }
td.over { text-decoration: line-through; } td.knee { outline: 2px solid #d62728; }
.sources { color: #555; }
.timeline { position: relative; border-left: 1px solid #999; border-bottom: 1px solid #999; margin: 8px 0 8px 260px; }
.timeline .lane { position: relative; height: 22px; border-top: 1px dotted #ddd; }
.timeline .lane .name { position: absolute; right: 100%; width: 250px; margin-right: 8px; text-align: right; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font-size: 12px; }
.timeline .hold { position: absolute; top: 4px; height: 14px; background: #1f77b4; min-width: 2px; }
.timeline .hold.open { background: repeating-linear-gradient(45deg, #1f77b4, #1f77b4 4px, #6baed6 4px, #6baed6 8px); }
.timeline .hold.between { background: #ff7f0e; }
.holder-charts.small { display: flex; flex-wrap: wrap; gap: 12px; }
.panels { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: flex-start; }
.panels .uplot .u-title { font-size: 13px; font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.legend-row { margin: 4px 0 8px; } .legend-row .key { margin-right: 18px; font-size: 13px; }
.legend-row .key i { display: inline-block; width: 22px; height: 0; border-top-width: 3px; vertical-align: middle; margin-right: 6px; }
.panels .u-legend { font-size: 12px; }
p.note { color: #555; margin: 4px 0; }
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

/** The legend of a row of panels whose series are the same in every panel: once, above them, static. */
function legendRow(keys: ReadonlyArray<{label: string; colour: number; dashed?: boolean}>): string {
  return `<div class="legend-row">${keys.map(({label, colour, dashed}) => `<span class="key"><i style="border-color: ${BENCH_PALETTE[colour]}; border-style: ${dashed ? 'dashed' : 'solid'}"></i>${htmlSafe(label)}</span>`).join('')}</div>`
}

/** The spectrum overlays every curve while they fit the palette (one colour each); beyond it, a panel per run. */
const SPECTRUM_OVERLAY_MAX = 12

const hasValue = (values: ReadonlyArray<unknown>): boolean => values.some((value) => typeof value === 'number' && Number.isFinite(value))

/** A row of panels for one metric: a holder per run that has something to draw (data-run: its index in data.series). */
function panelRow(metric: string, runs: ReadonlyArray<{index: number}>): string {
  return `<div class="panels" data-metric="${htmlSafe(metric)}">${runs.map(({index}) => `<div class="panel" id="${htmlSafe(metric)}-${htmlSafe(index)}" data-run="${htmlSafe(index)}"></div>`).join('')}</div>`
}

/** The names of runs, for a line that says which runs a metric has nothing for. */
const runNames = (runs: ReadonlyArray<{label: string}>): string => runs.map(({label}) => label).join('; ')

/** Which runs each over-time metric has something to draw for: a metric with none gets a line, not an empty chart. */
function drawable(data: ReportData) {
  const runs = data.series.map((series, index) => ({...series, index}))
  return {
    runs,
    withCheckouts: runs.filter((run) => hasValue(run.checkoutWaitP99Ms)),
    withConnections: runs.filter((run) => [run.poolInUse, run.poolTotal, ...Object.values(run.serverConnections)].some(hasValue)),
    withErrors: runs.filter((run) => run.errors.some((n) => finite(n) > 0)),
  }
}

/** The bench report's chart groups that have something to draw, in page order (report html --json `charts`). */
export function benchChartGroups(data: ReportData): string[] {
  const {runs, withCheckouts, withConnections, withErrors} = drawable(data)
  const spectrum = data.spectrum.series.some((series) => hasValue(series.valuesMs)) ? ['spectrum'] : []
  if (runs.length === 0) return spectrum
  return [...spectrum, 'throughput', ...(withCheckouts.length > 0 ? ['checkout'] : []), ...(withConnections.length > 0 ? ['connections'] : []), ...(withErrors.length > 0 ? ['errors'] : [])]
}

function timeSections(data: ReportData): string {
  if (data.series.length === 0) return '<p>These results carry no time series (an older file, or a merged one).</p>'
  const {runs, withCheckouts, withConnections, withErrors} = drawable(data)
  const without = (some: typeof runs) => runs.filter((run) => !some.includes(run))
  const clock = runs.every((run) => run.startMS !== null)
    ? 'Each run on its own time axis: the wall clock (UTC) from its start.'
    : 'Each run on its own time axis (from its start; older files carry no clock time).'
  const missing = data.runs.length - data.series.length
  return `<h2>Over time</h2>
<p class="note">One panel per run. ${clock} Panels of one metric share their y scale.${missing > 0 ? ` ${htmlSafe(missing)} run(s) carry no time series.` : ''}</p>
<h3>Operations per second and p99 latency</h3>
${legendRow([{label: 'ops/s (left axis)', colour: 0}, {label: 'p99 latency of the interval, ms (right axis)', colour: 1, dashed: true}])}
${panelRow('throughput', runs)}
<h3>Checkout wait p99: how long operations waited for a pooled connection</h3>
${withCheckouts.length === 0 ? '<p class="note empty-metric">No checkout in any run’s intervals.</p>' : legendRow([{label: 'checkout wait p99 of the interval, ms', colour: 0}]) + panelRow('checkout', withCheckouts)}
${withCheckouts.length > 0 && withCheckouts.length < runs.length ? `<p class="note">No checkout in: ${htmlSafe(runNames(without(withCheckouts)))}.</p>` : ''}
<h3>Client pool (in use, total) and server connections per host</h3>
${withConnections.length === 0 ? '<p class="note empty-metric">No pool or server connection figures in any run.</p>' : panelRow('connections', withConnections)}
<h3>Errors per interval</h3>
${withErrors.length === 0 ? `<p class="note no-errors">${runs.length === 1 ? 'No errors.' : 'No errors in any run.'}</p>` : `${legendRow([{label: 'errors per interval', colour: 1}])}${panelRow('errors', withErrors)}${withErrors.length < runs.length ? `<p class="note">No errors in: ${htmlSafe(runNames(without(withErrors)))}.</p>` : ''}`}`
}

function spectrumSection(data: ReportData): string {
  const curves = data.spectrum.series.filter((series) => hasValue(series.valuesMs))
  if (curves.length === 0) return '<p class="note empty-metric">No operation completed: no latency to draw.</p>'
  if (data.spectrum.series.length <= SPECTRUM_OVERLAY_MAX) return '<div id="spectrum"></div>'
  const runs = data.runs.map((_, index) => index).filter((index) => curves.some((series) => series.run === index))
  const corrected = data.spectrum.series.some((series) => series.corrected === true)
  return `<p class="note">Latency by percentile (ms): more curves than one chart has colours, so one panel per run, all on the same scales.</p>
${legendRow([{label: 'measured', colour: 0}, ...(corrected ? [{label: 'corrected for coordinated omission (open loop)', colour: 1, dashed: true}] : [])])}
<div class="panels" data-metric="spectrum">${runs.map((index) => `<div class="panel" id="spectrum-${htmlSafe(index)}" data-run="${htmlSafe(index)}"></div>`).join('')}</div>`
}

export function renderBenchHtml(data: ReportData, library: ChartLibrary): string {
  const locks = data.lockTimelines.map(
    ({label, timeline, eventsNotKept}) =>
      `<h3>${htmlSafe(label)}: the bench database's locks (0 to ${fixed(timeline.endS, 1)} s; ${TIMELINE_LEGEND})${finite(eventsNotKept) > 0 ? `; ${htmlSafe(eventsNotKept)} later transitions not kept` : ''}</h3>${timelineHtml(timeline)}`,
  )
  const body = `<ul class="sources">${data.sources.map((source) => `<li>${htmlSafe(source)}</li>`).join('')}</ul>
<h2>Runs</h2>
${comparisonTable(data)}
${sweepTables(data)}
<h2>Latency</h2>
${spectrumSection(data)}
${timeSections(data)}
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
