/**
 * What `pooltool auth` reads from and derives from the target URI: the SCRAM
 * credentials (never printed), whether TLS is asked for, the seed hosts (SRV
 * resolved), and one-host URIs per mechanism (credentials kept, forced or
 * stripped for `none`). Every other URI option passes through.
 */
import {promises as dns} from 'node:dns'

import {ConnectionString} from 'mongodb-connection-string-url'

import type {AuthMechanismName} from './types.js'

export interface UriCredentials {
  username: string
  password: string
  /** authSource, else the database in the path, else admin (the SCRAM default). */
  source: string
  /** authMechanism as written in the URI, if any. */
  mechanism?: string
}

function param(cs: ConnectionString, name: string): string | undefined {
  for (const [key, value] of cs.searchParams) if (key.toLowerCase() === name.toLowerCase()) return value
  return undefined
}

function deleteParam(cs: ConnectionString, name: string): void {
  for (const key of [...cs.searchParams.keys()]) if (key.toLowerCase() === name.toLowerCase()) cs.searchParams.delete(key)
}

function setParam(cs: ConnectionString, name: string, value: string): void {
  deleteParam(cs, name)
  cs.searchParams.set(name, value)
}

/** Options an SRV record's TXT may add (the driver applies the same set). */
const TXT_OPTIONS = ['authSource', 'replicaSet', 'loadBalanced']

export function credentialsFromUri(uri: string, txt?: URLSearchParams): UriCredentials | undefined {
  const cs = new ConnectionString(uri)
  if (!cs.username) return undefined
  const db = decodeURIComponent(cs.pathname.replace(/^\//, ''))
  const source = param(cs, 'authSource') ?? txt?.get('authSource') ?? (db.length > 0 ? db : 'admin')
  return {
    username: decodeURIComponent(cs.username),
    password: decodeURIComponent(cs.password),
    source,
    mechanism: param(cs, 'authMechanism'),
  }
}

/** tls=true / ssl=true, or an SRV URI that does not switch TLS off. */
export function tlsRequested(uri: string): boolean {
  const cs = new ConnectionString(uri)
  const value = param(cs, 'tls') ?? param(cs, 'ssl')
  if (value !== undefined) return value.toLowerCase() === 'true'
  return cs.isSRV
}

export interface SeedHosts {
  hosts: string[]
  /** Options from the SRV record's TXT (mongodb+srv only). */
  txt?: URLSearchParams
}

/** The hosts named in the URI; for mongodb+srv the SRV records (and the TXT options), as the driver resolves them. */
export async function resolveSeedHosts(uri: string): Promise<SeedHosts> {
  const cs = new ConnectionString(uri)
  if (!cs.isSRV) return {hosts: cs.hosts}
  const name = cs.hosts[0]!
  const service = param(cs, 'srvServiceName') ?? 'mongodb'
  const records = await dns.resolveSrv(`_${service}._tcp.${name}`)
  const txt = new URLSearchParams()
  try {
    for (const chunks of await dns.resolveTxt(name)) {
      for (const [key, value] of new URLSearchParams(chunks.join(''))) if (TXT_OPTIONS.includes(key)) txt.set(key, value)
    }
  } catch {
    // No TXT record: nothing to add.
  }
  return {hosts: records.map((r) => `${r.name.replace(/\.$/, '')}:${r.port}`), txt}
}

export interface HostUriOptions {
  /** 'none' strips the credentials; a SCRAM mechanism forces authMechanism; undefined keeps the URI's auth as given. */
  mechanism?: AuthMechanismName
  txt?: URLSearchParams
}

/**
 * A URI for one host only (directConnection=true, replicaSet dropped); an SRV
 * URI becomes a plain one with its TXT options and TLS on unless the URI says otherwise.
 */
export function hostUri(uri: string, host: string, options: HostUriOptions = {}): string {
  const original = new ConnectionString(uri)
  const cs = original.isSRV ? new ConnectionString(uri.replace(/^mongodb\+srv:/i, 'mongodb:')) : original.clone()
  if (original.isSRV) {
    if (param(cs, 'tls') === undefined && param(cs, 'ssl') === undefined) setParam(cs, 'tls', 'true')
    for (const [key, value] of options.txt ?? []) if (param(cs, key) === undefined) cs.searchParams.set(key, value)
    deleteParam(cs, 'srvServiceName')
    deleteParam(cs, 'srvMaxHosts')
  }
  cs.hosts = [host]
  deleteParam(cs, 'replicaSet')
  if (param(cs, 'loadBalanced')?.toLowerCase() !== 'true') setParam(cs, 'directConnection', 'true')
  if (options.mechanism === 'none') {
    stripCredentials(cs)
  } else if (options.mechanism !== undefined) {
    setParam(cs, 'authMechanism', options.mechanism)
    deleteParam(cs, 'authMechanismProperties')
  }
  return cs.toString()
}

function stripCredentials(cs: ConnectionString): void {
  cs.username = ''
  cs.password = ''
  for (const key of ['authSource', 'authMechanism', 'authMechanismProperties']) deleteParam(cs, key)
}

/** The same URI (every host, every other option) without user, password and auth options: reads that must not authenticate. */
export function withoutCredentials(uri: string): string {
  const cs = new ConnectionString(uri)
  stripCredentials(cs)
  return cs.toString()
}
