/**
 * `pooltool snapshot --redact-hosts`: every host name and IP address in the
 * file becomes a stable alias (`host-1.redacted`; ports kept), the same name
 * the same alias everywhere, so the file still reads as one cluster and
 * replays as one. Names are collected where documents carry them (hello
 * hosts/me/primary, serverStatus host, config.shards host strings,
 * config.mongos and lockpings ids, locks `process` "host:port:epoch:rand",
 * connPoolStats keys, $currentOp client/host, hostInfo hostname …) and every
 * IPv4 address in any string; then every whole occurrence is replaced.
 */
import type {Document} from 'bson'

import {rewriteNames} from './rewrite.js'

/** Fields whose string values name hosts ("h:p", "set/h:p,h:p", "h:p:epoch:rand"). */
const HOST_FIELDS = new Set([
  'host', 'hosts', 'me', 'primary', 'passives', 'arbiters', 'addr', 'address', 'seedHosts', 'process', 'configsvrConnectionString',
  'connectionString', 'syncSourceHost', 'syncingTo', 'uri', 'entry', 'target', 'who', 'hostname', 'client', 'client_s', 'remote', 'router',
])
/** Fields that may name a host without a port (an IP, a machine name). */
const BARE_HOST_FIELDS = new Set(['hostname', 'client', 'client_s', 'remote'])
/** Objects whose keys are "host:port" (connPoolStats). */
const HOST_KEYED = new Set(['hosts', 'replicaSets', 'pools'])

const IPV4 = /(?<![0-9.])(?:\d{1,3}\.){3}\d{1,3}(?![0-9]|\.[0-9])/g
/** "host:port" inside a longer string (a URI, "rs/h1:p,h2:p", "h:p:epoch:rand"): the host part. */
const HOST_PORT = /(?<![A-Za-z0-9_.-])(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*):\d{1,5}(?![0-9])/g

/** A host part worth redacting: a name with a letter, or an IP; never a bare number or a lone word without a dot or port. */
function isHostName(name: string): boolean {
  if (name.startsWith('[')) return true
  if (/^(?:\d{1,3}\.){3}\d{1,3}$/.test(name)) return true
  return /[A-Za-z]/.test(name) && !/^\d/.test(name)
}

function namesIn(value: string, bare: boolean, into: Set<string>): void {
  for (const match of value.matchAll(HOST_PORT)) if (isHostName(match[1]!)) into.add(match[1]!)
  if (bare && /^[A-Za-z0-9_.-]+$/.test(value) && isHostName(value) && (value.includes('.') || /^[A-Za-z][A-Za-z0-9-]*$/.test(value))) into.add(value)
  if (bare && /^\[?[0-9A-Fa-f]*:[0-9A-Fa-f:]+\]?$/.test(value) && value.includes('::')) into.add(value)
}

/** Every host name and IP the tree mentions where hosts are named. */
export function collectHostNames(tree: unknown): string[] {
  const found = new Set<string>()
  const walk = (value: unknown, field: string | undefined) => {
    if (typeof value === 'string') {
      if (field !== undefined && HOST_FIELDS.has(field)) namesIn(value, BARE_HOST_FIELDS.has(field), found)
      if (field === '_id') namesIn(value, false, found)
      for (const ip of value.match(IPV4) ?? []) found.add(ip)
      return
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item, field)
      return
    }
    if (value === null || typeof value !== 'object' || (value as {_bsontype?: string})._bsontype !== undefined || value instanceof Date) return
    for (const [key, inner] of Object.entries(value as Document)) {
      if (field !== undefined && HOST_KEYED.has(field)) namesIn(key, false, found)
      for (const ip of key.match(IPV4) ?? []) found.add(ip)
      walk(inner, key)
    }
  }
  walk(tree, undefined)
  return [...found]
}

/** name → `host-N.redacted`, numbered in the order the names were found. */
export function aliasMap(names: readonly string[]): Map<string, string> {
  const map = new Map<string, string>()
  for (const name of names) if (!map.has(name)) map.set(name, `host-${map.size + 1}.redacted`)
  return map
}

/** The tree with every host name and IP replaced by its alias; and the map, for the summary's count. */
export function redactHosts<T>(tree: T): {tree: T; aliases: Map<string, string>} {
  const aliases = aliasMap(collectHostNames(tree))
  return {tree: rewriteNames(tree, aliases), aliases}
}
