/** Discovery against the embedded cluster: replica-set members and a standalone. */
import assert from 'node:assert/strict'
import {after, before, describe, test} from 'node:test'

import {discoverTopology} from '../../src/conns/discovery.js'
import {startSimCluster, type SimCluster} from '../../src/sim/host.js'
import {parseTargetUri} from '../../src/target.js'

const settings = (uri: string) => ({uri, appName: 'pooltool-test', timeoutMs: 5000, seedHosts: parseTargetUri(uri).hosts, describeError: (e: unknown) => String(e)})

describe('discoverTopology', () => {
  let replset: SimCluster
  let standalone: SimCluster
  before(async () => {
    ;[replset, standalone] = await Promise.all([startSimCluster({topology: 'replset', members: 3}), startSimCluster({topology: 'standalone'})])
  })
  after(async () => {
    await Promise.all([replset?.stop(), standalone?.stop()])
  })

  test('replica set: every member from hello, primary and secondaries', async () => {
    const t = await discoverTopology(settings(replset.info.uri))
    assert.equal(t.kind, 'replset')
    assert.equal(t.setName, 'rs0')
    assert.deepEqual(
      t.hosts.map((h) => [h.host, h.role]).sort(),
      replset.info.processes.map((p) => [p.host, p.role]).sort(),
    )
  })

  test('replica set from a single member seed (no replicaSet in the URI) still finds every member', async () => {
    const secondary = replset.info.processes.find((p) => p.role === 'secondary')!
    const t = await discoverTopology(settings(`mongodb://${secondary.host}/?directConnection=true`))
    assert.equal(t.kind, 'replset')
    assert.equal(t.hosts.length, 3)
    assert.equal(t.hosts.find((h) => h.role === 'primary')!.host, replset.info.processes.find((p) => p.role === 'primary')!.host)
  })

  test('standalone: the one host', async () => {
    const t = await discoverTopology(settings(standalone.info.uri))
    assert.equal(t.kind, 'standalone')
    assert.deepEqual(t.hosts, [{host: standalone.info.processes[0]!.host, role: 'standalone'}])
  })
})
