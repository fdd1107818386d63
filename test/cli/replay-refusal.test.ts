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
import {type ReplayHandle, startReplay} from '../helpers/replay.js'

describe('bench and auth against a replay', () => {
  const cluster = useCluster({topology: 'standalone'})
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-replay-refusal-'))
  let replay: ReplayHandle

  before(async () => {
    const file = path.join(dir, 's.json')
    const capture = await runCli(['snapshot', '--uri', cluster.uri, '--out', file])
    assert.equal(capture.code, 0, capture.stderr)
    replay = await startReplay(file)
  })
  after(async () => {
    await replay?.stop()
    rmSync(dir, {recursive: true, force: true})
  })

  for (const [command, args] of [
    ['bench', ['--duration', '1s']],
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
    const run = await runCli(['conns', 'list', '--uri', replay.uri, '--json'])
    assert.equal(run.code, 0, run.stderr)
  })
})
