/**
 * Commands through a port-forward (the entry node is authoritative). The embedded
 * replica set advertises names that do not resolve here (`rs.pooltool.invalid:PORT`, as a
 * Kubernetes member seen from outside); the user reaches one member at its listen address with
 * directConnection=true. Before: auth connected to hello.primary's name and exited 1 on
 * ENOTFOUND, bench's sampler polled only names that do not resolve.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {AuthResult} from '../../src/auth/types.js'
import type {BenchResult} from '../../src/bench/types.js'
import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'

describe('through a port-forward to one member', () => {
  const cluster = useCluster({topology: 'replset', members: 3, advertiseHost: 'rs.pooltool.invalid'})
  const member = (role: string) => cluster.sim.info.processes.find((p) => p.role === role)!
  const forwarded = (role: string) => `mongodb://${member(role).host}/?directConnection=true`

  it('auth measures the node the URI reached, at the address the user gave', async () => {
    const secondary = member('secondary')
    const run = await runCli(['auth', '--uri', forwarded('secondary'), '--connections', '3', '--pings', '10', '--mechanisms', 'none', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson<AuthResult>(run)
    assert.deepEqual(
      {host: result.measuredHost?.host, clusterName: result.measuredHost?.clusterName, role: result.measuredHost?.role},
      {host: secondary.host, clusterName: secondary.advertisedAs, role: 'secondary'},
    )
    assert.equal(result.mechanisms[0]!.connectionsFailed, 0, 'every measured connection reached the member')
  })

  it('bench samples the entry through its address and lists the members it cannot reach with their error', async () => {
    const primary = member('primary')
    const run = await runCli(['bench', '--warmup', '0s', '--uri', forwarded('primary'), '--duration', '1s', '--concurrency', '2', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const server = parseJson<BenchResult>(run).runs[0]!.server
    const entry = server.find((h) => h.host === primary.advertisedAs)
    assert.ok(entry, `the entry is listed under the cluster's name: ${server.map((h) => h.host).join(', ')}`)
    assert.ok(entry.connectionsBefore !== undefined && entry.connectionsAtEnd !== undefined, `entry figures: ${JSON.stringify(entry)}`)
    const others = server.filter((h) => h !== entry)
    assert.equal(others.length, 2, 'every member is shown')
    for (const other of others) assert.match(other.unavailable ?? '', /rs\.pooltool\.invalid|ENOTFOUND|not found|resolve/i, JSON.stringify(other))
  })
})

describe('a host that does not resolve is exit 4, never 1', () => {
  for (const command of [['auth', '--mechanisms', 'none'], ['conns', 'list'], ['locks', 'list'], ['bench', '--duration', '1s']]) {
    it(command.slice(0, 2).join(' '), async () => {
      const run = await runCli([...command, '--uri', 'mongodb://db.pooltool.invalid:27017/?directConnection=true', '--timeout-ms', '1000', '--json'])
      assert.equal(run.code, 4, `${run.stdout}\n${run.stderr}`)
      assert.equal(parseJson<{error: {code: string}}>(run).error.code, 'UNREACHABLE')
    })
  }
})
