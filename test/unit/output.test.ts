/**
 * src/output.ts, the one way pooltool writes a file: outputs that name an input or each other are
 * refused whatever the spelling of the path; a replaced file keeps its mode; any write that fails
 * (a full disk, a permission) is OUTPUT_FAILED naming the option and the file, the old file intact;
 * a write to a closed stdout is reported as not delivered.
 */
import assert from 'node:assert/strict'
import {link, mkdir, mkdtemp, open, readdir, readFile, realpath, rename, stat, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {Writable} from 'node:stream'
import {before, describe, it} from 'node:test'

import {PoolToolError} from '../../src/errors.js'
import {type AtomicWriteIo, checkOutputFiles, writeStdout, writeTextAtomically} from '../../src/output.js'

let dir: string
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pooltool-output-'))
})

/** What a failing system call throws. */
function errno(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall}`), {code, syscall})
}

describe('checkOutputFiles', () => {
  const refusal = async (promise: Promise<void>): Promise<PoolToolError> => {
    const error = await promise.then(
      () => assert.fail('not refused'),
      (e: unknown) => e,
    )
    assert.ok(error instanceof PoolToolError, String(error))
    assert.equal(error.code, 'USAGE')
    assert.equal(error.exitCode, 2)
    return error
  }

  it('refuses an output naming an input, the path spelled another way (relative, ./, through a symlinked directory, a hard link)', async () => {
    const input = path.join(dir, 'in.json')
    await writeFile(input, 'input\n')
    const linked = path.join(dir, 'linked-dir')
    await symlink(dir, linked)
    const hard = path.join(dir, 'hard.json')
    await link(input, hard)
    const relative = path.relative(process.cwd(), input)
    for (const out of [input, `./${relative}`, path.join(linked, 'in.json'), hard]) {
      const error = await refusal(checkOutputFiles([{flag: '--out', file: out}], [{flag: '--workload-file', file: relative}]))
      assert.match(error.message, /^--out .+ names the --workload-file .+ \(.+in\.json\): writing it would destroy the input$/)
      assert.ok(error.message.includes(out), error.message)
    }
  })

  it('refuses two outputs naming one file, existing or not yet', async () => {
    for (const name of ['absent.json', 'in.json']) {
      const file = path.join(dir, name)
      const error = await refusal(checkOutputFiles([{flag: '--out', file}, {flag: '--csv', file: path.relative(process.cwd(), file)}, {flag: '--html', file: undefined}]))
      assert.match(error.message, /^--out .+ and --csv .+ name the same file \(.+\): one would overwrite the other$/)
      assert.ok(error.message.includes(`(${path.join(await realpath(dir), name)})`), error.message)
    }
  })

  it('lets distinct files through, unset ones skipped', async () => {
    await checkOutputFiles(
      [{flag: '--out', file: path.join(dir, 'a.json')}, {flag: '--csv', file: path.join(dir, 'a.csv')}, {flag: '--html', file: undefined}],
      [{flag: '--workload-file', file: undefined}, {flag: 'input file', file: path.join(dir, 'in.json')}],
    )
  })
})

describe('writeTextAtomically', () => {
  it('keeps the mode of the file it replaces (0600 stays 0600, 0640 stays 0640)', async () => {
    for (const mode of [0o600, 0o640]) {
      const file = path.join(dir, `mode-${mode.toString(8)}.json`)
      await writeFile(file, 'old\n', {mode})
      assert.equal((await stat(file)).mode & 0o777, mode)
      await writeTextAtomically(file, 'new\n')
      assert.equal(await readFile(file, 'utf8'), 'new\n')
      assert.equal(((await stat(file)).mode & 0o777).toString(8), mode.toString(8))
    }
  })

  it('creates a new file 0644 less the umask', async () => {
    const file = path.join(dir, 'new.json')
    await writeTextAtomically(file, 'new\n')
    const umask = process.umask()
    assert.equal(((await stat(file)).mode & 0o777).toString(8), (0o644 & ~umask).toString(8))
  })

  /** The real file operations, with one of them failing as the kernel would. */
  const failing = (where: 'open' | 'write' | 'rename', code: string): AtomicWriteIo => ({
    open: (async (...args: Parameters<typeof open>) => {
      if (where === 'open') throw errno(code, 'open')
      const handle = await open(...args)
      if (where === 'write') {
        handle.writeFile = async () => {
          throw errno(code, 'write')
        }
      }
      return handle
    }) as typeof open,
    rename: (async (from: string, to: string) => {
      if (where === 'rename') throw errno(code, 'rename')
      await rename(from, to)
    }) as AtomicWriteIo['rename'],
  })

  for (const [where, code, words] of [
    ['write', 'ENOSPC', 'no space left on the device (ENOSPC)'],
    ['open', 'EACCES', 'permission denied (EACCES)'],
    ['rename', 'EROFS', 'the file system is read-only (EROFS)'],
    ['write', 'EIO', 'an input/output error on the device (EIO)'],
  ] as const) {
    it(`a failed ${where} (${code}) is OUTPUT_FAILED naming the option and the file; the old file stays, no temporary file is left`, async () => {
      const sub = path.join(dir, `fail-${where}-${code}`)
      await mkdir(sub)
      const file = path.join(sub, 'report.html')
      await writeFile(file, 'precious\n')
      const error = await writeTextAtomically(file, 'new\n', '--html', failing(where, code)).then(
        () => assert.fail('the write succeeded'),
        (e: unknown) => e,
      )
      assert.ok(error instanceof PoolToolError, String(error))
      assert.equal(error.code, 'OUTPUT_FAILED')
      assert.equal(error.exitCode, 2)
      assert.equal(error.message, `could not write --html ${file}: ${words}`)
      assert.equal(await readFile(file, 'utf8'), 'precious\n')
      assert.deepEqual(await readdir(sub), ['report.html'])
    })
  }

  it('a path that became unusable after the start (its directory removed) is OUTPUT_FAILED too, not a usage error', async () => {
    const file = path.join(dir, 'gone', 'r.json')
    const error = await writeTextAtomically(file, 'x').then(
      () => assert.fail('the write succeeded'),
      (e: unknown) => e,
    )
    assert.ok(error instanceof PoolToolError)
    assert.equal(error.code, 'OUTPUT_FAILED')
    assert.equal(error.message, `could not write --out ${file}: the directory ${path.dirname(file)} does not exist`)
  })
})

describe('writeStdout', () => {
  const stream = (fail?: string): Writable =>
    new Writable({
      write(_chunk, _encoding, callback) {
        callback(fail === undefined ? null : errno(fail, 'write'))
      },
    })

  it('is true once the text is handed over', async () => {
    assert.equal(await writeStdout('x', stream()), true)
  })

  it('is false when the reader went away (EPIPE), or the stream already ended', async () => {
    const closed = stream('EPIPE')
    closed.on('error', () => {})
    assert.equal(await writeStdout('x', closed), false)
    const destroyed = stream()
    destroyed.destroy()
    assert.equal(await writeStdout('x', destroyed), false)
  })

  it('any other failure is OUTPUT_FAILED', async () => {
    const full = stream('ENOSPC')
    full.on('error', () => {})
    await assert.rejects(writeStdout('x', full), (error: unknown) => error instanceof PoolToolError && error.code === 'OUTPUT_FAILED' && /no space left on the device \(ENOSPC\)/.test(error.message))
  })
})
