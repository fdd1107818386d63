/**
 * What every pooltool command shares: `--json`, Ctrl-C handling and the
 * mapping of any failure to a one-line message, a hint and an exit code; and,
 * for commands that talk to a cluster, the connection flags and target
 * resolution (including starting the embedded cluster).
 * Lives in src/ because oclif loads every .ts under commands/ as a command.
 */
import {Command, Errors, Flags, type Interfaces, ux} from '@oclif/core'

import {CONNECTION_DEFAULTS} from '../defaults.js'
import {PoolToolError} from '../errors.js'
import {toPoolToolError} from '../mongo/errors.js'
import {terminalSafe} from '../reporters/escape.js'
import {fitText, type Layout} from '../reporters/fit.js'
import type {SimOptions} from '../sim/index.js'
import type {ResolveTargetInput, Target} from '../target.js'
import {debugError} from './debug.js'
import {failureJson, failureLine, fromOclifError, isOclifError} from './failures.js'
import {FlagValueError} from './flags.js'
import {commandOwnsProcess} from './process-owner.js'
import {StopSignals} from './stop-signals.js'
import {stdoutLayout} from './terminal.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<T['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/** After a command has finished and reported, how long a lingering handle may keep the process alive. */
/** See BaseCommand.outputMode. */
export type OutputMode = 'json' | 'ndjson' | 'once' | 'headless' | 'live' | 'plain'

const EXIT_WATCHDOG_MS = 500

/** JSON output, one-line errors with exit codes, Ctrl-C handling: every command. */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    // Read by src/cli/main.ts before parsing, so flag-parsing failures get the debug stream too.
    debug: Flags.boolean({
      summary: "Print a debug stream on stderr (the driver's log, a failure's stack), with credentials redacted.",
      default: false,
      helpGroup: 'GLOBAL',
    }),
    color: Flags.boolean({
      summary: 'Color on a terminal; --no-color (or NO_COLOR=1) turns it off everywhere.',
      default: true,
      allowNo: true,
      helpGroup: 'GLOBAL',
    }),
  }

  protected flags!: BaseFlags<T>
  protected args!: BaseArgs<T>
  /** Every positional argument, in order (a command with `strict = false` takes more than its args name). */
  protected positional: string[] = []
  /** Set by commands that talk to a cluster, so errors can name it (redacted). */
  protected target?: Target

  /** Said on stderr when the first signal arrives; a command whose stop is not "partial results" says its own. */
  /** What the first stop signal prints; a getter so a command can word it by what it runs (sim: a cluster or a replay). */
  protected get stopWording(): string {
    return 'stopping; partial results follow'
  }
  private readonly stops = new StopSignals((line) => process.stderr.write(`${line}\n`), () => this.stopWording)

  /** Aborted on the first SIGINT, SIGTERM, SIGHUP or a closed stdout: long-running work stops, reports and cleans up. */
  protected get interruptSignal(): AbortSignal {
    return this.stops.graceful
  }

  /** Aborted on a second signal: skip cleanup, report what was measured at once. */
  protected get forceSignal(): AbortSignal {
    return this.stops.force
  }

  /** The exit code of what stopped the command: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP), 141 (closed stdout). */
  protected get interruptedExitCode(): number {
    return this.stops.exitCode ?? 130
  }

  override async init(): Promise<void> {
    await super.init()
    const ctor = this.ctor as typeof BaseCommand
    const {args, flags, argv} = await this.parse({
      args: ctor.args,
      baseFlags: ctor.baseFlags,
      enableJsonFlag: ctor.enableJsonFlag,
      flags: ctor.flags,
      strict: ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as BaseArgs<T>
    this.positional = argv as string[]
    // One switch for the whole process: every part, the spinner and libraries alike, reads NO_COLOR.
    if ((flags as {color?: boolean}).color === false) process.env.NO_COLOR = '1'
    this.stops.install()
  }

  /**
   * The text report on stdout, rendered only when it is printed: under --json the result is the output,
   * and a text layout (a table over 10,000 locks) must not cost anything there.
   */
  protected logText(render: (layout: Layout) => string): void {
    if (this.jsonEnabled()) return
    const layout = stdoutLayout()
    this.log(fitText(render(layout), layout))
  }

  /**
   * The JSON document, as oclif prints it but without its colorizer: oclif tokenizes the whole
   * document to colour it even where nothing is coloured, which took 0.8 s over the 4.7 MB of
   * 10,000 locks; the text is the same (JSON.stringify, two-space indent).
   */
  override logJson(json: unknown): void {
    // Not this.log: oclif silences it under --json.
    ux.stdout(JSON.stringify(json, null, 2))
  }

  /**
   * Where a command's output goes, decided once for every command the same way: --ndjson streams
   * lines, --json prints one document at the end, --once one exposition; otherwise text, redrawn
   * in place on a terminal (live) or line by line (plain), or nothing per round with --no-view (headless).
   */
  protected outputMode(flags: {ndjson?: boolean; once?: boolean; view?: boolean} = {}): OutputMode {
    if (flags.ndjson) return 'ndjson'
    if (this.jsonEnabled()) return 'json'
    if (flags.once) return 'once'
    if (flags.view === false) return 'headless'
    return process.stdout.isTTY ? 'live' : 'plain'
  }

  /** Text already rendered (an event line, a plain round), fitted to stdout's width. Never JSON: that is printed whole. */
  protected logFitted(text: string): void {
    this.log(fitText(text, stdoutLayout()))
  }

  /**
   * Text for a human on stderr, fitted to stderr's width. A failure's line is not: it stays one
   * line whatever the width, so a log search finds it whole.
   */
  protected stderrText(text: string): void {
    process.stderr.write(`${fitText(text, stdoutLayout(process.stderr))}\n`)
  }

  /** One line on stderr for a human (suppressed under --json, where the JSON says it). */
  protected note(line: string): void {
    this.stderrText(line)
  }

  /**
   * A failure found once the work was done (a file that could not be written, OUTPUT_FAILED; a bench
   * whose namespace was reclaimed under it): said on stderr after the result was printed (under --json
   * too: stdout keeps the result), and the exit code is its. The result is never thrown away for it.
   */
  protected sayFailureAfterResult(failure: PoolToolError): void {
    process.stderr.write(`${failureLine(failure)}\n`)
    process.exitCode = failure.exitCode
  }

  protected toPoolToolError(error: unknown): PoolToolError {
    if (isOclifError(error)) return fromOclifError(error, this.id)
    // A duration (or other pooltool-typed) flag that does not parse: its own line and hint, not oclif's rewrite of it.
    if (error instanceof FlagValueError) return error.original
    return toPoolToolError(error, {
      target: this.target?.redactedUri ?? 'the target',
      secrets: this.target?.secrets ?? [],
    })
  }

  protected override toErrorJson(error: unknown): unknown {
    return failureJson(this.toPoolToolError(error))
  }

  /** Every failure, oclif's flag-parsing errors included: one line on stderr, or the error object under --json. */
  protected override async catch(error: Error & {exitCode?: number}): Promise<unknown> {
    // this.exit(): the command has said what it had to.
    if (error instanceof Errors.ExitError) throw error
    const failure = this.toPoolToolError(error)
    debugError(error)
    process.exitCode = failure.exitCode
    if (this.jsonEnabled()) this.logJson(failureJson(failure))
    else process.stderr.write(`${failureLine(failure)}\n`)
    throw new Errors.ExitError(failure.exitCode)
  }

  protected override async finally(error: Error | undefined): Promise<unknown> {
    this.stops.uninstall()
    await this.target?.close()
    // A closed stdout ends every command the same way, whatever the command made of its interruption.
    if (this.stops.cause === 'EPIPE') process.exitCode = this.stops.exitCode
    // A socket left to a server that stalls (a close abandoned at the stop budget) must not hold the
    // process: exit shortly unless the event loop empties first, but only once the output is out.
    if (commandOwnsProcess()) setTimeout(exitOnceWritten, EXIT_WATCHDOG_MS).unref()
    return super.finally(error)
  }
}

/**
 * process.exit() drops whatever stdout and stderr still hold, and a pipe takes a big result (the
 * --json of 10,000 locks is megabytes; oclif prints it after finally()) only as fast as its reader
 * reads: exit once both streams have handed everything over. A reader that never reads keeps the
 * process waiting, as it would keep `cat`; a reader that goes away closes the stream.
 */
function exitOnceWritten(): void {
  const pending = [process.stdout, process.stderr].find((stream) => stream.writableLength > 0 && !stream.destroyed)
  if (!pending) process.exit()
  const next = (): void => {
    pending.off('drain', next)
    pending.off('close', next)
    exitOnceWritten()
  }
  pending.once('drain', next)
  pending.once('close', next)
}

/** A command that talks to a cluster: adds the connection flags and target resolution. */
export abstract class TargetCommand<T extends typeof Command> extends BaseCommand<T> {
  static override baseFlags = {
    ...BaseCommand.baseFlags,
    uri: Flags.string({
      summary: 'Connection string of the cluster to inspect or load (credentials are never printed).',
      description:
        'Falls back to the POOLTOOL_URI, then MONGODB_URI environment variables; without any of them pooltool starts ' +
        'its embedded simulated cluster on loopback. The first one set decides: an empty --uri or an empty variable is ' +
        'refused (exit 2), never taken for the embedded cluster. Every driver URI option passes through unchanged.',
      helpGroup: 'CONNECTION',
    }),
    'timeout-ms': Flags.integer({
      summary: 'Give up connecting after this many milliseconds (serverSelectionTimeoutMS and connectTimeoutMS unless the URI sets them).',
      default: CONNECTION_DEFAULTS.timeoutMs,
      min: 1,
      helpGroup: 'CONNECTION',
    }),
    'app-name': Flags.string({
      summary: 'appName sent in the handshake, so the server (and `pooltool conns`) can tell our connections apart.',
      default: CONNECTION_DEFAULTS.appName,
      helpGroup: 'CONNECTION',
    }),
  }

  /**
   * Resolve the target once per command; `embedded` shapes the simulated cluster used when no URI is given;
   * `choice` carries bench's --sim and the refusal of an embedded cluster nobody asked for (target.ts).
   */
  protected async openTarget(embedded?: Partial<SimOptions>, choice: Pick<ResolveTargetInput, 'sim' | 'refuseImplicitEmbedded'> = {}): Promise<Target> {
    const flags = this.flags as unknown as {uri?: string; 'app-name': string; 'timeout-ms': number}
    // Imported here, not at the top: the driver and the embedded cluster load only when a command connects.
    const {resolveTarget} = await import('../target.js')
    this.target = await resolveTarget({
      flagUri: flags.uri,
      ...choice,
      embedded,
      connection: {appName: flags['app-name'], timeoutMs: flags['timeout-ms']},
      // Always on stderr, --json included: a user must know the numbers come
      // from the simulated cluster, and stderr never corrupts stdout's JSON.
      // The notice can quote the URI's host names: escaped like every other text view.
      notice: (line) => process.stderr.write(`${terminalSafe(line)}\n`),
    })
    return this.target
  }
}
