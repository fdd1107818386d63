/**
 * `pooltool snapshot`: a recording of every read pooltool's commands make.
 * The target is resolved with a recorder (every ServerReader opened through it
 * reports each read and failure); then discovery, `conns list` (with holders)
 * and, on a sharded cluster, `locks list` and `locks pings` run as they do for
 * a user, and every host gets hello, buildInfo, hostInfo and a serverStatus
 * with every section a command may ask for. The results of the commands are
 * kept as `views`: what they computed from these very reads. Read only.
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
import {SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_VERSION, type SnapshotFile, toCanonicalJson} from './format.js'
import {groupReads} from './group.js'
import {redactHosts} from './redact-hosts.js'
import {rewriteTree} from './rewrite.js'

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
  if (topology.kind === 'sharded' && !interrupted()) {
    const locks = await view('locks list', notes, target, () => runLocksList(target))
    if (locks) views['locks list'] = locks
    const pings = await view('locks pings', notes, target, () => runLocksPings(target))
    if (pings) views['locks pings'] = pings
  }
  if (interrupted()) notes.push('interrupted: the file holds the reads made before the signal')
  for (const {host, error} of unreachable) notes.push(`${host} did not answer: ${error}`)
  const hosts = groupReads({events: log.events, topology, seedHosts: target.seedHosts, unreachable: new Set(unreachable.map((u) => u.host))})
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

