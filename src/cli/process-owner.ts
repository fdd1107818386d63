/**
 * Whether a pooltool command owns its process. bin/run.js: it does, and a
 * command that has said everything exits even if a socket to a stalled server
 * is still open (BaseCommand's exit watchdog). The test suite's in-process
 * runner (test/helpers/in-process.ts) runs many commands in one test process:
 * there a command must end by returning, never by process.exit().
 */
let owned = true

export function commandOwnsProcess(): boolean {
  return owned
}

/** For the in-process runner only: commands return instead of exiting the process. */
export function runCommandsInProcess(): void {
  owned = false
}
