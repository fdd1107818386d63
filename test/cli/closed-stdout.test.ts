/**
 * A closed stdout (`| head -1`) ends a command quietly: it stops at its next
 * write, cleans up as after a signal, exits 141 as a shell reports SIGPIPE,
 * and prints no stack trace, not even from the embedded cluster's IPC.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {mkdtemp, readFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'

import {startSimCluster, type SimCluster} from '../../src/sim/index.js'
import {REPO_ROOT} from '../helpers/cli.js'

const BIN = path.join(REPO_ROOT, 'bin', 'run.js')
const NO_STACK = /^\s+at .+:\d+:\d+\)?$/m

/** `pooltool ARGS | head -1` in a shell; the exit codes of both sides, head's line and pooltool's stderr. */
async function pipeToHead(args: string[]): Promise<{pooltool: number; head: number; firstLine: string; stderr: string}> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
  const errFile = path.join(await mkdtemp(path.join(tmpdir(), 'pooltool-pipe-')), 'stderr')
  const stdout = await new Promise<string>((resolve, reject) => {
    const shell = spawn('bash', ['-c', `${quoted} 2>"$ERR_FILE" | head -1; echo "status \${PIPESTATUS[0]} \${PIPESTATUS[1]}"`], {
      cwd: REPO_ROOT,
      env: {...process.env, POOLTOOL_URI: undefined, MONGODB_URI: undefined, FORCE_COLOR: '0', ERR_FILE: errFile},
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    shell.stdout.on('data', (c) => (out += c))
    shell.on('error', reject)
    shell.on('close', () => resolve(out))
  })
  const stderr = await readFile(errFile, 'utf8')
  const match = /status (\d+) (\d+)/.exec(stdout)
  if (!match) throw new Error(`no status line:\n${stdout}\n${stderr}`)
  return {pooltool: Number(match[1]), head: Number(match[2]), firstLine: stdout.split('\n')[0]!, stderr}
}

describe('a closed stdout', {timeout: 120_000}, () => {
  let sim: SimCluster
  before(async () => {
    sim = await startSimCluster({topology: 'sharded'})
  })
  after(async () => {
    await sim?.stop()
  })

  for (const mode of [[], ['--ndjson']]) {
    it(`ends conns watch ${mode.join(' ')} quietly with exit 141`, async () => {
      const result = await pipeToHead(['conns', 'watch', '--uri', sim.info.uri, '--interval', '200ms', ...mode])
      assert.equal(result.pooltool, 141, result.stderr)
      assert.equal(result.head, 0)
      assert.ok(result.firstLine.length > 0)
      assert.doesNotMatch(result.stderr, NO_STACK)
      assert.doesNotMatch(result.stderr, /EPIPE|Error/)
    })
  }

  it('ends conns watch on the embedded cluster quietly: no IPC stack trace', async () => {
    const result = await pipeToHead(['conns', 'watch', '--interval', '200ms'])
    assert.equal(result.pooltool, 141, result.stderr)
    assert.doesNotMatch(result.stderr, NO_STACK)
    assert.doesNotMatch(result.stderr, /EPIPE|ERR_IPC|Error/)
  })
})
