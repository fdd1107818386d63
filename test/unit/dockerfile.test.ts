/**
 * The image `bench --emit k8s-job` runs is built from the Dockerfile, which cannot be built here (no
 * Docker): read it instead. Its runtime stage must hold everything package.json "files" publishes
 * (an image without oclif.manifest.json starts, but oclif then loads every command module to find
 * the commands), and its build stage must copy what the build compiles, none of it left out of the
 * build context by .dockerignore.
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'

const root = path.resolve(import.meta.dirname, '../..')
const read = (file: string) => readFileSync(path.join(root, file), 'utf8')

interface Copy {
  from?: string
  sources: string[]
  dest: string
}

/** The Dockerfile's stages (from each FROM), each with its COPY instructions and RUN lines. */
function stagesOf(text: string): Array<{from: string; copies: Copy[]; runs: string[]}> {
  const stages: Array<{from: string; copies: Copy[]; runs: string[]}> = []
  const lines = text.replaceAll(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
  for (const line of lines) {
    const [instruction, ...words] = line.split(/\s+/)
    if (instruction === 'FROM') stages.push({from: words.join(' '), copies: [], runs: []})
    else if (instruction === 'COPY') {
      const options = words.filter((w) => w.startsWith('--'))
      const paths = words.filter((w) => !w.startsWith('--'))
      const from = options.find((o) => o.startsWith('--from='))?.slice('--from='.length)
      stages.at(-1)!.copies.push({...(from ? {from} : {}), sources: paths.slice(0, -1), dest: paths.at(-1)!})
    } else if (instruction === 'RUN') stages.at(-1)!.runs.push(words.join(' '))
  }
  return stages
}

/** Where each source lands, relative to WORKDIR /app: `COPY a b` → b; `COPY a/x ./` → x. */
function landed(copy: Copy): string[] {
  return copy.sources.map((source) => {
    const base = path.posix.basename(source)
    if (copy.dest === '.' || copy.dest === './' || copy.dest.endsWith('/')) return path.posix.normalize(path.posix.join(copy.dest, base))
    return path.posix.normalize(copy.dest)
  })
}

/** A .dockerignore pattern (the plain names and `*` globs this one uses) that leaves `source` out of the context. */
function ignores(pattern: string, source: string): boolean {
  const regex = new RegExp(`^${pattern.split('*').map((part) => part.replaceAll(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}(/.*)?$`)
  return regex.test(source) || regex.test(path.posix.basename(source))
}

describe('Dockerfile', () => {
  const stages = stagesOf(read('Dockerfile'))
  const pkg = JSON.parse(read('package.json')) as {files: string[]; scripts: Record<string, string>}
  const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))

  it('has a build stage and a runtime stage', () => {
    assert.equal(stages.length, 2, JSON.stringify(stages.map((s) => s.from)))
    assert.match(stages[0]!.from, / AS build$/)
  })

  it('the runtime stage holds every file package.json "files" lists, and the production dependencies', () => {
    const runtime = stages.at(-1)!
    const present = new Set(runtime.copies.flatMap(landed))
    for (const file of [...pkg.files, 'package.json', 'node_modules']) assert.ok(present.has(file), `${file} is not copied into the runtime stage (copied: ${[...present].join(', ')})`)
    for (const copy of runtime.copies) assert.equal(copy.from, 'build', `the runtime stage copies only from the build stage: ${copy.sources.join(' ')}`)
  })

  it('the build stage copies what the build reads, none of it ignored by .dockerignore, and builds the manifest', () => {
    const build = stages[0]!
    const sources = build.copies.filter((c) => c.from === undefined).flatMap((c) => c.sources)
    const tsconfig = JSON.parse(read('tsconfig.json')) as {include: string[]}
    const compiled = tsconfig.include.map((glob) => glob.split('/')[0]!)
    for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'bin', ...compiled]) assert.ok(sources.includes(needed), `the build stage does not copy ${needed}`)
    for (const source of sources) {
      const pattern = ignored.find((p) => ignores(p, source))
      assert.equal(pattern, undefined, `${source} is copied but .dockerignore leaves it out of the context (${pattern})`)
    }
    assert.ok(build.runs.some((run) => run.includes('npm run build')), 'the build stage runs npm run build')
    assert.match(pkg.scripts.build!, /bin\/manifest\.js/, 'npm run build writes oclif.manifest.json')
    // A manifest from the checkout would describe whatever was last built there, not this image.
    assert.ok(ignored.includes('oclif.manifest.json'), '.dockerignore keeps the checkout\'s own manifest out')
  })
})
