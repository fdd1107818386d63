/**
 * What may appear in a label. Every value passes through here: secrets the
 * user gave (the URI's password, …) are scrubbed wherever they appear (an
 * appName can carry anything), and with `--redact-hosts` every host name and
 * client address becomes a stable alias (`host-1.redacted:27017`,
 * `client-1.redacted`), the same name the same alias for the whole watch, so
 * a series keeps its identity across scrapes without naming the machine.
 */
import {scrubSecrets} from '../../redact.js'

export interface LabelPrivacyOptions {
  redactHosts: boolean
  secrets: readonly string[]
}

export class LabelPrivacy {
  private readonly hostAliases = new Map<string, string>()
  private readonly clientAliases = new Map<string, string>()

  constructor(private readonly options: LabelPrivacyOptions) {}

  /** Free text (appName, lock name, driver): secrets scrubbed. */
  text(value: string): string {
    return this.options.secrets.length === 0 ? value : scrubSecrets(value, this.options.secrets)
  }

  /** A `host:port` (or a bare name): aliased with --redact-hosts, the port kept. */
  host(value: string): string {
    if (!this.options.redactHosts) return this.text(value)
    const colon = value.lastIndexOf(':')
    const port = colon > 0 && /^\d+$/.test(value.slice(colon + 1)) ? value.slice(colon) : ''
    const name = port === '' ? value : value.slice(0, colon)
    return `${alias(this.hostAliases, name, 'host')}${port}`
  }

  /** The labels of every per-host series: cluster, host, role, and the replica set and shard where they apply. */
  hostLabels(cluster: string, host: {host: string; role: string; setName?: string; shard?: string}): Record<string, string> {
    return {
      cluster,
      host: this.host(host.host),
      role: host.role,
      set: host.setName === undefined ? '' : this.text(host.setName),
      shard: host.shard === undefined ? '' : this.text(host.shard),
    }
  }

  /** A client address (no port): aliased with --redact-hosts. */
  client(value: string): string {
    if (!this.options.redactHosts) return this.text(value)
    return alias(this.clientAliases, value, 'client')
  }
}

function alias(aliases: Map<string, string>, name: string, kind: string): string {
  let found = aliases.get(name)
  if (found === undefined) {
    found = `${kind}-${aliases.size + 1}.redacted`
    aliases.set(name, found)
  }
  return found
}

/**
 * The `top` largest entries by `count`, and the rest summed under one "other" entry: a label set whose
 * size does not grow with the number of clients (a client-per-request leak can mean thousands).
 */
export function topAndOther<T extends {count: number}>(items: readonly T[], top: number, other: (rest: T[]) => T): T[] {
  const sorted = [...items].sort((a, b) => b.count - a.count)
  if (sorted.length <= top) return sorted
  const rest = sorted.slice(top)
  return [...sorted.slice(0, top), other(rest)]
}
