/**
 * Every file pooltool writes goes through here: checked before any load
 * starts, written atomically (a temp file beside it, fsync, rename), and only
 * ever in place of a regular file.
 *
 * A device (`/dev/null`, as root, would be replaced by a regular file), a
 * FIFO, a directory or a symlink at the path is refused: rename() never
 * follows a symlink, so writing "through" one would silently replace the link
 * itself, which is not what a user who pointed it somewhere meant.
 *
 * An output never names an input or another output (checkOutputFiles), a
 * replaced file keeps its mode, and a write that fails (a full disk, a
 * read-only file system) is OUTPUT_FAILED naming the file, whichever command
 * wrote it. What goes to stdout instead of a file is awaited (writeStdout),
 * so a closed pipe is never reported as a whole document.
 */
import {randomBytes} from 'node:crypto'
import {constants} from 'node:fs'
import {access, lstat, open, realpath, rename, rm, stat} from 'node:fs/promises'
import path from 'node:path'

import {PoolToolError} from './errors.js'

const HINT = 'name a new file or an existing regular file in a writable directory, e.g. --out result.json'

function describeKind(stats: {isDirectory(): boolean; isSymbolicLink(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean}): string {
  if (stats.isDirectory()) return 'a directory'
  if (stats.isSymbolicLink()) return 'a symbolic link'
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  if (stats.isSocket()) return 'a socket'
  return 'not a regular file'
}

/** A refusal of checkOutputPath, with the reason alone for a write that finds the same problem later. */
class OutputPathRefusal extends PoolToolError {
  constructor(
    message: string,
    /** What is wrong, without the option: "the directory /x does not exist". */
    readonly reason: string,
  ) {
    super('USAGE', message, HINT)
  }
}

/**
 * Refuse a path pooltool must not write (exit 2), before any work starts:
 * the parent directory must exist and be writable; the path must be absent
 * or a regular file.
 */
export async function checkOutputPath(file: string, flag = '--out'): Promise<void> {
  if (file.trim() === '') throw new OutputPathRefusal(`${flag} is empty`, 'the path is empty')
  const target = path.resolve(file)
  const parent = path.dirname(target)
  try {
    const parentStats = await lstat(parent)
    if (!parentStats.isDirectory() && !(parentStats.isSymbolicLink() && (await isDirectoryBehindLink(parent)))) {
      throw new OutputPathRefusal(`${flag} ${file}: ${parent} is not a directory`, `${parent} is not a directory`)
    }
    await access(parent, constants.W_OK)
  } catch (error) {
    if (error instanceof PoolToolError) throw error
    const code = (error as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT' ? 'does not exist' : code === 'EACCES' || code === 'EPERM' ? 'is not writable' : code === 'EROFS' ? 'is on a read-only file system (EROFS)' : `cannot be used (${code ?? 'error'})`
    throw new OutputPathRefusal(`${flag} ${file}: the directory ${parent} ${why}`, `the directory ${parent} ${why}`)
  }
  let stats
  try {
    stats = await lstat(target)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    throw new OutputPathRefusal(`${flag} ${file} cannot be used (${code})`, `it cannot be used (${code})`)
  }
  if (!stats.isFile()) {
    const kind = describeKind(stats)
    throw new OutputPathRefusal(`${flag} ${file} is ${kind}: pooltool only replaces regular files`, `it is ${kind} now: pooltool only replaces regular files`)
  }
}

/** A parent given through a symlink (e.g. /tmp -> /private/tmp) is fine: only the file itself may not be a link. */
async function isDirectoryBehindLink(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory()
  } catch {
    return false
  }
}

/** An option (or argument) naming a file, as the refusal should name it: `--out`, `--workload-file`, `input file`. */
export interface NamedFile {
  flag: string
  file: string | undefined
}

const SAME_FILE_HINT = 'give each output a file of its own, never the path of an input, e.g. --out result.json --csv series.csv'

/**
 * Refuse, before anything runs (no connection, no file loaded), outputs pooltool must not write:
 * each output as checkOutputPath checks it, then any output that names an input (writing it would
 * destroy what the command reads) or another output (the second write would replace the first).
 * Paths are compared as the kernel resolves them, so `r.json`, `./r.json`, `/abs/r.json`, a path
 * through a symlinked directory and a hard link to the same file are the same file.
 * Unset options (undefined) are skipped, so a command passes all of its file options as they are.
 */
export async function checkOutputFiles(outputs: NamedFile[], inputs: NamedFile[] = []): Promise<void> {
  const named = (list: NamedFile[]): Array<{flag: string; file: string}> => list.filter((entry): entry is {flag: string; file: string} => entry.file !== undefined)
  const outs = named(outputs)
  for (const out of outs) await checkOutputPath(out.file, out.flag)
  const identify = async (entry: {flag: string; file: string}) => ({...entry, ...(await fileIdentity(entry.file))})
  const resolvedOuts = await Promise.all(outs.map(identify))
  const resolvedIns = await Promise.all(named(inputs).map(identify))
  for (const out of resolvedOuts) {
    const input = resolvedIns.find((candidate) => sameFile(out, candidate))
    if (input) {
      throw new PoolToolError('USAGE', `${out.flag} ${out.file} names the ${input.flag} ${input.file} (${input.real}): writing it would destroy the input`, SAME_FILE_HINT)
    }
  }
  for (const [index, out] of resolvedOuts.entries()) {
    const other = resolvedOuts.slice(index + 1).find((candidate) => sameFile(out, candidate))
    if (other) {
      throw new PoolToolError('USAGE', `${out.flag} ${out.file} and ${other.flag} ${other.file} name the same file (${out.real}): one would overwrite the other`, SAME_FILE_HINT)
    }
  }
}

interface FileIdentity {
  /** The path with every symlink resolved: of the file if it exists, else of its directory, plus its name. */
  real: string
  /** Device and inode of an existing file: a hard link has another path but the same inode. */
  inode?: string
}

async function fileIdentity(file: string): Promise<FileIdentity> {
  const absolute = path.resolve(file)
  try {
    const real = await realpath(absolute)
    const stats = await stat(real)
    return {real, inode: `${stats.dev}:${stats.ino}`}
  } catch {
    // Not there (yet): its directory decides where it would be written.
    try {
      return {real: path.join(await realpath(path.dirname(absolute)), path.basename(absolute))}
    } catch {
      return {real: absolute}
    }
  }
}

function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.real === b.real || (a.inode !== undefined && a.inode === b.inode)
}

/** Write JSON atomically: a reader sees the old file or the whole new one, never half of it. */
export async function writeJsonAtomically(file: string, value: unknown, flag = '--out'): Promise<void> {
  await writeTextAtomically(file, `${JSON.stringify(value, null, 2)}\n`, flag)
}

/** The file operations of the atomic write: a test replaces them to fail as a full disk would. */
export interface AtomicWriteIo {
  open: typeof open
  rename: typeof rename
}

const REAL_IO: AtomicWriteIo = {open, rename}

/** What went wrong, in words, with the code a search finds. */
const WRITE_FAILURES: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  EIO: 'an input/output error on the device',
  EFBIG: 'the file is too large for the file system',
  ENOENT: 'its directory no longer exists',
}

const WRITE_HINT = 'free space on that disk or check the permissions of its directory (or name a file on another disk), then run it again'

/** A write that failed: OUTPUT_FAILED (exit 2) naming the option and the file, never "a pooltool bug". */
export function outputFailed(flag: string, file: string, error: unknown): PoolToolError {
  if (error instanceof PoolToolError && error.code === 'OUTPUT_FAILED') return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const why =
    error instanceof OutputPathRefusal
      ? error.reason
      : error instanceof PoolToolError
        ? error.message
        : code !== undefined && code in WRITE_FAILURES
          ? `${WRITE_FAILURES[code]} (${code})`
          : `${(error as Error | undefined)?.message ?? String(error)}`
  return new PoolToolError('OUTPUT_FAILED', `could not write ${flag} ${file}: ${why}`, WRITE_HINT, {cause: error})
}

/**
 * Write text (CSV …) atomically, as writeJsonAtomically; `flag` names the option in a refusal.
 * Any failure is an OUTPUT_FAILED PoolToolError naming `flag` and the file; the old file is left as it was.
 */
export async function writeTextAtomically(file: string, text: string, flag = '--out', io: AtomicWriteIo = REAL_IO): Promise<void> {
  try {
    await checkOutputPath(file, flag)
  } catch (error) {
    // Checked again at write time: the directory may have gone, or a link appeared, since the start.
    throw outputFailed(flag, file, error)
  }
  const target = path.resolve(file)
  // A file we replace keeps its mode: a 0600 result must not become readable by everyone.
  const existingMode = await lstat(target).then(
    (stats) => stats.mode & 0o7777,
    () => undefined,
  )
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    // 'wx': never open something that is already there (a link planted at the temp name included).
    // Replacing a file: created 0600 (never wider than the old one, even for a moment), then given its mode.
    // A new file: 0644 less the umask, as before.
    const handle = await io.open(temp, 'wx', existingMode === undefined ? 0o644 : 0o600)
    try {
      if (existingMode !== undefined) await handle.chmod(existingMode)
      await handle.writeFile(text)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await io.rename(temp, target)
  } catch (error) {
    await rm(temp, {force: true})
    throw outputFailed(flag, file, error)
  }
}

/**
 * Write to stdout and wait until the text is handed to the kernel: true once it is, false when the
 * reader went away (EPIPE; the command then exits 141 and must not say it wrote anything). A large
 * document through a pipe is written over many turns of the event loop; claiming it was written
 * before then is how a cut-off snapshot was reported as whole.
 */
export function writeStdout(text: string, stream: NodeJS.WritableStream & {destroyed?: boolean} = process.stdout): Promise<boolean> {
  return new Promise((resolve, reject) => {
    if (stream.destroyed) {
      resolve(false)
      return
    }
    stream.write(text, (error?: Error | null) => {
      if (!error) resolve(true)
      else if (isClosedPipe(error as NodeJS.ErrnoException)) resolve(false)
      else reject(outputFailed('to', 'stdout', error))
    })
  })
}

/** The reader of a pipe went away (EPIPE), or we wrote again after it did. */
export function isClosedPipe(error: NodeJS.ErrnoException): boolean {
  return error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED'
}
