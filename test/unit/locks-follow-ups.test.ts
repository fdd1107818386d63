/**
 * Hold times of `locks watch` pinned by follow-up reads (src/locks/follow-up.ts): the planner's delays and budget,
 * and the estimator (LockTransitionTracker fed the reads the watch would make) on crafted poll sequences against
 * holds whose true lengths are known. No clock is read: every time is given.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {FOLLOW_UP_FIRST_MS, FOLLOW_UPS_PER_INTERVAL, FollowUpPlanner, sawTransition, youngDdlOpRunning, youngLockHeld} from '../../src/locks/follow-up.js'
import {LockTransitionTracker} from '../../src/locks/transitions.js'
import type {DdlOpRow, LockEvent, LockRow, LocksWatchResult} from '../../src/locks/types.js'
import {renderLocksWatch} from '../../src/reporters/locks.js'

const INTERVAL = 500

function row(over: Partial<LockRow>): LockRow {
  return {
    name: 'db', state: 'locked', process: 'A', who: 'A:conn1', why: 'createCollection', since: new Date(1000).toISOString(), sinceAgeMS: 0, whenMeans: 'taken', holderLastPing: null,
    verdict: 'held', ts: 't1', heldMS: 0, holderPingAgeMS: 0, holder: null, whyKind: 'createCollection', ...over,
  }
}

interface TrueHold {
  start: number
  end: number
}

/** config.locks at `t`: the hold in force (locked), else the last one taken (unlocked, its `when` kept), else no document. */
function rowsAt(t: number, holds: readonly TrueHold[]): LockRow[] {
  let last = -1
  for (let i = 0; i < holds.length && holds[i]!.start <= t; i++) last = i
  if (last < 0) return []
  const h = holds[last]!
  const locked = t < h.end
  return [row({state: locked ? 'locked' : 'unlocked', verdict: locked ? 'held' : 'free', ts: `t${last}`, since: new Date(h.start).toISOString(), whenMeans: locked ? 'taken' : 'last-taken'})]
}

/**
 * The reads `locks watch` makes over `holds` (src/locks/watch.ts): a regular poll every interval, and after each read
 * the follow-ups the planner asks for, until the next poll is due. Reads take no time here. Returns the events and
 * how many follow-ups were read.
 */
function watchReads(holds: readonly TrueHold[], untilMs: number, followUps: boolean): {events: LockEvent[]; followUpReads: number; tracker: LockTransitionTracker} {
  const tracker = new LockTransitionTracker()
  const planner = new FollowUpPlanner(INTERVAL, 0)
  const events: LockEvent[] = []
  let followUpReads = 0
  const read = (t: number) => {
    const rows = rowsAt(t, holds)
    const seen = tracker.observe(rows, t)
    events.push(...seen)
    return {young: youngLockHeld(rows, t, planner.youngWindowMS), changed: sawTransition(seen)}
  }
  for (let at = 0; at <= untilMs; at += INTERVAL) {
    let saw = read(at)
    if (!followUps) continue
    let now = at
    let delay: number | null = null
    for (;;) {
      const next = planner.next(saw, delay, now)
      if (next === null || now + next >= at + INTERVAL) break
      now += next
      planner.spend(now)
      saw = read(now)
      followUpReads++
      delay = next
    }
  }
  return {events, followUpReads, tracker}
}

/** Each release paired with its acquisition (the hold's `when`) and the true hold that began then. */
function estimates(events: readonly LockEvent[], holds: readonly TrueHold[]): Array<{truth: number; min: number; max: number; betweenPolls: boolean}> {
  const out: Array<{truth: number; min: number; max: number; betweenPolls: boolean}> = []
  let acquiredAt: number | null = null
  for (const e of events) {
    if (e.kind === 'acquired') acquiredAt = Date.parse(e.at)
    if (e.kind !== 'released' || acquiredAt === null) continue
    const hold = holds.find((h) => h.start === acquiredAt)
    assert.ok(hold, `a true hold began at ${acquiredAt}`)
    out.push({truth: hold.end - hold.start, min: e.holdMinMS!, max: e.holdMaxMS!, betweenPolls: e.holdBetweenPolls === true})
    acquiredAt = null
  }
  return out
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!

/** A DDL workload in bursts, the same every run: holds of 20–120 ms with gaps of 30 ms to 2 s (a small LCG, seeded). */
function ddlWorkload(count: number): TrueHold[] {
  let seed = 24_25
  const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  const holds: TrueHold[] = []
  let t = 137
  for (let i = 0; i < count; i++) {
    const length = 20 + Math.floor(rand() * 100)
    holds.push({start: t, end: t + length})
    t += length + (rand() < 0.7 ? 30 + Math.floor(rand() * 120) : 500 + Math.floor(rand() * 1500))
  }
  return holds
}

describe('follow-up reads: the planner', () => {
  it('follows a new hold 50 ms later, doubles the delay while nothing changes, and starts no burst from a poll that saw nothing recent', () => {
    const planner = new FollowUpPlanner(INTERVAL, 0)
    assert.equal(planner.next({young: false, changed: false}, null, 0), null, 'a quiet read: no follow-up')
    assert.equal(planner.next({young: true, changed: true}, null, 0), FOLLOW_UP_FIRST_MS)
    planner.spend(50)
    assert.equal(planner.next({young: true, changed: false}, 50, 50), 100, 'still the same hold: twice the delay')
    planner.spend(150)
    assert.equal(planner.next({young: true, changed: false}, 100, 150), 200)
    planner.spend(350)
    assert.equal(planner.next({young: true, changed: true}, 200, 350), FOLLOW_UP_FIRST_MS, 'a new hold: back to 50 ms')
    assert.equal(planner.next({young: false, changed: false}, 50, 400), 100, 'nothing held and nothing new: the burst slows down until the poll ends it')
    assert.equal(planner.next({young: false, changed: false}, null, 900), null, 'a poll that saw nothing recent starts no burst')
    assert.equal(planner.next({young: false, changed: true}, null, 1000), FOLLOW_UP_FIRST_MS, 'taken and freed between two reads: more may follow')
  })

  it(`reads at most ${FOLLOW_UPS_PER_INTERVAL} follow-ups per interval: a busy workload waits for the budget`, () => {
    const planner = new FollowUpPlanner(INTERVAL, 0)
    let now = 0
    const delays: number[] = []
    for (let i = 0; i < FOLLOW_UPS_PER_INTERVAL + 2; i++) {
      const delay = planner.next({young: true, changed: true}, null, now)!
      delays.push(delay)
      now += delay
      planner.spend(now)
    }
    // 4 at 50 ms (the budget, spent by 200 ms; 200 ms of refill gave back 1.6 reads), then one when a whole read is back.
    assert.deepEqual(delays.slice(0, FOLLOW_UPS_PER_INTERVAL + 1), [50, 50, 50, 50, 50])
    assert.ok(delays[FOLLOW_UPS_PER_INTERVAL + 1]! > FOLLOW_UP_FIRST_MS, `the budget holds the next one back: ${delays.join(', ')}`)
    // Over a long run no more than the budget: 4 per interval, plus the first burst.
    let reads = 0
    for (now = 10_000; now < 20_000; reads++) {
      now += planner.next({young: true, changed: true}, null, now)!
      planner.spend(now)
    }
    assert.ok(reads <= (10_000 / INTERVAL) * FOLLOW_UPS_PER_INTERVAL + FOLLOW_UPS_PER_INTERVAL, `${reads} follow-ups in 10 s`)
  })

  it('only holds begun within two intervals call for follow-ups (not the balancer held for years); none at an interval of 100 ms or less', () => {
    const now = 10_000_000
    assert.equal(youngLockHeld([row({since: new Date(now - 300).toISOString()})], now, 1000), true)
    assert.equal(youngLockHeld([row({since: new Date(now - 5 * 365 * 86_400_000).toISOString(), name: 'balancer', verdict: 'balancer'})], now, 1000), false)
    assert.equal(youngLockHeld([row({state: 'unlocked', verdict: 'free', since: new Date(now - 10).toISOString()})], now, 1000), false, 'a free lock is not held')
    const op = (runningMS: number | null): DdlOpRow => ({shard: 's0', host: 'h:1', opid: '1', command: 'dropCollection', ns: 'db.c', runningMS, waitingForLock: false})
    assert.equal(youngDdlOpRunning([op(200)], 1000), true)
    assert.equal(youngDdlOpRunning([op(60_000)], 1000), false)
    assert.equal(new FollowUpPlanner(100, 0).next({young: true, changed: true}, null, 0), null)
  })
})

describe('follow-up reads: the hold estimate on crafted poll sequences', () => {
  it('a 90 ms hold seen by a poll is bounded by its follow-ups (held at 550, free at 650): 70–170 ms, where the next poll left it 20–520 ms', () => {
    const holds = [{start: 480, end: 570}]
    const without = estimates(watchReads(holds, 1000, false).events, holds)
    const withFollowUps = estimates(watchReads(holds, 1000, true).events, holds)
    assert.deepEqual(without, [{truth: 90, min: 20, max: 520, betweenPolls: false}])
    // polls at 0 and 500 (held, age 20 ms), follow-ups at 550 (held) and 650 (free)
    assert.deepEqual(withFollowUps, [{truth: 90, min: 70, max: 170, betweenPolls: false}])
  })

  it('a hold taken and freed between two polls makes the next reads come sooner, and the next hold is seen held', () => {
    const holds = [
      {start: 100, end: 140},
      {start: 530, end: 600},
    ]
    const plain = estimates(watchReads(holds, 1500, false).events, holds)
    const followed = estimates(watchReads(holds, 1500, true).events, holds)
    assert.deepEqual(plain, [
      {truth: 40, min: 0, max: 400, betweenPolls: true},
      {truth: 70, min: 0, max: 470, betweenPolls: true},
    ])
    // the poll at 500 saw the first hold's new `when`: follow-ups at 550 (the second held) and 600 (free)
    assert.deepEqual(followed, [
      {truth: 40, min: 0, max: 400, betweenPolls: true},
      {truth: 70, min: 20, max: 70, betweenPolls: false},
    ])
  })

  it('over a bursty DDL workload every hold stays between its bounds, more are seen held, and the upper bounds come down', () => {
    const holds = ddlWorkload(400)
    const until = holds.at(-1)!.end + INTERVAL
    const plain = watchReads(holds, until, false)
    const followed = watchReads(holds, until, true)
    const before = estimates(plain.events, holds)
    const after = estimates(followed.events, holds)
    for (const e of [...before, ...after]) assert.ok(e.min <= e.truth && e.truth <= e.max, `the true hold between its bounds: ${JSON.stringify(e)}`)
    const seenHeld = (list: typeof before) => list.filter((e) => !e.betweenPolls).length
    assert.ok(seenHeld(after) > seenHeld(before), `holds seen held: ${seenHeld(before)} → ${seenHeld(after)}`)
    const upper = (list: typeof before) => p50(list.map((e) => e.max))
    assert.ok(upper(after) < upper(before), `p50 of the upper bounds: ${upper(before)} → ${upper(after)} ms`)
    assert.ok(followed.followUpReads <= Math.ceil(until / INTERVAL) * FOLLOW_UPS_PER_INTERVAL, 'within the budget')
    const truth = p50(holds.map((h) => h.end - h.start))
    console.log(
      `# ${holds.length} holds, true p50 ${truth} ms; polls only: ${before.length} releases, upper p50 ${upper(before)} ms (${(upper(before) / truth).toFixed(2)}x); ` +
        `with ${followed.followUpReads} follow-ups over ${Math.ceil(until / INTERVAL)} polls: ${after.length} releases, upper p50 ${upper(after)} ms (${(upper(after) / truth).toFixed(2)}x)`,
    )
  })
})

describe('follow-up reads: the summary', () => {
  it('counts them on the first line beside the polls (failed ones too); none said when there were none', () => {
    const result = (followUps?: {reads: number; failed: number}) =>
      ({events: [], locks: [], polls: 10, failedPolls: 0, failedPollsByReason: {}, intervalMS: 500, durationMS: 5000, interrupted: false, notes: [], ...(followUps ? {followUps} : {})}) as unknown as LocksWatchResult
    assert.match(renderLocksWatch(result({reads: 12, failed: 1})), /^10 polls every 500ms \(\+ 12 follow-up reads of the locks, 1 failed\) over 5\.0s/)
    assert.match(renderLocksWatch(result({reads: 0, failed: 0})), /^10 polls every 500ms over 5\.0s/)
    assert.match(renderLocksWatch(result()), /^10 polls every 500ms over 5\.0s/)
  })
})
