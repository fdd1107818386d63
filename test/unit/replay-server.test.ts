/**
 * The replay server over loopback sockets (src/wire's codec, no driver): one listener per
 * captured host, captured names rewritten to the listeners in every document, the legacy
 * handshake answered with OP_REPLY, and stop() ends even with clients still connected.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {startReplayServer} from '../../src/replay/server.js'
import type {SnapshotFile} from '../../src/snapshot/format.js'
import {portOf, RawClient} from '../helpers/sim.js'

const snapshot: SnapshotFile = {
  format: 'pooltool-snapshot',
  formatVersion: 1,
  capturedAt: new Date('2024-06-01T10:00:00Z'),
  entry: {uri: 'mongodb://localhost:27017/?replicaSet=rs0', seedHosts: ['localhost:27017']},
  redactedHosts: false,
  hosts: [
    {
      host: 'db0.example.net:27017',
      address: 'localhost:27017',
      role: 'primary',
      reads: [
        {name: 'hello', db: 'admin', request: {hello: 1}, reply: {isWritablePrimary: true, setName: 'rs0', hosts: ['db0.example.net:27017', 'db1.example.net:27017', 'db2.example.net:27017'], me: 'db0.example.net:27017', primary: 'db0.example.net:27017', maxWireVersion: 17, ok: 1}},
        {name: 'connPoolStats', db: 'admin', request: {connPoolStats: 1}, reply: {hosts: {'db1.example.net:27017': {inUse: 1}, 'db1.example.net:270170': {inUse: 2}}, ok: 1}},
      ],
    },
    {host: 'db1.example.net:27017', role: 'secondary', reads: [{name: 'hello', db: 'admin', request: {hello: 1}, reply: {isWritablePrimary: false, secondary: true, setName: 'rs0', me: 'db1.example.net:27017', ok: 1}}]},
  ],
  unreachable: [{host: 'db2.example.net:27017', error: 'getaddrinfo ENOTFOUND db2.example.net'}],
}

describe('replay server', {timeout: 30_000}, () => {
  it('serves each captured host on its own listener, names rewritten, uncaptured names kept', async () => {
    const server = await startReplayServer(snapshot, 'rs.json')
    const [primary, secondary] = [server.info.hosts['db0.example.net:27017']!, server.info.hosts['db1.example.net:27017']!]
    assert.match(primary, /^127\.0\.0\.1:\d+$/)
    assert.equal(server.info.uri, `mongodb://${primary}/?replicaSet=rs0`, 'the entry address leads to its listener, options kept')
    const client = await RawClient.open(portOf(primary))
    const other = await RawClient.open(portOf(secondary))
    try {
      const hello = await client.legacyHello({isMaster: 1, helloOk: true})
      assert.equal(hello.ismaster, true)
      assert.deepEqual(hello.hosts, [primary, secondary, 'db2.example.net:27017'], 'a host that was not captured stays unreachable, as at capture')
      assert.equal(hello.me, primary)
      const pools = await client.command('admin', {connPoolStats: 1})
      assert.deepEqual(Object.keys(pools.hosts), [secondary, 'db1.example.net:270170'])
      assert.equal((await other.command('admin', {hello: 1})).me, secondary)
    } finally {
      // Clients still connected: stop() must not wait for them.
      await server.stop()
    }
    await client.closed
    await other.closed
  })
})
