/**
 * Escaping by destination: every string that came from a server, a client or a file (appName,
 * driver name, lock _id / who / why, a router's version, a result file's fields) is made safe for
 * where it is printed. One helper per destination, used by every reporter that writes there:
 *
 * - terminal: C0 and C1 control characters, DEL and the Unicode bidirectional overrides are shown
 *   visibly (`\x1b`, `\u202e`), so no client can retitle the operator's terminal, move the cursor,
 *   erase lines or reorder what is read. Newlines are kept: they are the text's own layout.
 * - HTML: the five characters that can open or close markup or an attribute.
 * - CSV: a cell quoted when it must be, and a cell that a spreadsheet would run as a formula
 *   (`=`, `+`, `-`, `@`, a tab or a carriage return first) prefixed with `'` (OWASP's advice).
 *
 * Pure and idempotent for the terminal: escaping twice changes nothing more.
 */

/** C0 except the newline, DEL, C1, and the bidi embeddings, overrides and isolates (U+202A–E, U+2066–9). */
// eslint-disable-next-line no-control-regex
const TERMINAL_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

const visible = (char: string): string => {
  const code = char.codePointAt(0)!
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/** Text safe to print on a terminal: control characters shown as `\xNN` / `\uNNNN`, newlines kept. */
export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_UNSAFE, visible)
}

/** One line safe to print on a terminal: as terminalSafe, and a newline shown as `\x0a` too. */
export function terminalLine(text: string): string {
  return terminalSafe(text).replace(/\n/g, '\\x0a')
}

const HTML_ENTITIES: Record<string, string> = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}

/** Any value as HTML text or an attribute's value: numbers from a file are strings an attacker wrote too. */
export function htmlSafe(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (char) => HTML_ENTITIES[char]!)
}

/** Characters a spreadsheet reads as the start of a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * One CSV cell (RFC 4180): numbers as they are; a string that starts a formula gets a leading `'`,
 * and a string with a comma, a quote or a line break is quoted with its quotes doubled.
 */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : ''
  const text = FORMULA_START.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}
