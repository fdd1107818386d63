/**
 * `--version` without oclif (src/cli/version.ts): the line bin/run.js prints itself must be the
 * one oclif prints (its Config's userAgent), and every invocation oclif would answer with more
 * than that line (a debug stream, a warning) must go to oclif.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import {describe, it} from 'node:test'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {Config} from '@oclif/core'

import {answersWithVersionLine, userAgent} from '../../src/cli/version.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

describe('--version without oclif', () => {
  it("prints oclif's own user agent line", async () => {
    const config = await Config.load(ROOT)
    assert.equal(await userAgent(pathToFileURL(path.join(ROOT, 'package.json'))), config.userAgent)
  })

  it('answers only the invocations oclif answers with that line alone', () => {
    assert.equal(answersWithVersionLine(['--version'], {}), true)
    assert.equal(answersWithVersionLine(['-v'], {}), true)
    // oclif's rule: a version flag counts only as the first argument (else it is a command's flag).
    assert.equal(answersWithVersionLine(['sim', '--version-profile', '4.4'], {}), false)
    assert.equal(answersWithVersionLine(['version'], {}), false)
    assert.equal(answersWithVersionLine([], {}), false)
    // What adds lines on stderr stays with oclif and src/cli/main.ts.
    assert.equal(answersWithVersionLine(['--version', '--debug'], {}), false)
    assert.equal(answersWithVersionLine(['--version'], {DEBUG: '*'}), false)
    assert.equal(answersWithVersionLine(['--version'], {MONGODB_LOG_ALL: 'debug'}), false)
    assert.equal(answersWithVersionLine(['--version'], {NODE_ENV: 'development'}), false)
  })
})
