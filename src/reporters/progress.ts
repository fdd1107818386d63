/**
 * The live line on stderr (ora), when stderr is a terminal: under --json too,
 * since stdout keeps the JSON. Silent when stderr is not a terminal, so pipes
 * and CI logs get only the final report.
 *
 * ora sizes the area it erases as text width ÷ `stream.columns`; a terminal
 * that reports 0 columns (a pty nobody sized) makes that Infinity, and every
 * redraw looped on erase sequences, writing tens of MB. So ora sees the
 * stream through a view whose width is always usable, and the text is cut to
 * one line of that width: every redraw writes about one line's worth of bytes,
 * whatever the terminal says.
 */
import ora from 'ora'

import {colorAllowed} from './color.js'
import {terminalSafe} from './escape.js'

export interface Progress {
  update(text: string): void
  stop(): void
}

/** Width used when the terminal reports no usable width (absent, 0, nonsense). */
export const FALLBACK_COLUMNS = 80

/** The stream properties the line needs; process.stderr has them. */
export type ProgressStream = Pick<NodeJS.WriteStream, 'write' | 'isTTY' | 'columns'>

export function createProgress(options: {stream?: ProgressStream} = {}): Progress {
  const stream = options.stream ?? process.stderr
  const enabled = stream.isTTY === true
  if (!enabled) return {update() {}, stop() {}}
  const view = withUsableWidth(stream)
  // isEnabled: we already know it is a terminal; ora's own guess would print a line per update in CI shells.
  const spinner = ora({stream: view as NodeJS.WriteStream, isEnabled: true, discardStdin: false, hideCursor: false, color: colorAllowed() ? 'cyan' : false})
  return {
    update(text) {
      // Room for the spinner and its space.
      spinner.text = fitToWidth(text, usableColumns(stream.columns) - 2)
      if (!spinner.isSpinning) spinner.start()
    },
    stop() {
      spinner.stop()
    },
  }
}

/** The stream as ora sees it: the same object, but `columns` is always a width one can divide by. */
function withUsableWidth(stream: ProgressStream): ProgressStream {
  return new Proxy(stream, {
    get(target, property) {
      if (property === 'columns') return usableColumns(target.columns)
      const value = Reflect.get(target, property, target) as unknown
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
}

function usableColumns(columns: number | undefined): number {
  return typeof columns === 'number' && Number.isInteger(columns) && columns > 0 ? columns : FALLBACK_COLUMNS
}

/**
 * One line of text that does not wrap: a wrapped line could not be erased with one carriage return.
 * The text can name hosts a server gave: its control characters are shown escaped (ora adds the
 * spinner's own colour codes around it, after this).
 */
export function fitToWidth(text: string, columns: number): string {
  const oneLine = terminalSafe(text).replace(/\s*\n\s*/g, ' ')
  const characters = [...oneLine]
  // The last column is left free: writing into it makes some terminals wrap at once.
  const room = Math.max(1, columns - 1)
  return characters.length <= room ? oneLine : `${characters.slice(0, Math.max(0, room - 1)).join('')}…`
}
