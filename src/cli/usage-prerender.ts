/**
 * Build step (bin/manifest.js, after the help pages): what the fast usage path (src/cli/fast-usage.ts)
 * needs to find a bad command line without oclif, read from the built command classes oclif loads:
 * each of pooltool's commands' flags as oclif's parser sees them (its `json` flag, the base flags,
 * the command's), with the kind of each one's parse function. oclif's own string, integer and
 * boolean parsers and pooltool's duration parsers are modelled; a flag with any other parser is
 * `custom`, and a command line that gives one goes to oclif.
 */
import {renameSync, writeFileSync} from 'node:fs'

import {type Command, Config, Flags} from '@oclif/core'

import {BaseCommand} from './base-command.js'
import {durationFlag, durationOrAutoFlag} from './flags.js'
import type {UsageFlag, UsageSpec} from './fast-usage.js'

type AnyFlag = Record<string, unknown> & {type: 'boolean' | 'option'; parse?: (...args: never[]) => unknown}

const INTEGER_PARSE = (Flags.integer() as unknown as AnyFlag).parse
// oclif's string and boolean flags each get a new parse closure per flag: the same source text is the same function.
const STRING_PARSE = String((Flags.string() as unknown as AnyFlag).parse)
const BOOLEAN_PARSE = String((Flags.boolean() as unknown as AnyFlag).parse)
// pooltool's duration flags share one parse function per kind (src/cli/flags.ts).
const DURATION_PARSE = (durationFlag({summary: ''}) as unknown as AnyFlag).parse
const DURATION_OR_AUTO_PARSE = (durationOrAutoFlag({summary: '', default: 'auto'}) as unknown as AnyFlag).parse

function kindOf(flag: AnyFlag): UsageFlag['kind'] {
  if (flag.type === 'boolean') return String(flag.parse) === BOOLEAN_PARSE ? 'boolean' : 'custom'
  if (flag.parse === INTEGER_PARSE) return 'integer'
  if (flag.parse === DURATION_PARSE) return 'duration'
  if (flag.parse === DURATION_OR_AUTO_PARSE) return 'duration-or-auto'
  return String(flag.parse) === STRING_PARSE ? 'string' : 'custom'
}

function usageFlag(name: string, flag: AnyFlag): UsageFlag {
  const pick = <T>(key: string): T | undefined => (flag[key] === undefined ? undefined : (flag[key] as T))
  return {
    name,
    type: flag.type,
    kind: kindOf(flag),
    char: pick<string>('char'),
    aliases: [...((flag.aliases as string[] | undefined) ?? []), ...((flag.charAliases as string[] | undefined) ?? [])],
    allowNo: flag.allowNo === true,
    multiple: flag.multiple === true,
    options: pick<string[]>('options'),
    min: pick<number>('min'),
    max: pick<number>('max'),
    env: pick<string>('env'),
    // What the model does not follow: the command line goes to oclif when such a flag is involved.
    unmodelled: Boolean(flag.allowStdin || flag.delimiter || flag.multipleNonGreedy || flag.deprecated),
    defaultFromFunction: typeof flag.default === 'function',
  }
}

/** The spec of every one of pooltool's own commands that the fast path can model, written to `file`. */
export async function writeUsageSpec(root: string, file: string): Promise<number> {
  const config = await Config.load(root)
  const spec: UsageSpec = {bin: config.bin, dirname: config.dirname, commands: {}}
  for (const cached of config.commands) {
    if (cached.pluginType !== 'core' || cached.pluginName !== config.name || cached.aliases.length > 0) continue
    const command = (await cached.load()) as typeof Command
    // Only what BaseCommand.init parses and BaseCommand.catch reports: strict, no arguments, --json.
    if (!(command.prototype instanceof BaseCommand) || command.strict === false || Object.keys(command.args ?? {}).length > 0 || !command.enableJsonFlag) continue
    // oclif's init warns about a deprecated command before it parses: not modelled.
    if (command.state === 'deprecated' || command.deprecationOptions !== undefined) continue
    const flags = {json: Flags.boolean(), ...command.baseFlags, ...command.flags} as unknown as Record<string, AnyFlag>
    spec.commands[cached.id] = Object.entries(flags).map(([name, flag]) => usageFlag(name, flag))
  }
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, JSON.stringify(spec))
  renameSync(temporary, file)
  return Object.keys(spec.commands).length
}
