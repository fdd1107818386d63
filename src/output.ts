/**
 * Every file pooltool writes goes through here: checked before any load
 * starts, written atomically (a temp file beside it, fsync, rename), and only
 * ever in place of a regular file.
 *
 * A device (`/dev/null`, as root, would be replaced by a regular file), a
 * FIFO, a directory or a symlink at the path is refused: rename() never
 * follows a symlink, so writing "through" one would silently replace the link
 * itself, which is not what a user who pointed it somewhere meant.
 */
import {randomBytes} from 'node:crypto'
import {constants} from 'node:fs'
import {access, lstat, open, rename, rm, stat} from 'node:fs/promises'
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

/**
 * Refuse a path pooltool must not write (exit 2), before any work starts:
 * the parent directory must exist and be writable; the path must be absent
 * or a regular file.
 */
export async function checkOutputPath(file: string, flag = '--out'): Promise<void> {
  if (file.trim() === '') throw new PoolToolError('USAGE', `${flag} is empty`, HINT)
  const target = path.resolve(file)
  const parent = path.dirname(target)
  try {
    const parentStats = await lstat(parent)
    if (!parentStats.isDirectory() && !(parentStats.isSymbolicLink() && (await isDirectoryBehindLink(parent)))) {
      throw new PoolToolError('USAGE', `${flag} ${file}: ${parent} is not a directory`, HINT)
    }
    await access(parent, constants.W_OK)
  } catch (error) {
    if (error instanceof PoolToolError) throw error
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' || code === 'EPERM' ? 'is not writable' : `cannot be used (${code ?? 'error'})`
    throw new PoolToolError('USAGE', `${flag} ${file}: the directory ${parent} ${why}`, HINT)
  }
  let stats
  try {
    stats = await lstat(target)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw new PoolToolError('USAGE', `${flag} ${file} cannot be used (${(error as NodeJS.ErrnoException).code ?? 'error'})`, HINT)
  }
  if (!stats.isFile()) throw new PoolToolError('USAGE', `${flag} ${file} is ${describeKind(stats)}: pooltool only replaces regular files`, HINT)
}

/** A parent given through a symlink (e.g. /tmp -> /private/tmp) is fine: only the file itself may not be a link. */
async function isDirectoryBehindLink(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory()
  } catch {
    return false
  }
}

/** Write JSON atomically: a reader sees the old file or the whole new one, never half of it. */
export async function writeJsonAtomically(file: string, value: unknown): Promise<void> {
  await writeTextAtomically(file, `${JSON.stringify(value, null, 2)}\n`)
}

/** Write text (CSV …) atomically, as writeJsonAtomically; `flag` names the option in a refusal. */
export async function writeTextAtomically(file: string, text: string, flag = '--out'): Promise<void> {
  await checkOutputPath(file, flag)
  const target = path.resolve(file)
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    // 'wx': never open something that is already there (a link planted at the temp name included).
    const handle = await open(temp, 'wx', 0o644)
    try {
      await handle.writeFile(text)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, target)
  } catch (error) {
    await rm(temp, {force: true})
    throw error
  }
}
