import {Flags} from '@oclif/core'

import {TargetCommand} from '../../src/cli/base-command.js'
import {durationFlag, utcFlag} from '../../src/cli/flags.js'
import {stdoutLayout} from '../../src/cli/terminal.js'
import {embeddedLocksCluster, embeddedLocksFlags, lockExpiryFlag, lockFilterFlags} from '../../src/cli/locks-flags.js'
import {LOCKS_DEFAULTS} from '../../src/defaults.js'
import {EXIT_CODES, type PoolToolError, usageError} from '../../src/errors.js'
import type {LockPollFailureReason, LocksWatchResult} from '../../src/locks/types.js'
import {nodeStatusOf} from '../../src/locks/nodes.js'
import {runLocksWatch} from '../../src/locks/watch.js'
import {expiryMsOf, toLockFilter} from '../../src/parse/lock-filter.js'
import {checkOutputFiles, writeTextAtomically} from '../../src/output.js'
import {loadChartLibrary} from '../../src/report/html-assets.js'
import {locksReportData} from '../../src/report/watch-html-data.js'
import {timeDisplayOf, timeOfDay, zoneNote} from '../../src/reporters/time-of-day.js'
import {terminalLine} from '../../src/reporters/escape.js'
import {UNLIMITED} from '../../src/reporters/fit.js'
import {renderLocksHtml} from '../../src/reporters/html.js'
import {LocksLiveView, renderLockEvent, renderLockPollFailure, renderLocksWatch} from '../../src/reporters/locks.js'
import {nodeLockEpisodeEventText, nodeLockWaitRatesText} from '../../src/reporters/node-lock-episodes.js'
import {targetSummary} from '../../src/result.js'
import {MetricsExport} from '../../src/cli/metrics-export.js'
import {checkMetricsFlags, metricsFlags} from '../../src/cli/metrics-flags.js'
import {LocksMetrics} from '../../src/reporters/openmetrics/locks.js'

export default class LocksWatch extends TargetCommand<typeof LocksWatch> {
  static override summary = 'Poll the locks on every topology: blocking episodes on each node, and a sharded cluster\'s lock transitions.'

  static override description =
    'Works on every topology. Every --interval it reads the node locks as locks list does (a standalone\'s or replica ' +
    'set\'s every data-bearing member; a sharded cluster\'s shard and config primaries, found again each poll so a ' +
    'failover is followed) and follows blocking episodes: an episode starts at the first poll where operations wait on ' +
    'a node (behind a root blocker, or with no visible blocker) and ends at the first where none does; its duration ' +
    'is within one poll interval of the truth (durationMinMS–durationMaxMS bound it), with the root blocker (and the ' +
    'roots it had in turn), peak waiters and resources. Lock waits per resource and mode come per interval (from ' +
    'serverStatus.locks) and summed over the watch. A node that cannot be read is said (stderr) and counted; its locks ' +
    'are unknown that poll.\n\n' +
    'On a sharded cluster it also polls config.locks (with the holders\' pings), through a mongos, on a config-server ' +
    'member, or (entered through a shard member) on the config server\'s primary, ' +
    'and prints what happens in time order: first the locks held (or stale) at the start with their verdicts, then ' +
    'acquired, released (with its hold time), overtaken (a stale or ping-less holder\'s lock taken by someone else) ' +
    'and stale (a holder stopped pinging for the expiry). Hold times come from the lock documents on the server\'s ' +
    'clock: from the lock\'s `when` to the first poll that saw it free, or to the next holder\'s `when` (a changed ' +
    '`ts`/`when` between two polls is a release and re-take no poll saw), shown as a range ("1.0s–1.5s"); a hold ' +
    'taken and freed between two polls is only bounded by that gap ("≤ 480ms (between polls)") and kept out of the ' +
    'percentiles. A poll that sees a hold begun in the last two intervals, or a transition, starts follow-up reads of the ' +
    'locks until the next poll (50 ms later, the delay doubling while nothing changes; at most 4 per interval on average, ' +
    'no node reads) to pin the end of a short hold (followUps in the JSON). Runs the whole --duration (its last poll at the deadline) or until Ctrl-C, then prints hold-time ' +
    'percentiles per lock and the episodes per node. Each poll is bounded by one --timeout-ms that all its reads share (on a sharded cluster ' +
    'finding each set\'s primary and reading it included; a node that misses it is unknown for that poll, its error naming the bound); a poll that fails (router or config server ' +
    'unreachable, a stall, a lost privilege; on a standalone or replica set: no node answered) is printed on stderr and counted in the summary (failedPolls, by ' +
    'reason), and the watch goes on. On 6.1+ it follows DDL operations in $currentOp instead of config.locks. On a terminal it shows ' +
    'the locks held now with their verdicts and one line per node (its root blocker, its waiters, or unknown), redrawn in place each poll, and the latest events under them; off a ' +
    'terminal one line per event and episode; --ndjson streams start, event, pollFailure, nodes (each poll\'s node states), ' +
    'episode, waitRates, nodeUnread and summary lines. Read only: the killOp hints are for a human, pooltool never kills.\n\n' +
    'JSON: {target, topology: standalone|replset|sharded, distributedLocks: read|"not applicable: …"|"unknown: …", ' +
    'serverVersion, message, startedAt, durationMS, intervalMS, polls, failedPolls, ' +
    'failedPollsByReason, pollFailures: [{at, poll, reason, error}], pollTimeoutMS (the one bound of each poll), nodeEpisodes: {episodes: [{id, node, ' +
    'firstSeenAt, previousPollAt, inProgressAtFirstPoll, lastSeenAt, endedAt, durationMS, durationMinMS, durationMaxMS, ' +
    'root, roots, peakWaiters, resources, longestWait, longestSeenWaiting, polls, lockInfoPolls, confirmedByLockInfo, ' +
    'mergedInto}], episodesTotal, episodesNotKept, maxEpisodesKept, nodes: [{node, polls, episodes, openEpisodes, ' +
    'blockedMS, worstEpisode, rateIntervalMS, resetIntervals}], waitRates}, nodePolls: {hosts, failedReads, ' +
    'failedReadsByHost, latest: [{at, poll, host, role, error}]}, and on a sharded cluster: entry, clockSkewMS?, model, ' +
    'events: [{at, kind: held-at-start|' +
    'acquired|released|overtaken|stale|waiting, name, process, who, why, verdict?, since?, whenMeans?, previousProcess?, ' +
    'holdMS?, holdMinMS?, holdMaxMS?, holdBetweenPolls?}], locks: [{name, acquired, released, overtaken, holdMS: {count, p50, p90, ' +
    'p99, max}, holdMinMS: {bound: lower, count, p50, p90, p99, max}, holdMaxMS: {bound: upper, …}, betweenPolls: {count, maxMS}}], ' +
    'followUps: {reads, failed}; notes, interrupted}. A hold lies between holdMinMS (its start to the last read that saw it) and holdMaxMS (to the first that did not).'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --duration 60s',
    '<%= config.bin %> <%= command.id %> --uri "mongodb://db1:27017,db2:27017/?replicaSet=rs0" --interval 250ms --ndjson   # blocking episodes on every member',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --db orders --interval 200ms',
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --duration 5m --json > locks.json',
    '<%= config.bin %> <%= command.id %> --metrics-port 9217 --no-view   # Prometheus scrapes http://127.0.0.1:9217/metrics',
  ]

  static override flags = {
    duration: durationFlag({summary: 'Stop after this long, e.g. 30s, 5m (default: until Ctrl-C).'}),
    interval: durationFlag({default: LOCKS_DEFAULTS.intervalMS, summary: `Time between polls (at least ${LOCKS_DEFAULTS.minIntervalMS}ms), e.g. 200ms, 1s.`}),
    ...lockFilterFlags,
    ...lockExpiryFlag,
    ...utcFlag,
    html: Flags.string({summary: 'Also write an HTML report of the watch to this file when it ends: absent or a regular file (checked before the watch starts); written atomically.', helpGroup: 'OUTPUT'}),
    ndjson: Flags.boolean({default: false, exclusive: ['json'], summary: 'Stream JSON lines: {"type":"start"}, one {"type":"event"} per transition, {"type":"pollFailure"}, {"type":"nodes"} per poll, {"type":"episode"}, {"type":"waitRates"}, {"type":"nodeUnread"}, and {"type":"summary"} last.', helpGroup: 'OUTPUT'}),
    ...embeddedLocksFlags,
    ...metricsFlags,
    'top-locks': Flags.integer({min: 1, max: 1000, summary: `Distributed locks named in metric labels, the longest held first (default ${LOCKS_DEFAULTS.metricsTopLocks}); all are counted.`, helpGroup: 'METRICS'}),
  }

  async run(): Promise<LocksWatchResult> {
    checkMetricsFlags(this.flags, {name: 'top-locks', value: this.flags['top-locks']})
    // Listening first: a port in use is said before the cluster is touched.
    const metricsExport = await MetricsExport.open(this.flags, (line) => this.stderrText(line))
    try {
      return await this.watch(metricsExport)
    } finally {
      await metricsExport?.close()
    }
  }

  private async watch(metricsExport: MetricsExport | undefined): Promise<LocksWatchResult> {
    const {flags} = this
    const intervalMs = flags.interval
    if (intervalMs < LOCKS_DEFAULTS.minIntervalMS) throw usageError(`--interval ${intervalMs}ms is too short`, `poll at most every ${LOCKS_DEFAULTS.minIntervalMS}ms`)
    // --once: one poll (the watch stops at the first poll that starts at its deadline).
    const durationMs = flags.once ? 0 : flags.duration
    if (!flags.once && durationMs !== undefined && durationMs <= 0) throw usageError('--duration must be above zero', 'e.g. --duration 30s, or leave it out to watch until Ctrl-C')
    const filter = toLockFilter(flags)
    const expiryMS = expiryMsOf(flags)
    // The watch's one file output; through the same check as every command's, before connecting.
    await checkOutputFiles([{flag: '--html', file: flags.html}])
    const target = await this.openTarget(embeddedLocksCluster(flags))
    // live: a terminal (the held locks redrawn each poll, events under them); plain: event lines; ndjson: a stream.
    // --no-view (headless): nothing per poll on stdout (a container's log keeps the summary at the end).
    const mode = this.outputMode(flags)
    let metrics: LocksMetrics | undefined
    const startMetrics = (setName: string | undefined) => {
      if (!metricsExport || metrics) return
      const cluster = metricsExport.clusterLabel(target, setName)
      metrics = new LocksMetrics({cluster, topLocks: flags['top-locks'] ?? LOCKS_DEFAULTS.metricsTopLocks, privacy: metricsExport.privacy(target)})
    }
    let serverVersion = ''
    const display = timeDisplayOf(flags.utc)
    let view: LocksLiveView | undefined
    // Nodes polled: the live view is redrawn once their reads are in (after the distributed locks' poll, when both are read).
    let nodesPolled = false
    const result = await runLocksWatch(
      target,
      {durationMS: durationMs, intervalMS: intervalMs, filter, expiryMS},
      {
        signal: this.interruptSignal,
        onStart: (info) => {
          if (info.topology !== 'replset') {
            startMetrics(undefined)
            if (metrics) metricsExport?.publish(metrics.families())
          }
          serverVersion = info.serverVersion
          nodesPolled = info.nodes.length > 0
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'start', target: targetSummary(target), ...info}))
          else if (mode === 'plain') this.logFitted(`${target.redactedUri}: ${info.message}\n${zoneNote(display)}`)
          else if (mode === 'live') view = new LocksLiveView(`pooltool locks watch ${target.redactedUri} · ${info.message}`, serverVersion, display)
        },
        onEvent: (event) => {
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'event', ...event}))
          else if (mode === 'plain') this.logFitted(renderLockEvent(event, serverVersion, display))
          else view?.event(renderLockEvent(event, serverVersion, display))
        },
        onPoll: (poll) => {
          metrics?.observePoll(poll)
          if (!view) return
          view.poll(poll)
          if (!nodesPolled) this.log(view.frame(stdoutLayout()))
        },
        onNodes: (poll) => {
          // A replica set is labelled by its name, which its members' reads carry.
          startMetrics(poll.nodes.find((n) => n.setName !== undefined)?.setName)
          metrics?.observeNodes(poll)
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'nodes', poll: poll.poll, nodes: poll.nodes.map(nodeStatusOf)}))
          if (!view) return
          view.nodes(poll)
          this.log(view.frame(stdoutLayout()))
        },
        onEpisode: (event) => {
          metrics?.observeEpisode(event)
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'episode', ...event}))
          else if (mode === 'plain') this.log(nodeLockEpisodeEventText(event, stdoutLayout(), display))
          else view?.event(nodeLockEpisodeEventText(event, UNLIMITED, display))
        },
        // A quiet interval prints nothing (and streams nothing): the summary sums the waits.
        onWaitRates: (record) => {
          if (!record.reset && record.rows.length === 0) return
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'waitRates', ...record}))
          else if (mode === 'plain') {
            const line = nodeLockWaitRatesText(record, stdoutLayout(), display)
            if (line !== null) this.log(line)
          }
        },
        onNodeUnread: (failure) => {
          const line = `${timeOfDay(failure.at, display, true)} node ${terminalLine(failure.host)} (${failure.role}) not read at poll ${failure.poll}: ${terminalLine(failure.error.message)}; its locks are unknown this poll`
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'nodeUnread', ...failure}))
          else if (mode === 'plain') this.stderrText(line)
          else view?.event(line)
        },
        // stderr keeps stdout's transitions clean (the live view lists them among its events); under --json they are in the result.
        onPollEnd: (end) => {
          startMetrics(undefined)
          if (!metrics) return
          metrics.observePollEnd(end)
          metricsExport?.publish(metrics.families())
        },
        onPollFailed: (failure) => {
          if (mode === 'ndjson') this.log(JSON.stringify({type: 'pollFailure', ...failure}))
          else if (mode === 'plain') this.stderrText(renderLockPollFailure(failure, display))
          else view?.event(renderLockPollFailure(failure, display))
        },
      },
    )
    // A report that cannot be written (a full disk) must not take the watch's summary with it: said after it.
    const htmlFailure = flags.html === undefined ? undefined : await writeTextAtomically(flags.html, renderLocksHtml(locksReportData(result), await loadChartLibrary()), '--html').then(() => undefined, (error: PoolToolError) => error)
    if (mode === 'ndjson') this.log(JSON.stringify({type: 'summary', ...result}))
    else if (mode === 'once') {
      if (metricsExport) this.log(await metricsExport.onceText())
    } else if (mode !== 'json') this.logFitted(renderLocksWatch(result, stdoutLayout()))
    process.exitCode = watchExitCode(result, durationMs !== undefined, this.interruptedExitCode)
    if (htmlFailure) this.sayFailureAfterResult(htmlFailure)
    return result
  }

}


/** Failure reasons → the exit code of their class (README exit-code table). */
const EXIT_CODE_OF_REASON: Record<LockPollFailureReason, number> = {
  unreachable: EXIT_CODES.unreachable,
  timeout: EXIT_CODES.unreachable,
  unauthorized: EXIT_CODES.unauthorized,
  'server-error': EXIT_CODES.serverError,
}

/**
 * 0 when the watch ran its course, failed polls included (they are in the summary);
 * the stop signal's code when Ctrl-C cut a --duration short (an open-ended watch ends
 * that way, so 0 then); and, when not one poll answered, the class of the last failure:
 * the watch saw nothing, and a script must not read that as "no lock moved".
 */
function watchExitCode(result: LocksWatchResult, bounded: boolean, interruptedExitCode: number): number {
  if (result.interrupted) return bounded ? interruptedExitCode : 0
  const last = result.pollFailures.at(-1)
  if (last && result.failedPolls === result.polls) return EXIT_CODE_OF_REASON[last.reason]
  return 0
}
