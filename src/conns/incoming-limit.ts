/**
 * The effective incoming connection limit, explained (pure; serverStatus.connections and the manual's net.maxIncomingConnections).
 *
 * What a server accepts now is `connections.current + available` (+ `queuedForEstablishment`
 * with the 8.x establishment rate limiter). The server fixes it at start as the lower of two caps:
 * - `net.maxIncomingConnections` (`--maxConns`), read from `getCmdLineOpts` →
 *   `parsed.net.maxIncomingConnections`; absent there when it was not set, and then the
 *   server's built-in default applies (the manual says 65536; the code's DEFAULT_MAX_CONN is
 *   1000000, DOCS-5196, DOCS-14280: https://jira.mongodb.org/browse/DOCS-14280 — so the default
 *   is never taken as a number here, the limit itself tells it);
 * - on Linux and macOS, 80% of the process's open-files limit (`ulimit -n`, RLIMIT_NOFILE,
 *   truncated: 1024 files → 819, 1048576 → 838860), which `hostInfo.extra.maxOpenFiles`
 *   reports (manual: reference/command/hostInfo; "For UNIX: is calculated as a percentage of
 *   the open files (nofile) limit", DOCS-14280). Windows applies no such cap.
 *
 * The judgement names which cap binds: the one equal to the limit. When a cap could not be read
 * (a refused command), its value is "unknown" and never guessed; the binding cap is then found only
 * by elimination (the limit is below the cap that was read, so the other one holds it) and says so.
 */
import type {Document} from '../mongo/driver.js'
import {toNumber} from '../probes/server-status.js'

/** A read that answered (its reply) or did not (one line saying why). */
export type LimitRead = {reply: Document} | {unavailable: string}

export type BindingCap = 'maxIncomingConnections' | 'openFiles' | 'both' | 'neither' | 'unknown'

export interface IncomingLimit {
  /** current + available (+ queuedForEstablishment): what the server accepts now; absent when serverStatus.connections was not read. */
  effective?: number
  /** net.maxIncomingConnections from getCmdLineOpts `parsed`, when set. */
  maxIncomingConnections?: number
  /** false: getCmdLineOpts answered without net.maxIncomingConnections (not set: the server's default applies). */
  maxIncomingConnectionsSet?: boolean
  /** Why net.maxIncomingConnections is unknown (getCmdLineOpts refused or failed). */
  maxIncomingConnectionsUnknown?: string
  /** hostInfo.extra.maxOpenFiles: the process's open-files limit. */
  maxOpenFiles?: number
  /** 80% of maxOpenFiles, truncated: the operating system's cap on connections. */
  openFilesCap?: number
  /** Why the open-files cap is unknown (hostInfo refused, or the field not sent) or does not apply (Windows). */
  maxOpenFilesUnknown?: string
  /** Which cap holds the limit. */
  binds: BindingCap
  /** true: found by elimination (the other cap could not be read), not by equality. */
  inferred?: true
  /** One line a DBA reads, e.g. "limit 819 = 80% of open files 1024 (hostInfo.extra.maxOpenFiles): raise ulimit -n". */
  explanation: string
}

/** The share of RLIMIT_NOFILE the server takes as its connection cap. */
export const OPEN_FILES_SHARE = 0.8

export function openFilesCap(maxOpenFiles: number): number {
  return Math.floor(maxOpenFiles * OPEN_FILES_SHARE)
}

const fmt = (n: number) => n.toLocaleString('en-US')

/** net.maxIncomingConnections as getCmdLineOpts gives it: a number, not set, or unknown (why). */
function configured(read: LimitRead | undefined): {value?: number; set?: boolean; unknown?: string} {
  if (read === undefined) return {unknown: 'getCmdLineOpts not read'}
  if ('unavailable' in read) return {unknown: `getCmdLineOpts: ${read.unavailable}`}
  const net = (read.reply.parsed as Document | undefined)?.net as Document | undefined
  const value = toNumber(net?.maxIncomingConnections)
  return value === undefined ? {set: false} : {value, set: true}
}

/** hostInfo.extra.maxOpenFiles, or why there is no open-files cap to compare with. */
function openFiles(read: LimitRead | undefined): {value?: number; unknown?: string; notApplicable?: boolean} {
  if (read === undefined) return {unknown: 'hostInfo not read'}
  if ('unavailable' in read) return {unknown: `hostInfo: ${read.unavailable}`}
  const os = (read.reply.os as Document | undefined)?.type
  if (typeof os === 'string' && /windows/i.test(os)) return {unknown: 'Windows: the server applies no open-files cap', notApplicable: true}
  const value = toNumber((read.reply.extra as Document | undefined)?.maxOpenFiles)
  return value === undefined ? {unknown: 'hostInfo.extra.maxOpenFiles not sent by this server'} : {value}
}

export interface LimitFacts {
  /** serverStatus.connections (or the sum already made: current + available + queued). */
  effective?: number
  cmdLineOpts?: LimitRead
  hostInfo?: LimitRead
}

export function explainIncomingLimit(facts: LimitFacts): IncomingLimit {
  const conf = configured(facts.cmdLineOpts)
  const files = openFiles(facts.hostInfo)
  const out: Omit<IncomingLimit, 'binds' | 'explanation'> = {}
  if (facts.effective !== undefined) out.effective = facts.effective
  if (conf.value !== undefined) out.maxIncomingConnections = conf.value
  if (conf.set !== undefined) out.maxIncomingConnectionsSet = conf.set
  if (conf.unknown !== undefined) out.maxIncomingConnectionsUnknown = conf.unknown
  const cap = files.value === undefined ? undefined : openFilesCap(files.value)
  if (files.value !== undefined) out.maxOpenFiles = files.value
  if (cap !== undefined) out.openFilesCap = cap
  if (files.unknown !== undefined) out.maxOpenFilesUnknown = files.unknown

  const confText =
    conf.value !== undefined ? `net.maxIncomingConnections ${fmt(conf.value)} (getCmdLineOpts)` : conf.set === false ? "net.maxIncomingConnections not set (the server's default)" : `net.maxIncomingConnections unknown (${conf.unknown})`
  const filesText =
    files.value !== undefined ? `80% of open files ${fmt(files.value)} = ${fmt(cap!)} (hostInfo.extra.maxOpenFiles)` : files.notApplicable ? 'no open-files cap (Windows)' : `open-files cap unknown (${files.unknown})`
  const raise = 'raise ulimit -n (LimitNOFILE in a systemd unit) and restart'
  const done = (binds: BindingCap, explanation: string, inferred = false): IncomingLimit => ({...out, binds, ...(inferred ? {inferred: true as const} : {}), explanation})

  const limit = facts.effective
  if (limit === undefined) return done('unknown', `limit unknown (serverStatus.connections not read); ${confText}; ${filesText}`)
  const L = fmt(limit)
  const confEq = conf.value !== undefined && conf.value === limit
  const capEq = cap !== undefined && cap === limit
  if (confEq && capEq) return done('both', `limit ${L} = net.maxIncomingConnections (getCmdLineOpts) = 80% of open files ${fmt(files.value!)} (hostInfo.extra.maxOpenFiles)`)
  if (capEq) return done('openFiles', `limit ${L} = 80% of open files ${fmt(files.value!)} (hostInfo.extra.maxOpenFiles): ${raise}; ${confText}`)
  if (confEq) return done('maxIncomingConnections', `limit ${L} = net.maxIncomingConnections (getCmdLineOpts); ${filesText}`)
  // Neither read cap equals the limit.
  if (cap !== undefined && conf.value !== undefined) {
    return done('neither', `limit ${L} matches neither ${confText} nor ${filesText}: the open-files limit may have changed since the server started (it fixes the limit at start; hostInfo reads it now)`)
  }
  if (cap !== undefined || files.notApplicable) {
    // The open-files cap is known (or does not apply) and is not the limit: net.maxIncomingConnections holds it.
    if (cap !== undefined && limit > cap) return done('neither', `limit ${L} is above ${filesText}: the open-files limit changed since the server started; ${confText}`)
    const why = conf.set === false ? "not set: the server's default" : `unknown: ${conf.unknown}`
    return done('maxIncomingConnections', `limit ${L} = net.maxIncomingConnections (${why}); ${filesText}`, true)
  }
  if (conf.value !== undefined) {
    if (limit > conf.value) return done('neither', `limit ${L} is above ${confText}: ${filesText}`)
    // Below the configured maximum, and the only other cap is the open-files one.
    return done('openFiles', `limit ${L} < ${confText}: the operating system's cap binds (80% of about ${fmt(Math.ceil(limit / OPEN_FILES_SHARE))} open files; ${filesText}): ${raise}`, true)
  }
  return done('unknown', `limit ${L}: which cap binds is unknown (${confText}; ${filesText})`)
}
