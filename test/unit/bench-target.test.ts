/**
 * Honest targets (issue 26): which cluster a command measures is always the one asked for. A set-but-empty
 * POOLTOOL_URI or MONGODB_URI is refused as an empty --uri is; a --fail-on gate never runs on the embedded
 * cluster unless --sim asks for it; --sim and --uri are exclusive. All decided before any cluster starts.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {GATE_NEEDS_EXPLICIT_TARGET} from '../../src/bench/fail-on.js'
import {chooseTarget, resolveTarget} from '../../src/target.js'

type Refusal = Error & {code?: string; exitCode?: number; hint?: string}
const usage = (pattern: RegExp, hint?: RegExp) => (error: Refusal) =>
  error.code === 'USAGE' && error.exitCode === 2 && pattern.test(error.message) && (hint === undefined || hint.test(error.hint ?? ''))

describe('target choice', () => {
  it('takes the first source that is set: --uri, POOLTOOL_URI, MONGODB_URI, else the embedded cluster', () => {
    assert.deepEqual(chooseTarget({flagUri: 'mongodb://f:1', env: {POOLTOOL_URI: 'mongodb://p:1'}}), {source: '--uri', uri: 'mongodb://f:1'})
    assert.deepEqual(chooseTarget({env: {POOLTOOL_URI: 'mongodb://p:1', MONGODB_URI: 'mongodb://m:1'}}), {source: 'POOLTOOL_URI', uri: 'mongodb://p:1'})
    assert.deepEqual(chooseTarget({env: {MONGODB_URI: ' mongodb://m:1 '}}), {source: 'MONGODB_URI', uri: 'mongodb://m:1'})
    assert.deepEqual(chooseTarget({env: {}}), {source: 'embedded', ignored: []})
  })

  it('refuses a set-but-empty variable, naming it, where the embedded cluster was used before', () => {
    for (const name of ['POOLTOOL_URI', 'MONGODB_URI']) {
      for (const value of ['', ' \t']) {
        assert.throws(() => chooseTarget({env: {[name]: value}}), usage(new RegExp(`^${name} is set but empty$`), new RegExp(`unset it`)))
      }
    }
    // The first one set decides: an empty POOLTOOL_URI is not skipped for MONGODB_URI, as an empty --uri is not.
    assert.throws(() => chooseTarget({env: {POOLTOOL_URI: '', MONGODB_URI: 'mongodb://m:1'}}), usage(/^POOLTOOL_URI is set but empty$/))
    // A non-empty --uri is the choice whatever the variables hold.
    assert.equal(chooseTarget({flagUri: 'mongodb://f:1', env: {MONGODB_URI: ''}}).source, '--uri')
  })

  it('refuses an empty variable before starting anything (resolveTarget rejects, no embedded cluster)', async () => {
    const notices: string[] = []
    await assert.rejects(resolveTarget({env: {MONGODB_URI: ''}, notice: (line) => notices.push(line)}), usage(/MONGODB_URI is set but empty/))
    assert.deepEqual(notices, [], 'no embedded cluster was announced')
  })
})

describe('a --fail-on gate and --sim', () => {
  const gate = {refuseImplicitEmbedded: GATE_NEEDS_EXPLICIT_TARGET}

  it('refuses a gate on the embedded cluster nobody asked for, with a hint naming --uri and --sim', () => {
    assert.throws(() => chooseTarget({env: {}, ...gate}), usage(/--fail-on would gate a run on the embedded simulated cluster/, /--uri.*--sim/))
  })

  it('an empty variable under a gate is refused as empty, and the hint offers --sim', () => {
    assert.throws(() => chooseTarget({env: {MONGODB_URI: ''}, ...gate}), usage(/^MONGODB_URI is set but empty$/, /--sim/))
  })

  it('runs a gate where a URI is given, and on the embedded cluster with --sim', () => {
    assert.equal(chooseTarget({flagUri: 'mongodb://f:1', env: {}, ...gate}).source, '--uri')
    assert.equal(chooseTarget({env: {MONGODB_URI: 'mongodb://m:1'}, ...gate}).source, 'MONGODB_URI')
    assert.deepEqual(chooseTarget({env: {}, sim: true, ...gate}), {source: 'embedded', ignored: []})
  })

  it('--sim reads no variable (an empty one is no error; a set one is named as ignored)', () => {
    assert.deepEqual(chooseTarget({env: {MONGODB_URI: ''}, sim: true, ...gate}), {source: 'embedded', ignored: []})
    assert.deepEqual(chooseTarget({env: {POOLTOOL_URI: 'mongodb://p:1'}, sim: true}), {source: 'embedded', ignored: ['POOLTOOL_URI']})
  })

  it('--sim and --uri are exclusive', () => {
    for (const flagUri of ['mongodb://f:1', '']) {
      assert.throws(() => chooseTarget({flagUri, env: {}, sim: true}), usage(/^--sim and --uri cannot be combined$/, /--uri.*--sim/))
    }
  })
})
