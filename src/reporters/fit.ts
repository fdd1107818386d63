/**
 * Text that fits the terminal it is printed on. Every table goes through `fitTable`: the boxed
 * table when it fits, else the same without borders, with shorter headers, then without the
 * columns marked as the first to go (named under the table), else one `header  value` block per
 * row, which fits any width. Every other line is wrapped by `fitText`. Pure: the width is given.
 *
 * Widths are computed from the cells (display width: µ, ✓ and wide characters count as the
 * terminal shows them), not by rendering each candidate: a table of 10,000 rows is laid out once.
 *
 * This is also where every text view is made terminal-safe (escape.ts): a cell holds what a server
 * or a client sent (an appName, a lock's `why`), so each cell and header is escaped where it is
 * placed, before any width is measured, and `fitText`, which every line printed for a human passes
 * through, escapes what it is given whatever the width. The codes pooltool writes on purpose (a
 * live view's redraw, the spinner's colour) are added after, by the code that writes them.
 */
import {createRequire} from 'node:module'

import type TableClass from 'cli-table3'
import stringWidth from 'string-width'
import wrapAnsi from 'wrap-ansi'

import {terminalSafe} from './escape.js'
import {TABLE_STYLE} from './format.js'

let tableClass: typeof TableClass | undefined
/** cli-table3, loaded with the first table (CommonJS, so synchronously): help and usage errors draw none. */
function tableConstructor(): typeof TableClass {
  tableClass ??= createRequire(import.meta.url)('cli-table3') as typeof TableClass
  return tableClass
}

/** How wide the text may be. */
export interface Layout {
  /** Columns available; Infinity when nothing limits (output to a pipe or file, with no COLUMNS set). */
  width: number
  /** Rows of the terminal, for a live view (which must fit to be redrawn in place); absent off a terminal. */
  height?: number
}

/** No limit: the text as wide as it comes (tests and files). */
export const UNLIMITED: Layout = {width: Number.POSITIVE_INFINITY}

export type CellValue = string | number
/** A cell; `colSpan` covers the next columns too (a host that did not answer: one cell over its figures). */
export type Cell = CellValue | {content: CellValue; colSpan: number}

export interface Column {
  head: string
  /** A shorter header, tried before any column is left out, e.g. 'totalCreated Δ' → 'created Δ'. */
  short?: string
  /**
   * Left out when the table does not fit even with short headers: the highest number goes first.
   * Absent: the column is never left out (the row's identity and its headline figures).
   */
  dropOrder?: number
}

/** A column given as a bare header: never left out, no short form. */
export type ColumnSpec = Column | string

/** Borderless columns two spaces apart, as kubectl and ps print them. */
const PLAIN_CHARS = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '',
  right: '', 'right-mid': '', middle: '  ',
}
const PLAIN_GAP = 2
/** cli-table3's default: a border before, after and between columns, one space of padding each side. */
const BOXED_EXTRA_PER_COLUMN = 3

interface Placed {
  content: string
  /** Index of the first column the cell covers. */
  column: number
  span: number
}

const widthOf = (text: string): number => Math.max(0, ...text.split('\n').map((line) => stringWidth(line)))

function place(row: readonly Cell[]): Placed[] {
  const placed: Placed[] = []
  let column = 0
  for (const cell of row) {
    const span = typeof cell === 'object' ? cell.colSpan : 1
    // Escaped here, so the widths below are those of the text the terminal shows.
    placed.push({content: terminalSafe(String(typeof cell === 'object' ? cell.content : cell)), column, span})
    column += span
  }
  return placed
}

/** The rows with only the kept columns; a spanning cell keeps the kept columns it covered (none: it goes). */
function keepColumns(rows: readonly Placed[][], kept: readonly number[]): Placed[][] {
  const newIndex = new Map(kept.map((column, index) => [column, index]))
  return rows.map((row) =>
    row.flatMap((cell) => {
      const covered = kept.filter((column) => column >= cell.column && column < cell.column + cell.span)
      return covered.length === 0 ? [] : [{content: cell.content, column: newIndex.get(covered[0]!)!, span: covered.length}]
    }),
  )
}

/** The width of the table cli-table3 draws, from its cells: separators per style, spans widening their columns. */
function tableWidth(heads: readonly string[], rows: readonly Placed[][], boxed: boolean): number {
  const widths = heads.map((head) => widthOf(head))
  for (const row of rows) for (const cell of row) if (cell.span === 1) widths[cell.column] = Math.max(widths[cell.column] ?? 0, widthOf(cell.content))
  const gap = boxed ? BOXED_EXTRA_PER_COLUMN : PLAIN_GAP
  for (const row of rows) {
    for (const cell of row) {
      if (cell.span === 1) continue
      const spanned = widths.slice(cell.column, cell.column + cell.span)
      const room = spanned.reduce((sum, w) => sum + w, 0) + gap * (cell.span - 1)
      const short = widthOf(cell.content) - room
      if (short > 0) widths[cell.column + cell.span - 1]! += short
    }
  }
  const cells = widths.reduce((sum, w) => sum + w, 0)
  return boxed ? cells + BOXED_EXTRA_PER_COLUMN * widths.length + 1 : cells + PLAIN_GAP * (widths.length - 1)
}

function draw(heads: readonly string[], rows: readonly Placed[][], boxed: boolean): string {
  if (rows.every((row) => row.every((cell) => cell.span === 1))) return drawGrid(heads, rows, boxed)
  // A spanning cell: cli-table3 draws its joints (only small tables have one: a host that did not answer).
  const table = new (tableConstructor())(boxed ? {head: [...heads], style: TABLE_STYLE} : {head: [...heads], chars: PLAIN_CHARS, style: {...TABLE_STYLE, 'padding-left': 0, 'padding-right': 0}})
  for (const row of rows) table.push(row.map((cell) => (cell.span === 1 ? cell.content : {content: cell.content, colSpan: cell.span})))
  // Without a right border, the padding of the last column is only trailing blanks.
  return boxed ? table.toString() : table.toString().split('\n').map((line) => line.trimEnd()).join('\n')
}

/**
 * A table without spanning cells, drawn in one pass (cli-table3's layout takes 12 s over 10,000
 * rows): boxed with a rule under the header and none between rows, so 100 hosts take 100 lines;
 * or plain, columns two spaces apart. A cell may hold several lines.
 */
function drawGrid(heads: readonly string[], rows: readonly Placed[][], boxed: boolean): string {
  const cells = [heads.map((head) => head.split('\n')), ...rows.map((row) => heads.map((_, column) => (row[column]?.content ?? '').split('\n')))]
  const widths = heads.map((_, column) => Math.max(...cells.map((row) => Math.max(...row[column]!.map((line) => stringWidth(line))))))
  const pad = (text: string, width: number) => text + ' '.repeat(width - stringWidth(text))
  const out: string[] = []
  const rule = (left: string, mid: string, right: string) => left + widths.map((width) => '─'.repeat(width + 2)).join(mid) + right
  if (boxed) out.push(rule('┌', '┬', '┐'))
  for (const [index, row] of cells.entries()) {
    const height = Math.max(...row.map((lines) => lines.length))
    for (let line = 0; line < height; line++) {
      const parts = row.map((lines, column) => pad(lines[line] ?? '', widths[column]!))
      out.push(boxed ? `│ ${parts.join(' │ ')} │` : parts.join(' '.repeat(PLAIN_GAP)).trimEnd())
    }
    if (boxed && index === 0) out.push(rule('├', '┼', '┤'))
  }
  if (boxed) out.push(rule('└', '┴', '┘'))
  return out.join('\n')
}

/** One `header  value` block per row, blank lines between: fits any width (values wrap under themselves). */
function vertical(heads: readonly string[], rows: readonly Placed[][], width: number): string {
  const keyWidth = Math.max(...heads.map((head) => stringWidth(head)))
  // Too narrow for keys and values side by side: each value goes on its own line, indented.
  const sideBySide = width - keyWidth - PLAIN_GAP >= 12
  const blocks = rows.map((row) =>
    row
      .map((cell) => {
        const key = heads[cell.column]!
        if (!sideBySide) return `${key}\n${indent(wrap(cell.content, width - 2), 2)}`
        const [first, ...rest] = wrap(cell.content, width - keyWidth - PLAIN_GAP).split('\n')
        const pad = ' '.repeat(keyWidth - stringWidth(key) + PLAIN_GAP)
        return [`${key}${pad}${first}`, ...rest.map((line) => `${' '.repeat(keyWidth + PLAIN_GAP)}${line}`)].join('\n')
      })
      .join('\n'),
  )
  return blocks.join('\n\n')
}

const isOneWord = (line: string): boolean => !/\S\s+\S/.test(line.trim())
const wrap = (text: string, width: number): string => wrapAnsi(text, Math.max(1, width), {hard: true, trim: true})
const indent = (text: string, by: number): string => text.split('\n').map((line) => ' '.repeat(by) + line).join('\n')

/**
 * The table, fitted to `layout.width`. Columns marked with `dropOrder` go first to last when they
 * must; a line under the table names them (the JSON has every field).
 */
export function fitTable(columns: ReadonlyArray<ColumnSpec | undefined>, rows: ReadonlyArray<ReadonlyArray<Cell | undefined>>, layout: Layout): string {
  // An undefined column (one that does not apply to this result) and its cells are not there at all.
  const specs: Column[] = columns
    .filter((column) => column !== undefined)
    .map((column) => (typeof column === 'string' ? {head: column} : column))
    // A header can be a server's field name (an unknown serverStatus.connections field).
    .map((column) => ({...column, head: terminalSafe(column.head), ...(column.short === undefined ? {} : {short: terminalSafe(column.short)})}))
  const placed = rows.map((row) => place(row.filter((cell) => cell !== undefined)))
  const fullHeads = specs.map((column) => column.head)
  const fits = (heads: readonly string[], body: readonly Placed[][], boxed: boolean) => tableWidth(heads, body, boxed) <= layout.width
  if (fits(fullHeads, placed, true)) return draw(fullHeads, placed, true)
  if (fits(fullHeads, placed, false)) return draw(fullHeads, placed, false)
  const shortHeads = specs.map((column) => column.short ?? column.head)
  if (fits(shortHeads, placed, false)) return draw(shortHeads, placed, false)

  const dropOrder = specs
    .map((column, index) => ({index, order: column.dropOrder}))
    .filter((entry): entry is {index: number; order: number} => entry.order !== undefined)
    .sort((a, b) => b.order - a.order)
  const left: number[] = []
  for (const {index} of dropOrder) {
    left.push(index)
    const kept = specs.map((_, column) => column).filter((column) => !left.includes(column))
    const heads = kept.map((column) => shortHeads[column]!)
    const body = keepColumns(placed, kept)
    if (fits(heads, body, false)) {
      const note = `(${left.map((column) => specs[column]!.head).join(', ')}: left out to fit ${layout.width} columns; --json has them)`
      return `${draw(heads, body, false)}\n${fitText(note, layout)}`
    }
  }
  return vertical(fullHeads, placed, layout.width)
}

/**
 * Every line at most `layout.width` wide: longer ones wrap, continuing under their own indentation.
 * A line that is one word (a connection string, a path) is left whole, so it can be copied whole.
 * Terminal-safe at any width, a pipe's included (`less -R` and `cat` replay what a pipe kept):
 * control characters are shown escaped, never sent, so no text can carry its own escape codes.
 */
export function fitText(text: string, layout: Layout): string {
  const safe = terminalSafe(text)
  if (!Number.isFinite(layout.width)) return safe
  return safe
    .split('\n')
    .map((line) => {
      if (stringWidth(line) <= layout.width || isOneWord(line)) return line
      // Indentation kept when it leaves room; continuations go two further in (or flush left when narrow).
      const found = /^ */.exec(line)![0].length
      const lead = found <= layout.width / 2 ? found : 0
      const hanging = lead + 2 <= layout.width / 2 ? lead + 2 : 0
      const content = line.slice(found)
      const [first, ...rest] = wrapAnsi(content, layout.width - lead, {hard: true, trim: true}).split('\n')
      // The rest of the line from the line itself: rejoining the wrapped pieces would put a space into a word split at the width.
      const remainder = content.startsWith(first!) ? content.slice(first!.length).trimStart() : rest.join(' ')
      const continued = remainder === '' ? [] : wrapAnsi(remainder, layout.width - hanging, {hard: true, trim: true}).split('\n')
      return [' '.repeat(lead) + first!, ...continued.map((part) => ' '.repeat(hanging) + part)].join('\n')
    })
    .join('\n')
}
