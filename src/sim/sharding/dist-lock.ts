/**
 * The replica-set distributed lock manager of MongoDB 3.4 – 6.0 (DistLockManager: grabLock / overtakeLock), writing
 * the config server's `config.locks` and `config.lockpings` exactly as those versions do:
 *
 * - 4.4 flavour: process ids `host:port:epochSecs:random` for mongos and shards and the
 *   fixed `ConfigServer` for the config server; a fresh ObjectId lock session (`ts`) per
 *   acquisition; no `term`.
 * - 6.0 flavour: the process id is the shard name (or `config`); `ts` is fixed per process
 *   type (`01000…` config server, `02000…` every shard), so shards can overtake each
 *   other's locks; `term` is the shard's replica-set term (0 on the config server).
 *
 * grabLock = findAndModify {_id, state: 0} → state 2 (upsert); otherwise read the lock and
 * overtake it when it is ours (same ts) or expired: expired only when this manager saw the
 * same ping, ts and config electionId earlier and the config server's clock has moved on
 * by the expiry (15 min) since. Retry every 500 ms until the wait limit, then LockBusy
 * "timed out waiting for <name>". Unlock is `$set {state: 0}` (the document stays).
 * The pinger upserts `config.lockpings {_id: process, ping}` every 30 s; a clean shutdown
 * removes the document. Every interval is multiplied by the cluster's time scale.
 */
import {randomBytes} from 'node:crypto'
import {setTimeout as sleep} from 'node:timers/promises'
import {Long, ObjectId, type Document} from 'bson'
import {CommandError} from '../errors.js'
import type {DataStore} from '../storage/collection.js'

export const PING_INTERVAL_MS = 30_000
export const LOCK_EXPIRATION_MS = 15 * 60_000
export const LOCK_RETRY_INTERVAL_MS = 500
/** DistLockManager::kDefaultLockTimeout: 20 s up to 4.4, 5 min in 5.0/6.0. */
export const DEFAULT_LOCK_WAIT_MS = {'4.4': 20_000, '6.0': 300_000} as const

export const CONFIG_SERVER_PROCESS_ID = 'ConfigServer'
export const CONFIG_SHARD_ID = 'config'
export const CONFIG_SERVER_LOCK_TS = new ObjectId('010000000000000000000000')
export const SHARD_LOCK_TS = new ObjectId('020000000000000000000000')

export const LOCK_STATE = {UNLOCKED: 0, LOCK_PREP: 1, LOCKED: 2} as const

export type DistLockFlavour = '4.4' | '6.0'

/** `host:port:epochSeconds:random` (generateDistLockProcessId). */
/**
 * `host:port:epochSeconds:random` with a signed 64-bit random, as the server builds it
 * (`SecureRandom().nextInt64()` in the dist lock manager's process id), so ids are often negative
 * (published ones look like `host:27018:1589298211:-8893393412012345678`).
 */
export function generateProcessId(hostPort: string, now = Date.now()): string {
  return `${hostPort}:${Math.floor(now / 1000)}:${randomBytes(8).readBigInt64LE()}`
}

export interface DistLockEnv {
  /** The config server's data (holds `config.locks` / `config.lockpings`). */
  configData: DataStore
  /** Service time of one majority write on the config server (its injected latency). */
  writeCostMs: () => number
  /** The config primary's electionId (expiry is void across a config election). */
  configElectionId: () => ObjectId
  timeScale: number
}

export interface ScopedDistLock {
  name: string
  ts: ObjectId
  unlock(): Promise<void>
}

interface PingObservation {
  process: string
  ping: number
  ts: string
  electionId: string
  configLocalTime: number
}

/** Logged decisions, kept for tests and for `pooltool sim` debugging. */
export interface DistLockEvent {
  at: Date
  kind: 'acquired' | 'overtaken' | 'unlocked' | 'busy'
  name: string
  process: string
  why: string
  previousProcess?: string
}

export class DistLockManager {
  private readonly pingHistory = new Map<string, PingObservation>()
  private pinger: NodeJS.Timeout | null = null
  private pingerStopped = false
  /** Term of the shard primary (6.0), bumped by a restart; 6.0 recovery frees older locks. */
  term: number
  private recoveredTerm: number
  readonly events: DistLockEvent[] = []

  constructor(
    private readonly env: DistLockEnv,
    readonly flavour: DistLockFlavour,
    public processId: string,
    private readonly kind: 'config' | 'shard' | 'mongos',
    term = 1,
  ) {
    this.term = kind === 'config' ? 0 : term
    this.recoveredTerm = kind === 'config' || flavour === '4.4' ? this.term : this.term - 1
  }

  private get locks() {
    return this.env.configData.collection('config', 'locks', true)!
  }

  private get pings() {
    return this.env.configData.collection('config', 'lockpings', true)!
  }

  get waitLimitMs(): number {
    return DEFAULT_LOCK_WAIT_MS[this.flavour] * this.env.timeScale
  }

  private sessionId(): ObjectId {
    if (this.flavour === '4.4') return new ObjectId()
    return this.kind === 'config' ? CONFIG_SERVER_LOCK_TS : SHARD_LOCK_TS
  }

  private log(e: Omit<DistLockEvent, 'at'>): void {
    this.events.push({at: new Date(), ...e})
    if (this.events.length > 200) this.events.shift()
  }

  // ---------------------------------------------------------------- pinger

  startPinger(): void {
    this.pingerStopped = false
    this.ping()
    const every = Math.max(20, PING_INTERVAL_MS * this.env.timeScale)
    this.pinger = setInterval(() => this.ping(), every)
    this.pinger.unref()
  }

  /** Upsert {_id: process, ping: now} (findAndModify, upsert). */
  ping(): void {
    if (this.pingerStopped) return
    const existing = this.pings.get(this.processId)
    const doc = {_id: this.processId, ping: new Date()}
    if (existing) this.pings.replace(existing, doc)
    else this.pings.insert(doc)
  }

  /** Clean shutdown: stop pinging and remove the ping document (stopPing). */
  stopPinger(clean: boolean): void {
    this.pingerStopped = true
    if (this.pinger) clearInterval(this.pinger)
    this.pinger = null
    if (clean) {
      const existing = this.pings.get(this.processId)
      if (existing) this.pings.remove(existing)
    }
  }

  /** The process died: the pinger stops, held locks stay as they are. */
  crash(): void {
    this.stopPinger(false)
  }

  // ---------------------------------------------------------------- locking

  private fields(ts: ObjectId, who: string, why: string): Document {
    const f: Document = {state: LOCK_STATE.LOCKED, ts, who, process: this.processId, when: new Date(), why}
    if (this.flavour === '6.0') f.term = Long.fromNumber(this.term)
    return f
  }

  /** grabLock: findAndModify {_id: name, state: 0} → $set holder fields, upsert. */
  private grab(name: string, ts: ObjectId, who: string, why: string): boolean {
    const current = this.locks.get(name)
    if (current && current.state !== LOCK_STATE.UNLOCKED) return false
    const doc = {_id: name, ...this.fields(ts, who, why)}
    if (current) this.locks.replace(current, {...current, ...doc})
    else this.locks.insert(doc)
    return true
  }

  /** overtakeLock: findAndModify {$or: [{_id, state: 0}, {_id, ts: currentTs}]} → $set holder fields. */
  private overtake(name: string, currentTs: ObjectId, ts: ObjectId, who: string, why: string): boolean {
    const current = this.locks.get(name)
    if (!current) return false
    const matches = current.state === LOCK_STATE.UNLOCKED || (current.ts instanceof ObjectId && current.ts.equals(currentTs))
    if (!matches) return false
    this.locks.replace(current, {...current, ...this.fields(ts, who, why)})
    return true
  }

  /** isLockExpired: the holder stopped pinging and the lock id did not change for the lock timeout. */
  private isExpired(lock: Document): boolean {
    const pingDoc = typeof lock.process === 'string' ? this.pings.get(lock.process) : undefined
    const ping = pingDoc?.ping instanceof Date ? pingDoc.ping.getTime() : 0 // no document: the default Date
    const ts = lock.ts instanceof ObjectId ? lock.ts.toHexString() : String(lock.ts)
    const electionId = this.env.configElectionId().toHexString()
    const now = Date.now()
    const seen = this.pingHistory.get(String(lock._id))
    const current: PingObservation = {process: String(lock.process), ping, ts, electionId, configLocalTime: now}
    if (!seen || seen.ts !== ts || seen.ping !== ping || seen.electionId !== electionId || seen.process !== current.process) {
      this.pingHistory.set(String(lock._id), current)
      return false
    }
    if (now < seen.configLocalTime) return false
    return now - seen.configLocalTime >= LOCK_EXPIRATION_MS * this.env.timeScale
  }

  /** 6.0 step-up recovery: free this shard's locks from older terms before the next lock or unlock. */
  private recover(): void {
    if (this.flavour !== '6.0' || this.recoveredTerm >= this.term) return
    for (const doc of [...this.locks.docs.values()]) {
      if (doc.process === this.processId && doc.state !== LOCK_STATE.UNLOCKED && Number(doc.term ?? 0) <= this.term) {
        this.locks.replace(doc, {...doc, state: LOCK_STATE.UNLOCKED})
      }
    }
    this.recoveredTerm = this.term
  }

  /**
   * Takes `name`, waiting up to `waitForMs` (default: the version's kDefaultLockTimeout × time scale).
   * Throws LockBusy (46) "timed out waiting for <name>".
   */
  async lock(name: string, why: string, who: string, waitForMs = this.waitLimitMs, signal?: {aborted: boolean}): Promise<ScopedDistLock> {
    this.recover()
    const ts = this.sessionId()
    const deadline = Date.now() + waitForMs
    for (;;) {
      await sleep(this.env.writeCostMs())
      if (this.grab(name, ts, who, why)) {
        this.log({kind: 'acquired', name, process: this.processId, why})
        return this.scoped(name, ts)
      }
      const current = this.locks.get(name)
      if (current && current.ts instanceof ObjectId) {
        const ours = current.ts.equals(ts)
        if (ours || this.isExpired(current)) {
          if (this.overtake(name, current.ts, ts, who, why)) {
            this.pingHistory.delete(name)
            this.log({kind: 'overtaken', name, process: this.processId, why, previousProcess: String(current.process)})
            return this.scoped(name, ts)
          }
        }
      }
      const remaining = deadline - Date.now()
      if (remaining <= 0 || signal?.aborted) {
        this.log({kind: 'busy', name, process: this.processId, why})
        throw new CommandError(46, `timed out waiting for ${name}`)
      }
      await sleep(Math.min(LOCK_RETRY_INTERVAL_MS * this.env.timeScale, remaining))
    }
  }

  private scoped(name: string, ts: ObjectId): ScopedDistLock {
    let done = false
    return {
      name,
      ts,
      unlock: async () => {
        if (done) return
        done = true
        await this.unlock(name, ts)
      },
    }
  }

  /** findAndModify {ts, _id} → $set {state: 0}; a non-matching unlock counts as success. */
  async unlock(name: string, ts: ObjectId): Promise<void> {
    await sleep(this.env.writeCostMs())
    const current = this.locks.get(name)
    if (current && current.ts instanceof ObjectId && current.ts.equals(ts) && current.state !== LOCK_STATE.UNLOCKED) {
      this.locks.replace(current, {...current, state: LOCK_STATE.UNLOCKED})
      this.log({kind: 'unlocked', name, process: this.processId, why: String(current.why)})
    }
  }

  /** Takes a lock without waiting and never releases it (used by the dead-lock-holder scenario). */
  grabForScenario(name: string, why: string, who: string): ObjectId {
    const ts = this.sessionId()
    if (!this.grab(name, ts, who, why)) throw new Error(`scenario: ${name} is already locked`)
    this.log({kind: 'acquired', name, process: this.processId, why})
    return ts
  }
}

/** The indexes the config server creates on config.locks / config.lockpings. */
export function ensureLockCollections(configData: DataStore): void {
  const locks = configData.collection('config', 'locks', true)!
  if (!locks.indexes.some((i) => i.name === 'ts_1')) {
    locks.indexes.push({v: 2, key: {ts: 1}, name: 'ts_1'}, {v: 2, key: {state: 1, process: 1}, name: 'state_1_process_1'})
  }
  const pings = configData.collection('config', 'lockpings', true)!
  if (!pings.indexes.some((i) => i.name === 'ping_1')) pings.indexes.push({v: 2, key: {ping: 1}, name: 'ping_1'})
}
