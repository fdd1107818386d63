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
// A flag whose default text comes from a function makes oclif mark the command `hasDynamicHelp`, and
// its --help then loads the command's code (for bench: the engine, the driver, zod, yaml) to call it.
// pooltool's functions (durationFlag's `[default: 1s]`) always say the text the manifest already
// holds; they carry CONSTANT_HELP (src/cli/flags.ts), and for them the mark is cleared here, so
// help is rendered from the manifest alone. A flag without it keeps oclif's behaviour.
const {CONSTANT_HELP} = await import('../dist/src/cli/flags.js')
for (const [id, cached] of Object.entries(plugin.manifest.commands)) {
  if (!cached.hasDynamicHelp) continue
  const command = await plugin.findCommand(id, {must: true})
  const flags = {...command.baseFlags, ...command.flags}
  for (const [name, flag] of Object.entries(cached.flags)) {
    if (flag.hasDynamicHelp && flags[name]?.defaultHelp?.[CONSTANT_HELP] === true) flag.hasDynamicHelp = false
  }
  cached.hasDynamicHelp = Object.values(cached.flags).some((flag) => flag.hasDynamicHelp)
}
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
// Help pages for the fast path (src/cli/fast-help.ts), rendered by oclif from the manifest just written.
const {writeHelpPages} = await import('../dist/src/cli/help-prerender.js')
await writeHelpPages(root, path.join(root, 'dist', 'help'))
// What the fast usage path (src/cli/fast-usage.ts) needs of each command's flags, beside the pages.
const {writeUsageSpec} = await import('../dist/src/cli/usage-prerender.js')
await writeUsageSpec(root, path.join(root, 'dist', 'help', 'usage.json'))
