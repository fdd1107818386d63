/**
 * Per-host running figures of a watch: turns each poll answer into a sample
 * (rates per second since the host's previous answer, counter resets after a
 * restart) and keeps what the summary needs in O(1) memory per host: min / max
 * / last current, max and mean creation rate, rejections, the connection
 * limit and % used, lock queues and lock-wait rates, the never-shrank
 * detector and the last holders and pools.
 */
import {type ConnectionsStatus, type LockWaitTotals} from '../probes/server-status.js'
import type {AlertInputs} from './alerts.js'
import {counterDefects} from './counter-defects.js'
import {explainIncomingLimit, type IncomingLimit} from './incoming-limit.js'
import {NeverShrankDetector} from './never-shrank.js'
import type {PollAnswer} from './poller.js'
import type {ClusterHost, ConnPoolStatsSummary, ConnsHostSummary, Holder, HostIdentity, HostSample, HostState, NeverShrankDetail} from './types.js'

const round2 = (n: number) => Math.round(n * 100) / 100

/**
 * The connection limit the server applies now: what it reports as available
 * is that limit minus what it holds (current, and with the 8.x establishment
 * rate limiter the connections still queued), so the sum is the limit.
 */
export function connectionLimit(c: Pick<ConnectionsStatus, 'current' | 'available' | 'queuedForEstablishment'>): {maxIncoming: number; usedPct?: number} {
  const maxIncoming = c.current + c.available + (c.queuedForEstablishment ?? 0)
  return maxIncoming > 0 ? {maxIncoming, usedPct: round2((100 * c.current) / maxIncoming)} : {maxIncoming}
}

/** Highest value and mean over time of a rate. */
class RateStats {
  private max?: number
  private amount = 0
  private ms = 0

  add(amount: number, dtMS: number): number {
    const perSec = (amount * 1000) / dtMS
    this.max = Math.max(this.max ?? perSec, perSec)
    this.amount += amount
    this.ms += dtMS
    return perSec
  }

  summary(): {max?: number; mean?: number} {
    return {max: this.max === undefined ? undefined : round2(this.max), mean: this.ms > 0 ? round2((this.amount * 1000) / this.ms) : undefined}
  }
}

/** Highest and last value of a level. */
class LevelStats {
  private max?: number
  private last?: number

  add(value: number): void {
    this.max = Math.max(this.max ?? value, value)
    this.last = value
  }

  summary(): {max?: number; last?: number} {
    return {max: this.max, last: this.last}
  }
}

export function identityOf(entry: ClusterHost, role = entry.role): HostIdentity {
  const out: HostIdentity = {host: entry.host, role}
  if (entry.setName !== undefined) out.setName = entry.setName
  if (entry.shard !== undefined) out.shard = entry.shard
  if (entry.entry) out.entry = true
  if (entry.address !== undefined && entry.address !== entry.host) out.address = entry.address
  if (entry.mongoVersion !== undefined) out.mongoVersion = entry.mongoVersion
  if (entry.tags !== undefined && entry.tags.length > 0) out.tags = [...entry.tags]
  if (entry.passive) out.passive = true
  if (entry.hidden) out.hidden = true
  return out
}

export class HostTracker {
  private samples = 0
  private unreachableRounds = 0
  private state: HostState = 'unreachable'
  private lastError?: string
  private currentMin?: number
  private currentMax?: number
  private currentLast?: number
  private readonly createdRate = new RateStats()
  private readonly lockWaitRate = new RateStats()
  private readonly lockWaitTimeRate = new RateStats()
  private readonly usedPct = new LevelStats()
  private readonly lockQueue = new LevelStats()
  private maxIncoming?: number
  private created?: number
  private rejected?: number
  private prev?: {atMS: number; totalCreated: number; rejected?: number}
  private prevLocks?: {atMS: number; waits: LockWaitTotals}
  private lastFields?: Partial<ConnectionsStatus>
  private pools?: ConnPoolStatsSummary
  private poolsUnavailable?: string
  private incomingLimit?: IncomingLimit
  private defects?: HostSample['counterDefects']
  private holders: Holder[] = []
  private holdersUnavailable?: string
  private alerts = 0
  private readonly detector: NeverShrankDetector
  private neverShrank = false
  private detail?: NeverShrankDetail
  /** Who holds the connections of a never-shrank host, found when it was judged (kept while it stays so). */
  private explanation?: Pick<NeverShrankDetail, 'heldBy' | 'routerPools'>
  private memberState?: HostSample['memberState']
  private clockSkewMS?: number
  private churn?: {uptimeSec: number; totalCreated: number; perSec: number}
  private readonly aliases: string[] = []
  /** Replica-set members follow their current state (a failover swaps primary and secondary). */
  private role: ClusterHost['role']

  constructor(readonly entry: ClusterHost, idleWindowMS: number) {
    this.detector = new NeverShrankDetector(idleWindowMS)
    this.role = entry.role
  }

  /** Another name of this same process (it answered with the same serverStatus.host): shown with this row. */
  addAlias(name: string): void {
    if (name !== this.entry.host && !this.aliases.includes(name)) this.aliases.push(name)
  }

  /** The other names merged into this row so far. */
  aliasNames(): readonly string[] {
    return this.aliases
  }

  private identity(): HostIdentity {
    const id = identityOf(this.entry, this.role)
    if (this.aliases.length > 0) id.aliases = [...this.aliases]
    return id
  }

  /** Record one round's answer; returns the sample and what the alert rules can look at. */
  /** Says who holds a never-shrank host's connections (see never-shrank-advice.ts). */
  explainNeverShrank(explanation: Pick<NeverShrankDetail, 'heldBy' | 'routerPools'>): void {
    this.explanation = explanation
  }

  record(answer: PollAnswer): {sample: HostSample; inputs: AlertInputs; neverShrankStarted: boolean} {
    if (answer.ok && (this.role === 'primary' || this.role === 'secondary') && (answer.memberState === 'primary' || answer.memberState === 'secondary')) {
      this.role = answer.memberState
    }
    const base: HostSample = {...this.identity(), state: 'ok'}
    if (!answer.ok) {
      this.unreachableRounds += 1
      this.state = answer.state
      this.lastError = answer.error
      if (this.memberState) base.memberState = this.memberState
      const sample: HostSample = {...base, state: answer.state, error: answer.error}
      if (this.samples === 0 && answer.state === 'unreachable') sample.reachedFromHere = false
      return {sample, inputs: {}, neverShrankStarted: false}
    }
    this.state = 'ok'
    this.samples += 1
    const sample: HostSample = {...base}
    if (answer.memberState) {
      this.memberState = answer.memberState
      sample.memberState = answer.memberState
    }
    if (answer.clockSkewMS !== undefined) {
      this.clockSkewMS = answer.clockSkewMS
      sample.clockSkewMS = answer.clockSkewMS
    }
    const inputs: AlertInputs = {}
    let neverShrankStarted = false
    const c = answer.connections
    if (c) {
      // parseConnections keeps exactly the fields this server sent: samples and the summary carry them as they are.
      Object.assign(sample, c)
      this.lastFields = {...c}
      this.currentMin = Math.min(this.currentMin ?? c.current, c.current)
      this.currentMax = Math.max(this.currentMax ?? c.current, c.current)
      this.currentLast = c.current
      inputs.current = c.current
      inputs.available = c.available
      if (c.active !== undefined) inputs.active = c.active
      const limit = connectionLimit(c)
      sample.maxIncoming = limit.maxIncoming
      this.maxIncoming = limit.maxIncoming
      if (limit.usedPct !== undefined) {
        sample.usedPct = limit.usedPct
        this.usedPct.add(limit.usedPct)
      }
      const prev = this.prev
      if (prev && c.totalCreated < prev.totalCreated) {
        // Restarted since the previous answer: everything it counts is new.
        sample.counterReset = true
        this.created = (this.created ?? 0) + c.totalCreated
        if (c.rejected !== undefined) this.rejected = (this.rejected ?? 0) + c.rejected
      } else if (prev) {
        const dtMS = answer.atMS - prev.atMS
        const delta = c.totalCreated - prev.totalCreated
        this.created = (this.created ?? 0) + delta
        if (dtMS > 0) {
          const rate = this.createdRate.add(delta, dtMS)
          sample.totalCreatedRatePerSec = round2(rate)
          inputs.ratePerSec = rate
        }
        if (c.rejected !== undefined) {
          const rejectedDelta = c.rejected - (prev.rejected ?? c.rejected)
          this.rejected = (this.rejected ?? 0) + rejectedDelta
          inputs.rejectedDelta = rejectedDelta
        }
      } else {
        this.created = 0
        if (c.rejected !== undefined) this.rejected = 0
      }
      this.prev = {atMS: answer.atMS, totalCreated: c.totalCreated, rejected: c.rejected}
      if (answer.uptimeSec !== undefined) {
        // The lifetime baseline: what the process created since it started, per second of its uptime.
        const perSec = round2(c.totalCreated / answer.uptimeSec)
        sample.uptimeSec = answer.uptimeSec
        sample.createdPerSecSinceStart = perSec
        this.churn = {uptimeSec: answer.uptimeSec, totalCreated: c.totalCreated, perSec}
      }
      this.detector.push({atMS: answer.atMS, current: c.current, totalCreated: c.totalCreated})
      const verdict = this.detector.verdict()
      neverShrankStarted = verdict.neverShrank && !this.neverShrank
      this.neverShrank = verdict.neverShrank
      this.detail = verdict.detail
      if (!verdict.neverShrank) this.explanation = undefined
      sample.neverShrank = verdict.neverShrank
    }
    this.recordLocks(answer, sample)
    if (answer.pools) {
      this.pools = answer.pools
      this.poolsUnavailable = undefined
      sample.pools = answer.pools
    }
    if (answer.poolsUnavailable) {
      this.poolsUnavailable = answer.poolsUnavailable
      sample.poolsUnavailable = answer.poolsUnavailable
    }
    if (answer.limitReads) {
      const limit = explainIncomingLimit({...(sample.maxIncoming === undefined ? {} : {effective: sample.maxIncoming}), ...answer.limitReads})
      this.incomingLimit = limit
      sample.incomingLimit = limit
    }
    const defects = counterDefects(c)
    this.defects = defects.length > 0 ? defects : undefined
    if (defects.length > 0) sample.counterDefects = defects
    if (answer.holders) {
      this.holders = answer.holders
      sample.holders = answer.holders
    }
    if (answer.holdersUnavailable) {
      this.holdersUnavailable = answer.holdersUnavailable
      sample.holdersUnavailable = answer.holdersUnavailable
    }
    return {sample, inputs, neverShrankStarted}
  }

  /** Lock queues as they are; lock-wait rates between two answers (none across a restart, whose counters start again). */
  private recordLocks(answer: Extract<PollAnswer, {ok: true}>, sample: HostSample): void {
    const queue = answer.globalLock?.currentQueue
    if (queue) {
      sample.lockQueue = queue
      this.lockQueue.add(queue.total)
    }
    if (answer.globalLock?.activeClients) sample.activeClients = answer.globalLock.activeClients
    const waits = answer.lockWaits
    if (!waits) return
    const prev = this.prevLocks
    this.prevLocks = {atMS: answer.atMS, waits}
    if (!prev || sample.counterReset) return
    const dtMS = answer.atMS - prev.atMS
    const waitsDelta = waits.acquireWaitCount - prev.waits.acquireWaitCount
    const microsDelta = waits.timeAcquiringMicros - prev.waits.timeAcquiringMicros
    if (dtMS <= 0 || waitsDelta < 0 || microsDelta < 0) return
    sample.lockWaitsPerSec = round2(this.lockWaitRate.add(waitsDelta, dtMS))
    sample.lockWaitUsPerSec = Math.round(this.lockWaitTimeRate.add(microsDelta, dtMS))
  }

  countAlert(): void {
    this.alerts += 1
  }

  summary(): ConnsHostSummary {
    const created = this.createdRate.summary()
    const out: ConnsHostSummary = {
      ...this.identity(),
      samples: this.samples,
      unreachableRounds: this.unreachableRounds,
      state: this.state,
      reachedFromHere: this.samples > 0,
      current: {min: this.currentMin, max: this.currentMax, last: this.currentLast},
      totalCreatedRate: created,
      usedPct: this.usedPct.summary(),
      lockQueueTotal: this.lockQueue.summary(),
      lockWaitsPerSec: this.lockWaitRate.summary(),
      lockWaitUsPerSec: this.lockWaitTimeRate.summary(),
      neverShrank: this.neverShrank,
      holders: this.holders,
      alerts: this.alerts,
    }
    if (this.state !== 'ok' && this.lastError) out.lastError = this.lastError
    if (this.clockSkewMS !== undefined) out.clockSkewMS = this.clockSkewMS
    if (this.maxIncoming !== undefined) out.maxIncoming = this.maxIncoming
    if (this.created !== undefined) out.created = this.created
    if (this.churn) {
      out.uptimeSec = this.churn.uptimeSec
      out.totalCreatedSinceStart = this.churn.totalCreated
      out.createdPerSecSinceStart = this.churn.perSec
    }
    if (this.rejected !== undefined) out.rejected = this.rejected
    if (this.detail) out.neverShrankDetail = {...this.detail, ...this.explanation}
    if (this.lastFields) out.last = this.lastFields
    if (this.pools) out.pools = this.pools
    if (this.poolsUnavailable) out.poolsUnavailable = this.poolsUnavailable
    if (this.incomingLimit) out.incomingLimit = this.incomingLimit
    if (this.defects) out.counterDefects = this.defects
    if (this.holdersUnavailable) out.holdersUnavailable = this.holdersUnavailable
    return out
  }
}
