/**
 * `conns` through a port-forward: the embedded replica set started with `advertiseHost`
 * names its members `rs.pooltool.invalid:PORT` (RFC 2606: never resolves) while listening
 * on 127.0.0.1, as Kubernetes members seen from outside. The member the URI reaches is
 * polled at the address given and shows its figures; the others are "not reachable from
 * here" with their real error (the name does not resolve), never down, and the run is not a
 * failure. Before, every member was polled by its advertised name: no figures at all.
 *
 * The list runs go through the in-process runner (test/helpers/in-process.ts), the path bin/run.js
 * takes, without a process start (about 1 CPU-s each); the watch is a real process, stopped by Ctrl-C.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {CliOutput} from '../helpers/output.js'

describe('conns through a port-forward (members advertise names that do not resolve)', () => {
  const cluster = useCluster({topology: 'replset', members: 3, advertiseHost: 'rs.pooltool.invalid'})

  it("list: the forwarded member's figures, under its cluster name; the others not reachable from here, exit 0", async () => {
    const entry = cluster.sim.info.processes[0]!
    const uri = `mongodb://127.0.0.1:${entry.port}/?directConnection=true`
    const run = await runInProcess(['conns', 'list', '--uri', uri, '--timeout-ms', '2000', '--json'])
    assert.equal(run.code, 0, run.stderr)
    const result = parseJson(run)
    assert.equal(result.hosts.length, 3)
    const [first, ...others] = result.hosts
    assert.equal(first.host, entry.advertisedAs)
    assert.equal(first.address, `127.0.0.1:${entry.port}`)
    assert.equal(first.entry, true)
    assert.equal(first.state, 'ok')
    assert.equal(typeof first.current, 'number')
    assert.equal(first.maxIncoming, first.current + first.available)
    for (const h of others) {
      assert.equal(h.state, 'unreachable', JSON.stringify(h))
      assert.equal(h.reachedFromHere, false)
      assert.match(h.host, /^rs\.pooltool\.invalid:\d+$/)
      assert.match(h.error, /ENOTFOUND|does not resolve|EAI_AGAIN/, 'the real error')
    }
    assert.ok(result.notes.some((n: string) => n.startsWith('not reachable from here (never answered): ')), result.notes.join('\n'))

    const text = await runInProcess(['conns', 'list', '--uri', uri, '--timeout-ms', '2000', '--no-holders'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, new RegExp(`rs\\.pooltool\\.invalid:${entry.port} \\(entry, via 127\\.0\\.0\\.1:${entry.port}\\)`))
    assert.match(text.stdout, /not reachable from here: /)
  })

  it('watch: the entry answers from the first round, the others stay not reachable from here with their error', async () => {
    const entry = cluster.sim.info.processes[0]!
    const uri = `mongodb://127.0.0.1:${entry.port}/?directConnection=true`
    const out = new CliOutput()
    const watching = runCli(['conns', 'watch', '--uri', uri, '--timeout-ms', '2000', '--interval', '300ms', '--no-holders', '--ndjson'], {timeoutMs: 60_000, onSpawn: out.attach})
    watching.catch(() => undefined)
    const advertised = entry.advertisedAs!.replaceAll('.', '\\.')
    await out.until(new RegExp(`"type":"sample","round":1,[^\\n]*"host":"${advertised}"[^\\n]*"state":"ok"`))
    // A few rounds in, the others still carry the name error, not a closed client.
    await out.until(/"type":"sample","round":4,[^\n]*"reachedFromHere":false/)
    out.signal()
    const run = await watching
    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l))
    const down = lines.filter((l) => l.type === 'sample' && l.host !== entry.advertisedAs)
    assert.ok(down.length > 0)
    for (const s of down) assert.doesNotMatch(s.error, /Topology is closed/)
    const summary = lines.at(-1)
    assert.equal(summary.type, 'summary')
    assert.equal(summary.hosts.find((h: {entry?: boolean}) => h.entry).samples, summary.rounds, 'the entry answered every round')
    assert.deepEqual(summary.hosts.filter((h: {entry?: boolean}) => !h.entry).map((h: {reachedFromHere: boolean}) => h.reachedFromHere), [false, false])
  })
})
