/**
 * How stop requests are counted: GNU timeout signals the command and then its
 * whole process group, so the same signal twice at once is one request, not
 * the "second signal" that skips cleanup.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {EXIT_CODE_OF_STOP, StopSignals} from '../../src/cli/stop-signals.js'

describe('stop signals', () => {
  it('the same signal delivered twice at once is one stop request', () => {
    const said: string[] = []
    const stops = new StopSignals((line) => said.push(line))
    stops.stop('SIGTERM')
    stops.stop('SIGTERM')
    assert.equal(stops.graceful.aborted, true)
    assert.equal(stops.force.aborted, false, 'cleanup still runs')
    assert.equal(stops.exitCode, 143)
    assert.equal(said.length, 1, said.join('\n'))
  })

  it('a closed stdout stops quietly with 141 and never forces', () => {
    const said: string[] = []
    const stops = new StopSignals((line) => said.push(line))
    stops.stop('EPIPE')
    stops.stop('EPIPE')
    assert.equal(stops.graceful.aborted, true)
    assert.equal(stops.force.aborted, false)
    assert.equal(stops.exitCode, EXIT_CODE_OF_STOP.EPIPE)
    assert.deepEqual(said, [])
  })

  it('names the cause and the command\'s own words for its stop', () => {
    const said: string[] = []
    const stops = new StopSignals((line) => said.push(line), () => 'stopping the embedded cluster')
    stops.stop('SIGHUP')
    assert.equal(stops.exitCode, 129)
    assert.match(said[0]!, /SIGHUP received: stopping the embedded cluster/)
  })
})
