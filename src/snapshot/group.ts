/**
 * A capture's reads, grouped by the process that answered them. The recorder
 * names the address a reader connected to; the file names each process as the
 * cluster does (`host`), with `address` when the capture reached it elsewhere
 * (the entry node through a port-forward). A read over the whole deployment
 * (a URI with several hosts) goes to the process that answered it: the one its
 * hello names (`me`), the primary of a replica set, or every seed router of a
 * sharded cluster (any of them could have answered, and a replay must answer
 * the same on each).
 */
import type {Document} from 'bson'

import type {ReadEvent} from '../probes/reader.js'
import {type ClusterTopology, connectAddress, type HostRole} from '../probes/topology.js'
import {dbOfRead, type SnapshotHost, type SnapshotRead} from './format.js'

export interface GroupInput {
  events: readonly ReadEvent[]
  topology: ClusterTopology
  seedHosts: readonly string[]
  /** Addresses whose own hello failed: their failed reads are not a host of the file but an `unreachable` entry. */
  unreachable: ReadonlySet<string>
}

function toRead(event: ReadEvent): SnapshotRead {
  return {
    name: event.name,
    db: dbOfRead(event.name),
    request: event.request,
    ...(event.reply === undefined ? {} : {reply: event.reply}),
    ...(event.error === undefined ? {} : {error: event.error}),
    receivedAt: event.receivedAt,
    durationMS: Math.round(event.durationMS * 1000) / 1000,
  }
}

const isHello = (name: string) => name === 'hello' || name === 'isMaster'

function roleFromHello(hello: Document | undefined): HostRole {
  if (hello?.msg === 'isdbgrid') return 'mongos'
  if (typeof hello?.setName === 'string') {
    if (hello.configsvr !== undefined) return 'config'
    if (hello.arbiterOnly === true) return 'arbiter'
    return hello.isWritablePrimary === true || hello.ismaster === true ? 'primary' : 'secondary'
  }
  return 'standalone'
}

/** Which cluster name answers at each address: discovery's, then what the process calls itself in its hello. */
function namesByAddress(input: GroupInput): Map<string, string> {
  const names = new Map<string, string>()
  for (const event of input.events) {
    const me = (event.reply as Document | undefined)?.me
    if (isHello(event.name) && typeof me === 'string' && !event.host.includes(',')) names.set(event.host, me)
  }
  if (input.topology.entry) names.set(input.topology.entry.address, input.topology.entry.host)
  for (const host of input.topology.hosts) names.set(connectAddress(host), host.host)
  return names
}

/** The cluster names a deployment-wide read is filed under. */
function deploymentOwners(event: ReadEvent, input: GroupInput, nameOf: (address: string) => string): string[] {
  const me = (event.reply as Document | undefined)?.me
  if (typeof me === 'string') return [me]
  if (input.topology.kind === 'replset') {
    const primary = input.topology.hosts.find((h) => h.role === 'primary')
    if (primary) return [primary.host]
  }
  return [...new Set(input.seedHosts.map(nameOf))]
}

/** Every recorded read under the process that answered it; entry hosts (the URI's) first, then discovery's order. */
export function groupReads(input: GroupInput): SnapshotHost[] {
  const names = namesByAddress(input)
  const nameOf = (address: string) => names.get(address) ?? address
  const groups = new Map<string, {addresses: Set<string>; reads: SnapshotRead[]}>()
  const file = (name: string, address: string | undefined, read: SnapshotRead) => {
    let group = groups.get(name)
    if (!group) groups.set(name, (group = {addresses: new Set(), reads: []}))
    if (address !== undefined) group.addresses.add(address)
    group.reads.push(read)
  }
  const deployment = input.seedHosts.join(',')
  for (const event of input.events) {
    if (input.unreachable.has(event.host)) continue
    const read = toRead(event)
    if (event.host === deployment && input.seedHosts.length > 1) {
      for (const owner of deploymentOwners(event, input, nameOf)) file(owner, undefined, read)
    } else {
      file(nameOf(event.host), event.host, read)
    }
  }
  const roleOf = new Map(input.topology.hosts.map((h) => [h.host, h.role]))
  const order = [...new Set([...input.seedHosts.map(nameOf), ...input.topology.hosts.map((h) => h.host), ...groups.keys()])]
  const hosts: SnapshotHost[] = []
  for (const name of order) {
    const group = groups.get(name)
    if (!group) continue
    const firstHello = group.reads.find((r) => isHello(r.name) && r.reply !== undefined && !Array.isArray(r.reply))
    const helloReply = firstHello?.reply as Document | undefined
    const address = [...group.addresses].find((a) => a !== name)
    const serverTime = helloReply?.localTime
    const clock = firstHello?.receivedAt ? {clock: {...(serverTime instanceof Date ? {serverTime} : {}), receivedAt: firstHello.receivedAt}} : {}
    hosts.push({host: name, ...(address === undefined ? {} : {address}), role: roleOf.get(name) ?? roleFromHello(helloReply), ...clock, reads: group.reads})
  }
  return hosts
}
