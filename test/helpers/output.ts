/**
 * Wait on what a running CLI prints, instead of sleeping: attach with
 * `runCli(args, {onSpawn: out.attach})`, then `await out.until(/pattern/)` to
 * act once the command has reached a state (a round printed, an alert fired),
 * and `out.signal()` to stop it there. stdout and stderr are read as one text.
 */
import type {ChildProcess} from 'node:child_process'

export class CliOutput {
  private text = ''
  private child?: ChildProcess
  private closed = false
  private readonly waiters = new Set<() => void>()

  /** Pass as runCli's `onSpawn`. */
  readonly attach = (child: ChildProcess): void => {
    this.child = child
    const take = (chunk: unknown) => {
      this.text += String(chunk)
      for (const check of this.waiters) check()
    }
    child.stdout?.on('data', take)
    child.stderr?.on('data', take)
    child.on('close', () => {
      this.closed = true
      for (const check of this.waiters) check()
    })
  }

  /** Where the output is now: pass it to `until` to look only at what comes after. */
  mark(): number {
    return this.text.length
  }

  /** Resolves once the output after `from` matches; rejects (with the output) if the command ends first. */
  until(pattern: RegExp, from = 0): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.text.slice(from))
        if (match) {
          this.waiters.delete(check)
          resolve(match)
        } else if (this.closed) {
          this.waiters.delete(check)
          reject(new Error(`the command ended before printing ${pattern}:\n${this.text}`))
        }
      }
      this.waiters.add(check)
      check()
    })
  }

  /** Ctrl-C (or another signal) to the running command. */
  signal(signal: NodeJS.Signals = 'SIGINT'): void {
    if (!this.child) throw new Error('CliOutput.signal: the command has not started (pass out.attach as onSpawn)')
    this.child.kill(signal)
  }
}
