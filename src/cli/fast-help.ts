/**
 * `pooltool --help`, `pooltool <command> --help`, `pooltool <topic> --help` and a bare `pooltool`
 * without loading oclif: bin/run.js asks here after --version. oclif's core is ~160 modules, most of
 * a start's cost; the help it prints is fixed once the build is, so bin/manifest.js has oclif render
 * it at build time (src/cli/help-prerender.ts) into dist/help/, as the pieces oclif's Help passes to
 * its `log`, laid out at each of a few widths. Here those pieces get what PooltoolHelp.log does to
 * them (src/cli/help.ts: fitted to stdout's width) and are written as oclif's ux.stdout writes them.
 * test/cli/fast-help-identity.test.ts runs both paths for every page and holds them byte-identical.
 *
 * The width oclif lays help out at is OCLIF_COLUMNS, else stdout's columns on a terminal (40 at
 * least), else 80 (src/screen.js in @oclif/core). Only the widths rendered at build are served;
 * any other goes to oclif. So does everything this path is not certain about: any argument but
 * the exact forms above (`-h`, `help <command>`, flags before --help, a plugin's command), a
 * command whose help oclif computes at run time (hasDynamicHelp), any OCLIF_* or POOLTOOL_*
 * variable (POOLTOOL_URI, POOLTOOL_TEST_URI and POOLTOOL_SIM_CHILD aside: help never reads them), DEBUG, NODE_ENV=development, a
 * MONGODB_LOG_* variable (main.ts prints a line for it), a user theme or user plugins (oclif's
 * config and data directories), Windows (other directories), a current directory that is gone.
 */
import {existsSync, readFileSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {format} from 'node:util'

import {EXIT_CODES} from '../errors.js'
import {stdoutLayout} from './terminal.js'

/** dist/help/index.json: which invocations have a page, and the oclif widths each page holds. */
export interface HelpIndex {
  /** The bin's name, for its scoped variables. */
  bin: string
  /** oclif's `dirname`: the config and data directories are named after it. */
  dirname: string
  widths: number[]
  /** The invocation's arguments joined by one space → the page's file name in dist/help. */
  pages: Record<string, string>
}

/** One page: per oclif width, the arguments of each call oclif's Help made to `log`, in order. */
export type HelpPage = Record<string, string[][]>

export const HELP_DIR = fileURLToPath(new URL('../../help/', import.meta.url))

/** The key of an invocation this path may serve: nothing, or command/topic words then --help as the last argument. */
export function helpKey(argv: readonly string[]): string | undefined {
  if (argv.length === 0) return ''
  if (argv.at(-1) !== '--help') return undefined
  const words = argv.slice(0, -1)
  return words.every((word) => /^[a-z][a-z0-9-]*$/.test(word)) ? argv.join(' ') : undefined
}

/** pooltool's own variables that help never reads (POOLTOOL_URI, the test suite's cluster, its built sim child). */
const OWN_VARIABLES = new Set(['URI', 'TEST_URI', 'SIM_CHILD'])

/** Whether the environment leaves oclif's help as rendered at build (see the file comment). */
export function environmentKeepsHelp(env: NodeJS.ProcessEnv, index: HelpIndex): boolean {
  if (process.platform === 'win32') return false
  const scope = `${index.bin.replaceAll('@', '').replaceAll(/[/-]/g, '_').toUpperCase()}_`
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (name.startsWith('OCLIF_') || name === 'DEBUG' || (name.startsWith('MONGODB_LOG_') && value)) return false
    // oclif reads several (CONFIG_DIR, DATA_DIR, DISABLE_THEME, DEBUG …); only pooltool's connection strings are known not to touch help.
    if (name.startsWith(scope) && !OWN_VARIABLES.has(name.slice(scope.length))) return false
  }
  if (env.NODE_ENV === 'development') return false
  try {
    process.cwd()
  } catch {
    return false
  }
  // oclif's Config.dir: XDG_<CATEGORY>_HOME, else under the home directory.
  const home = env.HOME || homedir() || tmpdir()
  const configDir = path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), index.dirname)
  const dataDir = path.join(env.XDG_DATA_HOME || path.join(home, '.local/share'), index.dirname)
  // A user theme recolours help; a data directory's package.json lists user-installed or linked plugins.
  return !existsSync(path.join(configDir, 'theme.json')) && !existsSync(path.join(dataDir, 'package.json'))
}

/** The width oclif's help formatter uses for stdout (its screen.stdtermwidth), OCLIF_COLUMNS aside. */
export function oclifWidth(stream: NodeJS.WriteStream): number {
  if (!stream.isTTY) return 80
  const [width] = stream.getWindowSize()
  if (!width || width < 1) return 80
  return width < 40 ? 40 : width
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T
  } catch {
    // No pages (bin/dev.js, a build that did not render them): oclif answers.
    return undefined
  }
}

/**
 * The exact writes oclif would make to stdout for this invocation (one per console.log), or
 * undefined when this path cannot be sure of them. `stream`: where it goes (its TTY and columns set the widths).
 */
export async function renderHelp(argv: readonly string[], env: NodeJS.ProcessEnv, stream: NodeJS.WriteStream, dir = HELP_DIR): Promise<string[] | undefined> {
  const key = helpKey(argv)
  if (key === undefined) return undefined
  const index = readJson<HelpIndex>(path.join(dir, 'index.json'))
  const file = index?.pages[key]
  if (!index || !file || !environmentKeepsHelp(env, index)) return undefined
  const width = oclifWidth(stream)
  if (!index.widths.includes(width)) return undefined
  const calls = readJson<HelpPage>(path.join(dir, file))?.[String(width)]
  if (!calls) return undefined
  // PooltoolHelp.log: each piece fitted to stdout's layout, then oclif's ux.stdout (console.log of util.format).
  const layout = stdoutLayout(stream, env)
  // At no width limit (a pipe, no COLUMNS) fitText only makes the text terminal-safe: that alone,
  // without loading the width code (string-width, wrap-ansi) fitting needs.
  const fitText = Number.isFinite(layout.width) ? (await import('../reporters/fit.js')).fitText : (await import('../reporters/escape.js')).terminalSafe
  return calls.map((pieces) => `${format(...pieces.map((piece) => fitText(piece, layout)))}\n`)
}

/** Print the help if this path is sure of it; true when it did. */
export async function answerHelp(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  const writes = await renderHelp(argv, env, process.stdout)
  if (writes === undefined) return false
  // stdout's reader gone (`pooltool --help | head -1`): end as the oclif path does (src/cli/main.ts), as SIGPIPE would.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_CODES.brokenPipe)
    throw error
  })
  // A write per line of oclif's, through the secret guard as oclif's are.
  for (const text of writes) process.stdout.write(text)
  return true
}
