/**
 * auth's driver connection against a host at its connection limit (it accepts and closes at
 * once): the connection fails as a network failure as soon as the driver's monitor is turned
 * away, as the driver-free one does, instead of waiting for server selection to give up at
 * --timeout-ms. Before, every such connection took the whole --timeout-ms, one after another in
 * the one-at-a-time passes: the fault matrix's connection-limit case ran past its 40 s whenever
 * other clients filled the limit (its observer's third connection, the driver's RTT pinger).
 *
 * No clock here: --timeout-ms is far longer than the test, and a connection that waited it out
 * would be counted as `timeout` (or `serverSelection`), not `network`.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {connectionErrorClass, driverConnection} from '../../src/auth/connections.js'
import {PoolTelemetry} from '../../src/mongo/pool-telemetry.js'
import {useCluster} from '../helpers/cluster.js'

describe('auth driver connection at the connection limit', () => {
  const cluster = useCluster({})

  it('fails as network at once, not at --timeout-ms', async () => {
    await cluster.sim.control({kind: 'max-connections', max: 0})
    try {
      const telemetry = new PoolTelemetry()
      const failure = await driverConnection({uri: cluster.uri, appName: 'pooltool-test', timeoutMs: 30_000}, {telemetry, onSetup: () => undefined}).then(
        () => assert.fail('a host that takes no connection let one through'),
        (error: unknown) => error,
      )
      assert.equal(connectionErrorClass(failure), 'network', String((failure as Error)?.message))
    } finally {
      await cluster.sim.control({kind: 'max-connections', max: 65_536})
    }
  })

  it('still connects to a host with room', async () => {
    const telemetry = new PoolTelemetry()
    await driverConnection({uri: cluster.uri, appName: 'pooltool-test', timeoutMs: 30_000}, {telemetry, onSetup: () => undefined})
    assert.equal(telemetry.created, 1)
  })
})
