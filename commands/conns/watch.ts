import {Flags} from '@oclif/core'

import {TargetCommand} from '../../src/cli/base-command.js'
import {durationFlag, utcFlag} from '../../src/cli/flags.js'
import {stdoutLayout} from '../../src/cli/terminal.js'
import {toWatchOptions} from '../../src/conns/options.js'
import type {ConnsWatchResult, RoundSample} from '../../src/conns/types.js'
import {runConnsWatch} from '../../src/conns/watch.js'
import {CONNS_DEFAULTS} from '../../src/defaults.js'
import type {PoolToolError} from '../../src/errors.js'
import {
  ConnsLiveView,
  describeTopology,
  ndjsonSamples,
  renderAlert,
  renderNeverShrank,
  renderPlainRound,
  renderTopology,
  renderWatchSummary,
} from '../../src/reporters/conns.js'
import {checkOutputFiles, writeTextAtomically} from '../../src/output.js'
import {loadChartLibrary} from '../../src/report/html-assets.js'
import {connsReportData} from '../../src/report/watch-html-data.js'
import {timeDisplayOf, zoneNote} from '../../src/reporters/time-of-day.js'
import {renderConnsHtml} from '../../src/reporters/html.js'
import {targetSummary} from '../../src/result.js'
import {MetricsExport} from '../../src/cli/metrics-export.js'
import {checkMetricsFlags, metricsFlags} from '../../src/cli/metrics-flags.js'
import {ConnsMetrics} from '../../src/reporters/openmetrics/conns.js'
import {SIM_TOPOLOGIES, type SimTopology} from '../../src/sim/index.js'

export default class ConnsWatch extends TargetCommand<typeof ConnsWatch> {
  static override summary = 'Watch server connection counts on every host of a cluster: growth, alerts, pools that never shrink, who holds them.'

  static override description =
    'Discovers the topology from the entry point (replica-set members from hello; from a mongos the other routers in ' +
    'config.mongos, the shards from listShards and the config server from serverStatus.sharding, getShardMap or ' +
    'connPoolStats.replicaSets) and polls each host ' +
    'over its own connection: serverStatus.connections (current, available, active, totalCreated and its rate per ' +
    'second, rejected, threaded and every other field the server version has; absent fields stay absent), ' +
    'connPoolStats on every node that answers it (each pool by name and each remote host; a router\'s pools per shard), ' +
    'the connection limit explained (net.maxIncomingConnections from getCmdLineOpts against 80% of hostInfo.extra.maxOpenFiles), ' +
    'and $currentOp with idle connections grouped by appName, client ' +
    'host and driver. On a terminal the view redraws in place with a sparkline of current per host; otherwise one ' +
    'line per host per round. A host that goes away is shown as unreachable, gets a fresh connection every round and ' +
    'comes back as soon as it answers; the watch goes on. The node the URI reached is always polled through the address ' +
    'you gave (a port-forward or tunnel works); a discovered host that never answered is "not reachable from here". ' +
    'Two names of one process (same serverStatus.host) are polled once, the other name shown as an alias. Per host also: ' +
    'the connection limit (current + available) and % used, lock queues (globalLock.currentQueue, activeClients) and ' +
    'lock waits per second (serverStatus.locks), read only; a server clock more than 5 s off is said once. A pool ' +
    '"never shrank" when, after growing, totalCreated stopped moving for --idle-window and the connection count stayed ' +
    'at its level; its verdict follows who holds the connections: monitoring connections of many MongoClient instances ' +
    '(create one client per process), idle pooled ones (maxIdleTimeMS) or the cluster\'s own pools (ShardingTaskExecutorPool*). ' +
    'Every round the holders are classified (pool, driver monitors with their RTT connections, internal, pooltool\'s own; ' +
    'see conns list --help) and summed over every host, and a client-per-request leak is named with its evidence. The churn ' +
    'baseline per host is totalCreated over serverStatus.uptime, against the rate during the watch. Ctrl-C ends the watch with the summary.\n\n' +
    '--json prints the summary: {target, topology: {kind, setName?, sources, warnings, staleRouters, configMongosCount?, ' +
    'entry?, routerVersions?, replayOf?}, intervalMS, idleWindowMS, startedAt, durationMS, rounds, roundMS: {max, mean}, hosts: [{host, ' +
    'role, setName?, shard?, entry?, address?, aliases?, mongoVersion?, tags?, samples, unreachableRounds, state, ' +
    'reachedFromHere, lastError?, clockSkewMS?, current: {min, max, last}, totalCreatedRate: {max, mean}, created?, ' +
    'rejected?, maxIncoming?, usedPct: {max, last}, lockQueueTotal: {max, last}, lockWaitsPerSec: {max, mean}, ' +
    'lockWaitUsPerSec: {max, mean}, neverShrank, neverShrankDetail?, last?, pools?, holders, holdersUnavailable?, alerts, ' +
    'uptimeSec?, totalCreatedSinceStart?, createdPerSecSinceStart?}], alerts, alertCounts, clusterHolders?, verdicts: [{kind, holder?, host?, ' +
    'impliedClients?, verdict, evidence}], notes, interrupted} (clusterHolders and holders[] as in conns list --help). --ndjson streams {"type":"topology",…}, then one {"type":"sample", round, at, ' +
    'host, role, state, error?, reachedFromHere?, current, available, totalCreated, <fields this version sends>, ' +
    'totalCreatedRatePerSec?, maxIncoming?, usedPct?, lockQueue?: {total, readers, writers}, activeClients?, ' +
    'lockWaitsPerSec?, lockWaitUsPerSec?, clockSkewMS?, pools?, holders?, uptimeSec?, createdPerSecSinceStart?} per host per round, {"type":"alert",…}, ' +
    '{"type":"neverShrank",…} and {"type":"note", host, note} lines, and {"type":"summary",…} last. A figure the server ' +
    'does not send is absent, never 0.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017',
    "<%= config.bin %> <%= command.id %> --uri 'mongodb://localhost:27017/?directConnection=true'   # a member through kubectl port-forward",
    "<%= config.bin %> <%= command.id %> --interval 500ms --alert 'rate>50/s,current>80%'",
    '<%= config.bin %> <%= command.id %> --duration 10m --idle-window 2m --json > conns.json',
    '<%= config.bin %> <%= command.id %> --ndjson | jq -c \'select(.type=="sample") | [.host, .current]\'',
    '<%= config.bin %> <%= command.id %> --metrics-port 9216 --no-view   # Prometheus scrapes http://127.0.0.1:9216/metrics',
    '<%= config.bin %> <%= command.id %> --once > /var/lib/node_exporter/textfile/mongodb_conns.prom   # one exposition, for a textfile collector',
  ]

  static override flags = {
    interval: durationFlag({default: CONNS_DEFAULTS.intervalMS, summary: `Time between poll rounds (at least ${CONNS_DEFAULTS.minIntervalMS}ms), e.g. 500ms, 2s.`, helpGroup: 'WATCH'}),
    duration: durationFlag({summary: 'Stop after this long (a last round at the end), e.g. 30s, 10m. Default: until Ctrl-C or --count.', helpGroup: 'WATCH'}),
    count: Flags.integer({min: 1, summary: 'Stop after this many poll rounds.', helpGroup: 'WATCH'}),
    alert: Flags.string({
      summary: "Alert rules, e.g. 'rate>50/s,current>80%': rate (created/s or /m), current, available, active (count or % of current+available), rejected (since the previous poll).",
      helpGroup: 'WATCH',
    }),
    'idle-window': durationFlag({default: CONNS_DEFAULTS.idleWindowMS, summary: 'How long creation must stay at zero, with the count at its level, to flag a pool that never shrinks, e.g. 2m.', helpGroup: 'WATCH'}),
    holders: Flags.boolean({default: true, allowNo: true, summary: 'Read who holds the connections ($currentOp with idle connections) every round; --no-holders skips it.', helpGroup: 'WATCH'}),
    ndjson: Flags.boolean({default: false, exclusive: ['json'], summary: 'Stream one JSON sample per host per round (plus alert lines and the summary last), one per line.', helpGroup: 'OUTPUT'}),
    verbose: Flags.boolean({default: false, summary: "Print each poll round's duration on stderr.", helpGroup: 'OUTPUT'}),
    ...utcFlag,
    html: Flags.string({summary: 'Also write an HTML report of the watch to this file when it ends: absent or a regular file (checked before the watch starts); written atomically.', helpGroup: 'OUTPUT'}),
    discover: Flags.boolean({default: true, allowNo: true, summary: "Find every host of the cluster from the entry point; --no-discover polls the URI's hosts only.", helpGroup: 'CONNECTION'}),
    'sim-topology': Flags.string({options: [...SIM_TOPOLOGIES], default: CONNS_DEFAULTS.simTopology, summary: 'Embedded cluster only (no --uri): its shape.', helpGroup: 'CONNECTION'}),
    ...metricsFlags,
    once: Flags.boolean({...metricsFlags.once, exclusive: ['json', 'ndjson', 'html', 'duration', 'count', 'metrics-port']}),
    'top-holders': Flags.integer({min: 1, max: 1000, summary: `Holders named in metric labels, the most connections first; the rest are summed as "other" (default ${CONNS_DEFAULTS.metricsTopHolders}).`, helpGroup: 'METRICS'}),
  }

  /** Alerts and notes go to stderr even under --json: stdout keeps the JSON document. */
  private stderr(line: string): void {
    this.stderrText(line)
  }

  async run(): Promise<ConnsWatchResult> {
    const {flags} = this
    checkMetricsFlags(flags, {name: 'top-holders', value: flags['top-holders']})
    // --once: one round, its exposition on stdout.
    const options = flags.once ? {...toWatchOptions(flags), count: 1} : toWatchOptions(flags)
    // The watch's one file output; through the same check as every command's, before connecting.
    await checkOutputFiles([{flag: '--html', file: flags.html}])
    // Listening first: a port in use is said before the cluster is touched.
    const metricsExport = await MetricsExport.open(flags, (line) => this.stderr(line))
    try {
      return await this.watch(flags, options, metricsExport)
    } finally {
      await metricsExport?.close()
    }
  }

  private async watch(flags: ConnsWatch['flags'], options: ReturnType<typeof toWatchOptions>, metricsExport: MetricsExport | undefined): Promise<ConnsWatchResult> {
    const target = await this.openTarget({topology: flags['sim-topology'] as SimTopology})
    /** Every round, for the HTML report (hosts × rounds of small samples). */
    const rounds: RoundSample[] = []
    // --no-view (headless): nothing per round on stdout (a container's log keeps the summary at the end).
    const mode = this.outputMode(flags)
    let metrics: ConnsMetrics | undefined
    let view: ConnsLiveView | undefined
    const display = timeDisplayOf(flags.utc)
    const result = await runConnsWatch(
      target,
      options,
      {
        signal: this.interruptSignal,
        onTopology: (topology) => {
          if (metricsExport) {
            const cluster = metricsExport.clusterLabel(target, topology.setName)
            metrics = new ConnsMetrics({cluster, topHolders: flags['top-holders'] ?? CONNS_DEFAULTS.metricsTopHolders, privacy: metricsExport.privacy(target)})
            metricsExport.publish(metrics.families())
          }
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'topology', target: targetSummary(target), ...topology}))
          else if (mode === 'plain') this.stderr(`${renderTopology(topology)}\n${zoneNote(display)}`)
          else if (mode === 'live') view = new ConnsLiveView(`pooltool conns watch ${target.redactedUri} · ${describeTopology(topology, topology.hosts.length)} · every ${options.intervalMS} ms`, display)
        },
        onRound: (round) => {
          if (metrics) {
            metrics.observe(round)
            metricsExport?.publish(metrics.families())
          }
          if (flags.html !== undefined) rounds.push(round)
          // The live view shows the round time in its header; a stderr line would break the in-place redraw.
          if (flags.verbose && mode !== 'live') this.stderr(`round ${round.round}: ${round.roundMS} ms for ${round.hosts.length} hosts`)
          if (mode === 'ndjson') for (const line of ndjsonSamples(round)) this.log(line)
          else if (mode === 'plain') this.logFitted(renderPlainRound(round, display))
          else if (view) {
            view.push(round)
            this.log(view.frame(stdoutLayout()))
          }
        },
        onAlert: (alert) => {
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'alert', ...alert}))
          else if (view) view.note(renderAlert(alert, display))
          else this.stderr(renderAlert(alert, display))
        },
        onClockSkew: (host, note) => {
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'note', host, note}))
          else if (view) view.note(note, false)
          else this.stderr(note)
        },
        onNeverShrank: (host, detail) => {
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'neverShrank', host, ...detail}))
          else if (view) view.note(renderNeverShrank(host, detail), false)
          else this.stderr(renderNeverShrank(host, detail))
        },
      },
    )
    // A report that cannot be written (a full disk) must not take the watch's summary with it: said after it.
    const htmlFailure = flags.html === undefined ? undefined : await writeTextAtomically(flags.html, renderConnsHtml(connsReportData(result, rounds, display), await loadChartLibrary()), '--html').then(() => undefined, (error: PoolToolError) => error)
    if (mode === 'ndjson') this.log(JSON.stringify({type: 'summary', ...result}))
    else if (mode === 'once') {
      if (metricsExport) this.log(await metricsExport.onceText())
    }
    else if (mode !== 'json') this.logFitted(renderWatchSummary(result, stdoutLayout()))
    // Ctrl-C is how an open-ended watch ends; it only counts as an interruption when a bound was asked for.
    if (result.interrupted && (options.durationMS !== undefined || options.count !== undefined)) process.exitCode = this.interruptedExitCode
    if (htmlFailure) this.sayFailureAfterResult(htmlFailure)
    return result
  }
}
