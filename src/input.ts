/**
 * Files the user names for pooltool to read (a snapshot to replay, bench results to merge, a
 * workload file, a CA file in the URI): one wording for why one cannot be read.
 */
import {readFile} from 'node:fs/promises'

import {usageError} from './errors.js'

/** Why a file could not be read, from the error's code: "does not exist", "is a directory" … */
export function whyUnreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOENT') return 'does not exist'
  if (code === 'EISDIR') return 'is a directory'
  if (code === 'EACCES') return 'is not readable'
  return `cannot be read (${code ?? 'unknown error'})`
}

/** The file's text; one usage line (`${label} does not exist`, with `hint`) when it cannot be read. */
export async function readUserFile(file: string, label: string, hint: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw usageError(`${label} ${whyUnreadable(error)}`, hint)
  }
}
