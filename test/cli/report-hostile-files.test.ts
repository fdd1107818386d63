/**
 * Hostile result files through every report command (html, hgrm, merge, compare): a zlib bomb in a
 * histogram, a corrupt histogram, a string where a number belongs, a file over the size cap, the
 * same file twice. Each is one usage line naming the file and the field (exit 2), never "a
 * pooltool bug" (exit 1) and never gigabytes inflated first.
 *
 * The runs go through the in-process runner (test/helpers/in-process.ts: oclif's parsing, the error
 * line, the exit code, as bin/run.js), but for one real process per command and exit code: the bench
 * that writes the good file (exit 0), each report command refusing the zlib bomb (exit 2), and
 * report merge run from another working directory (a process's own cwd).
 */
import assert from 'node:assert/strict'
import {mkdtemp, readFile, truncate, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {before, describe, it} from 'node:test'
import {constants as zlibConstants, deflateRawSync} from 'node:zlib'

import type {BenchResult} from '../../src/bench/types.js'
import {MAX_RESULT_BYTES} from '../../src/report/load.js'
import {type CliRun, parseJson, runCli} from '../helpers/cli.js'
import {runInProcess} from '../helpers/in-process.js'

/**
 * A histogram field as HdrHistogram's compressed encoding frames one (V2 compressed cookie, the
 * deflated length, the deflated bytes) around 1 GiB of deflated zeros: about 1 MB of base64.
 * It need not decode past the frame: inflating it at all is the attack.
 */
let bomb: string | undefined
function zlibBomb(): string {
  if (bomb !== undefined) return bomb
  // A zlib stream of 1 GiB of zeros, about as long as deflateSync's, built without deflating 1 GiB (that
  // took 5 CPU-s of the test process): 1 MiB of zeros deflated and fully flushed (byte-aligned, no
  // reference to earlier output) 1,024 times, an empty final block, and the Adler-32 of 1 GiB of zeros
  // (a = 1, b = 2^30 mod 65521). It inflates to exactly 1 GiB of zeros with a valid checksum.
  const MiB = 1024 * 1024
  const piece = deflateRawSync(Buffer.alloc(MiB), {finishFlush: zlibConstants.Z_FULL_FLUSH})
  const adler = Buffer.alloc(4)
  adler.writeUInt32BE((((1024 * MiB) % 65_521) * 65_536 + 1) >>> 0)
  const deflated = Buffer.concat([Buffer.from([0x78, 0x9c]), ...Array.from({length: 1024}, () => piece), Buffer.from([0x03, 0x00]), adler])
  const frame = Buffer.alloc(8)
  frame.writeInt32BE(0x1c849314, 0)
  frame.writeInt32BE(deflated.length, 4)
  bomb = Buffer.concat([frame, deflated]).toString('base64')
  return bomb
}

describe('report commands refuse hostile result files', {timeout: 240_000}, () => {
  let dir: string
  const file = (name: string) => path.join(dir, name)
  let good: BenchResult

  /** Every report command on `bad` (beside the good file where two are needed). */
  const everyCommand = (bad: string): Array<[string, string[]]> => [
    ['html', ['report', 'html', bad, '--out', file('report.html')]],
    ['hgrm', ['report', 'hgrm', bad]],
    ['merge', ['report', 'merge', file('good.json'), bad]],
    ['compare', ['report', 'compare', file('good.json'), bad]],
  ]
  /** `spawned`: each command as a real process (once in the file); else in this process. */
  const refusedEverywhere = async (bad: string, message: RegExp, spawned = false) => {
    // The four processes start together; in this process the runner takes one command at a time.
    const runs: CliRun[] = spawned ? await Promise.all(everyCommand(bad).map(([, args]) => runCli(args))) : []
    for (const [index, [name, args]] of everyCommand(bad).entries()) {
      const run: CliRun = spawned ? runs[index]! : await runInProcess(args)
      assert.equal(run.code, 2, `${name}: ${run.stderr}`)
      assert.match(run.stderr, message, name)
      assert.doesNotMatch(run.stderr, /pooltool bug|\n\s+at /, name)
      assert.equal(run.stderr.trim().split('\n').length, 1, `${name}: one line\n${run.stderr}`)
    }
  }
  const writeVariant = async (name: string, change: (result: any) => void) => {
    const copy = structuredClone(good)
    change(copy)
    await writeFile(file(name), JSON.stringify(copy))
    return file(name)
  }

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pooltool-hostile-'))
    // A good file to spoil (its figures are never asserted): no warm-up, half a second.
    const run = await runCli(['bench', '--duration', '500ms', '--warmup', '0s', '--concurrency', '2', '--out', file('good.json')])
    assert.equal(run.code, 0, run.stderr)
    good = JSON.parse(await readFile(file('good.json'), 'utf8')) as BenchResult
  })

  it('a zlib bomb in a histogram: exit 2 naming the file and the field', async () => {
    const bomb = zlibBomb()
    const bad = await writeVariant('bomb.json', (result) => {
      result.runs[0].histograms.latencyUs = bomb
    })
    await refusedEverywhere(bad, /bomb\.json: runs\[0\]\.histograms\.latencyUs does not decode as an HDR histogram \(inflates past [\d,]+ bytes/, true)
  })

  it('a zlib bomb in a per-operation histogram is refused the same way (every histogram is checked on load)', async () => {
    const bomb = zlibBomb()
    const bad = await writeVariant('bomb-op.json', (result) => {
      result.runs[0].histograms.latencyByOpUs = {find: bomb}
    })
    const run = await runInProcess(['report', 'hgrm', bad])
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /bomb-op\.json: runs\[0\]\.histograms\.latencyByOpUs\.find does not decode/)
  })

  it('a corrupt histogram: exit 2 in all four commands', async () => {
    const bad = await writeVariant('corrupt.json', (result) => {
      result.runs[0].histograms.latencyUs = result.runs[0].histograms.latencyUs.slice(0, 30)
    })
    await refusedEverywhere(bad, /corrupt\.json: runs\[0\]\.histograms\.latencyUs does not decode as an HDR histogram/)
  })

  it('a string where a number belongs: exit 2 naming the field (it would reach the HTML report as it is)', async () => {
    const bad = await writeVariant('string.json', (result) => {
      result.runs[0].errors = '<img src=x onerror=alert(1)>'
    })
    await refusedEverywhere(bad, /string\.json: runs\[0\]\.errors is not a number: not a pooltool bench result/)
    const nested = await writeVariant('nested.json', (result) => {
      result.runs[0].latencyUs.p99 = '12'
    })
    const run = await runInProcess(['report', 'html', nested, '--out', file('nested.html'), '--json'])
    assert.equal(run.code, 2, run.stderr)
    assert.match(parseJson(run).error.message, /nested\.json: runs\[0\]\.latencyUs\.p99 is not a number/)
  })

  it('arrays nested 200,000 deep in a field carried as it is: exit 2, not a stack overflow', async () => {
    const text = JSON.stringify(good).replace('"notes":[', `"extra":${'['.repeat(200_000)}${']'.repeat(200_000)},"notes":[`)
    await writeFile(file('deep.json'), text)
    const run = await runInProcess(['report', 'hgrm', file('deep.json')])
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /deep\.json: the file nests too deeply: not a pooltool bench result/)
  })

  it('a file over the size cap is refused from its size, without being read', async () => {
    // A sparse file: reading it would take 64 MiB of zeros and then fail as "not JSON".
    await writeFile(file('huge.json'), '')
    await truncate(file('huge.json'), MAX_RESULT_BYTES + 1)
    await refusedEverywhere(file('huge.json'), /huge\.json is [\d,]+ bytes, over the 64 MiB a bench result may be/)
  })

  it('report merge refuses the same file twice: the same path, ./ and absolute, or a copy', async () => {
    const twice = await runInProcess(['report', 'merge', file('good.json'), file('good.json')])
    assert.equal(twice.code, 2, twice.stderr)
    assert.match(twice.stderr, /good\.json is the same file as .*good\.json: merging it twice would count its operations twice/)
    // Spawned: the working directory is the process's own.
    const relative = await runCli(['report', 'merge', './good.json', file('good.json')], {cwd: dir})
    assert.equal(relative.code, 2, relative.stderr)
    assert.match(relative.stderr, /is the same file as \.\/good\.json/)
    await writeFile(file('copy.json'), JSON.stringify(good, null, 4))
    const copy = await runInProcess(['report', 'merge', file('good.json'), file('copy.json')])
    assert.equal(copy.code, 2, copy.stderr)
    assert.match(copy.stderr, /copy\.json is a copy of .*good\.json/)
  })

  it('the untouched file still goes through every command', async () => {
    const other = await writeVariant('other.json', (result) => {
      result.notes = [...result.notes, 'another segment']
    })
    for (const [name, args] of everyCommand(other)) {
      const run = await runInProcess(args)
      assert.equal(run.code, 0, `${name}: ${run.stderr}`)
    }
  })
})
