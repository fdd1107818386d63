/** `locks watch` on a terminal (src/reporters/locks.ts LocksLiveView): held locks redrawn in place, events under them. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import type {LockRow} from '../../src/locks/types.js'
import {UTC_TIME} from '../../src/reporters/time-of-day.js'
import {LocksLiveView} from '../../src/reporters/locks.js'
import {clipToHeight, Redraw} from '../../src/reporters/redraw.js'

const held = (name: string, verdict: LockRow['verdict'], sinceAgeMS: number): LockRow => ({
  name, state: 'locked', process: 'shard02', who: 'shard02:conn7', why: 'migrating chunk', since: null, sinceAgeMS, whenMeans: 'taken',
  holderLastPing: '2026-11-23T00:00:00.000Z', verdict, ts: null, heldMS: sinceAgeMS, holderPingAgeMS: 900, holder: 'shard02 (10.0.0.2:27018)', whyKind: null,
})

describe('locks watch live view', () => {
  it('shows what is held now, stale first, with the latest events; the next frame erases the one before', () => {
    const view = new LocksLiveView('pooltool locks watch mongodb://r1:27017/', '6.0.20', UTC_TIME)
    assert.match(view.frame(), /waiting for the first poll/)
    view.poll({poll: 1, at: '2026-11-23T10:00:00.000Z', held: [held('db.a', 'held', 1000), held('db.b', 'stale', 5000)]})
    view.event('10:00:00.000 acquired  db.a by shard02 (migrating chunk)')
    const first = view.frame()
    assert.match(first, /^poll 1 at 10:00:00 \(times are UTC\) · Ctrl-C for the summary$/m)
    assert.match(first, /^2 held:$/m)
    const rows = [...first.matchAll(/^│ (db\.\w)/gm)].map((m) => m[1])
    assert.deepEqual(rows, ['db.b', 'db.a'], 'stale first')
    assert.match(first, /^events \(1\):\n {2}10:00:00.000 acquired {2}db\.a/m)
    view.poll({poll: 2, at: '2026-11-23T10:00:00.500Z', held: []})
    const second = view.frame()
    assert.ok(second.startsWith(`\u001B[${first.split('\n').length}F\u001B[0J`), 'erases the previous frame')
    assert.match(second, /^no lock held$/m)
  })

  it('6.1+: the DDL operations running, no lock table', () => {
    const view = new LocksLiveView('h', '7.0.14', UTC_TIME)
    view.poll({poll: 3, at: '2026-11-23T10:00:00.000Z', ddlRunning: 2})
    assert.match(view.frame(), /^2 DDL operation\(s\) running$/m)
  })
})

describe('locks watch on a terminal, node locks', () => {
  const view = (opid: number) => ({
    node: 'db1:27017',
    blocking: {
      chainSource: 'currentOp',
      chainSourceText: 'inferred from $currentOp',
      operations: [],
      edges: [],
      chains: [{root: {operation: {opid, waitingForLock: false}, alsoBlockedBy: [], children: [], waitingAtMostMicros: null}, killOpHint: `db.killOp(${opid})`, stopHint: `db.killOp(${opid})`, waiterCount: 2}],
      unexplainedWaiters: [],
      holdsThatBlock: [],
      inferredEdgesNotInLockInfo: 0,
    },
  })

  it('one line per node, with no distributed locks polled: its root blocker, or unknown (never "no contention") when not read', () => {
    const live = new LocksLiveView('pooltool locks watch mongodb://db1:27017/', '7.0.14', UTC_TIME)
    live.nodes({
      poll: 4,
      nodes: [
        {host: 'db1:27017', role: 'primary', readAt: '2026-11-23T10:00:00.000Z', view: view(4711) as never, lockInfo: 'read'},
        {host: 'db2:27017', role: 'secondary', readAt: null, view: null, error: {code: 'UNREACHABLE', message: 'connection refused'}, lockInfo: 'not read'},
      ],
    })
    const frame = live.frame()
    assert.match(frame, /^poll 4 · Ctrl-C for the summary$/m)
    assert.match(frame, /^db1:27017 \(primary\): root blocker opid 4711 blocks 2$/m)
    assert.match(frame, /^db2:27017 \(secondary\): unknown \(connection refused\)$/m)
  })
})

describe('a live frame taller than the terminal', () => {
  it('is cut to the height, saying how many lines are left out, so it can still be erased', () => {
    const text = Array.from({length: 30}, (_, i) => `line ${i}`).join('\n')
    const clipped = clipToHeight(text, 10)
    assert.equal(clipped.split('\n').length, 9, 'the cursor\'s line stays free')
    assert.match(clipped, /^… 22 more lines: a taller terminal shows them/m)
    assert.equal(clipToHeight(text, undefined), text)
    assert.equal(clipToHeight('a\nb', 10), 'a\nb')
    const redraw = new Redraw()
    redraw.frame(text, {width: 80, height: 10})
    assert.ok(redraw.frame('x', {width: 80, height: 10}).startsWith('\u001B[9F\u001B[0J'), 'erases the 9 lines it drew')
  })
})
