/**
 * Every driver and system error class maps to its exit code; INTERNAL (exit 1)
 * is left for what no rule recognises. The errors are built the way the driver
 * and Node raise them (checked against the driver on this machine: see the
 * bad-input table in test/cli/ for the same cases end to end).
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {connectionErrorClass} from '../../src/auth/connections.js'
import {BUG_HINT, CLOSED_BY_HOST_HINT, closedByHost, errorClass, toPoolToolError} from '../../src/mongo/errors.js'

const context = {target: 'mongodb://<credentials>@db:27017', secrets: ['hunter22']}

function driverError(name: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), {name}, extra)
}

function systemError(code: string, syscall: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), {code, syscall, ...extra})
}

function serverSelectionError(cause: Error): Error {
  return driverError('MongoServerSelectionError', cause.message, {cause, reason: {servers: new Map([['db:27017', {error: cause}]])}})
}

const cases: Array<[string, unknown, string, number]> = [
  ['invalid host in the URI (driver: MongoRuntimeError from WHATWG URL)', driverError('MongoRuntimeError', 'Unable to parse [::bad with URL', {cause: Object.assign(new TypeError('Invalid URL'), {code: 'ERR_INVALID_URL'})}), 'INVALID_URI', 3],
  ['unparsable option', driverError('MongoParseError', 'Expected maxPoolSize to be stringified int value, got: abc'), 'INVALID_URI', 3],
  ['mechanism without a user', driverError('MongoMissingCredentialsError', "Username required for mechanism 'PLAIN'"), 'INVALID_URI', 3],
  ['MONGODB-AWS with user:password', driverError('MongoAPIError', 'username and password cannot be provided when using MONGODB-AWS. Credentials must be provided in a manner that can be read by the AWS SDK.'), 'INVALID_URI', 3],
  ['conflicting TLS options', driverError('MongoAPIError', "The 'tlsInsecure' option cannot be used with the 'tlsAllowInvalidCertificates' option"), 'USAGE', 2],
  ['missing tlsCAFile', systemError('ENOENT', 'open', "ENOENT: no such file or directory, open '/nonexistent.pem'", {path: '/nonexistent.pem', errno: -2}), 'USAGE', 2],
  ['self-signed server certificate', serverSelectionError(driverError('MongoNetworkError', 'self-signed certificate', {cause: Object.assign(new Error('self-signed certificate'), {code: 'DEPTH_ZERO_SELF_SIGNED_CERT'})})), 'USAGE', 2],
  ['host name not in the certificate', serverSelectionError(driverError('MongoNetworkError', "Hostname/IP does not match certificate's altnames", {cause: Object.assign(new Error('altnames'), {code: 'ERR_TLS_CERT_ALTNAME_INVALID'})})), 'USAGE', 2],
  ['unresolvable SRV name', systemError('ENOTFOUND', 'querySrv', 'querySrv ENOTFOUND _mongodb._tcp.nonexistent.invalid', {hostname: '_mongodb._tcp.nonexistent.invalid'}), 'UNREACHABLE', 4],
  ['SRV lookup without a DNS server', systemError('ECONNREFUSED', 'querySrv', 'querySrv ECONNREFUSED _mongodb._tcp.x.invalid'), 'UNREACHABLE', 4],
  ['unresolvable host', serverSelectionError(driverError('MongoNetworkError', 'getaddrinfo ENOTFOUND nohost', {cause: systemError('ENOTFOUND', 'getaddrinfo', 'getaddrinfo ENOTFOUND nohost')})), 'UNREACHABLE', 4],
  ['refused connection', serverSelectionError(driverError('MongoNetworkError', 'connect ECONNREFUSED 127.0.0.1:1')), 'UNREACHABLE', 4],
  ['a router whose config server is down (HostUnreachable)', driverError('MongoServerError', 'Could not find host matching read preference { mode: "nearest" } for set configRepl', {code: 133, codeName: 'FailedToSatisfyReadPreference'}), 'UNREACHABLE', 4],
  ['a shard the router cannot reach (HostUnreachable)', driverError('MongoServerError', 'Connection refused', {code: 6, codeName: 'HostUnreachable'}), 'UNREACHABLE', 4],
  ['a read aborted by its own deadline', driverError('MongoOperationTimeoutError', 'Timed out during socket read (60000ms)'), 'UNREACHABLE', 4],
  ['authentication failed', driverError('MongoServerError', 'Authentication failed.', {code: 18, codeName: 'AuthenticationFailed'}), 'AUTH_FAILED', 5],
  ['not authorized', driverError('MongoServerError', 'not authorized on admin to execute command { serverStatus: 1 }', {code: 13, codeName: 'Unauthorized'}), 'UNAUTHORIZED', 6],
  ['server error', driverError('MongoServerError', 'Cannot create collection', {code: 48, codeName: 'NamespaceExists'}), 'SERVER_ERROR', 9],
  ['server older than the driver supports', serverSelectionError(driverError('MongoCompatibilityError', 'Server at db:27017 reports wire version 7, but this version of the driver requires at least 8 (MongoDB 4.2).')), 'SERVER_ERROR', 9],
  ['port already in use', Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:27017'), {code: 'EADDRINUSE', syscall: 'listen'}), 'USAGE', 2],
  ['a file pooltool cannot write', systemError('EACCES', 'open', "EACCES: permission denied, open '/root/r.json'", {path: '/root/r.json'}), 'USAGE', 2],
  ['a host that closes new connections at once, the write after its FIN (Node lib/net.js writeAfterFIN)', closedByPeer(), 'UNREACHABLE', 4],
  ['a connection the host reset', systemError('ECONNRESET', 'read', 'read ECONNRESET', {errno: -104}), 'UNREACHABLE', 4],
  ['a real bug', new TypeError("Cannot read properties of undefined (reading 'x')"), 'INTERNAL', 1],
]

/**
 * What Node raises writing to a socket whose other end has closed (lib/net.js, writeAfterFIN: a plain Error with
 * code EPIPE and no syscall). A server at its connection limit accepts and closes at once; the driver's monitor
 * can meet that as this error, unwrapped (serverHeartbeatFailed.failure).
 */
function closedByPeer(): Error {
  return Object.assign(new Error('This socket has been ended by the other party'), {code: 'EPIPE'})
}

describe('every error classified', () => {
  for (const [name, error, code, exitCode] of cases) {
    it(`${name} → ${code} (exit ${exitCode})`, () => {
      const failure = toPoolToolError(error, context)
      assert.equal(failure.code, code, failure.message)
      assert.equal(failure.exitCode, exitCode)
      assert.ok(failure.hint.length > 0)
      assert.ok(!failure.message.includes('\n'))
    })
  }

  it('no hint asks for output that could hold a secret', () => {
    const failure = toPoolToolError(new Error('boom'), context)
    assert.equal(failure.hint, BUG_HINT)
    assert.doesNotMatch(failure.hint, /DEBUG=\*/)
  })

  it('scrubs the password from any message it keeps', () => {
    const failure = toPoolToolError(driverError('MongoServerError', 'bad thing with hunter22 inside', {code: 2, codeName: 'BadValue'}), context)
    assert.ok(!failure.message.includes('hunter22'), failure.message)
  })
})

describe('a host that took the connection and closed it is told apart from one that is not there', () => {
  // What the driver's server selection ended with against a host that accepts and closes every connection (a
  // mongod at its connection limit, Atlas to an address not on the IP access list): seen on this machine.
  const closedUnderSelection = serverSelectionError(driverError('MongoNetworkError', 'connection <monitor> to 127.0.0.1:27017 closed'))

  it('closed, wrapped by the driver or not: said so, with where a DBA looks (the log line, serverStatus connections)', () => {
    for (const error of [closedUnderSelection, closedByPeer(), systemError('ECONNRESET', 'read', 'read ECONNRESET')]) {
      const failure = toPoolToolError(error, context)
      assert.equal(failure.code, 'UNREACHABLE')
      assert.match(failure.message, /^cannot reach mongodb:\/\/<credentials>@db:27017: the host accepted the connection and closed it \(/)
      assert.equal(failure.hint, CLOSED_BY_HOST_HINT)
      assert.match(failure.hint, /connection refused because too many open connections/)
    }
  })

  it('refused (nothing listens) or resolved nowhere: the plain "check host and port", not the connection limit', () => {
    const refused = serverSelectionError(driverError('MongoNetworkError', 'connect ECONNREFUSED 127.0.0.1:1'))
    const timedOut = serverSelectionError(driverError('MongoNetworkTimeoutError', 'connection timed out'))
    for (const error of [refused, timedOut]) {
      assert.equal(closedByHost(error), false, String((error as Error).message))
      const failure = toPoolToolError(error, context)
      assert.equal(failure.code, 'UNREACHABLE')
      assert.notEqual(failure.hint, CLOSED_BY_HOST_HINT)
      assert.match(failure.hint, /check host, port and network/)
    }
  })

  it("pooltool's wire client's close is one too (auth's driver-free probes)", () => {
    assert.equal(closedByHost(Object.assign(new Error('connection closed by the server'), {name: 'WireNetworkError'})), true)
  })
})

describe('the short class a run counts an error under', () => {
  it('a connection the host closed is `network`, wrapped by the driver or not', () => {
    // Not wrapped: the class was `other` (a stress run of test/cluster/auth-driver-connection-limit met it).
    for (const error of [closedByPeer(), systemError('ECONNRESET', 'read', 'read ECONNRESET'), driverError('MongoNetworkError', 'connection 1 to 127.0.0.1:27017 closed')]) {
      assert.equal(errorClass(error), 'network', error.message)
      assert.equal(connectionErrorClass(error), 'network', error.message)
    }
  })
  it('what names no network failure stays what it is', () => {
    assert.equal(errorClass(new TypeError('x is undefined')), 'other')
    assert.equal(errorClass(driverError('MongoServerError', 'lock busy', {code: 46, codeName: 'LockBusy'})), 'LockBusy')
    assert.equal(errorClass(serverSelectionError(closedByPeer())), 'serverSelection')
  })
})
