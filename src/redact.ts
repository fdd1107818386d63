/**
 * Credentials never leave pooltool: every URI that is printed, logged, put in
 * JSON or in an error message goes through here first.
 */
import {redactConnectionString} from 'mongodb-connection-string-url'

/** `mongodb://user:pw@h/?tlsCertificateKeyFilePassword=x` → `mongodb://<credentials>@h/?…=<credentials>`. */
export function redactUri(uri: string): string {
  try {
    return redactConnectionString(uri)
  } catch {
    // Unparsable: still strip anything that looks like userinfo.
    return uri.replace(/(mongodb(?:\+srv)?:\/\/)[^@/]*@/gi, '$1<credentials>@')
  }
}

/**
 * Remove secrets from free text (driver error messages can quote a URI or a
 * username:password pair). `secrets` are literal values known to be sensitive,
 * e.g. the password parsed from the target URI.
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/mongodb(?:\+srv)?:\/\/[^\s'"]+/gi, (uri) => redactUri(uri))
  for (const secret of secrets) {
    if (secret.length === 0) continue
    out = out.split(secret).join('<credentials>')
    const encoded = encodeURIComponent(secret)
    if (encoded !== secret) out = out.split(encoded).join('<credentials>')
  }
  return out
}
