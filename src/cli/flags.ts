/**
 * oclif flag types pooltool adds. `durationFlag`: every duration flag of every
 * command (`--duration`, `--interval`, `--warmup`, `--slo`, `--latency` …)
 * parses the same way, with src/parse/durations.ts, into milliseconds; a bare
 * number is refused with a hint (`--interval 500: say 500ms or 500s`), so no
 * command guesses a unit. Defaults are given in milliseconds and shown in help
 * as durations (`[default: 1s]`).
 */
import {Flags, type Interfaces} from '@oclif/core'

import {PoolToolError} from '../errors.js'
import {formatDuration, parseDurationMs, parseDurationOrAutoMs} from '../parse/durations.js'

/**
 * A usage error from a flag's parse function. oclif rewrites the message of
 * whatever a parse function throws into "Parsing --x \n\t… See more help";
 * this keeps pooltool's one line, so BaseCommand reports it as written.
 */
export class FlagValueError extends PoolToolError {
  readonly line: string

  constructor(error: PoolToolError) {
    super(error.code, error.message, error.hint, {cause: error})
    this.line = error.message
  }

  /** The error as the parser raised it, whatever oclif did to `message` since. */
  get original(): PoolToolError {
    return new PoolToolError(this.code, this.line, this.hint, {cause: this.cause})
  }
}

const durationFlagDefinition = Flags.custom<number>({
  helpValue: '<duration>',
  async parse(input, _context, flag) {
    try {
      return parseDurationMs(input, flag.name)
    } catch (error) {
      throw error instanceof PoolToolError ? new FlagValueError(error) : error
    }
  },
})

/** What a duration flag may say about itself; the type, the parser and the help value are fixed. */
interface DurationFlagOptions {
  /** Name an example with its unit (`e.g. 500ms, 2s`): the help has no other place that says which units exist. */
  summary: string
  description?: string
  helpGroup?: string
  /** A test option: left out of help and the README's reference. */
  hidden?: boolean
}

/**
 * A duration flag, in milliseconds: `durationFlag({summary: 'Time between polls, e.g. 500ms, 2s.', default: 1000})`.
 * The help shows `--interval=<duration>` and `[default: 1s]`.
 */
export function durationFlag(options: DurationFlagOptions & {default: number}): Interfaces.OptionFlag<number>
export function durationFlag(options: DurationFlagOptions): Interfaces.OptionFlag<number | undefined>
export function durationFlag(options: DurationFlagOptions & {default?: number}): Interfaces.OptionFlag<number> | Interfaces.OptionFlag<number | undefined> {
  const {summary, description, helpGroup} = options
  if (options.default === undefined) return durationFlagDefinition({summary, description, helpGroup, ...(options.hidden ? {hidden: true} : {})})
  // oclif types a plain defaultHelp as the flag's value type (a number here): the function form takes the text.
  const help = formatDuration(options.default)
  return durationFlagDefinition({summary, description, helpGroup, default: options.default, defaultHelp: constantHelp(help)})
}

const AUTO = 'auto'

const durationOrAutoDefinition = Flags.custom<number | typeof AUTO>({
  helpValue: '<duration>',
  async parse(input, _context, flag) {
    try {
      return parseDurationOrAutoMs(input, flag.name)
    } catch (error) {
      throw error instanceof PoolToolError ? new FlagValueError(error) : error
    }
  },
})

/**
 * A duration flag that also takes `auto` (bench --warmup): milliseconds or 'auto'. The help shows
 * `--warmup=<duration>` and `[default: auto]`; the summary says what auto does.
 */
export function durationOrAutoFlag(options: DurationFlagOptions & {default: typeof AUTO}): Interfaces.OptionFlag<number | typeof AUTO> {
  const {summary, description, helpGroup} = options
  return durationOrAutoDefinition({summary, description, helpGroup, default: AUTO, defaultHelp: constantHelp(AUTO)})
}

/** The property bin/manifest.js looks for (a string, not a symbol: it reads the built command classes). */
export const CONSTANT_HELP = 'pooltoolConstantHelp'

/**
 * A defaultHelp function that always says the same text. oclif marks a command whose flag has a
 * defaultHelp function `hasDynamicHelp` and then loads the command's code for its `--help`; this
 * text is already in the manifest, so bin/manifest.js clears the mark for flags whose function
 * carries CONSTANT_HELP, and help is rendered from the manifest alone.
 */
function constantHelp(text: string): () => Promise<string> {
  return Object.assign(async () => text, {[CONSTANT_HELP]: true})
}

/** --utc on the watches: times of day in UTC instead of local time (the text only; JSON is always UTC). */
export const utcFlag = {
  utc: Flags.boolean({default: false, summary: 'Print times of day in UTC (default: local time, its zone said once); --json is always UTC.', helpGroup: 'OUTPUT'}),
}
