/** The driver-free wire client against the embedded cluster: handshake, SCRAM with and without speculation, failures. */
import assert from 'node:assert/strict'
import {before, describe, it} from 'node:test'

import {parseAuthCounters} from '../../src/probes/server-status.js'
import {type ReadEvent, ServerReader} from '../../src/probes/reader.js'
import {wireChannel} from '../../src/probes/wire-channel.js'
import {handshakeDocument, openAuthenticated, ScramSession, splitHostPort, WireCommandError, WireConnection} from '../../src/wire/index.js'
import {useCluster} from '../helpers/cluster.js'

describe('wire client', () => {
  const cluster = useCluster({auth: true})
  let host: string
  let port: number
  const credentials = {username: 'pooltool', password: 'pooltool-sim', source: 'admin'}

  before(() => {
    ;({host, port} = splitHostPort(cluster.sim.info.processes[0]!.host))
  })

  it('authenticates speculatively in 1 + 1 round trips and then runs commands', async () => {
    const conn = await WireConnection.open({host, port, timeoutMs: 5000})
    try {
      const session = new ScramSession('SCRAM-SHA-256', credentials)
      const hello = await conn.legacyCommand(handshakeDocument('wire-test', {speculativeAuthenticate: session.speculative()}))
      assert.ok(hello.speculativeAuthenticate, 'the server answered the speculative saslStart')
      const outcome = await session.finish(conn, hello.speculativeAuthenticate)
      assert.deepEqual({roundTrips: outcome.roundTrips, speculative: outcome.speculative, iterationCount: outcome.iterationCount}, {roundTrips: 1, speculative: true, iterationCount: 15_000})
      assert.ok(outcome.keyDerivationMs > 0)
      const status = await conn.command('admin', {connectionStatus: 1})
      assert.deepEqual(status.authInfo.authenticatedUsers, [{user: 'pooltool', db: 'admin'}])
    } finally {
      conn.close()
    }
  })

  it('falls back to saslStart when the handshake carried no first step', async () => {
    const conn = await WireConnection.open({host, port, timeoutMs: 5000})
    try {
      await conn.legacyCommand(handshakeDocument('wire-test'))
      const outcome = await new ScramSession('SCRAM-SHA-1', credentials).finish(conn, undefined)
      assert.deepEqual({roundTrips: outcome.roundTrips, speculative: outcome.speculative, iterationCount: outcome.iterationCount}, {roundTrips: 2, speculative: false, iterationCount: 10_000})
    } finally {
      conn.close()
    }
  })

  it('reports a wrong password as code 18 and a refused command with its code', async () => {
    await assert.rejects(
      openAuthenticated({host, port, timeoutMs: 5000, appName: 'wire-test', credentials: {...credentials, password: 'nope'}, mechanism: 'SCRAM-SHA-256'}),
      (error: WireCommandError) => error instanceof WireCommandError && error.code === 18,
    )
    const {conn} = await openAuthenticated({host, port, timeoutMs: 5000, appName: 'wire-test'})
    try {
      await assert.rejects(conn.command('admin', {serverStatus: 1}), (error: WireCommandError) => error.code === 13)
    } finally {
      conn.close()
    }
  })

  it("is a CommandChannel: auth's reads (hello, getParameter, serverStatus security) go through the read layer", async () => {
    const {conn} = await openAuthenticated({host, port, timeoutMs: 5000, appName: 'wire-test', credentials, mechanism: 'SCRAM-SHA-256'})
    const seen: ReadEvent[] = []
    const reader = new ServerReader(wireChannel(conn, `${host}:${port}`), (event) => seen.push(event))
    try {
      const hello = await reader.hello({saslSupportedMechs: 'admin.pooltool'})
      assert.equal(hello.host, `${host}:${port}`)
      assert.deepEqual([...(hello.value.saslSupportedMechs as string[])].sort(), ['SCRAM-SHA-1', 'SCRAM-SHA-256'])
      assert.ok(hello.serverTime instanceof Date, 'the server clock of the hello reply (localTime)')
      const parameters = await reader.getParameter(['scramIterationCount', 'scramSHA256IterationCount'])
      assert.deepEqual({sha1: parameters.value.scramIterationCount, sha256: parameters.value.scramSHA256IterationCount}, {sha1: 10_000, sha256: 15_000})
      const status = await reader.serverStatus(['security'])
      assert.ok(parseAuthCounters(status.value)?.['SCRAM-SHA-256'], `auth counters in ${JSON.stringify(status.value.security)}`)
      assert.equal(status.value.connections, undefined, 'only the security section was asked for')
      await assert.rejects(reader.config('locks'), /cannot read config\.locks/)
      assert.deepEqual(seen.map((e) => e.name), ['hello', 'getParameter', 'serverStatus'])
    } finally {
      conn.close()
    }
  })

  it('a read on the wire channel stops when its signal aborts', async () => {
    const {conn} = await openAuthenticated({host, port, timeoutMs: 5000, appName: 'wire-test', credentials, mechanism: 'SCRAM-SHA-256'})
    try {
      const reader = new ServerReader(wireChannel(conn, `${host}:${port}`))
      await assert.rejects(reader.hello({signal: AbortSignal.abort()}), {name: 'WireNetworkError', message: 'interrupted'})
      assert.equal((await reader.hello()).value.ok, 1, 'the connection is still usable')
    } finally {
      conn.close()
    }
  })

  it('fails to connect to a closed port with a network error', async () => {
    await assert.rejects(WireConnection.open({host: '127.0.0.1', port: 1, timeoutMs: 2000}), {name: 'WireNetworkError'})
  })
})
