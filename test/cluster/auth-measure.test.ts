/**
 * `measureAuth` through the library against the embedded cluster: its inspection
 * reads go through the read layer (the target's recorder sees them), the host comes
 * from discovery, and a stop before discovery named the host is an interrupted result.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {toAuthConfig} from '../../src/auth/config.js'
import {measureAuth} from '../../src/auth/run-auth.js'
import type {ReadEvent} from '../../src/probes/reader.js'
import {resolveTarget} from '../../src/target.js'
import {useCluster} from '../helpers/cluster.js'

describe('measureAuth on the read layer', () => {
  const cluster = useCluster({topology: 'replset', auth: true, members: 2})
  const config = toAuthConfig({mechanisms: 'none,SCRAM-SHA-256', connections: 2, parallel: 1, pings: 5})

  it("reads the primary's hello, buildInfo, getParameter and auth counters through ServerReader, discovery without credentials", async () => {
    const reads: ReadEvent[] = []
    const target = await resolveTarget({flagUri: cluster.uri, connection: {appName: 'auth-measure-test', timeoutMs: 5000}, recorder: (event) => reads.push(event)})
    const result = await measureAuth(target, config, {signal: new AbortController().signal})
    const primary = cluster.sim.info.processes.find((p) => p.role === 'primary')!.host
    assert.equal(result.measuredHost?.host, primary)
    assert.equal(result.error, undefined, JSON.stringify(result.error))

    const onPrimary = reads.filter((e) => e.host === primary).map((e) => e.name)
    assert.deepEqual(onPrimary.slice(0, 3), ['hello', 'buildInfo', 'getParameter'], `reads on the primary: ${onPrimary.join(', ')}`)
    // The baseline, then one reading per block: every counter read is a serverStatus with the security section only.
    const counterReads = reads.filter((e) => e.host === primary && e.name === 'serverStatus')
    assert.ok(counterReads.length >= 2, `a baseline and at least one block: ${counterReads.length}`)
    for (const read of counterReads) assert.equal(read.request.security, undefined, 'security is not switched off')
    for (const read of counterReads) assert.equal(read.request.connections, 0, 'the other sections are')
    const helloOnPrimary = reads.find((e) => e.host === primary && e.name === 'hello')!
    assert.equal(helloOnPrimary.request.saslSupportedMechs, 'admin.pooltool', "the hello asks for the user's mechanisms")
    // Discovery runs without credentials: what it may not read (serverStatus on the set) fails as Unauthorized, and only that.
    const failed = reads.filter((e) => e.error)
    assert.ok(failed.every((e) => e.error?.codeName === 'Unauthorized' && e.host !== primary), `only discovery's unauthenticated reads failed: ${JSON.stringify(failed)}`)
    assert.deepEqual(result.target, {uri: target.redactedUri, source: '--uri', simulated: false})
  })

  it('a stop before discovery named the host is an interrupted result, not a failure', async () => {
    const target = await resolveTarget({flagUri: cluster.uri, connection: {appName: 'auth-measure-test', timeoutMs: 5000}})
    const result = await measureAuth(target, config, {signal: AbortSignal.abort()})
    assert.equal(result.interrupted, true)
    assert.equal(result.measuredHost, null)
    assert.deepEqual(result.mechanisms, [])
  })
})
