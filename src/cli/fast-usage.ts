/**
 * A bad command line answered without loading oclif, the driver or any command: bin/run.js asks
 * here after --version and help. Loading oclif's core and its config is most of what a mistyped
 * flag cost (about 3x Node's own start-up); the answer is a fixed function of the argv and the
 * flags, which bin/manifest.js writes at build (src/cli/usage-prerender.ts: dist/help/usage.json).
 *
 * The model follows @oclif/core's parser (lib/parser/parse.js, validate.js) in the order it fails:
 * while reading the argv, a flag given twice or without its value; then each flag's value (a value
 * not in its options, an integer that is not one or is out of range, a duration flag's value that
 * pooltool's duration parser refuses); then a flag that does not exist. Each error reads as oclif
 * (or the duration parser) words it, and is reported as BaseCommand.catch reports it (src/cli/failures.ts:
 * USAGE, exit 2, `see 'pooltool <command> --help'`; a duration's own line and hint). A command line whose
 * flags all parse may still fail one of the command's own checks: bench's --concurrency is checked
 * here with bench's own function when nothing else on the line could fail first (OWN_CHECKS).
 * test/cli/fast-usage-identity.test.ts runs the bad-input table through both paths and holds them
 * byte-identical.
 *
 * Whatever the model is not sure of goes to oclif: an environment fast-help.ts would not answer in
 * (OCLIF_*, POOLTOOL_* but the URIs, DEBUG, MONGODB_LOG_*, user plugins …), `--`, --debug, a help
 * or version flag anywhere, a positional argument, a short flag with more than its letter, a
 * command with arguments or of a plugin, a flag with a parser of its own (`custom`: --fault,
 * --alert …) or that reads the environment, stdin or a delimiter, two value errors at once (oclif's
 * order between them is a race of promises), and every command line with no error it can name.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {format} from 'node:util'

import {EXIT_CODES, PoolToolError, usageError} from '../errors.js'
import {redactText} from '../redact.js'
import {environmentKeepsHelp, HELP_DIR} from './fast-help.js'
import {failureLine, oneLine} from './failure-text.js'

/** One flag of a command, as oclif's parser sees it. */
export interface UsageFlag {
  name: string
  type: 'boolean' | 'option'
  /** Which parse function: oclif's own, pooltool's duration flags (src/cli/flags.ts), or another (`custom`: the line goes to oclif). */
  kind: 'boolean' | 'string' | 'integer' | 'duration' | 'duration-or-auto' | 'custom'
  char?: string
  /** Long aliases and char aliases. */
  aliases: string[]
  allowNo: boolean
  multiple: boolean
  options?: string[]
  min?: number
  max?: number
  /** A variable oclif reads the value from when the flag is not given. */
  env?: string
  /** stdin, a delimiter, deprecation: not modelled. */
  unmodelled: boolean
  /** oclif calls it whenever the flag is not given: not modelled. */
  defaultFromFunction: boolean
}

/** dist/help/usage.json. */
export interface UsageSpec {
  bin: string
  dirname: string
  /** Command id (`locks:list`) → its flags: only commands the model covers (strict, no arguments, BaseCommand's). */
  commands: Record<string, UsageFlag[]>
}

/** A usage error the model is sure of, as BaseCommand.catch would report it. */
export interface UsageAnswer {
  failure: PoolToolError
  json: boolean
}

/**
 * Checks a command runs once its flags parse, which the fast path can make before oclif: only when
 * every flag given is in `flags` (each of which, valid, cannot fail before the check) and the check
 * is the command's own function.
 */
const OWN_CHECKS: Record<string, {flags: ReadonlySet<string>; check(values: ReadonlyMap<string, string>): Promise<void>}> = {
  bench: {
    // bench.run() → loadBenchConfig → toBenchConfig: with every other flag at its default, --concurrency is
    // the first value it checks (its URI is read later, by openTarget).
    flags: new Set(['json', 'color', 'concurrency', 'uri', 'app-name', 'timeout-ms']),
    async check(values) {
      const concurrency = values.get('concurrency')
      if (concurrency === undefined) return
      const {parseConcurrencies} = await import('../bench/concurrency.js')
      parseConcurrencies(concurrency)
    },
  },
}

const HELP_OR_VERSION = new Set(['--help', '-h', '--version', '-v'])

/** Not sure: oclif answers. */
class Unsure extends Error {}

function oclifError(message: string, commandId: string): PoolToolError {
  // fromOclifError (src/cli/failures.ts) for a CLIError of exit 2.
  return usageError(redactText(oneLine(message)), `see 'pooltool ${commandId.replaceAll(':', ' ')} --help'`)
}

/** oclif's Flags.integer parse. */
function integerProblem(flag: UsageFlag, input: string): string | undefined {
  if (!/^-?\d+$/.test(input)) return `Expected an integer but received: ${input}`
  const value = Number.parseInt(input, 10)
  if (flag.min !== undefined && value < flag.min) return `Expected an integer greater than or equal to ${flag.min} but received: ${input}`
  if (flag.max !== undefined && value > flag.max) return `Expected an integer less than or equal to ${flag.max} but received: ${input}`
  return undefined
}

/** The flag a token names, as the parser's findFlag: `--name`, an alias, `--no-name`, `-c` (its second character). */
function findFlag(token: string, flags: readonly UsageFlag[]): UsageFlag | undefined {
  if (token.startsWith('--')) {
    const name = token.slice(2)
    const found = flags.find((flag) => flag.name === name) ?? flags.find((flag) => flag.aliases.includes(name))
    if (found) return found
    if (token.startsWith('--no-')) {
      const negated = token.slice(5)
      return flags.find((flag) => flag.type === 'boolean' && flag.allowNo && (flag.name === negated || flag.aliases.includes(negated)))
    }
    return undefined
  }
  if (!token.startsWith('-')) return undefined
  const char = token[1]
  return flags.find((flag) => flag.aliases.includes(char ?? '')) ?? flags.find((flag) => char !== undefined && flag.char === char)
}

/**
 * The usage error of this command line if the model is sure of it; undefined when the line has
 * none it can name or it is not sure (oclif answers then).
 */
export async function findUsageError(argv: readonly string[], env: NodeJS.ProcessEnv, spec: UsageSpec): Promise<UsageAnswer | undefined> {
  try {
    return await modelled(argv, env, spec)
  } catch (error) {
    if (error instanceof Unsure) return undefined
    throw error
  }
}

async function modelled(argv: readonly string[], env: NodeJS.ProcessEnv, spec: UsageSpec): Promise<UsageAnswer | undefined> {
  if (argv.some((token) => token === '--' || token === '--debug' || HELP_OR_VERSION.has(token))) return undefined
  if (!environmentKeepsHelp(env, {bin: spec.bin, dirname: spec.dirname, widths: [], pages: {}})) return undefined
  // The command: the leading words, exactly one of the commands the spec covers.
  const words = argv.findIndex((token) => token.startsWith('-'))
  if (words <= 0) return undefined
  const commandId = argv.slice(0, words).join(':')
  const flags = spec.commands[commandId]
  if (!flags) return undefined
  const rest = argv.slice(words)
  // BaseCommand.catch: under --json (anywhere after the command, as oclif's jsonEnabled looks) the error object on stdout.
  const json = rest.includes('--json')
  const answer = (failure: PoolToolError): UsageAnswer => ({failure, json})
  const unsure = (): never => {
    throw new Unsure()
  }

  // Reading the argv (the parser's loop): the first flag given twice or without its value fails at once.
  const given: Array<{flag: UsageFlag; input: string}> = []
  const nonExistent: string[] = []
  const queue = [...rest]
  while (queue.length > 0) {
    const token = queue.shift()!
    if (!token.startsWith('-') || token === '-') unsure() // a positional argument
    if (!token.startsWith('--') && token.length > 2) unsure() // -cVALUE, -abc
    let flag = findFlag(token, flags)
    if (!flag && token.includes('=')) {
      const at = token.indexOf('=')
      flag = findFlag(token.slice(0, at), flags)
      // --flag=value of a boolean leaves the value behind as an argument.
      if (flag?.type === 'boolean') unsure()
      if (flag) queue.unshift(token.slice(at + 1))
    }
    if (!flag) {
      if (/^-\d/.test(token)) unsure() // a negative number is an argument
      nonExistent.push(token)
      continue
    }
    if (flag.unmodelled || (flag.env !== undefined && env[flag.env])) unsure()
    if (flag.type === 'boolean') {
      given.push({flag, input: token})
      continue
    }
    if (!flag.multiple && given.some((entry) => entry.flag === flag)) return answer(oclifError(`Flag --${flag.name} can only be specified once`, commandId))
    const input = queue.shift()
    if (input === undefined || findFlag(input, flags)) {
      return answer(oclifError(flag.options ? `Flag --${flag.name} expects one of these values: ${flag.options.join(', ')}` : `Flag --${flag.name} expects a value`, commandId))
    }
    given.push({flag, input})
  }

  // Past the argv, oclif resolves every flag, given or not: a default from a function, or a value from a variable, could fail there.
  if (flags.some((flag) => flag.defaultFromFunction || (flag.env !== undefined && env[flag.env]))) unsure()

  // Each flag's value (the parser's _flags): oclif's own parsers, and pooltool's duration flags.
  const problems: PoolToolError[] = []
  for (const {flag, input} of given) {
    if (flag.type === 'boolean') {
      if (flag.kind !== 'boolean') unsure()
      continue
    }
    if (flag.kind === 'custom') unsure()
    if (flag.options && !flag.options.includes(input)) {
      problems.push(oclifError(`Expected --${flag.name}=${input} to be one of: ${flag.options.join(', ')}\nSee more help with --help`, commandId))
      continue
    }
    if (flag.kind === 'integer') {
      const problem = integerProblem(flag, input)
      if (problem) problems.push(oclifError(`Parsing --${flag.name} \n\t${problem}\nSee more help with --help`, commandId))
    } else if (flag.kind === 'duration' || flag.kind === 'duration-or-auto') {
      // The duration flags' parse (src/cli/flags.ts) throws a FlagValueError, which BaseCommand reports as the parser's own error.
      const {parseDurationMs, parseDurationOrAutoMs} = await import('../parse/durations.js')
      try {
        if (flag.kind === 'duration') parseDurationMs(input, flag.name)
        else parseDurationOrAutoMs(input, flag.name)
      } catch (error) {
        if (!(error instanceof PoolToolError)) throw error
        problems.push(error)
      }
    }
  }
  // Which of two failing values oclif names depends on the order its promises settle in: not modelled.
  if (problems.length > 1) unsure()
  if (problems.length === 1) return answer(problems[0]!)
  // The parser's validate: flags that do not exist, before any relation between flags.
  if (nonExistent.length > 0) return answer(oclifError(`Nonexistent flag${nonExistent.length === 1 ? '' : 's'}: ${nonExistent.join(', ')}\nSee more help with --help`, commandId))

  // Every flag parses: the command's own first check, where the model knows it.
  const own = OWN_CHECKS[commandId]
  if (!own || !given.every(({flag}) => own.flags.has(flag.name))) return undefined
  // Flags and values by the flag's own name only (no alias, no --no-x beyond booleans), as the check reads them.
  const values = new Map(given.map(({flag, input}) => [flag.name, input]))
  try {
    await own.check(values)
  } catch (error) {
    // A PoolToolError from the command's check is reported as it is (mongo/errors.ts toPoolToolError).
    if (error instanceof PoolToolError && error.code === 'USAGE') return answer(error)
    throw error
  }
  return undefined
}

/** dist/help/usage.json, or undefined (no build of it: oclif answers). */
export function readUsageSpec(dir = HELP_DIR): UsageSpec | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'usage.json'), 'utf8')) as UsageSpec
  } catch {
    return undefined
  }
}

/** The exact writes BaseCommand.catch makes for this answer: the JSON document on stdout, or the line on stderr. */
export function renderUsageError(answer: UsageAnswer): {stdout: string; stderr: string} {
  const {failure} = answer
  // BaseCommand.logJson: oclif's ux.stdout, console.log of util.format.
  if (answer.json) return {stdout: `${format(JSON.stringify({error: failure.toJSON()}, null, 2))}\n`, stderr: ''}
  return {stdout: '', stderr: `${failureLine(failure)}\n`}
}

/** Print the usage error if the model is sure of it and set the exit code; true when it did. */
export async function answerUsageError(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  const spec = readUsageSpec()
  if (!spec) return false
  const answer = await findUsageError(argv, env, spec)
  if (!answer) return false
  const {stdout, stderr} = renderUsageError(answer)
  // stdout's reader gone (`pooltool bench --json --bogus | true`): end as the oclif path does (src/cli/main.ts), as SIGPIPE would.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_CODES.brokenPipe)
    throw error
  })
  // Through the secret guard, as oclif's writes are.
  if (stdout) process.stdout.write(stdout)
  if (stderr) process.stderr.write(stderr)
  process.exitCode = answer.failure.exitCode
  return true
}
