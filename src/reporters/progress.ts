/**
 * The live line on stderr. Silent under --json and when stderr is not a
 * terminal, so pipes and CI logs get only the final report.
 *
 * One line, redrawn in place (carriage return, erase line) at most once per
 * update, cut to the terminal's width. It is not ora: ora sizes the area it
 * erases as text width ÷ `stream.columns`, and a terminal that reports 0
 * columns (a pty nobody sized) makes that Infinity, so every redraw looped on
 * erase sequences and wrote tens of MB. Here every update writes at most one
 * line's worth of bytes, whatever the terminal says.
 */

export interface Progress {
  update(text: string): void
  stop(): void
}

/** Width used when the terminal reports no usable width (absent, 0, nonsense). */
export const FALLBACK_COLUMNS = 80
const ERASE_LINE = '\r\u001B[2K'

/** The stream properties the line needs; process.stderr has them. */
export type ProgressStream = Pick<NodeJS.WriteStream, 'write' | 'isTTY' | 'columns'>

export function createProgress(options: {json: boolean; stream?: ProgressStream}): Progress {
  const stream = options.stream ?? process.stderr
  const enabled = !options.json && stream.isTTY === true
  if (!enabled) return {update() {}, stop() {}}
  let shown = false
  return {
    update(text) {
      stream.write(ERASE_LINE + fitToWidth(text, usableColumns(stream.columns)))
      shown = true
    },
    stop() {
      if (shown) stream.write(ERASE_LINE)
      shown = false
    },
  }
}

function usableColumns(columns: number | undefined): number {
  return typeof columns === 'number' && Number.isInteger(columns) && columns > 0 ? columns : FALLBACK_COLUMNS
}

/** One line of text that does not wrap: a wrapped line could not be erased with one carriage return. */
export function fitToWidth(text: string, columns: number): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' ')
  const characters = [...oneLine]
  // The last column is left free: writing into it makes some terminals wrap at once.
  const room = Math.max(1, columns - 1)
  return characters.length <= room ? oneLine : `${characters.slice(0, Math.max(0, room - 1)).join('')}…`
}
