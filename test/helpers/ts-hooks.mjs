// Module hooks that let the suite's processes import the TypeScript sources (test/, src/, commands/) directly,
// registered by ts-loader.mjs. Why not tsx, which did this before: each of the suite's ~250 test processes paid
// ~0.3 CPU-s to load tsx (measured 2026-11-28: `node --import tsx -e 0` 0.48 CPU-s, these hooks 0.21, bare node
// 0.11), for features the suite does not use (CommonJS hooks, tsconfig paths, watch mode). This does two things:
//   resolve: `./x.js` that does not exist resolves to `./x.ts` beside it (the sources import with .js, as tsc wants);
//   load:    a .ts file is served as esbuild's transform of it, read from a cache keyed by its content, so esbuild
//            itself loads only when a file changed. The module's URL stays the source's, so import.meta.url and
//            stack traces (inline source maps, enabled by ts-loader.mjs) point at the .ts file.
import {createHash} from 'node:crypto'
import {mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'pooltool-ts')
const TRANSFORM = {loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', tsconfigRaw: {compilerOptions: {useDefineForClassFields: true}}}
// Part of every cache key, with the file's path and content: new options or a new esbuild must not serve old output.
const TRANSFORM_KEY = JSON.stringify([TRANSFORM, JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'esbuild', 'package.json'), 'utf8')).version])

let esbuild

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (error) {
    const relative = specifier.startsWith('.') || specifier.startsWith('file:')
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !relative || !specifier.endsWith('.js')) throw error
    return nextResolve(`${specifier.slice(0, -3)}.ts`, context)
  }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  return {format: 'module', source: await compiled(fileURLToPath(url)), shortCircuit: true}
}

/** Where the transform of this version of the file is cached. */
function cacheFileOf(file, source) {
  const key = createHash('sha1').update(TRANSFORM_KEY).update('\0').update(file).update('\0').update(source).digest('hex')
  return path.join(CACHE_DIR, `${key}.js`)
}

/** The file's transform, from the cache or made now (and cached). Also used by run-tiers.mjs to fill the cache first. */
export async function compiled(file) {
  const source = readFileSync(file, 'utf8')
  const cached = cacheFileOf(file, source)
  servedEntries.add(path.basename(cached))
  try {
    return readFileSync(cached, 'utf8')
  } catch {
    esbuild ??= await import('esbuild')
    const {code} = await esbuild.transform(source, {...TRANSFORM, sourcefile: file})
    mkdirSync(CACHE_DIR, {recursive: true})
    // Written whole then renamed: a test file starting at the same moment reads the old entry or the new, never half.
    const temporary = `${cached}.${process.pid}.tmp`
    writeFileSync(temporary, code)
    renameSync(temporary, cached)
    return code
  }
}

/** A day: an entry another checkout sharing this node_modules (a git worktree linking it) made today is left to it. */
const STALE_MS = 24 * 60 * 60 * 1000

/** The cache entries this process served or made (compiled): the current transforms of the files it was asked for. */
const servedEntries = new Set()

/**
 * Removes the cache's entries this process did not serve (an edited file leaves its old transform behind) once they are
 * a day old. Returns how many went. Called by run-tiers.mjs after it filled the cache with every current file.
 */
export function pruneCache() {
  let removed = 0
  let entries = []
  try {
    entries = readdirSync(CACHE_DIR)
  } catch {
    return 0
  }
  const now = Date.now()
  for (const name of entries) {
    if (servedEntries.has(name)) continue
    const entry = path.join(CACHE_DIR, name)
    try {
      if (now - statSync(entry).mtimeMs < STALE_MS) continue
      rmSync(entry, {force: true})
      removed += 1
    } catch {
      // Gone already (another run pruned it): nothing to do.
    }
  }
  return removed
}
