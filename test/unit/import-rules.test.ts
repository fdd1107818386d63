/**
 * The import checker (`npm run lint:imports`: test/check-imports.mjs with .dependency-cruiser.cjs) fails
 * where it should. A small tree in a temporary folder plants one of each breach — an upward import, a
 * reach past a part's door, a circle — beside imports that keep the rules, and the checker must exit
 * non-zero naming each broken rule and none of the kept ones.
 */
import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

const CHECKER = fileURLToPath(new URL('../check-imports.mjs', import.meta.url))

const TREE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({compilerOptions: {module: 'Node16', moduleResolution: 'Node16', strict: true}, include: ['src/**/*']}),
  // Kept: downward (features → metrics, reporters → features) and through the door.
  'src/metrics/format.ts': `export const formatCount = (n: number): string => String(n)\n`,
  'src/bench/rate.ts': `import {formatCount} from '../metrics/format.js'\nexport const rate = formatCount(1)\n`,
  'src/reporters/bench.ts': `import {rate} from '../bench/rate.js'\nexport const line = rate\n`,
  'src/sim/host.ts': `export const startSimCluster = (): number => 1\n`,
  'src/sim/index.ts': `export {startSimCluster} from './host.js'\n`,
  'src/target.ts': `import {startSimCluster} from './sim/index.js'\nexport const target = startSimCluster()\n`,
  // Planted: a measurement that imports a reporter (upward).
  'src/metrics/planted-upward.ts': `import {line} from '../reporters/bench.js'\nexport const planted = line\n`,
  // Planted: the CLI reaching past the embedded cluster's door.
  'src/cli/planted-door.ts': `import {startSimCluster} from '../sim/host.js'\nexport const planted = startSimCluster()\n`,
  // Planted: two files that import each other.
  'src/conns/planted-a.ts': `import {b} from './planted-b.js'\nexport const a = (): number => b() + 1\n`,
  'src/conns/planted-b.ts': `import {a} from './planted-a.js'\nexport const b = (): number => a() - 1\n`,
}

describe('import rules checker', () => {
  let dir: string
  let result: {code: number; stdout: string}

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pooltool-import-rules-'))
    for (const [file, text] of Object.entries(TREE)) {
      await mkdir(path.dirname(path.join(dir, file)), {recursive: true})
      await writeFile(path.join(dir, file), text)
    }
    result = await new Promise((resolve) => {
      execFile(process.execPath, [CHECKER, '--base', dir, 'src'], (error, stdout, stderr) => {
        resolve({code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout: stdout + stderr})
      })
    })
  })

  after(async () => {
    if (dir) await rm(dir, {recursive: true, force: true})
  })

  it('exits non-zero when a rule is broken', () => {
    assert.equal(result.code, 1, result.stdout)
  })

  it('names the upward import and its rule', () => {
    assert.match(result.stdout, /no-upward-import-from-base: src\/metrics\/planted-upward\.ts → src\/reporters\/bench\.ts/)
  })

  it('names the import past the door and its rule', () => {
    assert.match(result.stdout, /one-door-sim: src\/cli\/planted-door\.ts → src\/sim\/host\.ts/)
  })

  it('names the circle', () => {
    assert.match(result.stdout, /no-circular: src\/conns\/planted-(a|b)\.ts/)
  })

  it('reports nothing about the imports that keep the rules', () => {
    for (const kept of ['src/bench/rate.ts', 'src/reporters/bench.ts', 'src/target.ts']) {
      assert.ok(!result.stdout.includes(`: ${kept} →`), `${kept} reported:\n${result.stdout}`)
    }
  })
})
