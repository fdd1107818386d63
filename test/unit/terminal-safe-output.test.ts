/**
 * Hostile strings in text views. Whatever a server or a client sent (an appName, a driver
 * name, a client address, a lock's _id / who / why / process, a lockping's _id, a router's version,
 * an errmsg) reaches the terminal with its control characters shown (`\x1b`), never sent: the
 * output layer (fitTable's cells, fitText, the live views' frames) escapes them, and only the
 * redraw's own codes get through. Tables keep their widths, computed on the escaped text.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import stringWidth from 'string-width'

import {failureLine} from '../../src/cli/failures.js'
import {clientLeakVerdicts, clusterHolders} from '../../src/conns/cluster-holders.js'
import {holdersCurrentOp, holdersFromGroups} from '../../src/conns/holders.js'
import type {ConnsListResult, HostSample, RoundSample} from '../../src/conns/types.js'
import {PoolToolError} from '../../src/errors.js'
import {lockTiming, toLockRows, toPingRows} from '../../src/locks/parse.js'
import {LockTransitionTracker} from '../../src/locks/transitions.js'
import type {LocksListResult, LocksPingsResult, LocksWatchResult} from '../../src/locks/types.js'
import {UTC_TIME} from '../../src/reporters/time-of-day.js'
import {ConnsLiveView, renderList, renderPlainRound, renderTopology} from '../../src/reporters/conns.js'
import {type Cell, type ColumnSpec, fitTable, fitText, type Layout, UNLIMITED} from '../../src/reporters/fit.js'
import {LocksLiveView, renderLockEvent, renderLockPollFailure, renderLocksList, renderLocksPings, renderLocksWatch} from '../../src/reporters/locks.js'
import {fitToWidth} from '../../src/reporters/progress.js'
import {runPipeline} from '../../src/sim/storage/aggregate.js'
import {currentOpDocs} from '../fixtures/conns-documents.js'
import {NOW, locks44, pings44, shards} from '../fixtures/locks-documents.js'

/** Retitles the terminal, moves the cursor up a line and erases it: what a client can put in its appName. */
const PAYLOAD = '\u001B]0;pwned\u0007\u001B[1A\u001B[2K'
/** The same with a C1 CSI, DEL, a bidi override and a newline (a forged line of its own). */
const MORE = '\u009B2J\u007F\u202E\nFORGED'
const hostile = (what: string) => `${what}${PAYLOAD}${MORE}`
/** Anything a terminal acts on: C0 but the newline, DEL, C1. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/
const VISIBLE = '\\x1b]0;pwned\\x07\\x1b[1A\\x1b[2K'

const widest = (text: string) => Math.max(...text.split('\n').map((line) => stringWidth(line)))
/** What a command prints for a rendered text: logText / logFitted / stderrText pass it through fitText. */
const printed = (text: string, layout: Layout = UNLIMITED) => fitText(text, layout)

function assertSafe(text: string, what: string): void {
  const found = RAW_CONTROL.exec(text)
  assert.equal(found, null, `${what}: a raw control character (U+${found?.[0].codePointAt(0)!.toString(16).padStart(4, '0')}) in ${JSON.stringify(text)}`)
  assert.doesNotMatch(text, /\u202E/, `${what}: a raw bidi override`)
}

/** The payload is there, shown: the operator sees what the client sent. */
function assertShown(text: string, what: string): void {
  assert.ok(text.includes(VISIBLE), `${what}: the payload shown escaped in ${JSON.stringify(text)}`)
  assert.doesNotMatch(text, /^FORGED/m, `${what}: a newline in a server's string started a line of its own`)
}

describe('fitTable and fitText with a hostile cell', () => {
  const columns: ColumnSpec[] = ['app', 'client', {head: 'driver', dropOrder: 1}, 'count']
  const rows: Cell[][] = [
    [hostile('app'), '10.0.0.5', hostile('nodejs'), 3],
    ['orders-api', hostile('10.0.0.6'), 'nodejs', 2],
  ]

  for (const width of [Number.POSITIVE_INFINITY, 200, 100, 60, 30, 16]) {
    it(`never emits a control character, and fits ${width} columns`, () => {
      const layout = {width}
      const text = fitTable(columns, rows, layout)
      assertSafe(text, `fitTable at ${width}`)
      assert.ok(text.includes('\\x1b'), 'the escape is shown')
      if (Number.isFinite(width)) assert.ok(widest(text) <= width, `at most ${width} wide:\n${text}`)
      assertSafe(fitText(`holders: ${hostile('app')} and more words to wrap ${hostile('x')}`, layout), `fitText at ${width}`)
    })
  }

  it('sizes the columns on the escaped text: every line of the boxed table as wide as the others', () => {
    const text = fitTable(columns, rows, UNLIMITED)
    assert.match(text, /^┌/)
    // string-width skips escape sequences: measured raw, a cell would be drawn narrower than the terminal shows it.
    assert.ok(text.includes(`│ app${VISIBLE}`), `the cell holds the escaped text:\n${text}`)
    const widths = new Set(text.split('\n').map((line) => stringWidth(line)))
    assert.equal(widths.size, 1, `one width for every line:\n${text}`)
  })

  it('a header from a server is escaped too', () => {
    assertSafe(fitTable([hostile('field')], [[1]], UNLIMITED), 'header')
  })

  it('escapes at any width, a pipe (no width) included, and keeps the text\'s own newlines', () => {
    const text = fitText(`one ${PAYLOAD}\ntwo`, UNLIMITED)
    assert.equal(text, `one ${VISIBLE}\ntwo`)
  })
})

describe('conns renderers with hostile appName, driver, client, host names and router version', () => {
  // Real $currentOp documents (fixtures), poisoned where a client chooses: its appName and driver name, and its address.
  const docs = currentOpDocs.map((doc) =>
    doc.appName === 'orders-api'
      ? {...doc, appName: hostile('app'), client: `${hostile('10.0.0.5')}:53412`, clientMetadata: {application: {name: hostile('app')}, driver: {name: hostile('nodejs'), version: '6.8.0'}}}
      : doc,
  )
  const holders = holdersFromGroups(runPipeline(docs, holdersCurrentOp(false).pipeline ?? []), 'pooltool-conns')
  assert.ok(holders.some((h) => h.appName.includes(PAYLOAD) && h.driver.includes(PAYLOAD) && h.client.includes(PAYLOAD)), `the poison survives the grouping: ${JSON.stringify(holders)}`)
  const router: HostSample = {
    host: hostile('mongos1:27017'), role: 'mongos', mongoVersion: hostile('7.0.14'), state: 'ok', current: 5, available: 95, totalCreated: 9, holders,
  }
  const down: HostSample = {host: 'shard1:27018', role: 'shard', shard: hostile('shardA'), state: 'unreachable', error: hostile('connection closed')}
  // A leaking hostile app: its name reaches the cluster-wide ranking and the verdict's words.
  const leaking: HostSample = {...router, host: 'db2:27017', role: 'secondary', holders: [...holders, {appName: hostile('app'), client: hostile('10.0.0.5'), driver: hostile('nodejs'), count: 20, kind: 'application', monitors: 10, rttPingers: 10, pool: 0}]}
  const cluster = clusterHolders([router, leaking, down])
  const verdicts = clientLeakVerdicts(cluster)
  assert.equal(verdicts.length, 1, 'the hostile leak is named')
  const round: RoundSample = {round: 1, at: '2024-05-01T12:00:01.000Z', elapsedMS: 1000, roundMS: 3, hosts: [router, down], clusterHolders: cluster, verdicts}

  it('list: no control character, the appName shown escaped, on one line', () => {
    const list = {
      target: {uri: 'mongodb://mongos1:27017/', source: '--uri', simulated: false},
      topology: {kind: 'sharded', sources: ['hello'], warnings: [], staleRouters: [{host: hostile('mongos2:27017'), mongoVersion: hostile('6.0.1')}]},
      at: '2024-05-01T12:00:00.000Z',
      roundMS: 4,
      hosts: [router, down],
      clusterHolders: cluster,
      verdicts,
      notes: [],
      interrupted: false,
    } as unknown as ConnsListResult
    for (const layout of [UNLIMITED, {width: 80}, {width: 40}]) {
      const text = printed(renderList(list, layout), layout)
      assertSafe(text, `conns list at ${layout.width}`)
      assertShown(text, `conns list at ${layout.width}`)
    }
  })

  it('plain rounds and the topology: no control character', () => {
    const text = printed(renderPlainRound(round, UTC_TIME))
    assertSafe(text, 'plain round')
    assertShown(text, 'plain round')
    assert.equal(text.split('\n').length, 2, 'one line per host')
    const topology = printed(renderTopology({kind: 'sharded', sources: ['hello'], warnings: [], staleRouters: [], hosts: [router, down]} as never))
    assertSafe(topology, 'topology')
  })

  it('live: the frame erases the one before with its own codes, and those are the only ones', () => {
    const view = new ConnsLiveView('pooltool conns watch')
    view.push(round)
    const first = view.frame({width: 120, height: 50})
    assertSafe(first, 'first frame')
    assertShown(first, 'first frame')
    view.note(hostile('clock skew on mongos1'), false)
    view.push({...round, round: 2})
    const second = view.frame({width: 120, height: 50})
    const erase = `\u001B[${first.split('\n').length}F\u001B[0J`
    assert.ok(second.startsWith(erase), 'the redraw moves up over the previous frame and erases it')
    assertSafe(second.slice(erase.length), 'second frame after its redraw codes')
  })
})

describe('locks renderers with a hostile lock _id, who, why, process and lockping _id', () => {
  // Real config.locks / config.lockpings documents (fixtures), with one lock and its holder's ping poisoned.
  const process = `${hostile('evil.example.net')}:27018:1604300000:42`
  const locks = [...locks44, {_id: hostile('orders.evil'), state: 2, process, ts: locks44[0]!.ts, when: new Date(NOW.getTime() - 1000), who: hostile('who'), why: hostile('why')}]
  const pings = [...pings44, {_id: process, ping: new Date(NOW.getTime() - 500)}]
  const timing = lockTiming()
  const input = {locks, pings, mongos: [], shards, nowMs: NOW.getTime(), timing}
  const envelope = {target: {uri: 'mongodb://router:27017/', source: '--uri', simulated: false}, entry: 'mongos', serverVersion: '4.4.29', model: 'config.locks', message: 'config.locks', now: NOW.toISOString(), notes: [], interrupted: false}

  it('list and pings: no control character at any width, the payload shown on one line', () => {
    const list = {...envelope, expiryMS: timing.expiryMS, locks: toLockRows(input), pings: toPingRows(input)} as unknown as LocksListResult
    const pingList = {...envelope, pingIntervalMS: timing.pingIntervalMS, pings: toPingRows(input)} as unknown as LocksPingsResult
    for (const layout of [UNLIMITED, {width: 100}, {width: 40}]) {
      for (const [what, text] of [['list', renderLocksList(list, layout)], ['pings', renderLocksPings(pingList, layout)]] as const) {
        const out = printed(text, layout)
        assertSafe(out, `locks ${what} at ${layout.width}`)
        // Narrower, the one-block-per-row layout wraps the long values: still safe, no longer whole.
        if (layout.width >= 100) assertShown(out, `locks ${what} at ${layout.width}`)
        if (Number.isFinite(layout.width)) assert.ok(widest(out.split('\n').filter((line) => /\S\s+\S/.test(line.trim())).join('\n')) <= layout.width, `${what} fits ${layout.width}:\n${out}`)
      }
    }
  })

  it('watch: events, poll failures, the summary and the live frame', () => {
    const tracker = new LockTransitionTracker()
    const atStart = tracker.observe(toLockRows(input), NOW.getTime())
    const held = atStart.find((e) => e.name.includes(PAYLOAD))
    assert.ok(held, `the poisoned lock is held at the start: ${JSON.stringify(atStart)}`)
    const freed = toLockRows({...input, locks: locks.map((doc) => (doc._id === hostile('orders.evil') ? {...doc, state: 0} : doc))})
    const events = [...atStart, ...tracker.observe(freed, NOW.getTime() + 1000)]
    assert.ok(events.some((e) => e.kind === 'released' && e.name.includes(PAYLOAD)), JSON.stringify(events))
    for (const event of events) {
      const line = printed(renderLockEvent(event, '4.4.29', UTC_TIME))
      assertSafe(line, `event ${event.kind}`)
      assert.equal(line.split('\n').length, 1, `one line per event: ${line}`)
    }
    assertShown(printed(renderLockEvent(held, '4.4.29', UTC_TIME)), 'held-at-start event')
    const failure = printed(renderLockPollFailure({at: NOW.toISOString(), poll: 3, reason: 'server-error', error: hostile('errmsg')}, UTC_TIME))
    assertSafe(failure, 'poll failure')
    assertShown(failure, 'poll failure')

    const summary = {
      ...envelope, durationMS: 2000, intervalMS: 500, polls: 4, failedPolls: 0, failedPollsByReason: {}, pollFailures: [], pollTimeoutMS: 1000, events,
      locks: [{name: hostile('orders.evil'), acquired: 0, released: 1, overtaken: 0, holdMS: {count: 1, p50: 900, p90: 900, p99: 900, max: 900}, betweenPolls: {count: 0, maxMS: 0}}],
    } as unknown as LocksWatchResult
    assertSafe(printed(renderLocksWatch(summary)), 'watch summary')

    const view = new LocksLiveView('pooltool locks watch', '4.4.29', UTC_TIME)
    view.poll({poll: 1, at: NOW.toISOString(), held: toLockRows(input).filter((row) => row.state !== 'unlocked')})
    view.event(renderLockEvent(held, '4.4.29', UTC_TIME))
    const first = view.frame({width: 120, height: 60})
    assertSafe(first, 'live frame')
    assertShown(first, 'live frame')
    const second = view.frame({width: 120, height: 60})
    const erase = `\u001B[${first.split('\n').length}F\u001B[0J`
    assert.ok(second.startsWith(erase), 'the redraw codes are still written')
    assertSafe(second.slice(erase.length), 'second live frame after its redraw codes')
  })
})

describe('failure lines and the spinner', () => {
  it('a failure is one line, its control characters and newlines shown', () => {
    const line = failureLine(new PoolToolError('SERVER_ERROR', `command failed: ${hostile('errmsg')}`, 'see the server log'))
    assertSafe(line, 'failure line')
    assert.ok(line.includes(VISIBLE) && line.includes('\\x0aFORGED'), line)
    assert.equal(line.split('\n').length, 1)
  })

  it("the spinner's text (host names) is escaped and stays one line", () => {
    const text = fitToWidth(`polling ${hostile('db1:27017')}`, 200)
    assertSafe(text, 'spinner text')
    assert.ok(text.includes(VISIBLE), text)
    assert.equal(text.split('\n').length, 1)
  })
})
