/**
 * The node-locks text (src/reporters/node-locks.ts): the root blocker named first with its killOp
 * hint, waiters indented under what blocks them, the waits ranking and the tickets line; within 80
 * columns; never a command's values; server strings escaped.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {Long} from 'bson'
import stringWidth from 'string-width'

import {analyseBlocking} from '../../src/locks/node/blocking.js'
import {nodeLocksView} from '../../src/locks/node/index.js'
import {parseLockInfo} from '../../src/locks/node/lock-info.js'
import {parseOperations} from '../../src/locks/node/operations.js'
import {ticketsFromServerStatus} from '../../src/locks/node/tickets.js'
import {lockWaitsFromServerStatus} from '../../src/locks/node/waits.js'
import {blockingTreeText, lockWaitsText, nodeLocksText, shareText, ticketsText} from '../../src/reporters/node-locks.js'
import {fsyncLockCsdn, pastebinFGjTrnC5, serverStatus341, serverStatus42Primary, server17039Insert, update303WhereSleep} from '../fixtures/node-locks-documents.js'
import {constructedIndexBuild, constructedIndexBuildLockInfo, NODE} from './fixtures/node-locks-constructed.js'

/** The text with its line breaks and tree guides taken out, to match what wrapped. */
const flat = (text: string) => text.replace(/\n[ │]*/g, ' ')
const widest = (text: string) => Math.max(...text.split('\n').map((line) => stringWidth(line)))
const layout = {width: 80}

function fullText(docs: Array<Record<string, unknown>>, lockInfo?: unknown): string {
  const blocking = analyseBlocking({operations: parseOperations(docs, NODE), ...(lockInfo ? {lockInfo: [parseLockInfo(lockInfo, NODE)]} : {})})
  return nodeLocksText({node: NODE, blocking, waits: lockWaitsFromServerStatus(serverStatus341), tickets: ticketsFromServerStatus(serverStatus42Primary, '4.2')}, layout)
}

describe('node locks text', () => {
  it('names the root blocker first, with the killOp hint, and the waiters under what blocks them', () => {
    const text = blockingTreeText(analyseBlocking({operations: parseOperations(constructedIndexBuild, NODE)}), layout)
    const lines = text.split('\n')
    assert.match(lines[0]!, /inferred from \$currentOp/)
    assert.match(lines[1]!, /^root blocker opid 101: blocks 3 operations/)
    assert.match(text, /hint: db\.killOp\(101\) \(pooltool never kills\)/)
    const at = (re: RegExp) => lines.findIndex((line) => re.test(line))
    assert.ok(at(/opid 202 waits ≤30s for X on Collection test\.orders \(101 holds IS\)/) > at(/^root blocker opid 101/))
    const read = at(/^ {5}[├└]─ opid 303 /)
    assert.ok(read > at(/opid 202 waits/), `303 is indented under the build:\n${text}`)
    assert.match(flat(text), /opid 303 waits ≤10s for IS on Collection test\.orders \(queued ahead: 202's X request is before it\)/)
    assert.match(flat(text), /IndexBuildsCoordinatorMongod-0 · command test\.orders createIndexes · running 30s · Index Build: draining writes/)
    assert.match(flat(text), /conn41 · 10\.1\.0\.7:51544 · app nightly-report · driver nodejs 6\.9\.0 · query test\.orders find · running 2m 0s/)
  })

  it('says "confirmed by lockInfo" when lockInfo decided the chain', () => {
    const text = blockingTreeText(analyseBlocking({operations: parseOperations(constructedIndexBuild, NODE), lockInfo: [parseLockInfo(constructedIndexBuildLockInfo(), NODE)]}), layout)
    assert.match(text.split('\n')[0]!, /confirmed by lockInfo/)
  })

  it('fits 80 columns for every fixture', () => {
    for (const docs of [constructedIndexBuild, pastebinFGjTrnC5, fsyncLockCsdn, [update303WhereSleep], [server17039Insert]]) {
      const text = fullText(docs)
      assert.ok(widest(text) <= 80, text)
    }
    const waits = lockWaitsText(lockWaitsFromServerStatus(serverStatus42Primary), {width: 40})
    assert.ok(widest(waits) <= 40, waits)
  })

  it("never prints a command's values", () => {
    const text = [fullText(constructedIndexBuild, constructedIndexBuildLockInfo()), fullText(pastebinFGjTrnC5), fullText(fsyncLockCsdn), fullText([update303WhereSleep]), fullText([server17039Insert])].join('\n')
    for (const secret of ['cust-SECRET-42', 'shipped', '"open"', 'customerId_1', 'sleep(500)', '$where', '64121', '1512120014', 'someone']) assert.ok(!text.includes(secret), secret)
    assert.doesNotMatch(text, /\bbar\b/)
    assert.match(flat(fullText(pastebinFGjTrnC5)), /opid 946990251 waits for IS on MMAPV1Journal with no visible blocker; holding it in a compatible mode: 946985942/)
  })

  it('escapes what a client sent (an appName with escape codes stays one visible line)', () => {
    const hostile = [{...constructedIndexBuild[0]!, appName: 'evil\u001b]0;pwned\u0007\nroot blocker opid 1'}, ...constructedIndexBuild.slice(1)]
    const text = blockingTreeText(analyseBlocking({operations: parseOperations(hostile, NODE)}), layout)
    assert.ok(!text.includes('\u001b'))
    assert.match(text, /app evil\\x1b\]0;pwned\\x07\\x0aroot blocker opid 1/)
    assert.equal(text.split('\n').filter((line) => line.startsWith('root blocker')).length, 1)
  })

  it('the waits ranking and the tickets line', () => {
    const waits = lockWaitsText(lockWaitsFromServerStatus(serverStatus341), {width: 120})
    const cells = waits.split('\n').map((line) => line.split(/[│\s]+/).filter((cell) => cell !== ''))
    const rows = cells.filter((row) => row[0] === 'Database' || row[0] === 'Global')
    assert.deepEqual(rows.map((row) => row.slice(0, 2).join(' ')), ['Database r', 'Database w', 'Global r', 'Database R', 'Database W'])
    assert.match(waits, /^lock waits since start, 117 days/)
    assert.match(lockWaitsText(lockWaitsFromServerStatus({uptime: 3 * 86_400, locks: {Global: serverStatus42Primary.locks.Global}})), /^no lock has waited since start, 3 days$/)
    const tickets = ticketsText(ticketsFromServerStatus({version: '7.0.2', queues: {execution: {write: {out: 8, available: 0, totalTickets: 8}, read: {out: 0, available: 8, totalTickets: 8}}}}), layout)
    assert.match(tickets, /^  write 8\/8 out, 0 available: all in use \(dynamic sizing: not exhaustion\)$/m)
    assert.doesNotMatch(tickets, /EXHAUSTED/)
    assert.equal(shareText(13 / 3_715_927_334), '<0.01%')
    assert.equal(shareText(6 / 194), '3.09%')
  })
})

describe('nodeLocksView (src/locks/node/index.ts)', () => {
  it('joins $currentOp, lockInfo and serverStatus of one node, with rates against a previous sample', () => {
    const db = serverStatus341.locks.Database
    const later = {...serverStatus341, locks: {...serverStatus341.locks, Database: {...db, acquireWaitCount: {...db.acquireWaitCount, W: Long.fromNumber(db.acquireWaitCount.W.toNumber() + 2)}, timeAcquiringMicros: {...db.timeAcquiringMicros, W: Long.fromNumber(db.timeAcquiringMicros.W.toNumber() + 4_000_000)}}}}
    const view = nodeLocksView({node: NODE, currentOp: constructedIndexBuild, lockInfo: constructedIndexBuildLockInfo(), serverStatus: later, previous: {serverStatus: serverStatus341, intervalMS: 5000}})
    assert.equal(view.blocking.chainSource, 'lockInfo')
    assert.equal(view.blocking.chains[0]!.root.operation.node, NODE)
    assert.equal(view.waits.state, 'counted')
    assert.equal(view.tickets.source, 'none', 'the 3.4.1 excerpt carries no ticket figures')
    assert.deepEqual(view.rates!.rows.map((row) => [row.resource, row.mode, row.acquireWaitDelta, row.meanWaitMicros]), [['Database', 'W', 2, 2_000_000]])
    const text = nodeLocksText(view, layout)
    assert.match(text, /lock waits over 5\.0s:\n {2}Database W: 2 waits \(0\.40\/s\), 4\.0s waited, mean 2\.0s/)
    assert.ok(widest(text) <= 80, text)
    const json = JSON.stringify(view)
    for (const secret of ['cust-SECRET-42', 'shipped', 'customerId_1']) assert.ok(!json.includes(secret), `--json keeps no command value: ${secret}`)
  })
})
