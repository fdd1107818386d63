/**
 * Turns driver and server errors into (a) a short class name for counting
 * errors during a run and (b) a PoolToolError with a hint for failures that
 * end a command. Classifies by `name` and server `code`, never by
 * `instanceof` against deep imports (several driver error classes are not
 * exported by the driver's index).
 */
import {PoolToolError} from '../errors.js'
import {redactText} from '../redact.js'

interface ErrorLike {
  name?: string
  message?: string
  code?: number | string
  codeName?: string
  cause?: unknown
  reason?: {servers?: Map<string, {error?: unknown}>}
  errorLabels?: string[]
}

const asErrorLike = (value: unknown): ErrorLike | undefined =>
  value !== null && typeof value === 'object' ? (value as ErrorLike) : undefined

/** The error itself, its causes, and the per-server errors a server-selection error carries. */
function* errorChain(error: unknown): Generator<ErrorLike> {
  const seen = new Set<unknown>()
  const queue: unknown[] = [error]
  while (queue.length > 0) {
    const current = asErrorLike(queue.shift())
    if (!current || seen.has(current)) continue
    seen.add(current)
    yield current
    queue.push(current.cause)
    const servers = current.reason?.servers
    if (servers instanceof Map) for (const server of servers.values()) queue.push(server?.error)
  }
}

/**
 * Server codes that say a host behind the one that answered is out of reach: HostUnreachable 6,
 * HostNotFound 7, NetworkTimeout 89, FailedToSatisfyReadPreference 133,
 * NetworkInterfaceExceededTimeLimit 202, SocketException 9001 (a router whose config server is down).
 */
const UNREACHABLE_SERVER_CODES = new Set([6, 7, 89, 133, 202, 9001])

export const AUTH_FAILED_CODE = 18
export const UNAUTHORIZED_CODE = 13
export const LOCK_BUSY_CODE = 46
export const CONFLICTING_OPERATION_CODE = 117

/** Server error code (e.g. 46) anywhere in the chain. */
export function serverErrorCode(error: unknown): number | undefined {
  for (const e of errorChain(error)) if (typeof e.code === 'number') return e.code
  return undefined
}

/** The server answered that the operation's time limit (maxTimeMS) passed: its codeName; the connection stays. */
export const MAX_TIME_EXPIRED_CLASS = 'MaxTimeMSExpired'
/** The client gave up waiting (socketTimeoutMS): the driver closes the connection. */
export const TIMEOUT_CLASS = 'timeout'

/**
 * A short, stable class for counting errors in a run: `network`, `timeout`,
 * `poolCleared`, `waitQueueTimeout`, `poolClosed`, `serverSelection`, `auth`,
 * the server's codeName (`LockBusy`, `NotWritablePrimary` …) or `other`.
 */
export function errorClass(error: unknown): string {
  const first = asErrorLike(error)
  const name = first?.name ?? ''
  const message = first?.message ?? ''
  if (name === 'MongoWaitQueueTimeoutError') return 'waitQueueTimeout'
  if (name === 'MongoPoolClearedError') return 'poolCleared'
  if (name === 'MongoPoolClosedError' || name === 'MongoTopologyClosedError') return 'poolClosed'
  if (name === 'MongoNetworkTimeoutError' || name === 'MongoOperationTimeoutError') return TIMEOUT_CLASS
  if (name === 'MongoNetworkError') return 'network'
  for (const e of errorChain(error)) {
    if (e.code === AUTH_FAILED_CODE) return 'auth'
    if (typeof e.codeName === 'string' && e.codeName.length > 0) return e.codeName
  }
  if (name === 'MongoServerSelectionError') return 'serverSelection'
  if (closedByHost(error) || /socket.*(closed|hang up)/i.test(message)) return 'network'
  return 'other'
}

/**
 * Node's own socket errors for a connection the other end closed, as they can reach pooltool unwrapped by the
 * driver (a monitor's failed check, serverHeartbeatFailed.failure): `read ECONNRESET` (code ECONNRESET, syscall
 * read) and, written after the server's FIN, 'This socket has been ended by the other party' (code EPIPE, no
 * syscall: lib/net.js writeAfterFIN). A server at its connection limit accepts and closes at once, which gives either.
 */
const CLOSED_BY_PEER_CODES = new Set(['ECONNRESET', 'EPIPE'])

/**
 * The same, as messages: Node's (above), the driver's "connection <id> to <host> closed" (its socket closed under
 * a check or an operation) and pooltool's wire client's "closed by the server" (src/wire). A refused TCP connect
 * (ECONNREFUSED) is not one: nothing listened, where these say something took the connection and let it go.
 */
const CLOSED_BY_PEER_MESSAGE = /ECONNRESET|EPIPE|ended by the other party|closed by the server|connection \S+ to \S+ closed/

/** The first error in the chain that says the host accepted the connection and then closed it. */
function closedByPeer(error: unknown): ErrorLike | undefined {
  for (const e of errorChain(error)) {
    if ((typeof e.code === 'string' && CLOSED_BY_PEER_CODES.has(e.code)) || CLOSED_BY_PEER_MESSAGE.test(e.message ?? '')) return e
  }
  return undefined
}

/**
 * Whether the host accepted the connection and closed it (a server at its connection limit, one that requires TLS
 * from a plain client, a proxy that resets): the one test auth's probes, error classes and hints share.
 */
export const closedByHost = (error: unknown): boolean => closedByPeer(error) !== undefined

/** Monitoring commands pooltool reads with: clusterMonitor grants them all, read-only. */
const MONITORING_COMMANDS = /\{ (serverStatus|getParameter|aggregate|currentOp|connPoolStats|listShards|replSetGetStatus|hostInfo|getShardMap|listCollections|find):/

/** Which role to grant, from the server's "not authorized on <db> to execute command { <name>: …" message. */
export function privilegeHint(deniedMessage: string): string {
  const db = /not authorized on (\S+) to execute/.exec(deniedMessage)?.[1]
  if (db === 'admin' || db === 'config' || (db === undefined && MONITORING_COMMANDS.test(deniedMessage))) {
    return 'grant the user the clusterMonitor role (read-only), or connect as a user that has it'
  }
  return db
    ? `grant the user readWrite on ${db} (pooltool's own database), or connect as a user that has it`
    : 'connect as a user with the privileges this command needs (docs/targets.md lists them per command)'
}

/** Node system errors (`ENOTFOUND`, `ENOENT` …) carry a string `code`, `syscall` and often `hostname` or `path`. */
interface SystemErrorLike extends ErrorLike {
  code: string
  syscall?: string
  hostname?: string
  path?: string
}

const isSystemError = (e: ErrorLike): e is SystemErrorLike => typeof e.code === 'string' && /^E[A-Z_]+$/.test(e.code)

/** DNS failures: an unresolvable host or SRV/TXT record (mongodb+srv://) means the target cannot be reached. */
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ESERVFAIL', 'ENODATA', 'ETIMEOUT', 'ECONNREFUSED', 'EREFUSED', 'ENONAME', 'EBADNAME'])
const DNS_SYSCALL = /^(query|getaddrinfo|getHostByAddr)/

/** TLS failures the user fixes with a flag or a file (tlsCAFile, tlsAllowInvalidHostnames …), not by waiting. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_|CERT_|ERR_OSSL_)/

/** Listening failed (e.g. `sim --port` taken): a flag value that cannot work. */
const LISTEN_FAILURE = /EADDRINUSE|address already in use|EADDRNOTAVAIL/i

/** What closes a connection it accepted, each with where to look. */
export const CLOSED_BY_HOST_HINT =
  'a server closes connections as it shuts down, and new ones at once at its connection limit (its log: "connection refused because too many open connections"; ' +
  'serverStatus connections), when it requires TLS (add tls=true), or on Atlas from an address not on the IP access list'

/** Bugs are reported with what the user saw; never ask for output that could hold a secret. */
export const BUG_HINT = 'this looks like a pooltool bug: please report the command (without the URI) and this line; --debug shows more, with credentials redacted'

/**
 * The driver loads some features' packages only when a connection string asks for them
 * (MongoMissingDependencyError, by `dependencyName`); pooltool ships none of them.
 * What asks for each, and its package.
 */
const OPTIONAL_DEPENDENCIES: Record<string, {feature: string; pkg: string; instead: string}> = {
  kerberos: {feature: 'authMechanism=GSSAPI', pkg: 'kerberos', instead: 'or use another authMechanism: SCRAM-SHA-256, MONGODB-X509 or PLAIN'},
  '@aws-sdk/credential-providers': {feature: 'authMechanism=MONGODB-AWS', pkg: '@aws-sdk/credential-providers', instead: 'or use another authMechanism'},
  'gcp-metadata': {feature: 'authMechanism=MONGODB-OIDC with ENVIRONMENT:gcp', pkg: 'gcp-metadata', instead: 'or use another authMechanism'},
  snappy: {feature: 'compressors=snappy', pkg: 'snappy', instead: 'or drop snappy from compressors= (zlib needs no package)'},
  zstd: {feature: 'compressors=zstd', pkg: '@mongodb-js/zstd', instead: 'or run pooltool on Node.js 22.15 or later (built-in zstd), or drop zstd from compressors= (zlib needs no package)'},
  socks: {feature: 'proxyHost (a SOCKS5 proxy)', pkg: 'socks', instead: 'or connect without proxyHost'},
  'mongodb-client-encryption': {feature: 'client-side field level encryption', pkg: 'mongodb-client-encryption', instead: 'or connect without auto-encryption options'},
}

/** A usage line (and hint) for an optional driver package the URI needs and this install lacks. */
function missingDependency(dependencyName: unknown): {message: string; hint: string} {
  const name = typeof dependencyName === 'string' && dependencyName !== '' ? dependencyName : 'an optional package'
  const known = OPTIONAL_DEPENDENCIES[name] ?? {feature: 'an option in the connection string', pkg: name, instead: 'or remove that option'}
  return {
    message: `${known.feature} needs the optional '${known.pkg}' package, which this install of pooltool does not have`,
    hint: `npm install ${known.pkg} where pooltool is installed, ${known.instead}`,
  }
}

/**
 * Turn an error that ends a command into a PoolToolError with a hint.
 * `secrets` are literal values (the password) to scrub from any message.
 * Exit 1 (INTERNAL) is left for what no rule below recognises: a bug.
 */
export function toPoolToolError(error: unknown, context: {target: string; secrets: readonly string[]}): PoolToolError {
  if (error instanceof PoolToolError) return error
  const chain = [...errorChain(error)]
  const first = chain[0]
  const scrub = (text: string) => redactText(text, context.secrets).split('\n')[0]!.trim()
  const message = scrub(first?.message ?? String(error))
  const named = (...names: string[]) => names.includes(first?.name ?? '')

  const missing = chain.find((e) => e.name === 'MongoMissingDependencyError')
  if (missing) {
    // An option in the URI asks the driver for an optional package this install does not ship: the option cannot work here.
    const {message: needs, hint} = missingDependency((missing as {dependencyName?: unknown}).dependencyName)
    return new PoolToolError('USAGE', needs, hint, {cause: error})
  }
  if (chain.some((e) => e.code === AUTH_FAILED_CODE || /authentication failed/i.test(e.message ?? ''))) {
    // `pooltool sim --replay` has no users and says so in its refusal: pass that on rather than "check the password".
    const replay = chain.find((e) => /a replay serves reads without authentication/.test(e.message ?? ''))
    return new PoolToolError(
      'AUTH_FAILED',
      `authentication failed at ${context.target}${replay ? ': it is a replay of a snapshot, which has no users' : ''}`,
      replay ? 'leave the user and password out of the URI: a replay serves its captured reads to anyone' : 'check the username, password, authSource and authMechanism in the URI',
      {cause: error},
    )
  }
  if (chain.some((e) => e.code === UNAUTHORIZED_CODE)) {
    const denied = scrub(chain.find((e) => e.code === UNAUTHORIZED_CODE)?.message ?? message)
    return new PoolToolError('UNAUTHORIZED', /^not authorized/i.test(denied) ? denied : `not authorized: ${denied}`, privilegeHint(denied), {cause: error})
  }
  const tooOld = chain.find((e) => e.name === 'MongoCompatibilityError' || /reports wire version \d+, but this version of the driver requires/.test(e.message ?? ''))
  if (tooOld) {
    return new PoolToolError('SERVER_ERROR', scrub(tooOld.message ?? message), "pooltool's driver (Node.js driver 7) talks to MongoDB 4.2 and newer only", {cause: error})
  }
  if (/MONGODB-AWS/.test(message) && /cannot be provided/i.test(message)) {
    // The driver refuses user:password for MONGODB-AWS before connecting: the fix is in the connection string.
    return new PoolToolError(
      'INVALID_URI',
      'invalid connection string: MONGODB-AWS takes no user:password in the URI',
      'remove the credentials from the URI and provide them as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) or an AWS profile or role',
      {cause: error},
    )
  }
  if (/tls|ssl/i.test(message) && named('MongoAPIError', 'MongoParseError', 'MongoInvalidArgumentError')) {
    return new PoolToolError('USAGE', `TLS options in the connection string cannot work: ${message}`, 'fix the tls* options in the URI (two that conflict: keep one)', {cause: error})
  }
  if (named('MongoParseError', 'MongoInvalidArgumentError', 'MongoMissingCredentialsError', 'MongoAPIError') || chain.some((e) => e.code === 'ERR_INVALID_URL')) {
    return new PoolToolError('INVALID_URI', `invalid connection string: ${message}`, 'expected mongodb://[user:password@]host[:port][,host…]/[db][?options]', {cause: error})
  }
  const tls = chain.find((e) => typeof e.code === 'string' && TLS_CODE.test(e.code))
  if (tls) {
    return new PoolToolError(
      'USAGE',
      `TLS with ${context.target} failed: ${scrub(tls.message ?? String(tls.code))}`,
      'check tlsCAFile (the CA that signed the server certificate) and the host name in the URI; tlsAllowInvalidHostnames / tlsAllowInvalidCertificates only for tests',
      {cause: error},
    )
  }
  const systemErrors = chain.filter(isSystemError)
  const dns = systemErrors.find((e) => DNS_CODES.has(e.code) && DNS_SYSCALL.test(e.syscall ?? e.message ?? ''))
  if (dns) {
    const srv = /^query(Srv|Txt)/.test(dns.syscall ?? '')
    return new PoolToolError(
      'UNREACHABLE',
      `cannot reach ${context.target}: ${srv ? 'DNS has no SRV/TXT record for it' : 'the host name does not resolve'} (${scrub(dns.message ?? dns.code)})`,
      srv ? 'check the cluster name after mongodb+srv:// and your DNS; with a plain host list use mongodb://' : 'check the host name and your DNS',
      {cause: error},
    )
  }
  const unreachableBehind = chain.find((e) => typeof e.code === 'number' && UNREACHABLE_SERVER_CODES.has(e.code))
  if (unreachableBehind) {
    // The server answered, but for a host behind it (a router's config server or shard) that it cannot reach.
    return new PoolToolError(
      'UNREACHABLE',
      `${context.target} cannot reach a host it needs: ${scrub(unreachableBehind.message ?? String(unreachableBehind.codeName))}`,
      'check that the config servers and shards are up and reachable from the router',
      {cause: error},
    )
  }
  const closed = closedByPeer(error)
  if (closed) {
    // The host took the connection and closed it, wrapped by the driver or not ("connection <monitor> to H closed", a
    // bare read ECONNRESET): not a stall, and not "check host and port", which are right. A mongod or mongos at its
    // connection limit does this and says so in its log (4.0: "[listener] connection refused because too many open
    // connections: 6" while the client saw "Connection closed by peer"), counting it in serverStatus connections; a
    // server that requires TLS does it to a plain connection; Atlas does it to an address not on the project's IP
    // access list (Studio 3T's users see "Prematurely reached end of stream"); and any server as it shuts down.
    return new PoolToolError(
      'UNREACHABLE',
      `cannot reach ${context.target}: the host accepted the connection and closed it (${scrub(closed.message ?? String(closed.code))})`,
      CLOSED_BY_HOST_HINT,
      {cause: error},
    )
  }
  if (
    named('MongoServerSelectionError') ||
    named('MongoOperationTimeoutError') ||
    chain.some((e) => e.name === 'MongoNetworkError' || e.name === 'MongoNetworkTimeoutError')
  ) {
    return new PoolToolError(
      'UNREACHABLE',
      `cannot reach ${context.target}: ${message}`,
      'check host, port and network (and tls=true only if the server speaks TLS); raise --timeout-ms for slow links, or run against the embedded cluster by omitting --uri',
      {cause: error},
    )
  }
  if (chain.some((e) => LISTEN_FAILURE.test(e.message ?? '') || e.code === 'EADDRINUSE')) {
    return new PoolToolError('USAGE', message, 'choose another --port, or 0 to pick free ports', {cause: error})
  }
  const fileError = systemErrors.find((e) => e.path !== undefined)
  if (fileError) {
    return new PoolToolError('USAGE', `cannot use '${fileError.path}': ${scrub(fileError.message ?? fileError.code)}`, 'check the path and its permissions', {cause: error})
  }
  if (typeof first?.code === 'number') {
    return new PoolToolError('SERVER_ERROR', `server error ${first.code}${first.codeName ? ` (${first.codeName})` : ''}: ${message}`, 'see the server log for details', {cause: error})
  }
  return new PoolToolError('INTERNAL', message, BUG_HINT, {cause: error})
}
