/** `locks watch` under faults, without a cluster: how a failed poll is classified and shown, and the locks flags that are user mistakes. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {PoolToolError} from '../../src/errors.js'
import {classifyPollFailure} from '../../src/locks/poll-failure.js'
import type {LocksWatchResult} from '../../src/locks/types.js'
import {FAILED_POLLS_NOTE} from '../../src/locks/watch.js'
import {expiryMsOf, toLockFilter} from '../../src/parse/lock-filter.js'
import {UTC_TIME} from '../../src/reporters/time-of-day.js'
import {renderLockPollFailure, renderLocksWatch} from '../../src/reporters/locks.js'

const context = {target: 'mongodb://<credentials>@r1:27017/', secrets: ['s3cret'], timeoutMs: 800, timedOut: false}

const driverError = (name: string, message: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(message), {name, ...extra})

describe('a failed locks poll', () => {
  it('is unreachable for a refused connection, even when the poll timer ran out meanwhile', () => {
    const refused = driverError('MongoServerSelectionError', 'connect ECONNREFUSED 127.0.0.1:27017')
    assert.equal(classifyPollFailure(refused, context).reason, 'unreachable')
    assert.equal(classifyPollFailure(refused, {...context, timedOut: true}).reason, 'unreachable')
  })
  it('is a timeout when the poll ran out of --timeout-ms, and says which bound', () => {
    const aborted = driverError('MongoOperationTimeoutError', 'Timed out during socket read (undefinedms)')
    const failure = classifyPollFailure(aborted, {...context, timedOut: true})
    assert.equal(failure.reason, 'timeout')
    assert.equal(failure.error, 'no answer within 800 ms (--timeout-ms): Timed out during socket read')
  })
  it('is unreachable when the router cannot reach the config server (HostUnreachable), unauthorized for a lost privilege', () => {
    assert.equal(classifyPollFailure(driverError('MongoServerError', "Couldn't get a connection", {code: 6, codeName: 'HostUnreachable'}), context).reason, 'unreachable')
    assert.equal(classifyPollFailure(driverError('MongoServerError', 'not authorized on config to execute command { find: "locks" }', {code: 13}), context).reason, 'unauthorized')
    assert.equal(classifyPollFailure(driverError('MongoServerError', 'interrupted', {code: 11601, codeName: 'Interrupted'}), context).reason, 'server-error')
  })
  it('keeps the error text with the credentials redacted', () => {
    const failure = classifyPollFailure(driverError('MongoNetworkError', 'connection to mongodb://u:s3cret@r1:27017/ closed'), context)
    assert.equal(failure.reason, 'unreachable')
    assert.equal(failure.error.includes('s3cret'), false)
  })
  it('throws a bug on instead of hiding it as a failed poll', () => {
    assert.throws(() => classifyPollFailure(new TypeError('cannot read properties of undefined'), context), TypeError)
  })
})

describe('locks watch output with failed polls', () => {
  const result: LocksWatchResult = {
    target: {uri: 'mongodb://r1:27017/', source: '--uri', simulated: false},
    serverVersion: '6.0.20',
    model: 'config.locks',
    message: '',
    durationMS: 2000,
    intervalMS: 200,
    polls: 10,
    failedPolls: 3,
    failedPollsByReason: {unreachable: 1, timeout: 2, unauthorized: 0, 'server-error': 0},
    pollFailures: [{at: '2026-01-01T00:00:00.000Z', poll: 4, reason: 'timeout', error: 'no answer within 800 ms (--timeout-ms): Timed out during socket read'}],
    pollTimeoutMS: 800,
    events: [],
    locks: [],
    notes: [FAILED_POLLS_NOTE],
    interrupted: false,
  }
  it('prints one line per failed poll, the counts by reason in the summary, and the notes', () => {
    assert.equal(renderLockPollFailure(result.pollFailures[0]!, UTC_TIME), '00:00:00.000 poll 4 failed (timeout): no answer within 800 ms (--timeout-ms): Timed out during socket read; the watch goes on')
    const text = renderLocksWatch(result)
    assert.match(text, /^10 polls \(3 failed: 1 unreachable, 2 timeout\) every 200ms over 2\.0s/)
    assert.match(text, /\nnote: transitions during failed polls show at the next poll that answered/)
  })
})

describe('locks flags that are user mistakes', () => {
  const usage = (message: RegExp) => (error: unknown) => error instanceof PoolToolError && error.exitCode === 2 && message.test(error.message)
  it('refuses an empty --db, a --ns without a collection, a zero --lock-expiry', () => {
    assert.throws(() => toLockFilter({db: ''}), usage(/--db is empty/))
    assert.throws(() => toLockFilter({ns: 'orders'}), usage(/not a namespace/))
    assert.throws(() => toLockFilter({ns: 'orders.'}), usage(/not a namespace/))
    assert.throws(() => toLockFilter({db: 'a/b'}), usage(/not a database name/))
    assert.throws(() => expiryMsOf({'lock-expiry': 0}), usage(/above zero/))
    assert.deepEqual(toLockFilter({db: 'orders', ns: 'orders.items'}), {db: 'orders', ns: 'orders.items'})
  })
})
