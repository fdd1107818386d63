/**
 * Credentials never leave pooltool: every URI that is printed, logged, put in
 * JSON or in an error message goes through here first.
 */
import {ConnectionString, redactConnectionString} from 'mongodb-connection-string-url'

/** `mongodb://user:pw@h/?tlsCertificateKeyFilePassword=x` → `mongodb://<credentials>@h/?…=<credentials>`. */
export function redactUri(uri: string): string {
  try {
    // redactConnectionString passes some unparsable strings through untouched: parse first.
    new ConnectionString(uri)
    return redactConnectionString(uri)
  } catch {
    // Unparsable: we cannot tell where userinfo ends, so hide everything
    // between the scheme and the last '@' (a password may hold '/' or ':').
    return uri.replace(/^([^:]*:\/*)[\s\S]*@/, '$1<credentials>@')
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
