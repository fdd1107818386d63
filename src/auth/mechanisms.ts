/**
 * Which mechanisms `pooltool auth` measures, which one its probe connection
 * logs in with, and which one the headline speaks for. Pure decisions over what
 * the URI, the server and discovery said; no I/O.
 */
import {usageError} from '../errors.js'
import {isScramMechanism, type ScramCredentials, type ScramMechanism} from '../wire/index.js'
import type {MeasuredHost} from './measured-host.js'
import type {AuthMechanismName} from './types.js'
import type {UriCredentials} from './uri.js'

export interface MechanismChoice {
  mechanisms: AuthMechanismName[]
  notes: string[]
}

/** Which mechanisms to measure: the ones asked for (each checked), else none + what the server offers and the user has. */
export function chooseMechanisms(
  requested: readonly AuthMechanismName[] | undefined,
  ctx: {credentials?: UriCredentials; nonScramUriMechanism?: string; userMechanisms?: string[]; serverMechanisms?: string[]},
): MechanismChoice {
  const notes: string[] = []
  const scram: ScramMechanism[] = ['SCRAM-SHA-1', 'SCRAM-SHA-256']
  if (requested === undefined) {
    const mechanisms: AuthMechanismName[] = ['none']
    if (ctx.nonScramUriMechanism) {
      notes.push(`the URI authenticates with ${ctx.nonScramUriMechanism}: pooltool auth measures SCRAM only, so only 'none' ran`)
    } else if (!ctx.credentials) {
      notes.push('the URI has no credentials: only unauthenticated connections (none) were measured; add user:password to measure SCRAM')
    } else {
      for (const m of scram) {
        if (ctx.serverMechanisms && !ctx.serverMechanisms.includes(m)) continue
        if (ctx.userMechanisms && !ctx.userMechanisms.includes(m)) continue
        mechanisms.push(m)
      }
      if (!ctx.userMechanisms) notes.push('the server did not list the user\'s mechanisms (hello saslSupportedMechs): both SCRAM mechanisms were tried')
      const skipped = scram.filter((m) => !mechanisms.includes(m))
      if (skipped.length > 0) notes.push(`${skipped.join(', ')} not measured: not offered by the server or no such credentials for the user`)
    }
    return {mechanisms, notes}
  }
  for (const m of requested) {
    if (!isScramMechanism(m)) continue
    if (ctx.nonScramUriMechanism) {
      throw usageError(
        `${m} cannot be measured: the URI authenticates with ${ctx.nonScramUriMechanism}`,
        'give a URI with a SCRAM user (user:password@, no authMechanism or a SCRAM one), or measure --mechanisms none',
      )
    }
    if (!ctx.credentials) {
      throw usageError(`${m} needs credentials: the URI has no user name and password`, 'put user:password@ in the URI, or measure --mechanisms none')
    }
    if (ctx.serverMechanisms && !ctx.serverMechanisms.includes(m)) {
      throw usageError(
        `the server does not offer ${m} (authenticationMechanisms: ${ctx.serverMechanisms.join(', ')})`,
        `drop ${m} from --mechanisms`,
      )
    }
    if (ctx.userMechanisms && !ctx.userMechanisms.includes(m)) {
      throw usageError(
        `the URI's user has no ${m} credentials (the server lists ${ctx.userMechanisms.join(', ') || 'none'} for it)`,
        `drop ${m} from --mechanisms, or give the user ${m} credentials (updateUser with mechanisms and pwd)`,
      )
    }
  }
  return {mechanisms: [...requested], notes}
}

/**
 * The SCRAM mechanism pooltool's probe connection logs in with: the URI's own,
 * else the one the driver would negotiate for this user (SCRAM-SHA-256 when the
 * user has it, else SCRAM-SHA-1). When the server did not list the user's
 * mechanisms, wire version 7 (MongoDB 4.0) is the first with SCRAM-SHA-256.
 * Undefined without SCRAM credentials: the probe then logs in as the URI says.
 */
export function probeMechanism(
  credentials: ScramCredentials | undefined,
  uriMechanism: string | undefined,
  measured: Pick<MeasuredHost, 'userMechanisms' | 'maxWireVersion'>,
): ScramMechanism | undefined {
  if (!credentials) return undefined
  if (uriMechanism !== undefined && isScramMechanism(uriMechanism)) return uriMechanism
  if (measured.userMechanisms?.includes('SCRAM-SHA-256')) return 'SCRAM-SHA-256'
  if (measured.userMechanisms?.includes('SCRAM-SHA-1')) return 'SCRAM-SHA-1'
  return (measured.maxWireVersion ?? 0) >= 7 ? 'SCRAM-SHA-256' : 'SCRAM-SHA-1'
}

/** The mechanism the URI's own client would use. */
export function headlineMechanism(measured: readonly AuthMechanismName[], uriMechanism: string | undefined): AuthMechanismName {
  if (uriMechanism !== undefined && isScramMechanism(uriMechanism) && measured.includes(uriMechanism)) return uriMechanism
  if (measured.includes('SCRAM-SHA-256')) return 'SCRAM-SHA-256'
  if (measured.includes('SCRAM-SHA-1')) return 'SCRAM-SHA-1'
  return 'none'
}
