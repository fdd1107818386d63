/** Flags of `pooltool auth` → a frozen AuthConfig; no I/O. */
import {AUTH_DEFAULTS} from '../defaults.js'
import {usageError} from '../errors.js'
import {AUTH_MECHANISMS, type AuthConfig, type AuthMechanismName} from './types.js'

export interface AuthFlags {
  mechanisms?: string
  connections: number
  /** Absent: DEFAULT_PARALLEL, lowered to --connections when that is smaller. */
  parallel?: number
  pings: number
}

/** Connections opened at once in a storm unless --parallel says otherwise (never above --connections). */
export const DEFAULT_PARALLEL = AUTH_DEFAULTS.parallel

/** `none,scram-sha-256` → canonical names, duplicates dropped; unknown names are a usage error. */
export function parseMechanisms(text: string): AuthMechanismName[] {
  const out: AuthMechanismName[] = []
  for (const raw of text.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    const name = AUTH_MECHANISMS.find((m) => m.toLowerCase() === raw.toLowerCase())
    if (!name) {
      throw usageError(
        `unknown mechanism '${raw}' in --mechanisms: pooltool auth measures ${AUTH_MECHANISMS.join(', ')}`,
        `e.g. --mechanisms ${AUTH_MECHANISMS.join(',')}`,
      )
    }
    if (!out.includes(name)) out.push(name)
  }
  if (out.length === 0) throw usageError('--mechanisms is empty', `name one or more of ${AUTH_MECHANISMS.join(', ')}`)
  return out
}

export function toAuthConfig(flags: AuthFlags): AuthConfig {
  // Only an explicit --parallel above --connections is a mistake; the default follows a small --connections down.
  const parallel = flags.parallel ?? Math.min(DEFAULT_PARALLEL, flags.connections)
  if (parallel > flags.connections) {
    throw usageError(
      `--parallel ${parallel} is above --connections ${flags.connections}: a storm cannot open more connections than the pass has`,
      `lower --parallel to at most ${flags.connections} or raise --connections`,
    )
  }
  return Object.freeze({
    mechanisms: flags.mechanisms === undefined ? undefined : Object.freeze(parseMechanisms(flags.mechanisms)),
    connections: flags.connections,
    parallel,
    pings: flags.pings,
  })
}
