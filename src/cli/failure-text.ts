/**
 * The text of a failure, without oclif: shared by src/cli/failures.ts (the oclif path) and
 * src/cli/fast-usage.ts (usage errors answered before oclif loads), so both print the same bytes.
 */
import {terminalLine} from '../reporters/escape.js'

const ANSI = /\u001B\[[\d;]*m/g

/**
 * oclif's multi-line messages ("Parsing --rate \n\tExpected an integer …\nSee
 * more help with --help") as one line, without the help pointer (the hint has it).
 */
export function oneLine(message: string): string {
  return message
    .replace(ANSI, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !/^See more help with/i.test(line))
    .join(': ')
    .replace(/:\s*:/g, ':')
}

/**
 * The one line a person reads. A message can quote a server's errmsg or a host name: control
 * characters and newlines are shown escaped, so it stays one line and cannot drive the terminal.
 */
export function failureLine(failure: {code: string; message: string; hint: string}): string {
  return terminalLine(`Error [${failure.code}]: ${failure.message} (hint: ${failure.hint})`)
}
