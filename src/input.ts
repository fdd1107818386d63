/**
 * Files the user names for pooltool to read (a snapshot to replay, bench results to merge, a
 * workload file, a CA file in the URI): one wording for why one cannot be read, and a size cap
 * checked before a byte is read, so a wrong (or hostile) file is refused, not parsed for minutes.
 */
import {open} from 'node:fs/promises'

import {usageError} from './errors.js'

/** Why a file could not be read, from the error's code: "does not exist", "is a directory" … */
export function whyUnreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOENT') return 'does not exist'
  if (code === 'EISDIR') return 'is a directory'
  if (code === 'EACCES') return 'is not readable'
  return `cannot be read (${code ?? 'unknown error'})`
}

const MiB = 1024 * 1024

/** "64 MiB" for a whole number of MiB, else exact ("67,108,865 bytes": one byte over a cap shows). */
export function formatBytes(bytes: number): string {
  return bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes.toLocaleString('en-US')} bytes`
}

/**
 * The file's text; one usage line (`${label} does not exist`, with `hint`) when it cannot be read,
 * and `${label} is 80 MiB, over the 64 MiB a … may be` when it is larger than `maxBytes`. The size is
 * taken from the open descriptor (fstat) before reading, and the read never goes past the cap, so a
 * file that grows between the two (or a FIFO, or /dev/zero) cannot make it read more.
 */
export async function readUserFile(file: string, label: string, hint: string, cap: {maxBytes: number; what: string}): Promise<string> {
  const unreadable = (error: unknown) => usageError(`${label} ${whyUnreadable(error)}`, hint)
  let handle
  try {
    handle = await open(file, 'r')
  } catch (error) {
    throw unreadable(error)
  }
  try {
    const stat = await handle.stat().catch((error: unknown) => {
      throw unreadable(error)
    })
    if (stat.isDirectory()) throw usageError(`${label} is a directory`, hint)
    const over = `over the ${formatBytes(cap.maxBytes)} ${cap.what} may be`
    if (stat.size > cap.maxBytes) throw usageError(`${label} is ${formatBytes(stat.size)}, ${over}`, hint)
    // Up to one byte past the cap: reading that byte proves a file stat called small (a FIFO, /proc, one
    // growing meanwhile) too big without reading the rest.
    let buffer = Buffer.alloc(Math.min(cap.maxBytes + 1, stat.size + 1))
    let length = 0
    for (;;) {
      if (length === buffer.length) {
        if (length > cap.maxBytes) throw usageError(`${label} is ${over}`, hint)
        const grown = Buffer.alloc(Math.min(cap.maxBytes + 1, buffer.length * 2 + 64 * 1024))
        buffer.copy(grown)
        buffer = grown
      }
      let bytesRead: number
      try {
        ;({bytesRead} = await handle.read(buffer, length, buffer.length - length, null))
      } catch (error) {
        throw unreadable(error)
      }
      if (bytesRead === 0) return buffer.toString('utf8', 0, length)
      length += bytesRead
    }
  } finally {
    await handle.close().catch(() => {})
  }
}
