/**
 * Credentials never leave pooltool: every URI that is printed, logged, put in
 * JSON or in an error message goes through here first.
 */
import {createRequire} from 'node:module'
import {inspect} from 'node:util'

import type * as ConnectionStringModule from 'mongodb-connection-string-url'

let connectionStringModule: typeof ConnectionStringModule | undefined
/**
 * The URI parser, loaded on first use (synchronously: it is CommonJS). The secret guard imports
 * this module on every start, and the parser (whatwg-url, tr46) is needed only when an invocation
 * carries a URI with something to hide: `--help` and `--version` never pay for it.
 */
function connectionStrings(): typeof ConnectionStringModule {
  connectionStringModule ??= createRequire(import.meta.url)('mongodb-connection-string-url') as typeof ConnectionStringModule
  return connectionStringModule
}

/** What a secret is replaced with, in URIs and in free text alike. */
export const REDACTED = '<credentials>'

/**
 * Secrets shorter than this are not scrubbed from free text: replacing every
 * "p" of a message would make it unreadable and show the password anyway (it
 * is whatever went missing). URIs are still redacted whole, by their shape.
 */
export const MIN_SCRUBBED_SECRET_LENGTH = 4

/** URI options whose values are secrets (tlsCertificateKeyFilePassword, AWS_SESSION_TOKEN in authMechanismProperties …). */
const SECRET_OPTION = /password|secret|token/i

/**
 * URIs already redacted, by what was given: the secret guard and --debug redact the same few URIs in
 * every write and log line, and each redaction parses the URI twice (whatwg-url): the commands of
 * test/cli/secrets.test.ts, run with credentials and --debug, spent ~23 % of their CPU there.
 * Bounded: emptied when full (a long watch meets new URIs only as hosts come).
 */
const redactedUris = new Map<string, string>()
const MAX_REDACTED_URIS = 256

/** `mongodb://user:pw@h/?tlsCertificateKeyFilePassword=x` → `mongodb://<credentials>@h/?…=<credentials>`. */
export function redactUri(uri: string): string {
  // Nothing to hide: print it as given (the redactor would also append a '/' or two).
  if (!uri.includes('@') && !SECRET_OPTION.test(uri)) return uri
  let redacted = redactedUris.get(uri)
  if (redacted === undefined) {
    if (redactedUris.size >= MAX_REDACTED_URIS) redactedUris.clear()
    redacted = parseAndRedact(uri)
    redactedUris.set(uri, redacted)
  }
  return redacted
}

function parseAndRedact(uri: string): string {
  try {
    // redactConnectionString passes some unparsable strings through untouched: parse first.
    const {ConnectionString, redactConnectionString} = connectionStrings()
    new ConnectionString(uri)
    return redactConnectionString(uri)
  } catch {
    // Unparsable: we cannot tell where userinfo ends, so hide everything
    // between the scheme and the last '@' (a password may hold '/' or ':').
    return uri.replace(/^([^:]*:\/*)[\s\S]*@/, `$1${REDACTED}@`)
  }
}

/**
 * The literal secrets a connection string carries: the password (as written
 * and decoded), the whole userinfo, and the values of password-like options.
 * Works on strings the URI parser rejects too, so a malformed URI's password
 * is still known to be one.
 */
export function secretsOfUri(uri: string): string[] {
  const secrets = new Set<string>()
  const add = (value: string | undefined) => {
    if (!value) return
    secrets.add(value)
    try {
      secrets.add(decodeURIComponent(value))
    } catch {
      // Not valid percent-encoding: the raw form is the one that can appear.
    }
  }
  try {
    const cs = new (connectionStrings().ConnectionString)(uri)
    add(cs.password)
    for (const [key, value] of cs.searchParams) if (SECRET_OPTION.test(key)) add(value)
  } catch {
    // Fall through to the shape-based reading below.
  }
  const userinfo = /^[a-z+]+:\/\/([^/?#]*)@/i.exec(uri)?.[1]
  if (userinfo) {
    add(userinfo)
    const colon = userinfo.indexOf(':')
    if (colon >= 0) add(userinfo.slice(colon + 1))
  }
  for (const match of uri.matchAll(/[?&][^=&]*(?:password|secret|token)[^=&]*=([^&#]*)/gi)) add(match[1])
  return [...secrets]
}

/**
 * Every form a secret can take in text we print: as is, URI-encoded, and
 * escaped the way JSON.stringify and util.inspect (oclif's DEBUG output, the
 * driver's logger) quote it.
 */
export function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), inspect(secret).slice(1, -1)])
  return [...forms].filter((form) => form.length >= MIN_SCRUBBED_SECRET_LENGTH)
}

/**
 * Remove secrets from free text (driver error messages can quote a URI or a
 * username:password pair). `secrets` are literal values known to be sensitive,
 * e.g. the password parsed from the target URI.
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  return scrubSecrets(text.replace(/mongodb(?:\+srv)?:\/\/[^\s'"]+/gi, (uri) => redactUri(uri)), secrets)
}

/** Replace each literal secret, in each of its printed forms, by `<credentials>`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  return secretScrubber(secrets)(text)
}

/**
 * scrubSecrets for many texts and the same secrets (the secret guard: every write to stdout and stderr):
 * the printed forms are worked out once, not for each text.
 */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  // Longest first, so a password that contains another secret is hidden whole.
  const forms = secrets.flatMap((secret) => secretForms(secret)).sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text
    for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED)
    return out
  }
}
