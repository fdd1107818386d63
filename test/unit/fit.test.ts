/**
 * Tables and text fitted to a width (src/reporters/fit.ts): each step of the fallback, in order,
 * and the promise behind them: no line wider than asked.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import stringWidth from 'string-width'

import {type Cell, type ColumnSpec, fitTable, fitText, UNLIMITED} from '../../src/reporters/fit.js'

const columns: ColumnSpec[] = ['model', 'conc', {head: 'checkout p99', short: 'chk p99'}, 'p50', {head: 'p90', dropOrder: 2}, 'p99', {head: 'max', dropOrder: 1}, 'errors']
const rows: Cell[][] = [
  ['pool', 8, '12µs', '310µs', '400µs', '1.20ms', '12.3ms', 0],
  ['fixed', 64, {content: 'unavailable: timed out after 800 ms', colSpan: 6}],
]
const widest = (text: string) => Math.max(...text.split('\n').map((line) => stringWidth(line)))

describe('fitTable', () => {
  it('draws the boxed table when it fits (no width: always)', () => {
    const text = fitTable(columns, rows, UNLIMITED)
    assert.match(text, /^┌/)
    assert.match(text, /│ checkout p99 │/)
  })

  it('then the same without borders, then with short headers, before leaving anything out', () => {
    const boxed = widest(fitTable(columns, rows, UNLIMITED))
    const plain = fitTable(columns, rows, {width: boxed - 1})
    assert.doesNotMatch(plain, /│/)
    assert.match(plain, /^model +conc +checkout p99 +p50 +p90 +p99 +max +errors$/m)
    const plainWidth = widest(plain)
    const short = fitTable(columns, rows, {width: plainWidth - 1})
    assert.match(short, /^model +conc +chk p99 +p50 +p90 +p99 +max +errors$/m)
    assert.ok(widest(short) <= plainWidth - 1)
  })

  it('leaves out the marked columns in their order, says which, and keeps a spanning cell over what is left', () => {
    const text = fitTable(columns, rows, {width: 50})
    assert.match(text, /^model +conc +chk p99 +p50 +p99 +errors$/m, 'p90 (dropOrder 2) went first, then max')
    assert.match(text, /^\(p90, max: left out to fit 50 columns; --json has\n {2}them\)$/m)
    assert.match(text, /^fixed +64 +unavailable: timed out after 800 ms$/m)
    assert.ok(widest(text) <= 50, text)
  })

  it('else one header-value block per row, which fits any width', () => {
    for (const width of [30, 12]) {
      const text = fitTable(columns, rows, {width})
      assert.ok(widest(text) <= width, `${width}:\n${text}`)
      assert.match(text, /^model/m)
      assert.match(text, /unavailabl/, 'the spanning cell is there')
    }
    assert.match(fitTable(columns, rows, {width: 30}), /^checkout p99 +12µs$/m)
  })

  it('leaves out a column given as undefined, with its cells', () => {
    const text = fitTable(['a', undefined, 'c'], [['1', undefined, '3']], UNLIMITED)
    assert.match(text, /│ a │ c │/)
    assert.match(text, /│ 1 │ 3 │/)
  })
})

describe('fitText', () => {
  it('wraps long lines under their own indentation, two further in', () => {
    const text = fitText('  one two three four five six seven eight nine ten eleven twelve', {width: 24})
    assert.ok(widest(text) <= 24, text)
    const [first, ...rest] = text.split('\n')
    assert.match(first!, /^ {2}one/)
    for (const line of rest) assert.match(line, /^ {4}\S/)
  })

  it('leaves a one-word line (a connection string) whole, and everything under no limit', () => {
    const uri = `mongodb://127.0.0.1:27017/?${'x'.repeat(100)}`
    assert.equal(fitText(uri, {width: 40}), uri)
    const long = 'word '.repeat(50)
    assert.equal(fitText(long, UNLIMITED), long)
  })
})

describe('fitText with a word longer than the width', () => {
  it('splits the word at the width and puts nothing into it', () => {
    const path = `/very/long/${'segment/'.repeat(8)}file.json`
    const text = fitText(`wrote ${path} for you`, {width: 30})
    assert.ok(widest(text) <= 30, text)
    assert.equal(text.replace(/\s/g, ''), `wrote ${path} for you`.replace(/\s/g, ''), 'the characters in order, none added')
    assert.ok(text.replace(/\n\s*/g, '').includes(path), 'the path reads whole once the breaks are taken out')
  })
})
