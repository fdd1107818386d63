/**
 * Escaping by destination (src/reporters/escape.ts): what a hostile appName, lock _id or result
 * field becomes on a terminal, in HTML and in a CSV cell.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {csvCell, htmlSafe, terminalLine, terminalSafe} from '../../src/reporters/escape.js'

// A hostile appName's payload: retitle the terminal, move up a line, erase it.
const RETITLE_AND_ERASE = 'app\x1b]0;pwned\x07\x1b[1A\x1b[2K'

describe('terminalSafe', () => {
  it('shows ESC, BEL and every other C0 control visibly, keeping newlines', () => {
    assert.equal(terminalSafe(RETITLE_AND_ERASE), 'app\\x1b]0;pwned\\x07\\x1b[1A\\x1b[2K')
    assert.equal(terminalSafe('a\rb\tc\x00d\ne'), 'a\\x0db\\x09c\\x00d\ne')
  })

  it('shows DEL, the C1 controls (CSI 0x9b) and the bidi overrides', () => {
    assert.equal(terminalSafe('x\x7f\x9b2J\u202eevil\u2066'), 'x\\x7f\\x9b2J\\u202eevil\\u2066')
  })

  it('leaves printable text alone, wide characters and µ included, and is idempotent', () => {
    const plain = 'checkout-svc µs ✓ 名前 — é'
    assert.equal(terminalSafe(plain), plain)
    assert.equal(terminalSafe(terminalSafe(RETITLE_AND_ERASE)), terminalSafe(RETITLE_AND_ERASE))
  })

  it('terminalLine keeps a value on one line', () => {
    assert.equal(terminalLine('a\nb\x1b'), 'a\\x0ab\\x1b')
  })
})

describe('htmlSafe', () => {
  it('escapes markup and attribute quotes in any value, numbers a file made strings included', () => {
    assert.equal(htmlSafe('<img src=x onerror="alert(1)">'), '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;')
    assert.equal(htmlSafe("'&"), '&#39;&amp;')
    assert.equal(htmlSafe(42), '42')
  })
})

describe('csvCell', () => {
  it('neutralises a string a spreadsheet would run as a formula', () => {
    assert.equal(csvCell('=HYPERLINK("http://x","y")'), `"'=HYPERLINK(""http://x"",""y"")"`)
    for (const start of ['+', '-', '@', '\t', '\r']) assert.equal(csvCell(`${start}1`).replace(/^"/, '').startsWith(`'${start}`), true, JSON.stringify(start))
  })

  it('keeps numbers, negative ones included, and empties what is missing', () => {
    assert.equal(csvCell(-5), '-5')
    assert.equal(csvCell(1.5), '1.5')
    assert.equal(csvCell(null), '')
    assert.equal(csvCell(undefined), '')
    assert.equal(csvCell(Number.NaN), '')
  })

  it('quotes commas, quotes and line breaks (RFC 4180)', () => {
    assert.equal(csvCell('a,b'), '"a,b"')
    assert.equal(csvCell('say "hi"'), '"say ""hi"""')
    assert.equal(csvCell('host:27017'), 'host:27017')
  })
})
