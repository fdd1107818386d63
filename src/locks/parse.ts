/**
 * Pure parsers and joiners for `config.locks`, `config.lockpings`, `config.mongos` and
 * `config.shards` documents, across the shapes of 3.4 – 4.4 and 5.0 – 6.0. No I/O: readers hand documents in, reporters take rows out.
 */
import type {Document} from '../mongo/driver.js'
import type {LockRow, LockStateName, LockTiming, LockVerdict, LockWhenMeaning, PingRow, WhyKind} from './types.js'

export const LOCK_EXPIRATION_MS = 15 * 60_000
export const PING_INTERVAL_MS = 30_000
/** A process counts as alive while its last ping is younger than this many ping intervals. */
export const ALIVE_PING_INTERVALS = 3

export interface ParsedLock {
  name: string
  state: number
  process: string | null
  ts: string | null
  when: Date | null
  who: string | null
  why: string | null
  term?: number
}

export interface ParsedPing {
  process: string
  ping: Date | null
}

export interface ParsedMongos {
  host: string
  ping: Date | null
  up: number | null
  mongoVersion: string | null
}

export interface ParsedShard {
  name: string
  /** "rs/host1,host2" or "host". */
  host: string
  hosts: string[]
}

export type ProcessId =
  | {kind: 'config-server'}
  | {kind: 'host'; host: string; epochSeconds: number; random: string}
  | {kind: 'name'; name: string}

function num(v: unknown): number | null {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  if (v && typeof v === 'object') {
    const o = v as {toNumber?: () => number; value?: unknown; valueOf?: () => unknown}
    if (typeof o.toNumber === 'function') return o.toNumber()
    if (typeof o.value === 'number') return o.value
  }
  return null
}

function date(v: unknown): Date | null {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v
  if (typeof v === 'string') {
    const d = new Date(v)
    return Number.isNaN(d.getTime()) ? null : d
  }
  return null
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null
}

function hex(v: unknown): string | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'object' && typeof (v as {toHexString?: unknown}).toHexString === 'function') return (v as {toHexString(): string}).toHexString()
  if (typeof v === 'string') return v
  return String(v)
}

export function parseLockDoc(doc: Document): ParsedLock {
  const parsed: ParsedLock = {
    name: String(doc._id),
    state: num(doc.state) ?? 0,
    process: str(doc.process),
    ts: hex(doc.ts),
    when: date(doc.when),
    who: str(doc.who),
    why: str(doc.why),
  }
  const term = num(doc.term)
  if (term !== null) parsed.term = term
  return parsed
}

export function parsePingDoc(doc: Document): ParsedPing {
  return {process: String(doc._id), ping: date(doc.ping)}
}

export function parseMongosDoc(doc: Document): ParsedMongos {
  return {host: String(doc._id), ping: date(doc.ping), up: num(doc.up), mongoVersion: str(doc.mongoVersion)}
}

export function parseShardDoc(doc: Document): ParsedShard {
  const host = String(doc.host ?? '')
  const slash = host.indexOf('/')
  const list = slash >= 0 ? host.slice(slash + 1) : host
  return {name: String(doc._id), host, hosts: list.split(',').filter((h) => h.length > 0)}
}

/**
 * `ConfigServer` (3.4 – 4.4 config server), `host:port:epochSecs:random` (3.4 – 4.4 mongos
 * and mongod), or a bare name (5.0 – 6.0: the shard name, or `config`).
 */
export function parseProcessId(id: string): ProcessId {
  if (id === 'ConfigServer') return {kind: 'config-server'}
  const m = /^(.+:\d+):(\d+):(-?\d+)$/.exec(id)
  if (m) return {kind: 'host', host: m[1], epochSeconds: Number(m[2]), random: m[3]}
  return {kind: 'name', name: id}
}

export function stateName(state: number): LockStateName {
  if (state === 0) return 'unlocked'
  if (state === 1) return 'lock-prep'
  return 'locked'
}

/** Families of `why` strings; case and wording differ by version, so patterns, never equality. */
const WHY_PATTERNS: Array<[RegExp, WhyKind]> = [
  [/^csrs balancer$|^doing balance round$/i, 'balancer'],
  [/^migrating chunk|^moverange$|^movechunk/i, 'migration'],
  [/^splitting chunk/i, 'split'],
  [/^merging chunk/i, 'merge'],
  [/^shard[ _-]?collection/i, 'shardCollection'],
  [/^refine[ _-]?collection[ _-]?shard[ _-]?key/i, 'refineCollectionShardKey'],
  [/^reshard[ _-]?collection/i, 'reshardCollection'],
  [/^create[ _-]?collection/i, 'createCollection'],
  [/^drop[ _-]?collection/i, 'dropCollection'],
  [/^drop[ _-]?database/i, 'dropDatabase'],
  [/^enable[ _-]?sharding/i, 'enableSharding'],
  [/^move[ _-]?primary/i, 'movePrimary'],
  [/^create[ _-]?database/i, 'createDatabase'],
  [/^rename[ _-]?collection/i, 'renameCollection'],
  [/^coll[ _-]?mod/i, 'collMod'],
  [/^set[ _-]?allow[ _-]?migrations/i, 'setAllowMigrations'],
  [/^mr-post-process|mapreduce/i, 'mapReduce'],
]

export function classifyWhy(why: string | null | undefined): WhyKind | null {
  if (why === null || why === undefined || why === '') return null
  for (const [re, kind] of WHY_PATTERNS) if (re.test(why)) return kind
  return 'other'
}

/** The 3.4 balancer's lock: `_id: "balancer"`, or the balancer's `who`/`why` on it. */
export function isBalancerLock(lock: ParsedLock): boolean {
  return lock.name === 'balancer' || (/:Balancer$/.test(lock.who ?? '') && /^CSRS Balancer$/i.test(lock.why ?? ''))
}

/**
 * The verdict for one lock given its holder's ping (undefined: no ping document).
 * `nowMs` should be the cluster's clock (hello.localTime), as the server judges expiry on
 * the config server's clock.
 */
export function verdictOf(lock: ParsedLock, ping: ParsedPing | undefined, nowMs: number, expiryMS: number): LockVerdict {
  if (lock.state === 0) return 'free'
  if (isBalancerLock(lock)) return 'balancer'
  if (!ping || !ping.ping) return 'no-ping'
  return nowMs - ping.ping.getTime() >= expiryMS ? 'stale' : 'held'
}

/** Timing from the simulated time scale (1 on a real server) or an explicit expiry. */
export function lockTiming(timeScale = 1, expiryMS?: number): LockTiming {
  return {expiryMS: expiryMS ?? Math.round(LOCK_EXPIRATION_MS * timeScale), pingIntervalMS: Math.round(PING_INTERVAL_MS * timeScale)}
}

/**
 * What the lock's `when` is. Unlocking only sets `state: 0`, so a released lock's `when` is its last grab.
 * `ConfigServer` (3.4 – 4.4) is every config server primary in turn: at step-up a new primary frees the locks
 * of `ConfigServer` and re-takes the migration locks listed in config.migrations, and (3.4) claims the balancer
 * lock, so `when` can be that step-up rather than the start of the work (manual, config.locks: "The when field
 * specifies the time when the config server member became the primary").
 */
export function whenMeaningOf(lock: ParsedLock): LockWhenMeaning | null {
  if (!lock.when) return null
  if (lock.state === 0) return 'last-taken'
  if (isBalancerLock(lock)) return 'balancer-step-up'
  if (parseProcessId(lock.process ?? '').kind === 'config-server') return 'config-primary'
  return 'taken'
}

export interface ClusterDirectory {
  mongos: ParsedMongos[]
  shards: ParsedShard[]
}

/** What config.mongos / config.shards call a process id. */
export function describeProcess(process: string | null, dir: ClusterDirectory): {role: PingRow['role']; host: string | null; label: string | null} {
  if (process === null) return {role: 'unknown', host: null, label: null}
  const id = parseProcessId(process)
  if (id.kind === 'config-server' || (id.kind === 'name' && id.name === 'config')) return {role: 'config', host: null, label: 'config server'}
  if (id.kind === 'name') {
    const shard = dir.shards.find((s) => s.name === id.name)
    return shard ? {role: 'shard', host: shard.hosts[0] ?? null, label: shard.name} : {role: 'unknown', host: null, label: null}
  }
  if (dir.mongos.some((m) => m.host === id.host)) return {role: 'mongos', host: id.host, label: `mongos ${id.host}`}
  const shard = dir.shards.find((s) => s.hosts.includes(id.host))
  if (shard) return {role: 'shard', host: id.host, label: `${shard.name} (${id.host})`}
  return {role: 'unknown', host: id.host, label: null}
}

export interface JoinInput {
  locks: Document[]
  pings: Document[]
  mongos: Document[]
  shards: Document[]
  nowMs: number
  timing: LockTiming
}

export function toLockRows(input: JoinInput): LockRow[] {
  const pings = new Map(input.pings.map((d) => parsePingDoc(d)).map((p) => [p.process, p]))
  const dir: ClusterDirectory = {mongos: input.mongos.map(parseMongosDoc), shards: input.shards.map(parseShardDoc)}
  return input.locks
    .map(parseLockDoc)
    .map((lock): LockRow => {
      const ping = lock.process === null ? undefined : pings.get(lock.process)
      const locked = lock.state !== 0
      const row: LockRow = {
        name: lock.name,
        state: stateName(lock.state),
        process: lock.process,
        who: lock.who,
        why: lock.why,
        since: lock.when ? lock.when.toISOString() : null,
        sinceAgeMS: lock.when ? Math.max(0, input.nowMs - lock.when.getTime()) : null,
        whenMeans: whenMeaningOf(lock),
        holderLastPing: ping?.ping ? ping.ping.toISOString() : null,
        verdict: verdictOf(lock, ping, input.nowMs, input.timing.expiryMS),
        ts: lock.ts,
        heldMS: locked && lock.when ? Math.max(0, input.nowMs - lock.when.getTime()) : null,
        holderPingAgeMS: ping?.ping ? Math.max(0, input.nowMs - ping.ping.getTime()) : null,
        holder: describeProcess(lock.process, dir).label,
        whyKind: classifyWhy(lock.why),
      }
      if (lock.term !== undefined) row.term = lock.term
      return row
    })
    .sort((a, b) => a.name.localeCompare(b.name))
}

export function toPingRows(input: JoinInput): PingRow[] {
  const dir: ClusterDirectory = {mongos: input.mongos.map(parseMongosDoc), shards: input.shards.map(parseShardDoc)}
  const holds = new Map<string, string[]>()
  for (const lock of input.locks.map(parseLockDoc)) {
    if (lock.state === 0 || lock.process === null) continue
    const list = holds.get(lock.process) ?? []
    list.push(lock.name)
    holds.set(lock.process, list)
  }
  const aliveMS = ALIVE_PING_INTERVALS * input.timing.pingIntervalMS
  return input.pings
    .map(parsePingDoc)
    .map((p): PingRow => {
      const ageMS = p.ping ? Math.max(0, input.nowMs - p.ping.getTime()) : null
      const who = describeProcess(p.process, dir)
      const id = parseProcessId(p.process)
      const row: PingRow = {process: p.process, ping: p.ping ? p.ping.toISOString() : null, ageMS, alive: ageMS !== null && ageMS < aliveMS, holds: (holds.get(p.process) ?? []).sort(), role: who.role, host: who.host}
      if (id.kind === 'host') row.processStarted = new Date(id.epochSeconds * 1000).toISOString()
      return row
    })
    .sort((a, b) => Number(b.alive) - Number(a.alive) || a.process.localeCompare(b.process))
}

export interface LockFilter {
  db?: string
  ns?: string
  /** A verdict, or `locked` / `unlocked`. */
  state?: string
}

export const LOCK_STATE_FILTERS = ['locked', 'unlocked', 'free', 'held', 'stale', 'no-ping', 'balancer'] as const

export function filterLocks(rows: LockRow[], filter: LockFilter): LockRow[] {
  return rows.filter((r) => {
    if (filter.db !== undefined && r.name !== filter.db && !r.name.startsWith(`${filter.db}.`)) return false
    if (filter.ns !== undefined && r.name !== filter.ns) return false
    if (filter.state !== undefined) {
      if (filter.state === 'locked') return r.state !== 'unlocked'
      if (filter.state === 'unlocked') return r.state === 'unlocked'
      return r.verdict === filter.state
    }
    return true
  })
}

/** "4.4.29" → [4, 4, 29]. */
export function versionParts(version: string): number[] {
  return version.split(/[.-]/).slice(0, 3).map((p) => Number.parseInt(p, 10) || 0)
}

export function versionAtLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = versionParts(version)
  return a > major || (a === major && b >= minor)
}
