/**
 * The bad-input table (test/cli/bad-input.test.ts runs it): every command, every way a user can get
 * the input wrong, with the code and exit code it must fail with. A module of its own so other tests
 * run the same cases (test/cli/fast-usage-identity.test.ts: the fast usage path against oclif's).
 */
import path from 'node:path'
import {fileURLToPath} from 'node:url'

/** A self-signed certificate for example.invalid (test only), served by a TLS listener that speaks no MongoDB. */
export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures')
export const SELF_SIGNED_CERT = path.join(FIXTURES, 'self-signed.cert.pem')

/** The embedded cluster the last group of cases talks to. */
export interface Cluster {
  /** root user, password right */
  uri: string
  /** root user, password wrong */
  wrongPasswordUri: string
  /** a user who may only read one unrelated database */
  weakUserUri: string
  /** host:port of a TLS listener whose certificate is self-signed, for example.invalid */
  tlsHost: string
  /** host:port of the cluster, for URIs of another mechanism */
  hostPort: string
  /** host:port of a listener that accepts every connection and closes it at once, as a server at its connection limit does */
  closingHost: string
}

export interface BadInput {
  name: string
  /** The command words: `--json` goes right after them, so a flag missing its value stays last. */
  command: string[]
  args: string[] | ((cluster: Cluster) => string[])
  code: string
  exit: number
  message?: RegExp
  /** What the hint must say (the text line's `(hint: …)`, the JSON error's `hint`). */
  hint?: RegExp
}

const USAGE = {code: 'USAGE', exit: 2}
const INVALID_URI = {code: 'INVALID_URI', exit: 3}
const UNREACHABLE = {code: 'UNREACHABLE', exit: 4}

export const CLUSTER_COMMANDS: string[][] = [
  ['bench'],
  ['auth'],
  ['locks', 'list'],
  ['locks', 'pings'],
  ['locks', 'watch'],
  ['conns', 'list'],
  ['conns', 'watch'],
]

/** The same mistake, made with every command that talks to a cluster. */
function everyClusterCommand(name: string, args: string[], expected: {code: string; exit: number}, message?: RegExp): BadInput[] {
  return CLUSTER_COMMANDS.map((command) => ({name: `${command.join(' ')}: ${name}`, command, args, ...expected, message}))
}

export const cases: BadInput[] = [
  // Flag parsing (oclif's own errors), for every command.
  ...everyClusterCommand('unknown flag', ['--bogus'], USAGE, /Nonexistent flag: --bogus/),
  {name: 'sim: unknown flag', command: ['sim'], args: ['--bogus'], ...USAGE, message: /Nonexistent flag/},
  {name: 'unknown command', command: ['nosuch'], args: [], ...USAGE, message: /command 'nosuch' not found/, hint: /^see 'pooltool --help'$/},
  {name: 'mistyped command: did you mean', command: ['bnech'], args: [], ...USAGE, message: /command 'bnech' not found/, hint: /^did you mean 'pooltool bench'\?/},
  {name: 'mistyped topic: did you mean', command: ['lock', 'list'], args: [], ...USAGE, message: /command 'lock list' not found/, hint: /^did you mean 'pooltool locks list'\?/},
  {name: 'unknown subcommand', command: ['locks', 'grab'], args: [], ...USAGE, message: /not found/},
  {name: 'bench: flag without its value', command: ['bench'], args: ['--concurrency'], ...USAGE, message: /--concurrency expects a value/},
  {name: 'conns watch: flag without its value', command: ['conns', 'watch'], args: ['--interval'], ...USAGE, message: /--interval expects a value/},
  {name: 'sim: value not in options', command: ['sim'], args: ['--topology', 'ring'], ...USAGE, message: /--topology=ring to be one of/},
  {name: 'sim: version profile not in options', command: ['sim'], args: ['--version-profile', '3.2'], ...USAGE, message: /one of/},
  {name: 'conns list: --sim-topology not in options', command: ['conns', 'list'], args: ['--sim-topology', 'ring'], ...USAGE, message: /one of/},
  {name: 'locks list: --state not in options', command: ['locks', 'list'], args: ['--state', 'zombie'], ...USAGE, message: /one of/},
  {name: 'bench: integer below min', command: ['bench'], args: ['--rate', '0'], ...USAGE, message: /--rate: Expected an integer greater than or equal to 1/},
  {name: 'bench: not an integer', command: ['bench'], args: ['--doc-size', 'big'], ...USAGE, message: /--doc-size/},
  {name: 'auth: integer below min', command: ['auth'], args: ['--connections', '0'], ...USAGE, message: /--connections/},
  {name: 'conns watch: integer below min', command: ['conns', 'watch'], args: ['--count', '0'], ...USAGE, message: /--count/},
  {name: 'sim: integer above max', command: ['sim'], args: ['--port', '70000'], ...USAGE, message: /--port/},
  {name: 'sim: integer below min', command: ['sim'], args: ['--members', '0'], ...USAGE, message: /--members/},
  {name: 'sim: unexpected argument', command: ['sim'], args: ['extra'], ...USAGE, message: /'sim extra' not found|Unexpected argument: extra/},
  {name: 'locks list: misspelled flag', command: ['locks', 'list'], args: ['--json-out'], ...USAGE, message: /Nonexistent flag/},
  {name: 'bench: --timeout-ms 0', command: ['bench'], args: ['--timeout-ms', '0'], ...USAGE, message: /--timeout-ms/},
  {name: 'locks pings: --timeout-ms not a number', command: ['locks', 'pings'], args: ['--timeout-ms', 'soon'], ...USAGE, message: /--timeout-ms/},

  // Flag values pooltool checks itself.
  {name: 'bench: unknown workload', command: ['bench'], args: ['--workload', 'nope'], ...USAGE, message: /--workload 'nope'/},
  {name: 'bench: unknown model', command: ['bench'], args: ['--model', 'pool,foo'], ...USAGE, message: /--model 'foo'/},
  {name: 'bench: concurrency not a number', command: ['bench'], args: ['--concurrency', 'abc'], ...USAGE, message: /--concurrency 'abc'/},
  {name: 'bench: duration not a duration', command: ['bench'], args: ['--duration', 'xyz'], ...USAGE, message: /--duration 'xyz'/},
  {name: 'bench: --fail-on does not parse', command: ['bench'], args: ['--fail-on', 'p99>>'], ...USAGE, message: /--fail-on/},
  {name: 'bench: --mix not adding up to 100', command: ['bench'], args: ['--workload', 'mixed', '--mix', 'find=50'], ...USAGE, message: /--mix/},
  {name: 'bench: --slo not a duration', command: ['bench'], args: ['--slo', 'fast'], ...USAGE, message: /--slo/},
  {name: 'auth: unknown mechanism', command: ['auth'], args: ['--mechanisms', 'FOO'], ...USAGE, message: /mechanism 'FOO'/},
  {name: 'auth: storm larger than the pass', command: ['auth'], args: ['--connections', '5', '--parallel', '10'], ...USAGE, message: /--parallel 10/},
  {name: 'locks list: --lock-expiry not a duration', command: ['locks', 'list'], args: ['--lock-expiry', 'abc'], ...USAGE, message: /--lock-expiry/},
  {name: 'locks watch: --interval not a duration', command: ['locks', 'watch'], args: ['--interval', 'abc'], ...USAGE, message: /--interval/},
  {name: 'conns watch: --interval below 100ms', command: ['conns', 'watch'], args: ['--interval', '10ms'], ...USAGE, message: /--interval/},
  {name: 'conns watch: unknown alert metric', command: ['conns', 'watch'], args: ['--alert', 'foo>1'], ...USAGE, message: /--alert/},
  {name: 'sim: --time-scale 0', command: ['sim'], args: ['--time-scale', '0'], ...USAGE, message: /--time-scale/},
  {name: 'sim: fault does not parse', command: ['sim'], args: ['--fault', 'nope'], ...USAGE, message: /--fault 'nope'/},
  {name: 'sim: latency not a duration', command: ['sim'], args: ['--latency', 'abc'], ...USAGE, message: /--latency/},

  // A duration without a unit means nothing: `--interval 500` used to be 500 s in conns watch and 500 ms in locks watch.
  {name: 'conns watch: --interval without a unit', command: ['conns', 'watch'], args: ['--interval', '500'], ...USAGE, message: /--interval 500 has no unit/},
  {name: 'locks watch: --interval without a unit', command: ['locks', 'watch'], args: ['--interval', '500'], ...USAGE, message: /--interval 500 has no unit/},
  {name: 'bench: --duration without a unit', command: ['bench'], args: ['--duration', '5'], ...USAGE, message: /--duration 5 has no unit/},
  {name: 'bench: --sim-latency without a unit', command: ['bench'], args: ['--sim-latency', '2'], ...USAGE, message: /--sim-latency 2 has no unit/},
  {name: 'locks pings: --lock-expiry without a unit', command: ['locks', 'pings'], args: ['--lock-expiry', '15'], ...USAGE, message: /--lock-expiry 15 has no unit/},
  {name: 'sim: --latency without a unit', command: ['sim'], args: ['--latency', '2'], ...USAGE, message: /--latency 2 has no unit/},
  {name: 'sim: a fault offset without a unit', command: ['sim'], args: ['--fault', 'stall:1s@5'], ...USAGE, message: /--fault 'stall:1s@5': '5' is not a duration with a unit/},

  // Explicit targets: an empty --uri never falls back to the embedded cluster.
  ...everyClusterCommand('empty --uri', ['--uri', ''], USAGE, /--uri is empty/),
  {name: 'bench: blank --uri', command: ['bench'], args: ['--uri', '   '], ...USAGE, message: /--uri is empty/},
  {name: 'conns list: --uri= with nothing after it', command: ['conns', 'list'], args: ['--uri='], ...USAGE, message: /--uri is empty/},

  // Connection strings that do not parse (exit 3).
  ...everyClusterCommand('URI with a broken IPv6 host', ['--uri', 'mongodb://[::bad'], INVALID_URI, /host '\[::bad'/),
  {name: 'bench: port 65536', command: ['bench'], args: ['--uri', 'mongodb://localhost:65536'], ...INVALID_URI, message: /localhost:65536/},
  {name: 'conns list: port 65536', command: ['conns', 'list'], args: ['--uri', 'mongodb://localhost:65536'], ...INVALID_URI},
  {name: 'bench: not a mongodb scheme', command: ['bench'], args: ['--uri', 'http://example.com'], ...INVALID_URI, message: /invalid connection string/},
  {name: 'locks list: one slash after the scheme', command: ['locks', 'list'], args: ['--uri', 'mongodb:/h:1'], ...INVALID_URI},
  {name: 'bench: unknown authMechanism', command: ['bench'], args: ['--uri', 'mongodb://127.0.0.1:1/?authMechanism=BOGUS'], ...INVALID_URI, message: /authMechanism/},
  {name: 'conns list: option of the wrong type', command: ['conns', 'list'], args: ['--uri', 'mongodb://127.0.0.1:1/?maxPoolSize=abc'], ...INVALID_URI, message: /maxPoolSize/},
  {name: 'bench: SRV URI with a port', command: ['bench'], args: ['--uri', 'mongodb+srv://cluster.example.invalid:27017'], ...INVALID_URI},
  {name: 'auth: PLAIN without a user', command: ['auth'], args: ['--uri', 'mongodb://127.0.0.1:1/?authMechanism=PLAIN'], ...INVALID_URI},
  {name: 'bench: MONGODB-AWS with user:password', command: ['bench'], args: ['--uri', 'mongodb://AKIAX:aws-secret-1@127.0.0.1:1/?authMechanism=MONGODB-AWS'], ...INVALID_URI, message: /MONGODB-AWS takes no user:password/},
  {name: 'conns list: MONGODB-AWS with user:password', command: ['conns', 'list'], args: ['--uri', 'mongodb://AKIAX:aws-secret-1@127.0.0.1:1/?authMechanism=MONGODB-AWS'], ...INVALID_URI, message: /MONGODB-AWS/},

  // TLS files and flags that cannot work (exit 2).
  {name: 'bench: missing tlsCAFile', command: ['bench'], args: ['--uri', 'mongodb://127.0.0.1:1/?tls=true&tlsCAFile=/nonexistent/ca.pem'], ...USAGE, message: /tlsCAFile '\/nonexistent\/ca.pem'/},
  {name: 'locks list: missing tlsCertificateKeyFile', command: ['locks', 'list'], args: ['--uri', 'mongodb://127.0.0.1:1/?tls=true&tlsCertificateKeyFile=/nonexistent/key.pem'], ...USAGE, message: /tlsCertificateKeyFile/},
  {name: 'conns watch: tlsCAFile is a directory', command: ['conns', 'watch'], args: ['--uri', 'mongodb://127.0.0.1:1/?tls=true&tlsCAFile=/tmp'], ...USAGE, message: /is not a file/},
  {name: 'bench: conflicting TLS options', command: ['bench'], args: ['--uri', 'mongodb://127.0.0.1:1/?tlsInsecure=true&tlsAllowInvalidCertificates=true'], ...USAGE, message: /tlsInsecure/},

  {name: 'conns list: self-signed server certificate', command: ['conns', 'list'], args: (c) => ['--uri', `mongodb://${c.tlsHost}/?tls=true`, '--timeout-ms', '3000'], ...USAGE, message: /self-signed certificate/},
  {name: 'bench: server certificate for another host name', command: ['bench'], args: (c) => ['--uri', `mongodb://${c.tlsHost}/?tls=true&tlsCAFile=${SELF_SIGNED_CERT}`, '--timeout-ms', '3000'], ...USAGE, message: /altnames/},

  // An open-loop rate beyond what the engines can schedule (before: accepted, and a 5 s run spent a minute of CPU).
  {name: 'bench: --rate beyond what one process can schedule', command: ['bench'], args: ['--uri', 'mongodb://127.0.0.1:1/', '--rate', '100000000', '--duration', '5s'], ...USAGE, message: /--rate 100000000 is more than one process can schedule: at most 500000 operations\/s per engine/, hint: /--workers N .*--segment i\/n/},
  {name: 'bench: --rate beyond what its worker threads can schedule', command: ['bench'], args: ['--uri', 'mongodb://127.0.0.1:1/', '--rate', '100000000', '--workers', '4', '--concurrency', '8'], ...USAGE, message: /more than 4 engines \(4 worker threads × 1 segment\)/},
  {name: 'bench: a --stages rate beyond what one process can schedule', command: ['bench'], args: ['--uri', 'mongodb://127.0.0.1:1/', '--stages', '1s:1000/s,1s:2000000/s'], ...USAGE, message: /a --stages rate of 2000000\/s is more than one process can schedule/},

  // A mechanism whose optional driver package this install lacks (the driver throws MongoMissingDependencyError as it
  // connects): the URI's option cannot work here (exit 2), not a pooltool bug (exit 1 before).
  {name: 'conns list: GSSAPI without the kerberos package', command: ['conns', 'list'], args: (c) => ['--uri', `mongodb://alice%40EXAMPLE.COM@${c.hostPort}/?authMechanism=GSSAPI`], ...USAGE, message: /authMechanism=GSSAPI needs the optional 'kerberos' package, which this install of pooltool does not have/, hint: /npm install kerberos/},
  {name: 'auth: GSSAPI without the kerberos package', command: ['auth'], args: (c) => ['--uri', `mongodb://alice%40EXAMPLE.COM@${c.hostPort}/?authMechanism=GSSAPI`], ...USAGE, message: /'kerberos' package/},
  {name: 'bench: GSSAPI without the kerberos package', command: ['bench'], args: (c) => ['--uri', `mongodb://alice%40EXAMPLE.COM@${c.hostPort}/?authMechanism=GSSAPI`, '--duration', '1s'], ...USAGE, message: /'kerberos' package/},
  {name: 'locks list: MONGODB-AWS without the AWS SDK', command: ['locks', 'list'], args: (c) => ['--uri', `mongodb://${c.hostPort}/?authMechanism=MONGODB-AWS`], ...USAGE, message: /authMechanism=MONGODB-AWS needs the optional '@aws-sdk\/credential-providers' package/},

  // Targets that cannot be reached (exit 4): an SRV name that does not resolve fails fast.
  ...everyClusterCommand('unresolvable mongodb+srv name', ['--uri', 'mongodb+srv://nonexistent.invalid', '--timeout-ms', '2000'], UNREACHABLE, /SRV/),
  {name: 'conns list: nothing listens', command: ['conns', 'list'], args: ['--uri', 'mongodb://127.0.0.1:1/', '--timeout-ms', '500'], ...UNREACHABLE, message: /cannot reach/},
  // Not a stall: the locks commands said "did not answer within … stalled or overloaded" for both, after the whole bound.
  {name: 'locks list: nothing listens', command: ['locks', 'list'], args: ['--uri', 'mongodb://127.0.0.1:1/', '--timeout-ms', '500'], ...UNREACHABLE, message: /cannot reach mongodb:\/\/127\.0\.0\.1:1\/: connect ECONNREFUSED/},
  ...[['locks', 'list'], ['locks', 'watch'], ['conns', 'list'], ['auth']].map((command) => ({
    name: `${command.join(' ')}: the host closes every connection it accepts`,
    command,
    // The driver retries until --timeout-ms runs out (a host at its limit may free a slot): the bound leaves a loaded
    // machine's pauses room for the first close to be heard before it (the message names the close, not the bound).
    args: (c: Cluster) => ['--uri', `mongodb://${c.closingHost}/`, '--timeout-ms', '3000'],
    ...UNREACHABLE,
    message: /the host accepted the connection and closed it/,
    hint: /connection refused because too many open connections/,
  })),

  // The cluster refuses (auth 5, privilege 6, topology 7).
  {name: 'conns list: wrong password', command: ['conns', 'list'], args: (c) => ['--uri', c.wrongPasswordUri], code: 'AUTH_FAILED', exit: 5},
  {name: 'locks pings: wrong password', command: ['locks', 'pings'], args: (c) => ['--uri', c.wrongPasswordUri], code: 'AUTH_FAILED', exit: 5},
  {name: 'bench: no write privilege on its database', command: ['bench'], args: (c) => ['--uri', c.weakUserUri, '--duration', '1s'], code: 'UNAUTHORIZED', exit: 6, message: /not authorized/},
  // list and watch read the node locks on any topology; config.lockpings exists only on a sharded cluster's config server.
  {name: 'locks pings: not a sharded cluster', command: ['locks', 'pings'], args: (c) => ['--uri', c.uri], code: 'WRONG_TOPOLOGY', exit: 7, message: /config\.lockpings cannot exist here/},
]
