/**
 * The oclif manifest (written by `npm run build`) and the command reference generated from it
 * (docs/commands.md): every command under commands/ is in the manifest, and the reference is what
 * `npm run readme` renders now, so a changed flag or summary fails here until it is regenerated.
 */
import assert from 'node:assert/strict'
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'

import {type ManifestCommand, REFERENCE_END, REFERENCE_START, renderCommandReference} from '../../src/cli/reference.js'
import {REPO_ROOT} from '../helpers/cli.js'

const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, ManifestCommand>}

/** Command ids from the files: commands/bench.ts → bench, commands/locks/list.ts → locks:list. */
function commandIds(dir = path.join(REPO_ROOT, 'commands'), prefix = ''): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) =>
    entry.isDirectory() ? commandIds(path.join(dir, entry.name), `${prefix}${entry.name}:`) : entry.name.endsWith('.ts') ? [`${prefix}${entry.name.slice(0, -3)}`] : [],
  )
}

describe('command reference', () => {
  it('the manifest has every command', () => {
    assert.deepEqual(Object.keys(manifest.commands).sort(), commandIds().sort())
  })

  it('docs/commands.md is the reference the commands render now (npm run readme)', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'docs', 'commands.md'), 'utf8')
    const section = readme.slice(readme.indexOf(REFERENCE_START), readme.indexOf(REFERENCE_END) + REFERENCE_END.length)
    assert.equal(section, renderCommandReference(manifest.commands))
    assert.match(section, /^## `pooltool report hgrm`$/m)
  })
})
