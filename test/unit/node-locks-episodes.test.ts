/**
 * Blocking episodes over a watch (src/locks/node/episodes.ts), their text lines
 * (src/reporters/node-lock-episodes.ts) and their HTML timeline (src/report/watch-html-data.ts), from
 * sequences of NodeLocksView samples built by `nodeLocksView` out of $currentOp-shaped documents:
 * the constructed index-build case (test/unit/fixtures/node-locks-constructed.ts) and the published
 * 3.0 printout of a waiter with no visible blocker (pastebin FGjTrnC5).
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import stringWidth from 'string-width'

import {MAX_EPISODES_KEPT, NodeLockEpisodeTracker} from '../../src/locks/node/episodes.js'
import {nodeLocksView} from '../../src/locks/node/index.js'
import type {NodeLockEpisodeEvent, NodeLockEpisodeObservation, NodeLocksSample} from '../../src/locks/node/types.js'
import {nodeLockEpisodeTimeline} from '../../src/report/watch-html-data.js'
import {UTC_TIME} from '../../src/reporters/time-of-day.js'
import {renderLocksHtml} from '../../src/reporters/html.js'
import {formatAgeMs} from '../../src/reporters/format.js'
import {nodeLockEpisodeEventText, nodeLockEpisodesSummaryText, nodeLockWaitRatesText} from '../../src/reporters/node-lock-episodes.js'
import {inactiveTransactionDocs11564, pastebinFGjTrnC5} from '../fixtures/node-locks-documents.js'
import {constructedIndexBuild, NODE} from './fixtures/node-locks-constructed.js'

type Doc = Record<string, unknown>

const T0 = Date.UTC(2026, 10, 27, 12, 0, 0)
const at = (seconds: number) => new Date(T0 + seconds * 1000)
const byOpid = (opid: number) => structuredClone(constructedIndexBuild.find((d) => d.opid === opid)!) as Doc

/** The documents `seconds` later: every operation has run that much longer. */
const aged = (docs: readonly Doc[], seconds: number): Doc[] =>
  docs.map((d) => ({...structuredClone(d), ...(typeof d.microsecs_running === 'number' ? {microsecs_running: d.microsecs_running + seconds * 1_000_000} : {})}))

/** The index build holding X on test.orders (it got its lock), two reads waiting for IS behind it, a write elsewhere. */
const buildHoldsWithTwoWaiters = (): Doc[] => [{...byOpid(202), waitingForLock: false, msg: 'Index Build: scanning collection', progress: {done: 40, total: 100}}, byOpid(303), byOpid(304), byOpid(405)]
/** The whole constructed case: the long read (101) holds IS, the build queues for X, the reads queue behind the build. */
const readBlocksBuild = (): Doc[] => constructedIndexBuild.map((d) => structuredClone(d) as Doc)
/** Nobody waits: the write elsewhere alone. */
const quiet = (): Doc[] => [byOpid(405)]
/** Another chain on the same collection: other operations (opids + 1000), none of the first chain's. */
const otherChain = (): Doc[] => buildHoldsWithTwoWaiters().map((d) => ({...d, opid: (d.opid as number) + 1000}))

const serverStatus: Doc = {uptime: 1000, locks: {Global: {acquireCount: {r: 10, w: 10}}}}
const sample = (node: string, seconds: number, docs: readonly Doc[], clockOffsetS = 0): NodeLocksSample => ({
  at: at(seconds + clockOffsetS),
  node,
  view: nodeLocksView({node, currentOp: docs, serverStatus}),
})

const eventsOf = (observations: readonly NodeLockEpisodeObservation[]): NodeLockEpisodeEvent[] => observations.flatMap((o) => o.events)

/** Feeds `polls` (seconds, documents) for one node; returns the tracker and every event. */
function watch(node: string, polls: ReadonlyArray<[number, Doc[]]>, tracker = new NodeLockEpisodeTracker()) {
  const events = eventsOf(polls.map(([seconds, docs]) => tracker.observe(sample(node, seconds, docs))))
  return {tracker, events}
}

describe('blocking episodes', () => {
  it('the root as last seen survives the poll where its waiters show with no visible blocker (the holder let go, they have not run yet)', () => {
    // The two reads still waiting, the build gone: waiters with no visible blocker, for one poll.
    const waitersAlone = (): Doc[] => [byOpid(303), byOpid(304), byOpid(405)]
    assert.equal(nodeLocksView({node: NODE, currentOp: waitersAlone(), serverStatus}).blocking.chains.length, 0, 'the documents show no root')
    const {tracker} = watch(NODE, [[0, quiet()], [1, buildHoldsWithTwoWaiters()], [2, aged(buildHoldsWithTwoWaiters(), 1)], [3, waitersAlone()], [4, quiet()]])
    const [episode] = tracker.summary().episodes
    assert.equal(tracker.summary().episodes.length, 1)
    assert.equal(episode!.root?.opid, 202, 'the build that blocked them, not null')
    assert.deepEqual(episode!.roots.map((r) => r.root?.opid ?? null), [202, null], 'the unseen moment is in the history')
  })

  it('one blocker with two waiters over 5 polls: one episode, its duration from the polls, its bounds, peak 2', () => {
    // Irregular polls, so the duration can only come from the poll times themselves.
    const times = [0, 1.0, 2.1, 3.0, 4.2, 5.0, 6.3, 7.1]
    const blockedPolls = [1, 2, 3, 4, 5]
    const polls = times.map((t, i): [number, Doc[]] => [t, blockedPolls.includes(i) ? aged(buildHoldsWithTwoWaiters(), t - times[1]!) : quiet()])
    assert.equal(nodeLocksView({node: NODE, currentOp: polls[1]![1], serverStatus}).blocking.chains[0]!.waiterCount, 2, 'the documents show one root and two waiters')
    const {tracker, events} = watch(NODE, polls)
    assert.deepEqual(events.map((e) => e.kind), ['episode-start', 'episode-end'], 'no update while nothing but time changes')
    const [episode] = tracker.summary().episodes
    assert.ok(episode)
    const firstSeen = times[blockedPolls[0]!]!
    const lastSeen = times[blockedPolls.at(-1)!]!
    const firstUnseen = times[blockedPolls.at(-1)! + 1]!
    const previous = times[blockedPolls[0]! - 1]!
    assert.equal(episode.firstSeenAt, at(firstSeen).toISOString())
    assert.equal(episode.endedAt, at(firstUnseen).toISOString())
    assert.equal(episode.durationMS, Math.round((firstUnseen - firstSeen) * 1000))
    assert.equal(episode.durationMinMS, Math.round((lastSeen - firstSeen) * 1000))
    assert.equal(episode.durationMaxMS, Math.round((firstUnseen - previous) * 1000))
    assert.ok(episode.durationMinMS <= episode.durationMS && episode.durationMS <= episode.durationMaxMS!)
    assert.deepEqual(episode.peakWaiters, {count: 2, at: at(firstSeen).toISOString()})
    assert.equal(episode.root?.opid, 202)
    assert.equal(episode.root?.commandName, 'createIndexes')
    // An index build's thread: the manual's killOp says to abort it with dropIndexes on the primary, not killOp.
    assert.equal(episode.root?.killOpHint, null)
    assert.ok(episode.root?.stopHint.startsWith('an index build: abort it on the primary (4.4+) with db.getSiblingDB("test").runCommand({dropIndexes: "orders", index: [<names in its command.indexes>]}), not killOp'), episode.root?.stopHint)
    assert.deepEqual(episode.resources, [{type: 'Collection', name: 'test.orders', blockerModes: ['X'], waiterModes: ['IS']}])
    // 303 ran 10 s at the first poll: at the last, 10 s plus the time since.
    assert.equal(episode.longestWait?.opid, 303)
    assert.equal(episode.longestWait?.atMostMicros, Math.round((10 + lastSeen - firstSeen) * 1_000_000))
    assert.equal(episode.longestSeenWaiting?.atLeastMS, episode.durationMinMS)
    assert.equal(episode.polls, blockedPolls.length)
    assert.equal(episode.confirmedByLockInfo, false)
    assert.equal(JSON.stringify(tracker.summary()).includes('customerId'), false, "the build's index spec (the command's values) is not kept")
    const [node] = tracker.summary().nodes
    assert.equal(node?.blockedMS, episode.durationMS)
    assert.deepEqual(node?.worstEpisode, {id: episode.id, durationMS: episode.durationMS, rootOpid: 202, open: false})
  })

  it('the root changes while waiters remain: the same episode, said once; a chain of other operations is a new one', () => {
    const {tracker, events} = watch(NODE, [
      [0, quiet()],
      [1, readBlocksBuild()],
      [2, aged(readBlocksBuild(), 1)],
      [3, aged(buildHoldsWithTwoWaiters(), 2)],
      [4, otherChain()],
      [5, quiet()],
    ])
    assert.deepEqual(events.map((e) => [e.kind, e.episodeId]), [
      ['episode-start', 1],
      ['episode-update', 1],
      ['episode-end', 1],
      ['episode-start', 2],
      ['episode-end', 2],
    ])
    const update = events[1]!
    assert.equal(update.kind, 'episode-update')
    if (update.kind === 'episode-update') {
      assert.deepEqual(update.reasons, ['root-changed'])
      assert.equal(update.previousRoot?.opid, 101)
      assert.equal(update.root?.opid, 202)
    }
    const [first, second] = tracker.summary().episodes
    assert.deepEqual(first!.roots.map((r) => r.root?.opid), [101, 202])
    assert.equal(first!.peakWaiters.count, 3, 'the build and both reads waited behind the read')
    assert.equal(first!.peakWaiters.at, at(1).toISOString())
    assert.equal(first!.endedAt, at(4).toISOString())
    assert.equal(first!.mergedInto, null)
    assert.equal(second!.root?.opid, 1202)
    assert.equal(second!.firstSeenAt, at(4).toISOString())
    assert.equal(second!.durationMaxMS, 2000, 'it began after the poll at 3 s')
    assert.equal(tracker.summary().nodes[0]!.blockedMS, 4000, 'the node was blocked from 1 s to 5 s: overlaps counted once')
  })

  it('two chains on one node at once are two episodes, each ending when its own waiting stops', () => {
    const onItems = () => otherChain().map((d) => ({...d, ns: 'test.items'}))
    const {tracker, events} = watch(NODE, [
      [0, quiet()],
      [1, [...buildHoldsWithTwoWaiters(), ...onItems()]],
      [2, [...buildHoldsWithTwoWaiters(), ...onItems()]],
      [3, [...quiet(), ...onItems()]],
      [4, quiet()],
    ])
    assert.deepEqual(events.map((e) => [e.kind, e.root?.opid]), [
      ['episode-start', 202],
      ['episode-start', 1202],
      ['episode-end', 202],
      ['episode-end', 1202],
    ])
    const summary = tracker.summary()
    assert.deepEqual(summary.episodes.map((e) => [e.root?.opid, e.resources[0]?.name, e.durationMS]), [
      [202, 'test.orders', 2000],
      [1202, 'test.items', 3000],
    ])
    assert.equal(summary.nodes[0]!.blockedMS, 3000, 'overlapping episodes: the node was blocked from 1 s to 4 s')
  })

  it('a rise in waiters is an update; a steady count is not', () => {
    const {events} = watch(NODE, [
      [0, quiet()],
      [1, buildHoldsWithTwoWaiters().filter((d) => d.opid !== 304)],
      [2, buildHoldsWithTwoWaiters()],
      [3, buildHoldsWithTwoWaiters()],
      [4, buildHoldsWithTwoWaiters().filter((d) => d.opid !== 304)],
      [5, quiet()],
    ])
    assert.deepEqual(events.map((e) => e.kind), ['episode-start', 'episode-update', 'episode-end'])
    assert.equal(events[1]!.kind === 'episode-update' && events[1]!.reasons.join(), 'peak-waiters')
    assert.equal(events[2]!.kind === 'episode-end' && events[2]!.peakWaiters.count, 2)
  })

  it('an episode still open at the end stays open, with no upper bound; one under way at the first poll has none either', () => {
    const open = watch(NODE, [
      [0, quiet()],
      [1, buildHoldsWithTwoWaiters()],
      [2.5, buildHoldsWithTwoWaiters()],
      [4, buildHoldsWithTwoWaiters()],
    ])
    assert.deepEqual(open.events.map((e) => e.kind), ['episode-start'])
    const [episode] = open.tracker.summary().episodes
    assert.equal(episode!.endedAt, null)
    assert.equal(episode!.durationMS, 3000)
    assert.equal(episode!.durationMaxMS, null)
    assert.equal(open.tracker.openEpisodes().length, 1)
    const [node] = open.tracker.summary().nodes
    assert.equal(node!.openEpisodes, 1)
    assert.equal(node!.blockedMS, 3000)
    assert.equal(node!.worstEpisode?.open, true)

    const atStart = watch(NODE, [
      [0, buildHoldsWithTwoWaiters()],
      [1, buildHoldsWithTwoWaiters()],
      [2, quiet()],
    ])
    const start = atStart.events[0]!
    assert.equal(start.kind === 'episode-start' && start.inProgressAtFirstPoll, true)
    const [ended] = atStart.tracker.summary().episodes
    assert.equal(ended!.previousPollAt, null)
    assert.equal(ended!.durationMS, 2000)
    assert.equal(ended!.durationMinMS, 1000)
    assert.equal(ended!.durationMaxMS, null, 'it began before the watch: no upper bound')
  })

  it('two nodes at once: episodes apart, each on its own clock, totals per node', () => {
    const tracker = new NodeLockEpisodeTracker()
    const a = 'rs0/a.example.net:27017'
    const b = 'rs0/b.example.net:27017'
    // b's clock runs 30 s ahead of a's: its durations must not be mixed with a's times.
    const plan: Array<[number, Doc[], Doc[]]> = [
      [0, quiet(), quiet()],
      [1, buildHoldsWithTwoWaiters(), quiet()],
      [2, buildHoldsWithTwoWaiters(), readBlocksBuild()],
      [3, quiet(), readBlocksBuild()],
      [4, quiet(), readBlocksBuild()],
      [5, quiet(), quiet()],
    ]
    const events = plan.flatMap(([t, onA, onB]) => eventsOf(tracker.observePoll([sample(a, t, onA), sample(b, t, onB, 30)])))
    assert.deepEqual(events.map((e) => [e.kind, e.node]), [
      ['episode-start', a],
      ['episode-start', b],
      ['episode-end', a],
      ['episode-end', b],
    ])
    const summary = tracker.summary()
    const ofNode = (node: string) => summary.episodes.find((e) => e.node === node)!
    assert.equal(ofNode(a).durationMS, 2000)
    assert.equal(ofNode(b).durationMS, 3000)
    assert.equal(ofNode(b).firstSeenAt, at(32).toISOString(), "on b's clock")
    assert.notEqual(ofNode(a).id, ofNode(b).id)
    assert.deepEqual(summary.nodes.map((n) => [n.node, n.episodes, n.blockedMS, n.worstEpisode?.rootOpid]), [
      [a, 1, 2000, 202],
      [b, 1, 3000, 101],
    ])
  })

  it('a waiter with no visible blocker opens an episode with no root; the blocker seen later is a root change', () => {
    const [query, dbstats] = pastebinFGjTrnC5 as Doc[]
    const holder: Doc = {opid: 1, active: true, desc: 'conn5', op: 'command', ns: 'db.collection', command: {compact: 'collection'}, locks: {Global: 'w', MMAPV1Journal: 'W'}, waitingForLock: false}
    const {tracker, events} = watch(NODE, [
      [0, [dbstats!]],
      [1, [query!, dbstats!]],
      [2, [query!, dbstats!, holder]],
      [3, [dbstats!]],
    ])
    assert.deepEqual(events.map((e) => e.kind), ['episode-start', 'episode-update', 'episode-end'])
    const start = events[0]!
    assert.equal(start.root, null)
    assert.equal(start.kind === 'episode-start' && start.waiters, 1)
    const [episode] = tracker.summary().episodes
    assert.deepEqual(episode!.roots.map((r) => r.root?.opid ?? null), [null, 1])
    // Wanted IS at the first poll; the holder's X seen at the second joins the same resource.
    assert.deepEqual(start.kind === 'episode-start' && start.resources, [{type: 'MMAPV1Journal', name: null, blockerModes: [], waiterModes: ['IS']}])
    assert.deepEqual(episode!.resources, [{type: 'MMAPV1Journal', name: null, blockerModes: ['X'], waiterModes: ['IS']}])
    assert.equal(episode!.durationMS, 2000)
    assert.equal(nodeLockEpisodeEventText(start, undefined, UTC_TIME), `12:00:01 BLOCKING  ${NODE} no visible blocker: 1 waiter waits (MMAPV1Journal IS wanted)`)
    assert.equal(nodeLockEpisodeEventText(start, {width: 80}, UTC_TIME), `12:00:01 BLOCKING  ${NODE} no visible blocker: 1 waiter waits`, 'the detail goes first')
  })

  it('sums wait rates per node, resource and mode over the watch; a restart interval adds nothing', () => {
    // Collection r waits (count, microseconds) at each poll; the last poll's counters went down (a restart).
    const counters: Array<[number, number]> = [[10, 1_000], [13, 4_000], [13, 4_000], [20, 11_500], [2, 100]]
    const statusAt = ([waits, micros]: [number, number]) => ({uptime: 1000, locks: {Collection: {acquireCount: {r: 1000}, acquireWaitCount: {r: waits}, timeAcquiringMicros: {r: micros}}}})
    const tracker = new NodeLockEpisodeTracker()
    const records = counters.map((c, i) =>
      tracker.observe({
        at: at(i),
        node: NODE,
        view: nodeLocksView({node: NODE, currentOp: quiet(), serverStatus: statusAt(c), ...(i === 0 ? {} : {previous: {serverStatus: statusAt(counters[i - 1]!), intervalMS: 1000}})}),
      }).rates,
    )
    assert.equal(records[0], null, 'no interval before the first sample')
    assert.deepEqual(records[1]?.rows.map((r) => [r.resource, r.mode, r.waits, r.waitedMicros]), [['Collection', 'r', counters[1]![0] - counters[0]![0], counters[1]![1] - counters[0]![1]]])
    assert.equal(records[4]?.reset, true)
    const [total] = tracker.summary().waitRates
    const goodIntervals = 3
    assert.equal(total!.waits, counters[3]![0] - counters[0]![0])
    assert.equal(total!.waitedMicros, counters[3]![1] - counters[0]![1])
    assert.equal(total!.waitsPerSecond, total!.waits / goodIntervals)
    assert.equal(total!.meanWaitMicros, total!.waitedMicros / total!.waits)
    assert.deepEqual([tracker.summary().nodes[0]!.rateIntervalMS, tracker.summary().nodes[0]!.resetIntervals], [goodIntervals * 1000, 1])
    assert.equal(nodeLockWaitRatesText(records[2]!), null, 'a quiet interval prints nothing')
    assert.match(nodeLockWaitRatesText(records[1]!, {width: 80}, UTC_TIME)!, /^12:00:01 WAITS {5}rs0-a\.example\.net:27017 Collection r 3 \(3\.00ms\) over 1\.0s$/)
  })

  it('lists at most maxEpisodesKept episodes and counts the rest', () => {
    assert.equal(MAX_EPISODES_KEPT, 10_000)
    const polls: Array<[number, Doc[]]> = []
    for (let i = 0; i < 6; i++) polls.push([i, i % 2 === 0 ? quiet() : buildHoldsWithTwoWaiters()])
    const {tracker} = watch(NODE, polls, new NodeLockEpisodeTracker({maxEpisodesKept: 2}))
    const summary = tracker.summary()
    assert.equal(summary.episodes.length, 2)
    assert.deepEqual([summary.episodesTotal, summary.episodesNotKept, summary.nodes[0]!.episodes], [3, 1, 3])
    assert.match(nodeLockEpisodesSummaryText(summary), /3 on 1 node \(1 still open\); 1 beyond the first 2 are counted/)
  })
})

describe('blocking episode text', () => {
  const layout = {width: 80}
  const scenario = () =>
    watch(NODE, [
      [0, quiet()],
      [1, readBlocksBuild()],
      [2, aged(buildHoldsWithTwoWaiters(), 1)],
      [6.3, quiet()],
    ])

  it('one line per event, within 80 columns: BLOCKING, NEW ROOT, UNBLOCKED with the duration and its bounds', () => {
    const {events} = scenario()
    const lines = events.map((e) => nodeLockEpisodeEventText(e, layout, UTC_TIME))
    for (const line of lines) {
      assert.ok(stringWidth(line) <= 80, line)
      assert.equal(line.includes('\n'), false)
    }
    assert.match(lines[0]!, /^12:00:01 BLOCKING  rs0-a\.example\.net:27017 opid 101 \(.*\) blocks 3 waiters$/)
    assert.match(lines[1]!, /^12:00:02 NEW ROOT  rs0-a\.example\.net:27017 opid 202 .*blocks 2 waiters \(was 101\)$/)
    const end = events[2]!
    assert.equal(end.kind, 'episode-end')
    if (end.kind !== 'episode-end') return
    const endLine = `12:00:06 UNBLOCKED ${NODE} opid 202 after ${formatAgeMs(5300)} (${formatAgeMs(1000)}–${formatAgeMs(6300)})`
    assert.equal(nodeLockEpisodeEventText(end, undefined, UTC_TIME), `${endLine}, peak 3 waiters`)
    assert.equal(lines[2], endLine, 'at 80 columns the peak (the start line said it) goes before the node is cut')
    // Unlimited width: the root's detail whole, the resource and its blocker's mode named.
    assert.match(nodeLockEpisodeEventText(events[0]!, undefined, UTC_TIME), /opid 101 \(conn41 app nightly-report find test\.orders, Collection test\.orders IS\) blocks 3 waiters$/)
  })

  it("escapes a hostile appName and keeps the line one line; the detail is cut before the node's name", () => {
    const hostile = '\u001b]0;owned\u0007\n12:00:09 UNBLOCKED everything is fine \u202e'
    const node = 'rs-with-a-rather-long-name/mongodb-node-0.orders.internal.example.net:27017'
    const docs = buildHoldsWithTwoWaiters().map((d) => (d.opid === 202 ? {...d, appName: hostile} : d))
    const {events} = watch(node, [
      [0, quiet()],
      [1, docs],
    ])
    const wide = nodeLockEpisodeEventText(events[0]!, undefined, UTC_TIME)
    const narrow = nodeLockEpisodeEventText(events[0]!, layout, UTC_TIME)
    for (const line of [wide, narrow]) {
      // eslint-disable-next-line no-control-regex
      assert.equal(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/.test(line), false, JSON.stringify(line))
    }
    assert.ok(wide.includes('app \\x1b]0;owned\\x07\\x0a12:00:09 UNBLOCKED everything is fine \\u202e'), wide)
    assert.ok(stringWidth(narrow) <= 80, narrow)
    assert.ok(wide.includes(`${node} opid 202 (IndexBuildsCoordinatorMongod-0 app `), wide)
    assert.ok(narrow.startsWith(`12:00:01 BLOCKING  ${node.slice(0, 30)}`), narrow)
    assert.equal(narrow.includes('app '), false, 'the detail went before the node was cut')
    assert.ok(narrow.endsWith('… opid 202 blocks 2 waiters'), 'what the event says survives the cut')
  })

  it('the summary text: per node totals and the waits', () => {
    const {tracker} = scenario()
    const text = nodeLockEpisodesSummaryText(tracker.summary(), layout)
    assert.match(text, /blocking episodes: 1 on 1 node/)
    assert.ok(text.includes(formatAgeMs(5300)))
    for (const line of text.split('\n')) assert.ok(stringWidth(line) <= 80, line)
  })
})

describe('blocking episodes in the HTML timeline', () => {
  it('one lane per node and resource, one bar per episode, an open one striped to the end; hostile strings escaped', () => {
    const tracker = new NodeLockEpisodeTracker()
    const hostileNs = 'test.<img src=x onerror=alert(1)>'
    const hostile = buildHoldsWithTwoWaiters().map((d) => ({...d, ns: hostileNs}))
    for (const [t, docs] of [[0, quiet()], [1, buildHoldsWithTwoWaiters()], [3, quiet()], [4, hostile], [5, hostile]] as Array<[number, Doc[]]>) tracker.observe(sample(NODE, t, docs))
    const timeline = nodeLockEpisodeTimeline(tracker.summary().episodes, {startAt: at(0).toISOString(), endAt: at(6).toISOString()})
    assert.equal(timeline.endS, 6)
    assert.deepEqual(timeline.locks.map((l) => l.name), [`${NODE} · Collection test.orders`, `${NODE} · Collection ${hostileNs}`])
    const [closed] = timeline.locks[0]!.holds
    assert.deepEqual([closed!.fromS, closed!.toS, closed!.open, closed!.betweenPolls], [1, 3, false, false])
    assert.match(closed!.holder, /^opid 202 .* peak 2 waiters · 2\.0 s \(0\.0–3\.0 s\)$/)
    const [open] = timeline.locks[1]!.holds
    assert.deepEqual([open!.fromS, open!.toS, open!.open], [4, 6, true])
    const html = renderLocksHtml({title: 't', sources: [], ...timeline}, {script: '', css: ''})
    assert.equal(html.includes('<img src=x'), false)
    assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'))
    assert.ok(html.includes('class="hold open"'))
  })

  it("an idle transaction's episode (DOCS-11564's document): one episode across polls, named by its session", () => {
    const worker: Doc = {opid: 9100, desc: 'fsyncLockWorker', op: 'none', active: true, waitingForLock: true, microsecs_running: 3_000_000, locks: {Global: 'R'}}
    const idle = (): Doc[] => [{...inactiveTransactionDocs11564} as Doc, worker]
    const tracker = new NodeLockEpisodeTracker()
    for (const [t, docs] of [[0, quiet()], [1, idle()], [2, idle()], [3, quiet()]] as Array<[number, Doc[]]>) tracker.observe(sample(NODE, t, docs))
    const {episodes} = tracker.summary()
    assert.deepEqual(episodes.map((e) => e.root?.opid), ['lsid:eb347736-8c7e-4ca7-8c7b-a43b8e61cd16'])
    const timeline = nodeLockEpisodeTimeline(episodes, {startAt: at(0).toISOString(), endAt: at(4).toISOString()})
    assert.match(timeline.locks[0]!.holds[0]!.holder, /^opid \(none: session eb347736-8c7e-4ca7-8c7b-a43b8e61cd16\) inactive transaction · peak 1 waiter/)
  })
})
