/**
 * docs/kubernetes.md shows the steps `bench --emit k8s-job` prints, verbatim for one run id: the
 * doc and the command must not drift apart (the steps themselves are run in
 * test/cli/k8s-walkthrough.test.ts).
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'

import {collectSteps, DEFAULT_URI_SECRET} from '../../src/bench/k8s-job.js'

const root = path.resolve(import.meta.dirname, '../..')

describe('docs/kubernetes.md', () => {
  it('shows the steps bench --emit k8s-job prints, line for line', () => {
    const doc = readFileSync(path.join(root, 'docs/kubernetes.md'), 'utf8')
    const marker = doc.indexOf('<!-- The block below is what bench --emit k8s-job prints')
    assert.ok(marker >= 0, 'the marked block is in the doc')
    const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(marker))
    assert.ok(block, 'a sh block follows the marker')
    const printed = collectSteps({runId: '1a2b3c4d', image: 'registry.example/pooltool:0.1.0', uriSecret: DEFAULT_URI_SECRET})
    assert.deepEqual(block[1]!.trimEnd().split('\n'), printed)
  })

  it('the README points to it', () => {
    assert.match(readFileSync(path.join(root, 'README.md'), 'utf8'), /\(docs\/kubernetes\.md\)/)
  })
})
