/** `--out FILE`: write JSON atomically (temp file + rename), so a reader never sees half a result. */
import {randomBytes} from 'node:crypto'
import {rename, rm, writeFile} from 'node:fs/promises'
import path from 'node:path'

export async function writeJsonAtomically(file: string, value: unknown): Promise<void> {
  const target = path.resolve(file)
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`)
    await rename(temp, target)
  } catch (error) {
    await rm(temp, {force: true})
    throw error
  }
}
