/**
 * The README and docs/ as one set of pages: every relative link and image
 * points at a file of the repository, and every `#anchor` at a heading of the
 * page it names (GitHub's heading ids), so a section moved or renamed breaks
 * here instead of on a reader. The README stays a front door (at most 300
 * lines): the rest lives in docs/.
 */
import assert from 'node:assert/strict'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const PAGES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]

/** Markdown outside fenced code blocks (a link shown as code is no link). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '')
}

/** GitHub's id for a heading: lower case, punctuation but - and _ dropped, spaces to -. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

function anchorsOf(file: string): Set<string> {
  const ids = new Set<string>()
  const seen = new Map<string, number>()
  for (const match of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    ids.add(count === 0 ? base : `${base}-${count}`)
  }
  return ids
}

describe('docs', () => {
  it('the README is a front door of at most 300 lines', () => {
    const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length
    assert.ok(lines <= 300, `README.md has ${lines} lines`)
  })

  for (const page of PAGES) {
    it(`${page}: every relative link and anchor resolves`, () => {
      const file = path.join(ROOT, page)
      const broken: string[] = []
      for (const match of prose(readFileSync(file, 'utf8')).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = match[1]!
        if (/^[a-z]+:/i.test(target)) continue
        const [where, anchor] = target.split('#') as [string, string | undefined]
        const resolved = where === '' ? file : path.resolve(path.dirname(file), where)
        if (!existsSync(resolved)) broken.push(`${target}: no such file`)
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) broken.push(`${target}: no such heading`)
      }
      assert.deepEqual(broken, [])
    })
  }
})
