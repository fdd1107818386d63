/**
 * The URI a replay prints: the captured entry's hosts replaced by their
 * listeners, the captured options kept (directConnection, replicaSet,
 * readPreference, appName …) except those the replay cannot serve: TLS,
 * authentication, compression, SRV and load-balancer options.
 */
import {ConnectionString} from 'mongodb-connection-string-url'

const DROPPED_OPTION = /^(tls|ssl|auth|srv|loadbalanced$|compressors$|zlibcompressionlevel$)/i

export function replayUri(capturedUri: string, seeds: readonly string[], listenerOf: ReadonlyMap<string, string>, fallback: string): string {
  const listeners = [...new Set(seeds.map((seed) => listenerOf.get(seed)).filter((l): l is string => l !== undefined))]
  const hosts = listeners.length > 0 ? listeners : [fallback]
  const params = new URLSearchParams()
  try {
    const cs = new ConnectionString(capturedUri)
    for (const [key, value] of cs.searchParams) if (!DROPPED_OPTION.test(key)) params.append(key, value)
  } catch {
    // An unparsable captured URI (a hand-written fixture): the listeners alone.
  }
  const query = params.toString()
  return `mongodb://${hosts.join(',')}/${query ? `?${query}` : ''}`
}
