/**
 * What the target is, from one `hello` on the entry point: a standalone, a
 * replica set (members from `hosts`/`passives`) or a mongos (msg "isdbgrid").
 */
import type {Document, MongoClient} from '../mongo/driver.js'

export type TopologyKind = 'standalone' | 'replset' | 'sharded'
export type HostRole = 'mongos' | 'shard' | 'config' | 'primary' | 'secondary' | 'standalone'

export interface HostEntry {
  host: string
  role: HostRole
}

export interface EntryTopology {
  kind: TopologyKind
  /** The hosts the entry point leads to: replica-set members, or the seed routers of a sharded cluster. */
  hosts: HostEntry[]
  setName?: string
}

export function topologyFromHello(hello: Document, seedHosts: readonly string[]): EntryTopology {
  if (hello.msg === 'isdbgrid') {
    return {kind: 'sharded', hosts: seedHosts.map((host) => ({host, role: 'mongos'}))}
  }
  if (typeof hello.setName === 'string') {
    const members = [...((hello.hosts as string[] | undefined) ?? []), ...((hello.passives as string[] | undefined) ?? [])]
    const primary = hello.primary as string | undefined
    return {
      kind: 'replset',
      setName: hello.setName,
      hosts: members.map((host) => ({host, role: host === primary ? 'primary' : 'secondary'})),
    }
  }
  return {kind: 'standalone', hosts: seedHosts.slice(0, 1).map((host) => ({host, role: 'standalone'}))}
}

export async function readEntryTopology(client: MongoClient, seedHosts: readonly string[]): Promise<EntryTopology> {
  const hello = await client.db('admin').command({hello: 1})
  return topologyFromHello(hello, seedHosts)
}

export async function readServerVersion(client: MongoClient): Promise<string> {
  const info = await client.db('admin').command({buildInfo: 1})
  return String(info.version ?? 'unknown')
}
