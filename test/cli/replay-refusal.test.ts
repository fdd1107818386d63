/**
 * A replay serves the captured reads only: bench (which writes and measures load) and
 * auth (which opens and authenticates new connections) refuse one with exit 7 and say why,
 * instead of failing half-way on a write the replay cannot serve.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {parseJson, runCli} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'
import {type ReplayHandle, startReplay} from '../helpers/replay.js'

describe('bench and auth against a replay', () => {
  const cluster = useCluster({topology: 'standalone'})
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-replay-refusal-'))
  let replay: ReplayHandle

  before(async () => {
    const file = path.join(dir, 's.json')
    // The capture is this file's input, not under test: in this process (test/helpers/in-process.ts, the path bin/run.js takes).
    const capture = await runInProcess(['snapshot', '--uri', cluster.uri, '--out', file])
    assert.equal(capture.code, 0, capture.stderr)
    replay = await startReplay(file)
  })
  after(async () => {
    await replay?.stop()
    rmSync(dir, {recursive: true, force: true})
  })

  // bench's and auth's exit 7, each in the real process.
  for (const [command, args] of [
    // --warmup 0s: refused before any load (were that to change, no 5 s warm-up either).
    ['bench', ['--duration', '1s', '--warmup', '0s']],
    ['auth', ['--mechanisms', 'none', '--connections', '2']],
  ] as const) {
    it(`${command}: exit 7, one line naming the replay and its capture time`, async () => {
      const run = await runCli([command, ...args, '--uri', replay.uri, '--json'])
      assert.equal(run.code, 7, `${run.stdout}\n${run.stderr}`)
      const {error} = parseJson<{error: {code: string; message: string}}>(run)
      assert.equal(error.code, 'WRONG_TOPOLOGY')
      assert.match(error.message, new RegExp(`^${command} needs a live cluster: .*replay of a snapshot captured at ${replay.capturedAt.slice(0, 16)}`))
    })
  }

  it('conns list runs against the same replay', async () => {
    // In this process: conns list's exit 0 has its real process in other files (conns-*.test.ts).
    const run = await runInProcess(['conns', 'list', '--uri', replay.uri, '--json'])
    assert.equal(run.code, 0, run.stderr)
  })
})
