/**
 * Which cluster a command talks to: `--uri`, else POOLTOOL_URI, else
 * MONGODB_URI, else the embedded simulated cluster started for this run (with
 * a one-line notice on stderr). The URI is validated here so a malformed one
 * fails before any connection attempt.
 */
import {ConnectionString} from 'mongodb-connection-string-url'

import {PoolToolError} from './errors.js'
import {redactText, redactUri} from './redact.js'
import {startSimCluster, type SimCluster} from './sim/host.js'
import type {SimOptions} from './sim/types.js'

export type TargetSource = '--uri' | 'POOLTOOL_URI' | 'MONGODB_URI' | 'embedded'

export interface Target {
  /** The URI with credentials, for the driver only. Never print it: use `redactedUri`. */
  readonly uri: string
  readonly redactedUri: string
  readonly source: TargetSource
  readonly simulated: boolean
  /** Hosts named in the URI ("host:port"). */
  readonly seedHosts: readonly string[]
  /** Literal secrets to scrub from any text we print (password from the URI). */
  readonly secrets: readonly string[]
  /** The embedded cluster, when we started one. */
  readonly sim?: SimCluster
  /** Stops the embedded cluster, if any. Safe to call twice. */
  close(): Promise<void>
}

export interface ResolveTargetInput {
  flagUri?: string
  env?: NodeJS.ProcessEnv
  /** Shape of the embedded cluster when no URI is given (e.g. sharded for `locks`). */
  embedded?: Partial<SimOptions>
  /** Where the "using the embedded cluster" notice goes. */
  notice?: (line: string) => void
}

/** Parse and check a connection string; throws INVALID_URI with a hint. */
export function parseTargetUri(uri: string): ConnectionString {
  try {
    return new ConnectionString(uri)
  } catch (error) {
    throw new PoolToolError(
      'INVALID_URI',
      `invalid connection string '${redactUri(uri)}': ${redactText((error as Error).message)}`,
      'expected mongodb://[user:password@]host[:port][,host…]/[db][?options] or mongodb+srv://…',
    )
  }
}

function secretsOf(cs: ConnectionString): string[] {
  const secrets: string[] = []
  if (cs.password) secrets.push(decodeURIComponent(cs.password), cs.password)
  for (const [key, value] of cs.searchParams) if (/password|secret|token/i.test(key) && value) secrets.push(value)
  return secrets
}

function targetFromUri(uri: string, source: TargetSource, sim?: SimCluster): Target {
  const cs = parseTargetUri(uri)
  let closed = false
  return {
    uri,
    redactedUri: redactUri(uri),
    source,
    simulated: sim !== undefined,
    seedHosts: cs.hosts,
    secrets: secretsOf(cs),
    sim,
    async close() {
      if (closed || !sim) return
      closed = true
      await sim.stop()
    },
  }
}

export async function resolveTarget(input: ResolveTargetInput): Promise<Target> {
  const env = input.env ?? process.env
  const given: Array<[TargetSource, string | undefined]> = [
    ['--uri', input.flagUri],
    ['POOLTOOL_URI', env.POOLTOOL_URI],
    ['MONGODB_URI', env.MONGODB_URI],
  ]
  for (const [source, uri] of given) {
    if (uri !== undefined && uri.trim() !== '') return targetFromUri(uri.trim(), source)
  }
  const sim = await startSimCluster(input.embedded ?? {})
  const target = targetFromUri(sim.info.uri, 'embedded', sim)
  input.notice?.(
    `pooltool: no --uri, POOLTOOL_URI or MONGODB_URI: using the embedded simulated ${sim.info.topology} ` +
      `(${target.redactedUri}); point at a real cluster with --uri mongodb://…`,
  )
  return target
}
