/**
 * `pooltool snapshot`: a recording of every read pooltool's commands make.
 * The target is resolved with a recorder (every ServerReader opened through it
 * reports each read and failure); then discovery, `conns list` (with holders),
 * `locks list` (node locks on every topology: `$currentOp`, serverStatus and
 * lockInfo on each node it reads) and, on a sharded cluster, `locks pings` run
 * as they do for a user, and every host gets hello, buildInfo, hostInfo and a
 * serverStatus with every section a command may ask for. The results of the
 * commands are kept as `views`: what they computed from these very reads.
 * Operations keep their command's name, never its values (user-data.ts). Read only.
 */
import type {Document} from 'bson'
import {ConnectionString} from 'mongodb-connection-string-url'

import {runConnsList} from '../conns/watch.js'
import {runLocksList, runLocksPings} from '../locks/list.js'
import {toPoolToolError} from '../mongo/errors.js'
import {discoverCluster} from '../probes/discovery.js'
import type {ReadEvent, ReadRecorder} from '../probes/reader.js'
import {SERVER_STATUS_SECTIONS} from '../probes/server-status.js'
import {type ClusterTopology, connectAddress} from '../probes/topology.js'
import {scrubSecrets} from '../redact.js'
import type {Target} from '../target.js'
import type {LocksListResult} from '../locks/types.js'
import {type CapturedReadState, type NodeLocksCapture, SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_VERSION, type SnapshotFile, type SnapshotHost, type SnapshotRead, toCanonicalJson} from './format.js'
import {groupReads} from './group.js'
import {redactHosts} from './redact-hosts.js'
import {rewriteTree} from './rewrite.js'
import {readWithoutUserData} from './user-data.js'

/** The appName suffix of the capture's own per-host connections (`pooltool-snapshot`). */
export const SNAPSHOT_PURPOSE = 'snapshot'

/** Collects the reads of a capture (pass `record` as the target's recorder). */
export class ReadLog {
  readonly events: ReadEvent[] = []
  readonly record: ReadRecorder = (event) => {
    this.events.push(event)
  }
}

export interface CaptureOptions {
  redactHosts?: boolean
  pooltoolVersion?: string
  signal?: AbortSignal
}

export interface CaptureOutcome {
  snapshot: SnapshotFile
  /** What could not be run or read (a command that failed, a host that did not answer). */
  notes: string[]
  interrupted: boolean
}

/** URI options that carry or select credentials: never in the file. */
const CREDENTIAL_OPTION = /^(authsource|authmechanism|authmechanismproperties)$|password|secret|token/i

/** The captured URI without user, password or authentication options (every other option kept). */
export function uriWithoutCredentials(uri: string): string {
  const cs = new ConnectionString(uri)
  cs.username = ''
  cs.password = ''
  for (const key of [...cs.searchParams.keys()]) if (CREDENTIAL_OPTION.test(key)) cs.searchParams.delete(key)
  return cs.toString()
}

/**
 * The file's content (canonical Extended JSON values). Behind the stripped URI, a safety net: no literal
 * secret of the target (a password a driver message quoted, a token option) survives in any string or key.
 */
export function snapshotFileContent(snapshot: SnapshotFile, secrets: readonly string[]): Document {
  return rewriteTree(toCanonicalJson(snapshot), (text) => scrubSecrets(text, secrets))
}

function oneLine(error: unknown, target: Target): string {
  return toPoolToolError(error, {target: target.redactedUri, secrets: target.secrets}).message
}

/** hello, buildInfo, hostInfo and a full serverStatus on one host; undefined when it answered, else why not. */
async function readHost(target: Target, address: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  const timeoutMs = target.connection.timeoutMs
  const {reader, close} = target.openReader(address, SNAPSHOT_PURPOSE, {timeoutMs})
  const bounds = () => ({signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs)})
  try {
    await reader.hello(bounds())
  } catch (error) {
    await close()
    return oneLine(error, target)
  }
  try {
    // Failures here are recorded as errors (a replay answers them as such): nothing more to do about them.
    await Promise.allSettled([reader.buildInfo(bounds()), reader.hostInfo(bounds()), reader.serverStatus(SERVER_STATUS_SECTIONS, bounds())])
    return undefined
  } finally {
    await close()
  }
}

function stateOf(read: SnapshotRead | undefined): CapturedReadState {
  if (read === undefined) return 'not read'
  if (read.error === undefined) return 'captured'
  // Unauthorized: the role may not run it. What it would have shown is unknown, never "none".
  return read.error.code === 13 ? `not permitted: ${read.error.message}` : `failed: ${read.error.message}`
}

/**
 * Each node `locks list` read says how its three reads went (`nodeLocks`): from the reads themselves, so the
 * file states what it holds. A node listed without reads (no primary found) carries the list's reason.
 */
function withNodeLocks(hosts: SnapshotHost[], locks: LocksListResult | undefined): SnapshotHost[] {
  if (!locks) return hosts
  const listed = new Map(locks.nodes.map((n) => [n.host, n]))
  return hosts.map((host) => {
    const node = listed.get(host.host)
    if (!node) return host
    const latest = (match: (r: SnapshotRead) => boolean) => [...host.reads].reverse().find(match)
    const raw = (r: SnapshotRead) => r.name === '$currentOp' && Array.isArray(r.request.pipeline) && r.request.pipeline.length === 1
    let nodeLocks: NodeLocksCapture = {
      currentOp: stateOf(latest(raw)),
      serverStatus: stateOf(latest((r) => r.name === 'serverStatus')),
      lockInfo: stateOf(latest((r) => r.name === 'lockInfo')),
    }
    if (nodeLocks.currentOp === 'not read' && nodeLocks.lockInfo === 'not read' && node.error) {
      const failed: CapturedReadState = `failed: ${node.error.message}`
      nodeLocks = {currentOp: failed, serverStatus: failed, lockInfo: failed}
    }
    // Before the reads, as a reader of the file meets it.
    const {reads, ...rest} = host
    return {...rest, nodeLocks, reads}
  })
}

/** What a reader of the summary must know: where node locks are unknown, and where the chain can only be inferred. */
function nodeLocksNotes(hosts: readonly SnapshotHost[]): string[] {
  const notes: string[] = []
  for (const {host, nodeLocks} of hosts) {
    if (!nodeLocks) continue
    const missing = (['currentOp', 'serverStatus'] as const).filter((k) => nodeLocks[k] !== 'captured')
    if (missing.length > 0) notes.push(`${host}: node locks unknown in the file (${missing.map((k) => `${k} ${nodeLocks[k]}`).join('; ')})`)
    else if (nodeLocks.lockInfo !== 'captured') notes.push(`${host}: lockInfo ${nodeLocks.lockInfo}: the blocking chain there is inferred from $currentOp`)
  }
  return notes
}

/** Every host discovery named, plus the entry seeds (a tunnelled entry may not be among the names). */
function addressesToRead(topology: ClusterTopology, seedHosts: readonly string[]): string[] {
  return [...new Set([...topology.hosts.map(connectAddress), ...(topology.entry ? [topology.entry.address] : []), ...(topology.kind === 'replset' ? [] : seedHosts)])]
}

async function view<T>(name: string, notes: string[], target: Target, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run()
  } catch (error) {
    notes.push(`${name}: ${oneLine(error, target)} (kept as the errors it read)`)
    return undefined
  }
}

export async function captureSnapshot(target: Target, log: ReadLog, options: CaptureOptions = {}): Promise<CaptureOutcome> {
  const capturedAt = new Date()
  const notes: string[] = []
  const topology = await discoverCluster(target, {purpose: SNAPSHOT_PURPOSE, ...(options.signal ? {signal: options.signal} : {})})
  const views: Record<string, unknown> = {}
  const interrupted = () => options.signal?.aborted === true
  const addresses = addressesToRead(topology, target.seedHosts)
  const answers = await Promise.all(addresses.map((address) => readHost(target, address, options.signal)))
  const unreachable = addresses.flatMap((address, i) => (answers[i] === undefined ? [] : [{host: address, error: answers[i]!}]))
  if (!interrupted()) {
    const conns = await view('conns list', notes, target, () => runConnsList(target, {holders: true}))
    if (conns) views['conns list'] = conns
  }
  let locks: LocksListResult | undefined
  if (!interrupted()) {
    // Every topology: the node locks of a standalone's or replica set's members, a sharded cluster's primaries.
    locks = await view('locks list', notes, target, () => runLocksList(target))
    if (locks) views['locks list'] = locks
  }
  if (topology.kind === 'sharded' && !interrupted()) {
    const pings = await view('locks pings', notes, target, () => runLocksPings(target))
    if (pings) views['locks pings'] = pings
  }
  if (interrupted()) notes.push('interrupted: the file holds the reads made before the signal')
  for (const {host, error} of unreachable) notes.push(`${host} did not answer: ${error}`)
  const grouped = groupReads({events: log.events, topology, seedHosts: target.seedHosts, unreachable: new Set(unreachable.map((u) => u.host))})
  const hosts = withNodeLocks(
    grouped.map((host) => ({...host, reads: host.reads.map(readWithoutUserData)})),
    locks,
  )
  notes.push(...nodeLocksNotes(hosts))
  let snapshot: SnapshotFile = {
    format: SNAPSHOT_FORMAT,
    formatVersion: SNAPSHOT_FORMAT_VERSION,
    capturedAt,
    ...(options.pooltoolVersion === undefined ? {} : {pooltoolVersion: options.pooltoolVersion}),
    entry: {uri: uriWithoutCredentials(target.uri), seedHosts: [...target.seedHosts]},
    redactedHosts: options.redactHosts === true,
    hosts,
    unreachable,
    views,
  }
  if (options.redactHosts) snapshot = redactHosts(snapshot).tree
  return {snapshot, notes, interrupted: interrupted()}
}

