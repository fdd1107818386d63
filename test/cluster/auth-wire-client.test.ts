/** The driver-free wire client against the embedded cluster: handshake, SCRAM with and without speculation, failures. */
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'

import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import {handshakeDocument, openAuthenticated, ScramSession, splitHostPort, WireCommandError, WireConnection} from '../../src/wire/client.js'

describe('wire client', () => {
  let sim: SimCluster
  let host: string
  let port: number
  const credentials = {username: 'pooltool', password: 'pooltool-sim', source: 'admin'}

  before(async () => {
    sim = await startSimCluster({auth: true})
    ;({host, port} = splitHostPort(sim.info.processes[0]!.host))
  })
  after(async () => {
    await sim?.stop()
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

  it('fails to connect to a closed port with a network error', async () => {
    await assert.rejects(WireConnection.open({host: '127.0.0.1', port: 1, timeoutMs: 2000}), {name: 'WireNetworkError'})
  })
})
