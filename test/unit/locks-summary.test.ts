/**
 * Long lock lists on a terminal (src/reporters/locks.ts): counts by verdict and the rows that need
 * a look first (stale, no ping, held longest), `--all` for every row. --json is untouched by this.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {LockRow, LocksListResult, LocksPingsResult, LockVerdict, PingRow} from '../../src/locks/types.js'
import {LIST_TOP_ROWS, renderLocksList, renderLocksPings} from '../../src/reporters/locks.js'

function lock(name: string, verdict: LockVerdict, sinceAgeMS: number): LockRow {
  return {
    name, state: verdict === 'free' ? 'unlocked' : 'locked', process: 'h:27018:1:2', who: 'h:27018:1:2:conn1', why: 'dropCollection', since: null, sinceAgeMS, whenMeans: 'taken',
    holderLastPing: null, verdict, ts: null, heldMS: null, holderPingAgeMS: null, holder: null, whyKind: null,
  }
}

const envelope = {target: {uri: 'mongodb://router:27017/', source: '--uri', simulated: false}, entry: 'mongos', serverVersion: '4.4.29', model: 'config.locks', message: 'config.locks', now: '2026-11-23T00:00:00.000Z', notes: [], interrupted: false}

function list(locks: LockRow[]): LocksListResult {
  return {...envelope, expiryMS: 900_000, locks, pings: []} as unknown as LocksListResult
}

/** The lock names in the table's rows, in order. */
const rowNames = (text: string) => [...text.matchAll(/^│ (db\S+|stale\S+|held\S+|noping\S+)/gm)].map((match) => match[1])

describe('locks list: long lists summarised', () => {
  // 100 free, 4 held (ages 1–4 s), 2 stale, 1 without a ping.
  const locks = [
    ...Array.from({length: 100}, (_, i) => lock(`db.free${i}`, 'free', i)),
    ...[1, 4, 2, 3].map((age) => lock(`held${age}`, 'held', age * 1000)),
    lock('stale1', 'stale', 5000),
    lock('stale2', 'stale', 9000),
    lock('noping1', 'no-ping', 100),
  ]

  it(`shows counts by verdict and the ${LIST_TOP_ROWS} rows to look at first`, () => {
    const text = renderLocksList(list(locks))
    assert.match(text, /^107 locks: 2 stale, 1 no-ping, 4 held, 100 free; the 25 that need a look first/m)
    const names = rowNames(text)
    assert.equal(names.length, LIST_TOP_ROWS)
    assert.deepEqual(names.slice(0, 7), ['stale2', 'stale1', 'noping1', 'held4', 'held3', 'held2', 'held1'], 'stale, no ping, then held longest first')
    assert.match(text, /^… and 82 more: --all lists every lock/m)
  })

  it('--all: every row in the order read, no summary', () => {
    const text = renderLocksList(list(locks), undefined, {all: true})
    assert.equal(rowNames(text).length, locks.length)
    assert.doesNotMatch(text, /need a look first|… and/)
  })

  it(`a list of ${LIST_TOP_ROWS} or fewer is shown whole`, () => {
    const text = renderLocksList(list(locks.slice(0, LIST_TOP_ROWS)))
    assert.equal(rowNames(text).length, LIST_TOP_ROWS)
    assert.doesNotMatch(text, /need a look first/)
  })
})

describe('locks pings: long lists summarised', () => {
  const ping = (process: string, alive: boolean, holds: string[]): PingRow => ({process, ping: '2026-11-23T00:00:00.000Z', ageMS: 1000, alive, holds, role: 'shard', host: null}) as unknown as PingRow
  const pings = [...Array.from({length: 40}, (_, i) => ping(`p${i}:27018:1:2`, true, i === 7 ? ['a', 'b', 'c', 'd', 'e'] : [])), ping('dead:27018:1:2', false, ['x'])]
  const result = {...envelope, pingIntervalMS: 30_000, pings} as unknown as LocksPingsResult

  it('the processes that are not alive first, then those holding the most; holds shortened', () => {
    const text = renderLocksPings(result)
    assert.match(text, /^41 processes: 40 alive, 1 not; the 25 to look at first/m)
    const rows = [...text.matchAll(/^│ (\S+)/gm)].map((match) => match[1]).filter((name) => name !== 'process')
    assert.deepEqual(rows.slice(0, 2), ['dead:27018:1:2', 'p7:27018:1:2'])
    assert.equal(rows.length, LIST_TOP_ROWS)
    assert.match(text, /a, b, c \(\+2 more\)/)
    assert.equal([...renderLocksPings(result, undefined, {all: true}).matchAll(/^│ p\d+:/gm)].length, 40)
  })
})
