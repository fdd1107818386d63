/**
 * auth's host watch: after a failure it asks the host before the next connection. It must ask at
 * least once however late it gets there — a storm of connections can keep it from asking until
 * --timeout-ms after the failure has passed, and a host that answers then is there (a stress run
 * stopped auth with exit 4, "last: no answer", against a host that was answering all along).
 */
import assert from 'node:assert/strict'
import {createServer} from 'node:net'
import {describe, test} from 'node:test'

import {HostWatch} from '../../src/auth/host-watch.js'
import {useCluster} from '../helpers/cluster.js'

/** Until the monotonic clock has moved past `ms` from now: a state of the clock, not a sleep. */
function clockPast(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() <= until) {
    // spin: a few milliseconds
  }
}

async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('auth host watch', () => {
  const cluster = useCluster({})

  test('asked after its --timeout-ms has run out, a host that answers is there', async () => {
    const watch = new HostWatch({host: cluster.sim.info.processes[0]!.host, timeoutMs: 1, appName: 'pooltool-test', plainTcp: true, signal: new AbortController().signal})
    watch.noteFailure('network')
    clockPast(5)
    await watch.confirm()
  })

  test('a host that is gone is reported with the real error of the last try, not "no answer"', async () => {
    const watch = new HostWatch({host: `127.0.0.1:${await closedPort()}`, timeoutMs: 1, appName: 'pooltool-test', plainTcp: true, signal: new AbortController().signal})
    watch.noteFailure('network')
    clockPast(5)
    await assert.rejects(watch.confirm(), (error: Error) => /stopped answering/.test(error.message) && /ECONNREFUSED/.test(error.message))
  })
})
