/**
 * `pooltool --version` (and `-v`) without loading oclif: bin/run.js asks here first. oclif would
 * load its whole core (~160 modules, about twice Node's own start-up) to print one line,
 * `config.userAgent`: `<name>/<version> <platform>-<arch> node-<node version>`. The line is built
 * here the way oclif's Config builds it (name and version from package.json; the platform `wsl`
 * under WSL, checked with the same package oclif uses), and test/unit/cli-version.test.ts holds
 * it to oclif's own.
 *
 * Anything this path would not do as oclif does goes to oclif instead: `--debug`, a DEBUG or
 * MONGODB_LOG_* variable (their stderr lines), a current directory that no longer exists (oclif's
 * warning), a version flag that is not the first argument (oclif's rule: then it is a flag of a
 * command).
 */
import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {arch, platform} from 'node:os'
import {pathToFileURL} from 'node:url'

import {EXIT_CODES} from '../errors.js'

/** package.json's oclif.additionalVersionFlags, with oclif's own --version. */
const VERSION_FLAGS = new Set(['--version', '-v'])

/** Whether oclif's answer to this invocation is exactly the user agent line, and nothing else. */
export function answersWithVersionLine(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  if (!VERSION_FLAGS.has(argv[0] ?? '')) return false
  const flagArgs = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv
  if (flagArgs.includes('--debug') || env.DEBUG || env.NODE_ENV === 'development') return false
  if (Object.keys(env).some((name) => name.startsWith('MONGODB_LOG_') && env[name])) return false
  try {
    process.cwd()
  } catch {
    return false
  }
  return true
}

/** oclif's Config.platform: `wsl` under the Windows Subsystem for Linux, else Node's platform. */
async function oclifPlatform(): Promise<string> {
  // is-wsl answers false off Linux without reading anything: skip loading it there.
  if (process.platform !== 'linux') return platform()
  // The wsl-utils oclif itself imports (resolved from @oclif/core), so both always agree.
  const fromOclif = createRequire(createRequire(import.meta.url).resolve('@oclif/core'))
  const wsl = (await import(pathToFileURL(fromOclif.resolve('wsl-utils')).href)) as {isWsl: boolean}
  return wsl.isWsl ? 'wsl' : platform()
}

/** The line oclif prints for --version: `pooltool/0.1.0 linux-x64 node-v20.19.0`. */
export async function userAgent(packageJsonUrl: URL): Promise<string> {
  const pjson = JSON.parse(readFileSync(packageJsonUrl, 'utf8')) as {name: string; version?: string}
  const cpu = arch() === 'ia32' ? 'x86' : arch()
  return `${pjson.name}/${pjson.version || '0.0.0'} ${await oclifPlatform()}-${cpu} node-${process.version}`
}

/**
 * Print the version line if this invocation asks for nothing else; true when it did.
 * `packageJsonUrl`: the installed package.json (bin/run.js knows where it is).
 */
export async function answerVersion(argv: readonly string[], env: NodeJS.ProcessEnv, packageJsonUrl: URL): Promise<boolean> {
  if (!answersWithVersionLine(argv, env)) return false
  // stdout's reader gone (`pooltool --version | true`): end as the oclif path does (src/cli/main.ts), as SIGPIPE would.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_CODES.brokenPipe)
    throw error
  })
  process.stdout.write(`${await userAgent(packageJsonUrl)}\n`)
  return true
}
