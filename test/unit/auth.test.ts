/** pooltool auth: flag parsing, mechanism choice, URI derivation, block sizes and the reporter (no I/O). */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseMechanisms, toAuthConfig} from '../../src/auth/config.js'
import {chooseMeasuredHost} from '../../src/auth/measured-host.js'
import {chooseMechanisms, headlineMechanism} from '../../src/auth/mechanisms.js'
import {chunksOf, splitEvenly} from '../../src/auth/passes.js'
import type {AuthResult, MechanismResult} from '../../src/auth/types.js'
import {credentialsFromUri, hostUri, tlsRequested, withoutCredentials} from '../../src/auth/uri.js'
import {PoolToolError} from '../../src/errors.js'
import type {ClusterTopology} from '../../src/probes/topology.js'
import {renderAuth} from '../../src/reporters/auth.js'
import {splitHostPort} from '../../src/wire/client.js'

const usage = (message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof PoolToolError)
  assert.equal(error.code, 'USAGE')
  assert.equal(error.exitCode, 2)
  assert.match(error.message, message)
  return true
}

describe('auth flags', () => {
  it('parses mechanisms case-insensitively, in order, without duplicates', () => {
    assert.deepEqual(parseMechanisms('scram-sha-256, NONE,SCRAM-SHA-256'), ['SCRAM-SHA-256', 'none'])
  })
  it('rejects unknown mechanisms and an empty list', () => {
    assert.throws(() => parseMechanisms('none,PLAIN'), usage(/unknown mechanism 'PLAIN'/))
    assert.throws(() => parseMechanisms(' , '), usage(/empty/))
  })
  it('rejects --parallel above --connections', () => {
    assert.throws(() => toAuthConfig({connections: 5, parallel: 6, pings: 10}), usage(/--parallel 6 is above --connections 5/))
    const config = toAuthConfig({connections: 5, parallel: 5, pings: 10, mechanisms: 'none'})
    assert.deepEqual(config.mechanisms, ['none'])
    assert.ok(Object.isFrozen(config))
  })
  it('lowers the default --parallel to a smaller --connections (only an explicit one above it is refused)', () => {
    assert.equal(toAuthConfig({connections: 3, pings: 10}).parallel, 3)
    assert.equal(toAuthConfig({connections: 40, pings: 10}).parallel, 10)
    assert.equal(toAuthConfig({connections: 3, parallel: 2, pings: 10}).parallel, 2)
  })
})

describe('mechanism choice', () => {
  const credentials = {username: 'u', password: 'p', source: 'admin'}
  it('defaults to none plus what both the server and the user allow', () => {
    const all = ['MONGODB-X509', 'SCRAM-SHA-1', 'SCRAM-SHA-256']
    assert.deepEqual(chooseMechanisms(undefined, {credentials, userMechanisms: ['SCRAM-SHA-256'], serverMechanisms: all}).mechanisms, ['none', 'SCRAM-SHA-256'])
    assert.deepEqual(chooseMechanisms(undefined, {credentials, userMechanisms: ['SCRAM-SHA-1', 'SCRAM-SHA-256'], serverMechanisms: ['SCRAM-SHA-1']}).mechanisms, ['none', 'SCRAM-SHA-1'])
    const anonymous = chooseMechanisms(undefined, {})
    assert.deepEqual(anonymous.mechanisms, ['none'])
    assert.match(anonymous.notes[0]!, /no credentials/)
  })
  it('explains a requested mechanism that cannot work', () => {
    assert.throws(() => chooseMechanisms(['SCRAM-SHA-1'], {}), usage(/needs credentials/))
    assert.throws(() => chooseMechanisms(['SCRAM-SHA-1'], {credentials, userMechanisms: ['SCRAM-SHA-256']}), usage(/user has no SCRAM-SHA-1 credentials/))
    assert.throws(() => chooseMechanisms(['SCRAM-SHA-256'], {credentials, serverMechanisms: ['SCRAM-SHA-1']}), usage(/server does not offer SCRAM-SHA-256/))
    assert.throws(() => chooseMechanisms(['SCRAM-SHA-256'], {credentials, nonScramUriMechanism: 'PLAIN'}), usage(/authenticates with PLAIN/))
    assert.deepEqual(chooseMechanisms(['none'], {}).mechanisms, ['none'])
  })
  it('names the headline mechanism the URI would use', () => {
    assert.equal(headlineMechanism(['none', 'SCRAM-SHA-1', 'SCRAM-SHA-256'], undefined), 'SCRAM-SHA-256')
    assert.equal(headlineMechanism(['none', 'SCRAM-SHA-1', 'SCRAM-SHA-256'], 'SCRAM-SHA-1'), 'SCRAM-SHA-1')
    assert.equal(headlineMechanism(['none'], undefined), 'none')
  })
})

describe('URIs', () => {
  const uri = 'mongodb://us%40er:p%3Aw@h1:1,h2:2/app?replicaSet=rs0&retryWrites=true'
  it('reads SCRAM credentials (authSource defaults to the path database, else admin)', () => {
    assert.deepEqual(credentialsFromUri(uri), {username: 'us@er', password: 'p:w', source: 'app', mechanism: undefined})
    assert.equal(credentialsFromUri('mongodb://u:p@h/?authSource=admin&authMechanism=SCRAM-SHA-1')?.mechanism, 'SCRAM-SHA-1')
    assert.equal(credentialsFromUri('mongodb://u:p@h')?.source, 'admin')
    assert.equal(credentialsFromUri('mongodb://h1'), undefined)
  })
  it('targets one host, forces or strips the mechanism, keeps other options', () => {
    assert.equal(hostUri(uri, 'h2:2', {mechanism: 'SCRAM-SHA-1'}), 'mongodb://us%40er:p%3Aw@h2:2/app?retryWrites=true&directConnection=true&authMechanism=SCRAM-SHA-1')
    const none = hostUri(`${uri}&authSource=admin&authMechanism=SCRAM-SHA-256`, 'h1:1', {mechanism: 'none'})
    assert.equal(none, 'mongodb://h1:1/app?retryWrites=true&directConnection=true')
    assert.equal(hostUri(uri, 'h1:1'), 'mongodb://us%40er:p%3Aw@h1:1/app?retryWrites=true&directConnection=true')
  })
  it('turns an SRV URI into a plain one with TLS and the TXT options', () => {
    const srv = 'mongodb+srv://u:p@cluster0.example.net/app'
    assert.equal(tlsRequested(srv), true)
    assert.equal(tlsRequested(`${srv}?tls=false`), false)
    assert.equal(tlsRequested('mongodb://h/?ssl=true'), true)
    assert.equal(tlsRequested('mongodb://h/'), false)
    const txt = new URLSearchParams('authSource=admin&replicaSet=atlas-0')
    assert.equal(hostUri(srv, 'shard-00-00.example.net:27017', {txt}), 'mongodb://u:p@shard-00-00.example.net:27017/app?tls=true&authSource=admin&directConnection=true')
  })
  it('strips the credentials and the auth options from the whole URI, every host and other option kept', () => {
    assert.equal(withoutCredentials(`${uri}&authSource=admin&authMechanism=SCRAM-SHA-256`), 'mongodb://h1:1,h2:2/app?replicaSet=rs0&retryWrites=true')
    assert.equal(withoutCredentials('mongodb+srv://u:p@cluster0.example.net/?tls=true'), 'mongodb+srv://cluster0.example.net/?tls=true')
  })
  it('splits host:port', () => {
    assert.deepEqual(splitHostPort('127.0.0.1:27018'), {host: '127.0.0.1', port: 27018})
    assert.deepEqual(splitHostPort('[::1]:27019'), {host: '::1', port: 27019})
    assert.deepEqual(splitHostPort('db.example'), {host: 'db.example', port: 27017})
  })
})

describe('the measured host (from the one discovery)', () => {
  const topology = (kind: ClusterTopology['kind'], hosts: ClusterTopology['hosts'], setName?: string): ClusterTopology => ({
    kind,
    hosts,
    ...(setName ? {setName} : {}),
    sources: ['hello'],
    warnings: [],
    staleRouters: [],
  })
  it("takes a replica set's primary, whichever member the URI names", () => {
    const rs = topology('replset', [{host: 'a:1', role: 'secondary'}, {host: 'b:2', role: 'primary'}, {host: 'c:3', role: 'secondary'}], 'rs0')
    assert.deepEqual(chooseMeasuredHost(rs, ['a:1']), {host: 'b:2', role: 'primary', notes: []})
  })
  it('takes a member the URI names when the set has no primary, and says so', () => {
    const rs = topology('replset', [{host: 'a:1', role: 'secondary'}, {host: 'c:3', role: 'secondary'}], 'rs0')
    const chosen = chooseMeasuredHost(rs, ['c:3'])
    assert.equal(chosen.host, 'c:3')
    assert.match(chosen.notes[0]!, /^the replica set rs0 has no primary right now: measuring c:3 \(secondary\)$/)
  })
  it('takes the router the URI names (not another router or a shard), else the first router', () => {
    const sharded = topology('sharded', [
      {host: 'r1:1', role: 'mongos'},
      {host: 'r2:2', role: 'mongos'},
      {host: 's1:3', role: 'shard', shard: 'sh0', setName: 'sh0'},
      {host: 'cfg:4', role: 'config', setName: 'cfg'},
    ])
    assert.equal(chooseMeasuredHost(sharded, ['r2:2']).host, 'r2:2')
    assert.equal(chooseMeasuredHost(sharded, ['seed.example:27017']).host, 'r1:1')
    assert.deepEqual(chooseMeasuredHost(sharded, ['s1:3']), {host: 's1:3', role: 'shard', notes: []}, 'entered through a shard member: that member')
  })
  it('takes the standalone, and refuses a topology without hosts', () => {
    assert.equal(chooseMeasuredHost(topology('standalone', [{host: 'h:1', role: 'standalone'}]), ['h:1']).host, 'h:1')
    assert.throws(() => chooseMeasuredHost(topology('replset', []), ['h:1']), /no host to measure/)
  })
})

describe('blocks', () => {
  it('splits the one-at-a-time pass into even rounds and storms into chunks of --parallel', () => {
    assert.deepEqual(splitEvenly(12, 5), [3, 3, 2, 2, 2])
    assert.deepEqual(splitEvenly(3, 5), [1, 1, 1])
    assert.deepEqual(chunksOf(12, 5), [5, 5, 2])
    assert.deepEqual(chunksOf(4, 4), [4])
  })
})

describe('auth reporter', () => {
  const mechanism = (name: MechanismResult['mechanism'], authP50: number): MechanismResult => ({
    mechanism: name,
    connections: 10,
    parallel: 5,
    connectionsOpened: 40,
    connectionsSucceeded: 40,
    connectionsFailed: 0,
    connectionsAborted: 0,
    setupUs: {p50: 3000, p99: 9000, max: 20_000},
    driverSetupUs: {p50: 3000, p99: 9000, max: 20_000},
    connectionReadyDurationUs: {p50: 3000, p99: 9000, max: 20_000},
    driverFirstSetupUs: name === 'none' ? null : 20_000,
    driverFreeSetupUs: {p50: authP50 + 1000, p99: authP50 + 3000, max: authP50 + 4000},
    tcpConnectUs: {p50: 200, p99: 400},
    handshakeUs: {p50: 500, p99: 900},
    authUs: {p50: authP50, p99: authP50 * 2},
    keyDerivationUs: name === 'none' ? null : {p50: authP50 - 400, p99: authP50},
    roundTrips: name === 'none' ? 1 : 2,
    speculative: name === 'none' ? null : true,
    iterationCount: name === 'none' ? null : name === 'SCRAM-SHA-1' ? 10_000 : 15_000,
    connectionsPerSec: 120.5,
    storm: {
      driver: {connectionsPerSec: 120.5, setupUs: {p50: 5000, p99: 9000, max: 9000}, errors: {}},
      driverFree: {connectionsPerSec: 300, setupUs: {p50: 4000, p99: 8000, max: 8000}, authUs: {p50: authP50, p99: authP50}, errors: {}},
    },
    serverAuthCounters: {received: name === 'none' ? 0 : 40, successful: name === 'none' ? 0 : 40},
    authenticationsExpected: name === 'none' ? 0 : 40,
    costInPooledOps: 15,
    costInPooledOpsDriverFree: 40,
    errors: {},
  })
  const result: AuthResult = {
    target: {uri: 'mongodb://<credentials>@127.0.0.1:1/', source: 'embedded', simulated: true},
    measuredHost: {host: '127.0.0.1:1', role: 'standalone', topology: 'standalone', serverVersion: '7.0.14', maxWireVersion: 21},
    config: {connections: 10, parallel: 5, pings: 100, mechanismsRequested: 'default'},
    mechanisms: [mechanism('none', 0), mechanism('SCRAM-SHA-1', 3300), mechanism('SCRAM-SHA-256', 4400)],
    pooledPingUs: {p50: 200, p99: 400, count: 100},
    costInPooledOps: 15,
    costInPooledOpsDriverFree: 40,
    headlineMechanism: 'SCRAM-SHA-256',
    serverIterationCounts: {scramIterationCount: 10_000, scramSHA256IterationCount: 15_000},
    driverFree: {available: true},
    serverCounters: {available: true},
    notes: ['a note'],
    interrupted: false,
  }

  it('renders the tables, the headline and the notes', () => {
    const text = renderAuth(result)
    assert.match(text, /One at a time, driver-free/)
    assert.match(text, /SCRAM-SHA-256 .*15,000 .*2 \(speculative\)/)
    assert.match(text, /Headline: one new authenticated connection \(SCRAM-SHA-256\) costs as much as 15 pooled pings/)
    assert.match(text, /in a fresh process, where PBKDF2 is not cached yet, 40/)
    assert.match(text, /- a note/)
    assert.match(text, /every connection went to 127\.0\.0\.1:1 \(the standalone\)/)
    assert.doesNotMatch(text, /\u001b\[/, 'no colour codes')
  })
  it('says so when Ctrl-C came before discovery named the host', () => {
    const text = renderAuth({...result, measuredHost: null, mechanisms: [], interrupted: true})
    assert.match(text, /interrupted before the host to measure was known/)
    assert.match(text, /nothing was measured\./)
  })
  it('says why the server counters and the driver-free split are missing', () => {
    const text = renderAuth({
      ...result,
      driverFree: {available: false, reason: 'TLS'},
      serverCounters: {available: false, reason: 'serverStatus: not authorized (needs the clusterMonitor role)'},
      mechanisms: result.mechanisms.map((m) => ({...m, serverAuthCounters: null})),
    })
    assert.doesNotMatch(text, /driver-free \(raw TCP/)
    assert.match(text, /unavailable: serverStatus: not authorized \(needs the clusterMonitor role\)/)
  })
})
