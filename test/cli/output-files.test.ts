/**
 * Outputs that never destroy or deceive:
 * - an output naming an input or another output is refused before anything runs (exit 2, one line
 *   naming both options and the path), however the path is spelled, and the file is left byte for byte;
 * - a replaced file keeps its mode;
 * - a full disk or a read-only file system is OUTPUT_FAILED (exit 2) naming the file, in every command
 *   that writes one, and what was measured or captured is not lost with it;
 * - a snapshot cut by a closed stdout ends with 141 and claims nothing.
 * The disk cases mount small tmpfs file systems (tests run as root); where mounting is not permitted
 * they are skipped, and test/unit/output.test.ts covers the same failures by injection.
 *
 * Runs go through the in-process runner (test/helpers/in-process.ts: oclif's parsing, the error line or
 * --json object, the exit code, as bin/run.js), but for one real process per command and exit path:
 * bench (exit 0 in the first before(), exit 2 refused), report html, hgrm and merge refusing an output,
 * the snapshot whose capture goes to stdout (a real pipe) when its file cannot be written, conns watch
 * stopped by SIGINT once the disk went read-only, and the snapshot cut by a closed pipe (exit 141).
 */
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {copyFile, mkdir, mkdtemp, open, readdir, readFile, realpath, rm, stat, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it, type TestContext} from 'node:test'

import {CliOutput} from '../helpers/output.js'
import {type CliRun, parseJson, runCli, runCliClosingStdoutAfter} from '../helpers/cli.js'
import {useCluster} from '../helpers/cluster.js'
import {runInProcess} from '../helpers/in-process.js'

const NO_STACK = /^\s+at .+:\d+:\d+\)?$/m
const WORKLOAD = ['operations:', '  - name: lookup', '    find: {filter: {_id: "{{seededId}}"}}', ''].join('\n')

let dir: string
const file = (name: string) => path.join(dir, name)
/** One cluster for the file: nothing below changes it (snapshot and conns watch only read). */
const cluster = useCluster({topology: 'sharded'})

/**
 * `pooltool …args` in this process, run from `cwd` as a spawned run would be (relative paths resolve
 * there). The tests of this file run one at a time, and the runner one command at a time.
 */
async function inProcess(args: string[], cwd?: string): Promise<CliRun> {
  const before = process.cwd()
  if (cwd !== undefined) process.chdir(cwd)
  try {
    return await runInProcess(args)
  } finally {
    process.chdir(before)
  }
}

before(async () => {
  // Real paths throughout: a test compares the path pooltool names with the one it resolved.
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'pooltool-outputs-')))
  // One real bench result and its twin, so the commands below would read and write for real were they not stopped.
  // The twin differs by one note: report merge refuses one result given twice, even as a copy.
  const run = await runCli(['bench', '--duration', '300ms', '--warmup', '0', '--concurrency', '2', '--out', file('seg0.json')])
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(await readFile(file('seg0.json'), 'utf8')) as {notes: string[]}
  await writeFile(file('seg1.json'), JSON.stringify({...result, notes: [...result.notes, 'twin segment']}))
})

after(async () => {
  await rm(dir, {recursive: true, force: true})
})

describe('an output naming an input or another output', {timeout: 240_000}, () => {
  /** Run in `dir`, so relative paths (`r.json`, `./r.json`) resolve there; `spawned`: as a real process. */
  const refused = async (args: string[], files: string[], message: RegExp, spawned = false) => {
    const before = await Promise.all(files.map((name) => readFile(file(name))))
    const run = spawned ? await runCli(args, {cwd: dir}) : await inProcess(args, dir)
    assert.equal(run.code, 2, `${args.join(' ')}\n${run.stdout}${run.stderr}`)
    assert.match(run.stderr, message)
    assert.equal(run.stderr.trim().split('\n').length, 1, `one line:\n${run.stderr}`)
    assert.doesNotMatch(run.stderr, /embedded simulated/, 'refused before connecting')
    assert.doesNotMatch(run.stderr, NO_STACK)
    for (const [index, name] of files.entries()) assert.deepEqual(await readFile(file(name)), before[index], `${name} untouched`)
    assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith('.tmp')), [])
  }

  it('bench --workload-file w.yaml --out ./w.yaml: the workload file is kept', async () => {
    await writeFile(file('w.yaml'), WORKLOAD)
    await refused(['bench', '--workload-file', 'w.yaml', '--out', './w.yaml', '--duration', '300ms'], ['w.yaml'], new RegExp(`^Error \\[USAGE\\]: --out \\./w\\.yaml names the --workload-file w\\.yaml \\(${escape(file('w.yaml'))}\\)`), true)
  })

  it('bench --out ./r.json --csv /abs/r.json (an existing result), and --out new.json --html new.json (absent, not created)', async () => {
    await copyFile(file('seg0.json'), file('r.json'))
    await refused(['bench', '--out', './r.json', '--csv', file('r.json'), '--duration', '300ms'], ['r.json'], new RegExp(`^Error \\[USAGE\\]: --out \\./r\\.json and --csv ${escape(file('r.json'))} name the same file \\(${escape(file('r.json'))}\\)`))
    await refused(['bench', '--out', 'new.json', '--html', 'new.json', '--duration', '300ms'], [], /^Error \[USAGE\]: --out new\.json and --html new\.json name the same file/)
    await assert.rejects(stat(file('new.json')), 'nothing was created')
  })

  it('bench --out r.json --html through a symlinked directory', async () => {
    await symlink(dir, file('linked'))
    await refused(['bench', '--out', 'r.json', '--html', 'linked/r.json', '--duration', '300ms'], ['r.json'], new RegExp(`--out r\\.json and --html linked/r\\.json name the same file \\(${escape(file('r.json'))}\\)`))
  })

  it('report html X --out ./X, report hgrm X --out /abs/X: the result is kept', async () => {
    await copyFile(file('seg0.json'), file('x.json'))
    await refused(['report', 'html', 'x.json', '--out', './x.json'], ['x.json'], /^Error \[USAGE\]: --out \.\/x\.json names the input file x\.json/, true)
    await refused(['report', 'hgrm', 'x.json', '--out', file('x.json')], ['x.json'], /^Error \[USAGE\]: --out .*x\.json names the input file x\.json/, true)
  })

  it('report merge a b --out ./a, and under --json the documented error object', async () => {
    await copyFile(file('seg0.json'), file('a.json'))
    await copyFile(file('seg1.json'), file('b.json'))
    await refused(['report', 'merge', 'a.json', 'b.json', '--out', './a.json'], ['a.json', 'b.json'], /^Error \[USAGE\]: --out \.\/a\.json names the input file a\.json/, true)
    const before = await readFile(file('b.json'))
    const run = await inProcess(['report', 'merge', 'a.json', file('b.json'), '--out', 'b.json', '--json'], dir)
    assert.equal(run.code, 2, run.stderr)
    const {error} = parseJson(run)
    assert.equal(error.code, 'USAGE')
    assert.equal(error.exitCode, 2)
    assert.match(error.message, /--out b\.json names the input file .*b\.json/)
    assert.deepEqual(await readFile(file('b.json')), before)
  })
})

describe('a replaced file keeps its mode', () => {
  it('report merge --out over a 0600 file leaves it 0600', async () => {
    await writeFile(file('total.json'), 'old\n', {mode: 0o600})
    const run = await inProcess(['report', 'merge', file('seg0.json'), file('seg1.json'), '--out', file('total.json')])
    assert.equal(run.code, 0, run.stderr)
    assert.equal(JSON.parse(await readFile(file('total.json'), 'utf8')).segments, 2, 'replaced')
    assert.equal(((await stat(file('total.json'))).mode & 0o777).toString(8), '600')
  })
})

/** A tmpfs of 64 KB at `mountPoint`, or undefined where mounting is not permitted. */
function mountTmpfs(mountPoint: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint], {stdio: 'pipe'})
    return undefined
  } catch (error) {
    return `cannot mount a tmpfs here (${String((error as {stderr?: Buffer}).stderr ?? error).trim()}); the unit test covers it`
  }
}

/** Fill a file system to its last byte, so that any write to it fails with ENOSPC. */
async function fill(mountPoint: string): Promise<void> {
  const handle = await open(path.join(mountPoint, 'filler'), 'w')
  try {
    for (;;) await handle.write(Buffer.alloc(4096, 1))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    await handle.close()
  }
}

describe('a write that fails on the disk is OUTPUT_FAILED with the path, in every command', {timeout: 240_000}, () => {
  let full: string
  let readOnly: string
  let cannotMount: string | undefined
  const mounted: string[] = []

  before(async () => {
    full = file('full')
    readOnly = file('read-only')
    for (const mountPoint of [full, readOnly]) {
      await mkdir(mountPoint)
      cannotMount ??= mountTmpfs(mountPoint)
      if (cannotMount === undefined) mounted.push(mountPoint)
    }
    if (cannotMount === undefined) await fill(full)
  })

  after(() => {
    for (const mountPoint of mounted) execFileSync('umount', [mountPoint])
  })

  const usable = (t: TestContext): boolean => {
    if (cannotMount !== undefined) t.skip(cannotMount)
    return cannotMount === undefined
  }

  const outputFailed = (stderr: string, flag: string, target: string, why = 'no space left on the device \\(ENOSPC\\)') => {
    assert.match(stderr, new RegExp(`^Error \\[OUTPUT_FAILED\\]: could not write ${flag} ${escape(target)}: ${why}`, 'm'))
    assert.doesNotMatch(stderr, NO_STACK)
    assert.doesNotMatch(stderr, /pooltool bug|INTERNAL/)
  }

  const nothingLeft = async () => assert.deepEqual(await readdir(full), ['filler'], 'no file, no temporary file')

  it('report html --out and report merge --out (and under --json, the error object)', async (t) => {
    if (!usable(t)) return
    const html = await inProcess(['report', 'html', file('seg0.json'), '--out', path.join(full, 'report.html')])
    assert.equal(html.code, 2, html.stderr)
    outputFailed(html.stderr, '--out', path.join(full, 'report.html'))
    const merge = await inProcess(['report', 'merge', file('seg0.json'), file('seg1.json'), '--out', path.join(full, 'total.json')])
    assert.equal(merge.code, 2, merge.stderr)
    outputFailed(merge.stderr, '--out', path.join(full, 'total.json'))
    const json = await inProcess(['report', 'merge', file('seg0.json'), file('seg1.json'), '--out', path.join(full, 'total.json'), '--json'])
    assert.equal(json.code, 2, json.stderr)
    const {error} = parseJson(json)
    assert.equal(error.code, 'OUTPUT_FAILED')
    assert.equal(error.exitCode, 2)
    assert.match(error.message, /no space left on the device \(ENOSPC\)/)
    await nothingLeft()
  })

  it('snapshot --out: OUTPUT_FAILED, never "written", and the capture goes to stdout (a pipe) instead of being lost', async (t) => {
    if (!usable(t)) return
    const out = path.join(full, 'snapshot.json')
    const run = await runCli(['snapshot', '--uri', cluster.uri, '--out', out])
    assert.equal(run.code, 2, run.stderr)
    outputFailed(run.stderr, '--out', out)
    assert.match(run.stderr, /the snapshot was written to stdout instead/)
    assert.doesNotMatch(run.stdout + run.stderr, /snapshot written to/)
    const document = JSON.parse(run.stdout) as {reads?: unknown}
    assert.ok(JSON.stringify(document).includes('serverStatus'), 'the whole capture is on stdout')
    await nothingLeft()
  })

  it('conns watch --html on a full disk: the summary is printed, then OUTPUT_FAILED', async (t) => {
    if (!usable(t)) return
    const html = path.join(full, 'watch.html')
    const run = await inProcess(['conns', 'watch', '--uri', cluster.uri, '--count', '1', '--interval', '200ms', '--json', '--html', html])
    assert.equal(run.code, 2, run.stderr)
    outputFailed(run.stderr, '--html', html)
    assert.ok(Array.isArray(parseJson(run).hosts), 'the watch result is on stdout')
    await nothingLeft()
  })

  it('conns watch --html on a file system that became read-only during the watch: OUTPUT_FAILED (EROFS)', async (t) => {
    if (!usable(t)) return
    const html = path.join(readOnly, 'watch.html')
    const out = new CliOutput()
    const running = runCli(['conns', 'watch', '--uri', cluster.uri, '--interval', '200ms', '--ndjson', '--html', html], {onSpawn: out.attach})
    // The path was checked (writable) before the first round; now the disk goes read-only, then the watch ends.
    await out.until(/"type":"sample"/)
    execFileSync('mount', ['-o', 'remount,ro', readOnly])
    out.signal('SIGINT')
    const run = await running
    assert.equal(run.code, 2, run.stderr)
    outputFailed(run.stderr, '--html', html, `the directory ${escape(readOnly)} is on a read-only file system \\(EROFS\\)`)
    assert.match(run.stdout, /"type":"summary"/, 'the summary was printed')
    assert.deepEqual(await readdir(readOnly), [])
  })
})

describe('snapshot into a closed pipe', {timeout: 120_000}, () => {

  it('is cut, so it exits 141 and says nothing was written', async () => {
    // As `| head -c 1000`: read the first 1000 bytes, then close the pipe while the document is still coming.
    const {code, read, stderr} = await runCliClosingStdoutAfter(['snapshot', '--uri', cluster.uri], 1000)
    assert.ok(read >= 1000, `read ${read} bytes`)
    assert.equal(code, 141, stderr)
    assert.doesNotMatch(stderr, /written/)
    assert.doesNotMatch(stderr, NO_STACK)
    assert.doesNotMatch(stderr, /EPIPE|Error/)
  })
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
