/**
 * `--out` only ever replaces a regular file, is checked before any load
 * starts, and is written atomically: a device, FIFO, directory, symlink or a
 * missing or read-only directory is refused with exit 2 before the embedded
 * cluster even starts. The refusals and the atomic write run in this process (test/helpers/in-process.ts,
 * the path bin/run.js takes): a process start cost ~1 CPU-s a case, and bench's real process is proven
 * for each exit path in test/cli/bench.test.ts. The failed write is spawned: it takes a real SIGINT.
 */
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {before, describe, it} from 'node:test'

import {parseJson, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'

describe('bench --out', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pooltool-out-'))
  })

  /** The refusal in text and with --json, in this process (the path bin/run.js takes). */
  const refused = async (out: string, why: RegExp) => {
    for (const json of [false, true]) {
      const args = ['bench', '--warmup', '0s', '--duration', '1s', '--out', out, ...(json ? ['--json'] : [])]
      const run = await runInProcess(args)
      assert.equal(run.code, 2, `${out}: ${run.stderr}`)
      assert.doesNotMatch(run.stderr, /embedded simulated/, 'refused before the load (and the cluster) started')
      if (json) {
        const {error} = parseJson(run)
        assert.equal(error.exitCode, 2)
        assert.match(error.message, why)
      } else {
        assert.match(run.stderr, /^Error \[USAGE\]: --out /m)
        assert.match(run.stderr, why)
      }
    }
  }

  it('refuses a character device (/dev/null) and leaves it a device', async () => {
    await refused('/dev/null', /is a device: pooltool only replaces regular files/)
    assert.ok((await lstat('/dev/null')).isCharacterDevice(), '/dev/null is still a device')
  })

  it('refuses a FIFO, a directory and a symlink, and leaves each as it was', async () => {
    const fifo = path.join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    await refused(fifo, /is a FIFO/)
    assert.ok((await lstat(fifo)).isFIFO(), 'the FIFO is still a FIFO')

    const sub = path.join(dir, 'sub')
    await mkdir(sub)
    await refused(sub, /is a directory/)

    const real = path.join(dir, 'real.json')
    await writeFile(real, 'precious\n')
    const link = path.join(dir, 'link.json')
    await symlink(real, link)
    await refused(link, /is a symbolic link/)
    assert.equal(await readlink(link), real)
    assert.equal(await readFile(real, 'utf8'), 'precious\n')
  })

  it('refuses a directory that does not exist or cannot be written', async () => {
    await refused(path.join(dir, 'missing', 'r.json'), /does not exist/)
    const locked = path.join(dir, 'locked')
    await mkdir(locked)
    await chmod(locked, 0o500)
    // root may write anywhere; the check is meaningful only for other users.
    if (process.getuid?.() !== 0) await refused(path.join(locked, 'r.json'), /is not writable/)
  })

  it('replaces a regular file atomically, leaving no temporary file behind', async () => {
    const out = path.join(dir, 'result.json')
    await writeFile(out, 'old\n')
    const run = await runInProcess(['bench', '--warmup', '0s', '--duration', '500ms', '--out', out])
    assert.equal(run.code, 0, run.stderr)
    const written = JSON.parse(await readFile(out, 'utf8'))
    assert.ok(written.runs[0].ops > 0, `ops ${written.runs[0].ops}`)
    assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith('.tmp')), [])
  })

  it('a write that fails after the run loses nothing: the result is printed, then one OUTPUT_FAILED line, exit 2', async () => {
    const gone = path.join(dir, 'removed-during-the-run')
    await mkdir(gone)
    const out = path.join(gone, 'result.json')
    const run = await runCli(['bench', '--warmup', '0s', '--duration', '60s', '--out', out, '--json'], {
      // Once the target is up (the preflight check is behind it), take the directory away and stop the run.
      onSpawn: (child) => {
        child.stderr!.once('data', () => {
          void rm(gone, {recursive: true, force: true}).then(() => child.kill('SIGINT'))
        })
      },
    })
    assert.equal(run.code, 2, run.stderr)
    const result = parseJson(run)
    assert.equal(result.interrupted, true, 'the measured result is on stdout')
    assert.ok(Array.isArray(result.runs), 'with its runs')
    assert.match(run.stderr, /^Error \[OUTPUT_FAILED\]: could not write --out .*removed-during-the-run\/result\.json.*\(hint: the result above is complete/m)
  })
})
