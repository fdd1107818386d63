/**
 * Polls `serverStatus` (its connections and locks sections only) on every
 * host of the cluster, each over its own direct connection through the read
 * layer, while a bench run goes on: connections before / peak / at end /
 * after, totalCreated growth and lock waits over the measured interval.
 * The hosts are the one discovery's (src/probes/discovery.ts), so bench names
 * the same hosts as conns, locks and auth. A host that refuses (no privilege)
 * or fails is reported with the reason, never fails the run.
 */
import {toPoolToolError} from '../mongo/errors.js'
import {clockSkewMS} from '../probes/server-clock-skew.js'
import {HostConnection, resolvingFirst} from '../probes/host-connection.js'
import type {Reading, ServerReader} from '../probes/reader.js'
import {type ConnectionsStatus, diffLockWaits, type LockWaitTotals, parseConnections, parseLockWaits, type ServerStatusSection} from '../probes/server-status.js'
import {type ClusterHost, connectAddress} from '../probes/topology.js'
import type {Target} from '../target.js'
import type {ServerHostResult} from './types.js'

/** The serverStatus sections the sampler parses, and nothing else. */
export const SAMPLED_SECTIONS: readonly ServerStatusSection[] = ['connections', 'locks']

/** What one serverStatus reading of a host says, parsed once. */
interface HostSample {
  connections?: ConnectionsStatus
  locks?: LockWaitTotals
}

interface HostSamples {
  host: ClusterHost
  connection: HostConnection
  before?: HostSample
  measureStart?: HostSample
  atEnd?: HostSample
  after?: HostSample
  peakCurrent?: number
  /** connections.current of the latest poll; unset when that poll failed (unknown, not 0). */
  latestCurrent?: number
  /** Permanent: the host will not answer serverStatus for us. */
  unavailable?: string
  /** The last transient failure, reported when a figure is missing because of it. */
  lastError?: string
  /** From the first answer (src/probes/server-clock-skew.ts). */
  clockSkewMS?: number
}

type Slot = 'before' | 'measureStart' | 'atEnd' | 'after'

/** The appName suffix of the sampler's connections (`pooltool-probe`), so they can be told from the load. */
export const SAMPLER_PURPOSE = 'probe'

/**
 * Connect timeout of a sampled host: a member that is not reachable from here (a port-forward
 * reaches only the entry) must not hold the run's start for the target's whole --timeout-ms.
 */
const SAMPLED_HOST_TIMEOUT_MS = 3000

/** The server notices closed sockets asynchronously: how long to let it before the "after" sample. */
const AFTER_CLOSE_SETTLE_MS = 150

export class ServerSampler {
  private timer?: NodeJS.Timeout
  private polling?: Promise<void>

  private constructor(private readonly hosts: HostSamples[], private readonly secrets: readonly string[]) {}

  /** Open a reader on every host and take the "before" sample. */
  static async open(target: Target, hosts: readonly ClusterHost[]): Promise<ServerSampler> {
    const timeoutMs = Math.min(target.connection.timeoutMs, SAMPLED_HOST_TIMEOUT_MS)
    const sampler = new ServerSampler(
      hosts.map((host) => {
        const address = connectAddress(host)
        return {host, connection: new HostConnection(resolvingFirst(address, () => target.openReader(address, SAMPLER_PURPOSE, {timeoutMs})))}
      }),
      target.secrets,
    )
    await sampler.sampleAll('before')
    return sampler
  }

  private async sample(entry: HostSamples): Promise<HostSample | undefined> {
    if (entry.unavailable) return undefined
    let reading: Reading<unknown>
    try {
      reading = await readStatus(await entry.connection.reader())
    } catch (error) {
      entry.latestCurrent = undefined
      const failure = toPoolToolError(error, {target: entry.host.host, secrets: this.secrets})
      // Missing privileges will not change during the run: stop asking. A
      // network error (host restarting) only costs this sample.
      if (failure.code === 'UNAUTHORIZED' || failure.code === 'AUTH_FAILED') entry.unavailable = failure.message
      else {
        entry.lastError = failure.message
        entry.connection.failed()
      }
      return undefined
    }
    entry.clockSkewMS ??= clockSkewMS(reading)
    const sample = reading.value as HostSample
    const current = sample.connections?.current
    entry.latestCurrent = current
    if (current !== undefined && (entry.peakCurrent === undefined || current > entry.peakCurrent)) entry.peakCurrent = current
    return sample
  }

  private async sampleAll(slot?: Slot): Promise<void> {
    await Promise.all(
      this.hosts.map(async (entry) => {
        const sample = await this.sample(entry)
        if (slot && sample) entry[slot] = sample
      }),
    )
  }

  /** Poll every `intervalMS` for the peak until `markEnd`. */
  startPolling(intervalMS: number): void {
    this.timer = setInterval(() => {
      this.polling ??= this.sampleAll().finally(() => {
        this.polling = undefined
      })
    }, intervalMS)
  }

  async markMeasureStart(): Promise<void> {
    await this.sampleAll('measureStart')
  }

  async markEnd(): Promise<void> {
    clearInterval(this.timer)
    await this.polling
    await this.sampleAll('atEnd')
  }

  /** Take the "after" sample, once pooltool's load clients are closed. */
  async sampleAfter(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, AFTER_CLOSE_SETTLE_MS))
    await this.sampleAll('after')
  }

  /** Per host, its connections at the latest poll; a host whose figure is unknown is left out. */
  currentConnections(): Record<string, number> {
    const current: Record<string, number> = {}
    for (const entry of this.hosts) if (entry.latestCurrent !== undefined) current[entry.host.host] = entry.latestCurrent
    return current
  }

  /** Per host, what the samples taken so far say (a sample cut short leaves its figure out). */
  results(): ServerHostResult[] {
    return this.hosts.map((entry) => toHostResult(entry))
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    await Promise.allSettled(this.hosts.map((entry) => entry.connection.close()))
  }
}

/** serverStatus with the sampled sections, parsed. */
async function readStatus(reader: ServerReader): Promise<Reading<HostSample>> {
  const reading = await reader.serverStatus(SAMPLED_SECTIONS)
  return {...reading, value: {connections: parseConnections(reading.value), locks: parseLockWaits(reading.value)}}
}

function toHostResult(entry: HostSamples): ServerHostResult {
  const start = entry.measureStart?.connections
  const end = entry.atEnd?.connections
  const result: ServerHostResult = {
    host: entry.host.host,
    role: entry.host.role,
    ...(entry.host.setName === undefined ? {} : {setName: entry.host.setName}),
    ...(entry.host.shard === undefined ? {} : {shard: entry.host.shard}),
    connectionsBefore: entry.before?.connections?.current,
    connectionsPeak: entry.peakCurrent,
    connectionsAtEnd: end?.current,
    connectionsAfter: entry.after?.connections?.current,
    totalCreatedDelta: start && end ? end.totalCreated - start.totalCreated : undefined,
  }
  const locksStart = entry.measureStart?.locks
  const locksEnd = entry.atEnd?.locks
  if (locksStart && locksEnd) result.lockWaits = diffLockWaits(locksStart, locksEnd)
  if (entry.clockSkewMS !== undefined) result.clockSkewMS = entry.clockSkewMS
  if (entry.unavailable) result.unavailable = entry.unavailable
  else if (result.totalCreatedDelta === undefined && entry.lastError) result.unavailable = entry.lastError
  return result
}
