#!/usr/bin/env node
// Build step (npm run build): writes oclif.manifest.json from the built commands, so oclif finds
// every command and flag without loading each command module at start. With --readme it also
// rewrites the command reference in docs/commands.md (src/cli/reference.ts) from the same manifest.
import {readFileSync, renameSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {Plugin} from '@oclif/core'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const plugin = new Plugin({root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true})
await plugin.load()
const write = (file, text) => {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, text)
  renameSync(temporary, file)
}
write(path.join(root, 'oclif.manifest.json'), `${JSON.stringify(plugin.manifest, null, 2)}\n`)
if (process.argv.includes('--readme')) {
  const {renderCommandReference, withReference} = await import('../dist/src/cli/reference.js')
  const reference = path.join(root, 'docs', 'commands.md')
  write(reference, withReference(readFileSync(reference, 'utf8'), renderCommandReference(plugin.manifest.commands)))
}
