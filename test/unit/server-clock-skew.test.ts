/** The server's clock against this machine's: reported once a skew is past the noise of a round trip. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {clockSkewMS, clockSkewNote, SKEW_REPORT_MS} from '../../src/probes/server-clock-skew.js'

describe('clock skew', () => {
  const receivedAt = new Date('2024-05-01T10:00:00.100Z')

  test('server time against the middle of the round trip', () => {
    assert.equal(clockSkewMS({serverTime: new Date('2024-05-01T10:00:30.050Z'), receivedAt, durationMS: 100}), 30_000)
    assert.equal(clockSkewMS({serverTime: new Date('2024-05-01T09:58:00.050Z'), receivedAt, durationMS: 100}), -120_000)
  })

  test('no server clock in the reply: unknown, not zero', () => {
    assert.equal(clockSkewMS({receivedAt, durationMS: 3}), undefined)
    assert.equal(clockSkewNote('h:1', undefined), undefined)
  })

  test('a skew below the threshold is no finding; above, one line naming the host and the direction', () => {
    assert.equal(clockSkewNote('h:1', SKEW_REPORT_MS - 1), undefined)
    assert.match(clockSkewNote('h:1', 30_000)!, /^h:1's clock is 30\.0 s ahead of this machine's/)
    assert.match(clockSkewNote('h:1', -120_000)!, /120\.0 s behind/)
  })
})
