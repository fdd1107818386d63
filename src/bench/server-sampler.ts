/**
 * Polls `serverStatus` on every host of the target over its own direct
 * connection while a bench run goes on: connections before / peak / at end /
 * after, totalCreated growth and lock waits over the measured interval.
 * A host that refuses (no privilege) or fails is reported with the reason,
 * never fails the run.
 */
import {createHostClient, type ClientSettings, type MongoClient} from '../mongo/client.js'
import type {Document} from '../mongo/driver.js'
import {toPoolToolError} from '../mongo/errors.js'
import {diffLockWaits, type LockWaitTotals, parseConnections, parseLockWaits} from '../probes/server-status.js'
import type {ServerHostResult} from './types.js'

interface HostSamples {
  host: string
  client: MongoClient
  before?: Document
  measureStart?: Document
  atEnd?: Document
  after?: Document
  peakCurrent?: number
  /** Permanent: the host will not answer serverStatus for us. */
  unavailable?: string
  /** The last transient failure, reported when a figure is missing because of it. */
  lastError?: string
}

export class ServerSampler {
  private timer?: NodeJS.Timeout
  private polling?: Promise<void>

  private constructor(private readonly hosts: HostSamples[], private readonly secrets: readonly string[]) {}

  /** Connect to every host and take the "before" sample. */
  static async open(settings: Omit<ClientSettings, 'pool'>, hosts: readonly string[], secrets: readonly string[]): Promise<ServerSampler> {
    const sampler = new ServerSampler(
      hosts.map((host) => ({host, client: createHostClient({...settings, appName: `${settings.appName}-probe`}, host)})),
      secrets,
    )
    await sampler.sampleAll('before')
    return sampler
  }

  private async sample(entry: HostSamples): Promise<Document | undefined> {
    if (entry.unavailable) return undefined
    try {
      const status = await entry.client.db('admin').command({serverStatus: 1, repl: 0, metrics: 0, wiredTiger: 0})
      const current = parseConnections(status)?.current
      if (current !== undefined && (entry.peakCurrent === undefined || current > entry.peakCurrent)) entry.peakCurrent = current
      return status
    } catch (error) {
      const failure = toPoolToolError(error, {target: entry.host, secrets: this.secrets})
      // Missing privileges will not change during the run: stop asking. A
      // network error (host restarting) only costs this sample.
      if (failure.code === 'UNAUTHORIZED' || failure.code === 'AUTH_FAILED') entry.unavailable = failure.message
      else entry.lastError = failure.message
      return undefined
    }
  }

  private async sampleAll(slot?: 'before' | 'measureStart' | 'atEnd' | 'after'): Promise<void> {
    await Promise.all(
      this.hosts.map(async (entry) => {
        const status = await this.sample(entry)
        if (slot && status) entry[slot] = status
      }),
    )
  }

  /** Poll every `intervalMs` for the peak until `markEnd`. */
  startPolling(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.polling ??= this.sampleAll().finally(() => {
        this.polling = undefined
      })
    }, intervalMs)
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
    // The server notices closed sockets asynchronously; give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 150))
    await this.sampleAll('after')
  }

  /** Per host, what the samples taken so far say (a sample cut short leaves its figure out). */
  results(): ServerHostResult[] {
    return this.hosts.map((entry) => toHostResult(entry))
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    await Promise.allSettled(this.hosts.map((entry) => entry.client.close()))
  }
}

function toHostResult(entry: HostSamples): ServerHostResult {
  const conns = (doc?: Document) => (doc ? parseConnections(doc) : undefined)
  const start = conns(entry.measureStart)
  const end = conns(entry.atEnd)
  const result: ServerHostResult = {
    host: entry.host,
    connectionsBefore: conns(entry.before)?.current,
    connectionsPeak: entry.peakCurrent,
    connectionsAtEnd: end?.current,
    connectionsAfter: conns(entry.after)?.current,
    totalCreatedDelta: start && end ? end.totalCreated - start.totalCreated : undefined,
  }
  const locksStart: LockWaitTotals | undefined = entry.measureStart ? parseLockWaits(entry.measureStart) : undefined
  const locksEnd: LockWaitTotals | undefined = entry.atEnd ? parseLockWaits(entry.atEnd) : undefined
  if (locksStart && locksEnd) result.lockWaits = diffLockWaits(locksStart, locksEnd)
  if (entry.unavailable) result.unavailable = entry.unavailable
  else if (result.totalCreatedDelta === undefined && entry.lastError) result.unavailable = entry.lastError
  return result
}
