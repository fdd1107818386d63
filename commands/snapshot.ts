import {Flags} from '@oclif/core'

import {TargetCommand} from '../src/cli/base-command.js'
import {stdoutLayout} from '../src/cli/terminal.js'
import {EXIT_CODES, PoolToolError, usageError} from '../src/errors.js'
import {checkOutputFiles, writeJsonAtomically, writeStdout} from '../src/output.js'
import {renderSnapshotSummary} from '../src/reporters/snapshot.js'
import {type SnapshotSummary, summarizeCapture} from '../src/snapshot/summary.js'

export default class Snapshot extends TargetCommand<typeof Snapshot> {
  static override summary = 'Capture every document pooltool reads from every host into one file, to replay offline with `sim --replay`.'

  static override description =
    'Read only. Discovers the cluster like every command, runs the reads of `conns list` (with holders), `locks list` ' +
    '(node locks on every topology: $currentOp, serverStatus and lockInfo on each node it reads, each said captured, not ' +
    'permitted or failed) and, on a sharded cluster, `locks pings`, and reads hello, buildInfo, hostInfo and serverStatus ' +
    '(every section) on each host. The file is canonical Extended JSON (number types, dates and timestamps survive) with ' +
    "the capture time, each host's clock, every read's request and reply (or error), and the commands' results as seen at " +
    'capture time. Operations keep their command NAME, never its values (filters and documents are user data). ' +
    'Credentials never appear in it; --redact-hosts replaces host names and IP addresses with stable aliases ' +
    '(host-1.redacted, ports kept) for a support bundle. Without --out the file goes to stdout and the summary to stderr.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --uri mongodb://mongos1:27017 --out cluster.json',
    '<%= config.bin %> <%= command.id %> --uri "$MONGODB_URI" --redact-hosts --out support-bundle.json',
    '<%= config.bin %> sim --replay cluster.json   # then: <%= config.bin %> conns list --uri <printed uri>',
  ]

  static override flags = {
    out: Flags.string({summary: 'Write the snapshot to this file (atomically) instead of stdout.', helpValue: '<file>'}),
    'redact-hosts': Flags.boolean({default: false, summary: 'Replace every host name and IP address with a stable alias (host-1.redacted), ports kept.'}),
  }

  async run(): Promise<SnapshotSummary> {
    const {flags} = this
    if (flags.out === undefined && this.jsonEnabled()) {
      throw usageError('--json prints the summary on stdout, where the snapshot would go', 'add --out FILE to write the snapshot to a file')
    }
    await checkOutputFiles([{flag: '--out', file: flags.out}])
    // Imported once the flags are checked: oclif loads this file for a usage error, which must not load the driver.
    const [{captureSnapshot, ReadLog, snapshotFileContent}, {resolveTarget}] = await Promise.all([import('../src/snapshot/capture.js'), import('../src/target.js')])
    const log = new ReadLog()
    this.target = await resolveTarget({
      flagUri: flags.uri,
      // Like `locks`: the embedded cluster is sharded, so a capture of it has every kind of document.
      embedded: {topology: 'sharded'},
      connection: {appName: flags['app-name'], timeoutMs: flags['timeout-ms']},
      notice: (line) => this.stderrText(line),
      recorder: log.record,
    })
    const target = this.target
    const outcome = await captureSnapshot(target, log, {
      redactHosts: flags['redact-hosts'],
      pooltoolVersion: this.config.version,
      signal: this.interruptSignal,
    })
    const document = snapshotFileContent(outcome.snapshot, target.secrets)
    if (flags.out !== undefined) {
      try {
        await writeJsonAtomically(flags.out, document)
      } catch (error) {
        throw await this.keepCapture(error as PoolToolError, document)
      }
    } else if (!(await writeStdout(`${JSON.stringify(document, null, 2)}\n`))) {
      // The reader went away (`| head`): the document is cut, so nothing is claimed and the exit is 141.
      process.exitCode = EXIT_CODES.brokenPipe
      return summarizeCapture(target, outcome, undefined)
    }
    const summary = summarizeCapture(target, outcome, flags.out)
    if (!this.jsonEnabled()) {
      // With the document on stdout, the summary goes to stderr, fitted to its width.
      if (flags.out === undefined) this.stderrText(renderSnapshotSummary(summary, stdoutLayout(process.stderr)))
      else this.logText((layout) => renderSnapshotSummary(summary, layout))
    }
    if (outcome.interrupted) process.exitCode = this.interruptedExitCode
    return summary
  }

  /**
   * --out could not be written (a full disk, a read-only mount): a capture is not cheap to take again
   * (the cluster's state has moved on), so when stdout is a pipe or a file and not --json's, the
   * document goes there, as without --out. The failure still ends the command with OUTPUT_FAILED.
   */
  private async keepCapture(failure: PoolToolError, document: unknown): Promise<PoolToolError> {
    const rescue = !this.jsonEnabled() && !process.stdout.isTTY && (await writeStdout(`${JSON.stringify(document, null, 2)}\n`).catch(() => false))
    const fate = rescue ? 'the snapshot was written to stdout instead' : 'the snapshot was not saved'
    return new PoolToolError('OUTPUT_FAILED', `${failure.message}; ${fate}`, rescue ? failure.hint : `${failure.hint}; or run it without --out, redirecting stdout to a file`, {cause: failure})
  }
}
