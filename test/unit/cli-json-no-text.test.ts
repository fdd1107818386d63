/**
 * Under --json the text report is never rendered: its layout (a table over thousands of locks)
 * costs nothing there. Without --json it is rendered once and printed.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {BaseCommand} from '../../src/cli/base-command.js'
import {runCommandsInProcess} from '../../src/cli/process-owner.js'
import {REPO_ROOT} from '../helpers/cli.js'

// The commands run here return; they must not arm BaseCommand's exit watchdog, which would end this
// process (and every test still running in it) shortly after.
runCommandsInProcess()

let renders = 0

class Probe extends BaseCommand<typeof Probe> {
  static override enableJsonFlag = true
  async run(): Promise<{answer: number}> {
    const result = {answer: 42}
    this.logText(() => {
      renders += 1
      return `answer ${result.answer}`
    })
    return result
  }
}

describe('logText', () => {
  it('renders nothing under --json, and once without it', async () => {
    const written: string[] = []
    const write = process.stdout.write.bind(process.stdout)
    // Text only: the test runner reports to its parent over this same stdout in serialized Buffers, also
    // while this test runs (a test of another file in this process ending). Swallowed here, those tests
    // would go unreported, and no count would say so.
    process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'string') return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
      written.push(chunk)
      return true
    }) as typeof process.stdout.write
    try {
      renders = 0
      await Probe.run(['--json'], REPO_ROOT)
      assert.equal(renders, 0, 'the text was rendered under --json')
      await Probe.run([], REPO_ROOT)
      assert.equal(renders, 1)
    } finally {
      process.stdout.write = write
    }
    assert.ok(written.some((w) => w.includes('"answer": 42')), written.join(''))
    assert.ok(written.some((w) => w.includes('answer 42\n')), written.join(''))
  })
})
