/**
 * The flags the watch commands share for their Prometheus export:
 * `--metrics-port` serves /metrics while the watch runs, `--once` prints one
 * exposition to stdout (a cron job or node_exporter's textfile collector),
 * `--no-view` runs headless (a container), and the label controls.
 */
import {Flags} from '@oclif/core'

import {usageError} from '../errors.js'

export const DEFAULT_METRICS_HOST = '127.0.0.1'

export const metricsFlags = {
  'metrics-port': Flags.integer({
    min: 0,
    max: 65535,
    exclusive: ['once'],
    summary: 'Serve Prometheus metrics on http://<metrics-host>:PORT/metrics while watching (OpenMetrics when the scraper asks for it); 0 picks a free port, printed on stderr.',
    helpGroup: 'METRICS',
  }),
  'metrics-host': Flags.string({
    summary: `Address the metrics endpoint listens on (default ${DEFAULT_METRICS_HOST}); anything else exposes it to other machines (0.0.0.0 in a container).`,
    helpGroup: 'METRICS',
  }),
  once: Flags.boolean({
    default: false,
    exclusive: ['json', 'ndjson', 'html', 'duration'],
    summary: 'Poll once and print one Prometheus exposition to stdout, then exit (a cron job or a textfile collector).',
    helpGroup: 'METRICS',
  }),
  'metrics-cluster': Flags.string({
    summary: 'The cluster label of every series (default: the replica set name, else the first host of the URI).',
    helpGroup: 'METRICS',
  }),
  'redact-hosts': Flags.boolean({
    default: false,
    summary: 'In metric labels, replace host names and client addresses with stable aliases (host-1.redacted:27017), ports kept.',
    helpGroup: 'METRICS',
  }),
  view: Flags.boolean({
    default: true,
    allowNo: true,
    summary: 'Show the watch on stdout; --no-view runs headless (no live view or per-poll lines; the summary still prints at the end).',
    helpGroup: 'OUTPUT',
  }),
}

/** The exposition flags that need an exporter: refused when neither --metrics-port nor --once asks for metrics. */
export function checkMetricsFlags(flags: {'metrics-port'?: number; 'metrics-host'?: string; once: boolean; 'metrics-cluster'?: string; 'redact-hosts': boolean}, topFlag?: {name: string; value: number | undefined}): void {
  if (flags['metrics-host'] !== undefined && flags['metrics-port'] === undefined) throw usageError('--metrics-host needs --metrics-port', 'e.g. --metrics-port 9216 --metrics-host 0.0.0.0')
  const exporting = flags['metrics-port'] !== undefined || flags.once
  if (exporting) return
  const orphan = flags['metrics-cluster'] !== undefined ? '--metrics-cluster' : flags['redact-hosts'] ? '--redact-hosts' : topFlag?.value !== undefined ? `--${topFlag.name}` : undefined
  if (orphan) throw usageError(`${orphan} shapes metric labels, and no metrics are asked for`, 'add --metrics-port PORT (serve /metrics) or --once (print one exposition)')
}
