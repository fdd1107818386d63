/**
 * NO_COLOR (no-color.org) and --no-color: the spinner, the one colored thing pooltool draws, loses its
 * color. FORCE_COLOR stands in for a color terminal, as a child process's stderr is not one.
 */
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import path from 'node:path'
import {describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

import {colorAllowed} from '../../src/reporters/color.js'
import {REPO_ROOT} from '../helpers/cli.js'

/** SGR color codes: ESC [ 30–37 / 90–97 m and friends (not cursor movement, which a live line needs). */
const COLOR = /\u001B\[(3|9)\dm/

function drawn(env: NodeJS.ProcessEnv): string {
  const script = path.join(REPO_ROOT, 'test/unit/fixtures/progress-colors.ts')
  const clean = {...process.env, FORCE_COLOR: undefined, NO_COLOR: undefined, ...env}
  return JSON.parse(execFileSync(process.execPath, ['--import', fileURLToPath(new URL('../helpers/ts-loader.mjs', import.meta.url)), script], {cwd: REPO_ROOT, env: clean as NodeJS.ProcessEnv, encoding: 'utf8'})) as string
}

describe('color', () => {
  it('the spinner is colored on a color terminal, and not with NO_COLOR', () => {
    assert.match(drawn({FORCE_COLOR: '1'}), COLOR, 'the spinner draws in color where it may')
    assert.doesNotMatch(drawn({FORCE_COLOR: '1', NO_COLOR: '1'}), COLOR)
  })

  it('NO_COLOR counts when set to anything but the empty string', () => {
    assert.equal(colorAllowed({}), true)
    assert.equal(colorAllowed({NO_COLOR: ''}), true)
    assert.equal(colorAllowed({NO_COLOR: '1'}), false)
    assert.equal(colorAllowed({NO_COLOR: '0'}), false)
  })
})
