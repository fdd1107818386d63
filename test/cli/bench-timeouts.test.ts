/**
 * `bench --op-timeout` on both sides, told apart: a client-side timeout destroys the connection it was reading from, a
 * server-side one (maxTimeMS) is answered by the server and keeps it. One standalone embedded
 * cluster whose finds take 200 ms (the sim's service latency: interruptible work, which the server
 * stops at maxTimeMS as a real one does), and a 20 ms limit on both sides. Every run goes through this
 * process (test/helpers/in-process.ts, the path bin/run.js takes): a process start cost ~1 CPU-s a case,
 * and bench's real process is proven for exit 0 and exit 2 in test/cli/bench.test.ts.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const CONCURRENCY = 4
/** A count, not a duration: how many time out must not depend on how fast a loaded machine runs. */
const OPS = 40

describe('bench --op-timeout: who enforces the limit decides what a timeout costs', {timeout: 120_000}, () => {
  const cluster = useCluster({})
  const args = (side: 'client' | 'server', limit: string, uri = cluster.uri) =>
    ['bench', '--uri', uri, '--workload', 'find', '--seed-docs', '50', '--concurrency', String(CONCURRENCY), '--warmup', '0ms',
      '--ops', String(OPS), '--op-timeout', limit, '--timeout-side', side, '--json']

  /** Both sides under the same slow work (200 ms per find) and the same 20 ms limit. */
  const underLatency = async (side: 'client' | 'server', uri?: string) => {
    await cluster.sim.control({kind: 'latency', ms: 200})
    try {
      const run = await runInProcess(args(side, '20ms', uri))
      const result = parseJson(run)
      assert.deepEqual(result.config.opTimeout, {ms: 20, side})
      const [r] = result.runs
      assert.equal(r.ops + r.errors, OPS)
      // Not ops === 0 on the client side: a client descheduled for longer than the service time can see
      // the reply before its own timer fires, as any client can.
      assert.ok(r.errors > 2 * CONCURRENCY, `several timeouts per worker: ${r.errors}`)
      assert.equal(r.timeouts.total, r.errors)
      assert.equal(r.timeouts.connectionsClosedOnError, r.pool.closed.error ?? 0)
      assert.equal(r.timeouts.connectionsCreated, r.pool.created)
      return {r, notes: result.notes as string[]}
    } finally {
      await cluster.sim.control({kind: 'latency', ms: 0})
    }
  }

  it('client side (socketTimeoutMS): each timed-out attempt closes its connection and a new one replaces it', async () => {
    const withoutRetries = new URL(cluster.uri)
    withoutRetries.searchParams.set('retryReads', 'false')
    const {r, notes} = await underLatency('client', withoutRetries.toString())
    const t = r.timeouts
    assert.deepEqual(r.errorsByClass, {timeout: r.errors})
    assert.deepEqual({answeredByServer: t.answeredByServer, clientGaveUp: t.clientGaveUp}, {answeredByServer: 0, clientGaveUp: r.errors})
    assert.equal(t.connectionsClosedOnError, t.clientGaveUp, 'one connection closed per timeout')
    // Each closed connection was replaced: at most the few open when measuring began (≤ --concurrency) were not created in it.
    assert.ok(t.connectionsCreated >= t.connectionsClosedOnError - CONCURRENCY, `about one connection created per timeout: ${JSON.stringify(t)}`)
    assert.deepEqual(notes.filter((n) => /client-side timeouts closed/.test(n)), [])
  })

  it('client side with the driver retrying reads (its default): each failed find cost two connections, and bench says why once', async () => {
    const {r, notes} = await underLatency('client')
    const t = r.timeouts
    assert.equal(t.clientGaveUp, r.errors)
    // The retryable reads spec retries once, on another connection; the retry times out as well (a find whose
    // retry got its reply adds one close more and no failure).
    assert.ok(t.connectionsClosedOnError >= 2 * t.clientGaveUp, JSON.stringify(t))
    const said = notes.filter((n) => /client-side timeouts closed/.test(n))
    assert.deepEqual(said, [`run 1: ${t.clientGaveUp} client-side timeouts closed ${t.connectionsClosedOnError} connections: the driver retries a read or write once after a network error (retryReads/retryWrites), on a new connection, and the retry timed out too`])
  })

  it('server side (maxTimeMS): the server answers MaxTimeMSExpired and the pool keeps its connections', async () => {
    const {r} = await underLatency('server')
    const t = r.timeouts
    assert.equal(r.ops, 0, 'the server stops every find at its limit')
    assert.deepEqual(r.errorsByClass, {MaxTimeMSExpired: r.errors})
    assert.deepEqual({answeredByServer: t.answeredByServer, clientGaveUp: t.clientGaveUp, closed: t.connectionsClosedOnError}, {answeredByServer: r.errors, clientGaveUp: 0, closed: 0})
    assert.ok(t.connectionsCreated <= CONCURRENCY, `no connection replaced: ${t.connectionsCreated} created for ${r.errors} timeouts`)
  })

  it('bad values are one-line usage errors', async () => {
    for (const [extra, pattern] of [
      [['--timeout-side', 'server'], /--op-timeout/],
      [['--op-timeout', '10ms', '--timeout-side', 'both'], /timeout-side/],
      [['--workload', 'insert', '--key-dist', 'zipfian'], /--key-dist zipfian needs a workload that picks documents/],
    ] as const) {
      const run = await runInProcess(['bench', '--uri', cluster.uri, ...extra])
      assert.equal(run.code, 2, `${extra.join(' ')}: ${run.stderr}`)
      assert.match(run.stderr, pattern)
    }
  })
})
