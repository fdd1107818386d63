/**
 * A watch's Prometheus export, as the commands drive it: the endpoint opened
 * before the watch connects (a port in use is said at once), each completed
 * round published, `--once`'s exposition rendered at the end, and the port
 * freed however the watch ends.
 */
import type {Target} from '../target.js'
import {type MetricFamily, renderExposition} from '../reporters/openmetrics/families.js'
import {LabelPrivacy} from '../reporters/openmetrics/label-privacy.js'
import {DEFAULT_METRICS_HOST} from './metrics-flags.js'
import {MetricsEndpoint} from './metrics-endpoint.js'

export interface MetricsExportFlags {
  'metrics-port'?: number
  'metrics-host'?: string
  once: boolean
  'metrics-cluster'?: string
  'redact-hosts': boolean
}

export class MetricsExport {
  private pending: Promise<void> = Promise.resolve()
  private latest: readonly MetricFamily[] = []
  private privacyOf: LabelPrivacy | undefined

  private constructor(
    private readonly flags: MetricsExportFlags,
    private readonly endpoint: MetricsEndpoint | undefined,
    private readonly say: (line: string) => void,
  ) {}

  /** undefined when no metrics are asked for. Listens now, before the watch connects. */
  static async open(flags: MetricsExportFlags, say: (line: string) => void): Promise<MetricsExport | undefined> {
    if (flags['metrics-port'] === undefined && !flags.once) return undefined
    const host = flags['metrics-host'] ?? DEFAULT_METRICS_HOST
    const endpoint = flags['metrics-port'] === undefined ? undefined : await MetricsEndpoint.start(host, flags['metrics-port'])
    if (endpoint) {
      const exposed = host === DEFAULT_METRICS_HOST ? '' : ' (reachable from other machines: --metrics-host)'
      say(`metrics: serving ${endpoint.url}${exposed}`)
    }
    return new MetricsExport(flags, endpoint, say)
  }

  /** Labels' privacy for this target: its secrets scrubbed, hosts aliased with --redact-hosts. */
  privacy(target: Target): LabelPrivacy {
    this.privacyOf ??= new LabelPrivacy({redactHosts: this.flags['redact-hosts'], secrets: target.secrets})
    return this.privacyOf
  }

  /**
   * The `cluster` label: --metrics-cluster, else the replica set's name, else the first host of the URI (aliased
   * with --redact-hosts). Both watches take it from the URI as the user wrote it, so conns watch and locks watch
   * of one cluster carry one label (the dashboard's cluster variable joins them).
   */
  clusterLabel(target: Target, setName: string | undefined): string {
    const privacy = this.privacy(target)
    if (this.flags['metrics-cluster'] !== undefined) return this.flags['metrics-cluster']
    if (setName !== undefined) return privacy.text(setName)
    const entry = target.seedHosts[0]
    return entry === undefined ? 'unknown' : privacy.host(entry)
  }

  /** A completed round: what scrapes get from now on. Rendering runs off the watch's path; rounds publish in order. */
  publish(families: readonly MetricFamily[]): void {
    this.latest = families
    if (!this.endpoint) return
    const endpoint = this.endpoint
    this.pending = this.pending.then(() => endpoint.publish(families)).catch((error: unknown) => {
      this.say(`metrics: round not published: ${error instanceof Error ? error.message : String(error)}`)
    })
  }

  /** --once: the last round's exposition, in the Prometheus text format, without its final newline (the caller's log adds one). */
  async onceText(): Promise<string> {
    return (await renderExposition(this.latest, 'prometheus')).text.trimEnd()
  }

  /** Waits for the last publish, then frees the port (open scrapes included). */
  async close(): Promise<void> {
    await this.pending
    await this.endpoint?.close()
  }
}
