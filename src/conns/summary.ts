/**
 * Per-host running figures of a watch: turns each poll answer into a sample
 * (rate per second since the host's previous answer, counter resets after a
 * restart) and keeps what the summary needs in O(1) memory per host: min / max
 * / last current, max and mean creation rate, rejections, the never-shrank
 * detector and the last holders and pools.
 */
import type {ConnectionsStatus} from '../probes/server-status.js'
import type {AlertInputs} from './alerts.js'
import {NeverShrankDetector} from './never-shrank.js'
import type {PollAnswer} from './poller.js'
import type {ClusterHost, ConnPoolStatsSummary, ConnsHostSummary, Holder, HostSample, HostState, NeverShrankDetail} from './types.js'

const round2 = (n: number) => Math.round(n * 100) / 100

export class HostTracker {
  private samples = 0
  private unreachableRounds = 0
  private state: HostState = 'unreachable'
  private lastError?: string
  private currentMin?: number
  private currentMax?: number
  private currentLast?: number
  private rateMax?: number
  private ratedCreated = 0
  private ratedMS = 0
  private created?: number
  private rejected?: number
  private prev?: {atMS: number; totalCreated: number; rejected?: number}
  private lastFields?: Partial<ConnectionsStatus>
  private pools?: ConnPoolStatsSummary
  private holders: Holder[] = []
  private holdersUnavailable?: string
  private alerts = 0
  private readonly detector: NeverShrankDetector
  private neverShrank = false
  private detail?: NeverShrankDetail
  private memberState?: HostSample['memberState']
  /** Replica-set members follow their current state (a failover swaps primary and secondary). */
  private role: ClusterHost['role']

  constructor(readonly entry: ClusterHost, idleWindowMS: number) {
    this.detector = new NeverShrankDetector(idleWindowMS)
    this.role = entry.role
  }

  /** Record one round's answer; returns the sample and what the alert rules can look at. */
  record(answer: PollAnswer): {sample: HostSample; inputs: AlertInputs; neverShrankStarted: boolean} {
    if (answer.ok && (this.role === 'primary' || this.role === 'secondary') && (answer.memberState === 'primary' || answer.memberState === 'secondary')) {
      this.role = answer.memberState
    }
    const base: HostSample = {host: this.entry.host, role: this.role, state: 'ok'}
    if (this.entry.setName !== undefined) base.setName = this.entry.setName
    if (this.entry.shard !== undefined) base.shard = this.entry.shard
    if (!answer.ok) {
      this.unreachableRounds += 1
      this.state = answer.state
      this.lastError = answer.error
      if (this.memberState) base.memberState = this.memberState
      return {sample: {...base, state: answer.state, error: answer.error}, inputs: {}, neverShrankStarted: false}
    }
    this.state = 'ok'
    this.samples += 1
    const sample: HostSample = {...base}
    if (answer.memberState) {
      this.memberState = answer.memberState
      sample.memberState = answer.memberState
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
          const rate = (delta * 1000) / dtMS
          sample.totalCreatedRatePerSec = round2(rate)
          inputs.ratePerSec = rate
          this.rateMax = Math.max(this.rateMax ?? rate, rate)
          this.ratedCreated += delta
          this.ratedMS += dtMS
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
      this.detector.push({atMS: answer.atMS, current: c.current, totalCreated: c.totalCreated})
      const verdict = this.detector.verdict()
      neverShrankStarted = verdict.neverShrank && !this.neverShrank
      this.neverShrank = verdict.neverShrank
      this.detail = verdict.detail
      sample.neverShrank = verdict.neverShrank
    }
    if (answer.pools) {
      this.pools = answer.pools
      sample.pools = answer.pools
    }
    if (answer.poolsUnavailable) sample.poolsUnavailable = answer.poolsUnavailable
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

  countAlert(): void {
    this.alerts += 1
  }

  summary(): ConnsHostSummary {
    const out: ConnsHostSummary = {
      host: this.entry.host,
      role: this.role,
      ...(this.entry.setName === undefined ? {} : {setName: this.entry.setName}),
      ...(this.entry.shard === undefined ? {} : {shard: this.entry.shard}),
      samples: this.samples,
      unreachableRounds: this.unreachableRounds,
      state: this.state,
      current: {min: this.currentMin, max: this.currentMax, last: this.currentLast},
      totalCreatedRate: {
        max: this.rateMax === undefined ? undefined : round2(this.rateMax),
        mean: this.ratedMS > 0 ? round2((this.ratedCreated * 1000) / this.ratedMS) : undefined,
      },
      neverShrank: this.neverShrank,
      holders: this.holders,
      alerts: this.alerts,
    }
    if (this.state !== 'ok' && this.lastError) out.lastError = this.lastError
    if (this.created !== undefined) out.created = this.created
    if (this.rejected !== undefined) out.rejected = this.rejected
    if (this.detail) out.neverShrankDetail = this.detail
    if (this.lastFields) out.last = this.lastFields
    if (this.pools) out.pools = this.pools
    if (this.holdersUnavailable) out.holdersUnavailable = this.holdersUnavailable
    return out
  }
}
