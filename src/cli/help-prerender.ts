/**
 * Build step (bin/manifest.js, after the manifest is written): oclif renders every help page
 * pooltool's fast path may serve (src/cli/fast-help.ts) at each width in HELP_WIDTHS, with the
 * help class package.json names, and the pages are written to dist/help/. What is kept is what
 * that class passes to its own `log` before fitting (the fast path fits it to the terminal at
 * run time, as the class does), so the text is oclif's own, not a copy of its layout rules.
 */
import {mkdirSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {Config, type Help, loadHelpClass} from '@oclif/core'

import type {HelpIndex, HelpPage} from './fast-help.js'

/**
 * The widths oclif lays help out at that are rendered: 80 (any pipe or file, and an 80-column
 * terminal) and common terminal widths. A terminal of another width gets oclif's own help.
 */
export const HELP_WIDTHS = [80, 100, 120, 132, 160, 200] as const

/** The invocations with a page: bare `pooltool`, `--help`, and --help after each topic and each of pooltool's own commands. */
async function invocations(root: string): Promise<string[][]> {
  const config = await Config.load(root)
  const own = config.commands.filter((command) => command.pluginType === 'core' && command.pluginName === config.name)
  // A command whose help oclif computes by loading its code (a default from a function) is left to oclif.
  const commands = own.filter((command) => !command.hasDynamicHelp && command.aliases.length === 0).map((command) => command.id.split(':'))
  // Topics over pooltool's own commands (a plugin's command is also listed as a topic: left to oclif, as its command is).
  const topics = config.topics.filter((topic) => own.some((command) => command.id.startsWith(`${topic.name}:`))).map((topic) => topic.name.split(':'))
  const unique = new Map([[], ['--help'], ...[...commands, ...topics].map((words) => [...words, '--help'])].map((argv) => [argv.join(' '), argv]))
  return [...unique.values()]
}

/** What oclif's help prints for `argv` at `width`, as the calls its help class makes to `log`. */
async function render(root: string, argv: string[], width: number): Promise<string[][]> {
  // A fresh config for each page: oclif's Help rewrites the ids of the commands it lists in place.
  const config = await Config.load(root)
  // A theme in the builder's own config directory is not the user's: pages are rendered without one (the fast path defers to oclif when the user has one).
  config.theme = undefined
  // pooltool's help class extends oclif's Help (src/cli/help.ts), whose `log` every page goes through.
  const HelpClass = (await loadHelpClass(config)) as unknown as typeof Help
  const calls: string[][] = []
  class Capture extends HelpClass {
    protected override log(...args: string[]): void {
      calls.push(args.map(String))
    }
  }
  const options = config.pjson.oclif.helpOptions ?? config.pjson.helpOptions
  await new Capture(config, {...options, maxWidth: width}).showHelp(argv)
  return calls
}

/** Render every page at every width into `dir` (replaced whole), the index last. */
export async function writeHelpPages(root: string, dir: string): Promise<number> {
  const config = await Config.load(root)
  rmSync(dir, {recursive: true, force: true})
  mkdirSync(dir, {recursive: true})
  const write = (file: string, value: unknown) => {
    const temporary = `${file}.${process.pid}.tmp`
    writeFileSync(temporary, JSON.stringify(value))
    renameSync(temporary, file)
  }
  const index: HelpIndex = {bin: config.bin, dirname: config.dirname, widths: [...HELP_WIDTHS], pages: {}}
  for (const [n, argv] of (await invocations(root)).entries()) {
    const page: HelpPage = {}
    for (const width of HELP_WIDTHS) page[String(width)] = await render(root, argv, width)
    const file = `page-${n}.json`
    write(path.join(dir, file), page)
    index.pages[argv.join(' ')] = file
  }
  write(path.join(dir, 'index.json'), index)
  return Object.keys(index.pages).length
}
