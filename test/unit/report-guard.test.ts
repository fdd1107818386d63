/**
 * The guard the grouped test processes start with (test/helpers/report-guard.mjs): a test that replaces
 * stdout's write to capture text must not swallow the test runner's reports (Buffers) of other files'
 * tests running in the same process. Checked on a stand-in stream, so this process's own reports are untouched.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {guardReports} from '../helpers/report-guard.mjs'

function standInStream() {
  const reachedRunner: unknown[] = []
  const stream = {
    write(chunk: unknown) {
      reachedRunner.push(chunk)
      return true
    },
  }
  guardReports(stream)
  return {stream, reachedRunner}
}

describe('the report guard of grouped test processes', () => {
  it('gives a capturing test the text and the runner its Buffers', () => {
    const {stream, reachedRunner} = standInStream()
    const captured: string[] = []
    const restore = stream.write
    stream.write = (chunk: unknown) => {
      captured.push(String(chunk))
      return true
    }
    stream.write('a line of the command\n')
    const report = Buffer.from([0xff, 0x0d, 0x01])
    stream.write(report)
    assert.deepEqual(captured, ['a line of the command\n'])
    assert.deepEqual(reachedRunner, [report])
    stream.write = restore
    stream.write('after the test\n')
    assert.deepEqual(reachedRunner, [report, 'after the test\n'], 'restored: text reaches the stream again')
  })

  it('keeps the guard through a capture made from a bound copy, as tests restore them', () => {
    const {stream, reachedRunner} = standInStream()
    const saved = stream.write.bind(stream)
    const captured: string[] = []
    stream.write = (chunk: unknown) => {
      captured.push(String(chunk))
      return true
    }
    stream.write = saved
    stream.write = (chunk: unknown) => {
      captured.push(String(chunk))
      return true
    }
    stream.write(Buffer.from('report'))
    stream.write('text')
    assert.deepEqual(captured, ['text'])
    assert.equal(reachedRunner.length, 1)
  })
})
