/**
 * --workload-file: what a file may do, checked before anything runs, and the generated values.
 * Every refusal is one line naming the operation and the field at fault.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, it} from 'node:test'

import {loadBenchConfig} from '../../src/bench/config.js'
import {createRandom} from '../../src/bench/workloads.js'
import {compileValue} from '../../src/bench/templates.js'
import {compileWorkloadFile, loadWorkloadFile, MAX_WORKLOAD_FILE_BYTES} from '../../src/bench/workload-file.js'
import {PoolToolError} from '../../src/errors.js'

const READ = {db: 'shop', collection: 'orders'}

/** `readNamespace` null: no --read-namespace given. */
function refused(data: unknown, message: RegExp, readNamespace: typeof READ | null = READ): void {
  assert.throws(
    () => compileWorkloadFile('w.yaml', data, readNamespace ?? undefined),
    (e: unknown) => e instanceof PoolToolError && e.exitCode === 2 && !e.message.includes('\n') && message.test(e.message),
  )
}

const op = (name: string, body: Record<string, unknown>) => ({operations: [{name, ...body}]})

describe('a workload file is refused before anything runs when', () => {
  it('it would write to the read namespace', () => {
    refused(op('bump', {namespace: 'read', update: {filter: {}, update: {$inc: {n: 1}}}}), /^workload file w\.yaml: operation 'bump' field namespace: update writes, and writes go only to pooltool's own collection, never to shop\.orders$/)
    refused(op('add', {namespace: 'read', insert: {document: {a: 1}}}), /operation 'add' field namespace: insert writes/)
  })

  it('a pipeline writes, at the top or nested', () => {
    refused(op('copy', {aggregate: {pipeline: [{$match: {}}, {$out: 'x'}]}}), /operation 'copy' field aggregate\.pipeline: \$out writes/)
    refused(op('fan', {namespace: 'read', aggregate: {pipeline: [{$facet: {a: [{$merge: {into: 'x'}}]}}]}}), /operation 'fan' field aggregate\.pipeline: \$merge writes/)
  })

  it('a command is not one that changes nothing', () => {
    refused(op('boom', {command: {dropDatabase: 1}}), /operation 'boom' field command: 'dropDatabase' is not a command bench sends \(allowed: ping,/)
    refused(op('boom', {command: {insert: 'orders', documents: [{}]}}), /'insert' is not a command bench sends/)
  })

  it('it reads the read namespace but none was given', () => {
    refused(op('recent', {namespace: 'read', find: {filter: {}}}), /operation 'recent' field namespace: reads the read namespace, but no --read-namespace db\.coll was given/, null)
  })

  it('its shape is wrong: the operation and field are named', () => {
    refused(op('a', {weight: -1, find: {}}), /operation 'a' field weight: /)
    refused(op('a', {find: {filter: {}, limt: 3}}), /operation 'a' field find: .*limt/)
    refused(op('a', {}), /operation 'a': give exactly one of find, aggregate, insert, update, command \(found none\)/)
    refused(op('a', {find: {}, insert: {document: {}}}), /found find, insert/)
    refused({operations: [{name: 'a', find: {}}, {name: 'a', find: {}}]}, /operation 'a' field name: the name 'a' is used twice/)
    refused({operations: [{find: {}}]}, /operation #1 field name: /)
    refused({operations: []}, /at least one operation/)
    refused({ops: []}, /^workload file w\.yaml: /)
  })

  it('a template does not parse: the path inside the operation is named', () => {
    refused(op('a', {find: {filter: {_id: '{{int 5}}'}}}), /operation 'a' field find\.filter\._id: '\{\{int 5\}\}' takes 2 arguments/)
    refused(op('a', {insert: {document: {tags: ['x', '{{uuid}}']}}}), /operation 'a' field insert\.document\.tags\.1: unknown template '\{\{uuid\}\}' \(known: int, double/)
  })
})

describe('generated values', () => {
  const ctx = {random: createRandom(7), seededId: () => 42}

  it('a whole-string template becomes a typed value, a template inside a string is filled in', () => {
    const make = compileValue({n: '{{int 3 5}}', id: '{{seededId}}', who: 'user-{{int 1 1}}-{{choice x}}', at: '{{now}}', fixed: {a: [1, 'b']}})
    for (let i = 0; i < 200; i++) {
      const v = make(ctx) as any
      assert.ok(Number.isInteger(v.n) && v.n >= 3 && v.n <= 5, `int in range: ${v.n}`)
      assert.equal(v.id, 42)
      assert.equal(v.who, 'user-1-x')
      assert.ok(v.at instanceof Date)
    }
    assert.equal((make(ctx) as any).fixed, (make(ctx) as any).fixed, 'parts without templates are built once')
    const ints = new Set(Array.from({length: 200}, () => (make(ctx) as any).n))
    assert.deepEqual([...ints].sort(), [3, 4, 5], 'both ends reached')
  })
})

describe('loading a file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-wf-'))

  it('reads YAML and JSON alike, and reports what it will run', async () => {
    const yamlFile = path.join(dir, 'w.yaml')
    writeFileSync(yamlFile, 'operations:\n  - name: lookup\n    weight: 3\n    find: {filter: {_id: "{{seededId}}"}}\n  - name: recent\n    namespace: read\n    aggregate: {pipeline: [{$limit: 2}]}\n')
    const file = await loadWorkloadFile(yamlFile, 'shop.orders')
    assert.deepEqual(file.summary.operations, [
      {name: 'lookup', kind: 'find', weight: 3, namespace: 'own'},
      {name: 'recent', kind: 'aggregate', weight: 1, namespace: 'read'},
    ])
    assert.deepEqual(file.readNamespace, READ)
    const jsonFile = path.join(dir, 'w.json')
    writeFileSync(jsonFile, JSON.stringify(op('p', {command: {ping: 1}})))
    assert.equal((await loadWorkloadFile(jsonFile, undefined)).operations[0]!.kind, 'command')
  })

  it('flags that contradict the file are usage errors', async () => {
    const base = {'doc-size': 16, 'seed-docs': 10, db: 'pooltool_bench', keep: false, model: 'pool', concurrency: '2'}
    const jsonFile = path.join(dir, 'p.json')
    writeFileSync(jsonFile, JSON.stringify(op('p', {command: {ping: 1}})))
    const config = await loadBenchConfig({...base, 'workload-file': jsonFile})
    assert.equal(config.workload, 'file')
    await assert.rejects(loadBenchConfig({...base, 'workload-file': jsonFile, workload: 'find'}), /--workload-file and --workload cannot be combined/)
    await assert.rejects(loadBenchConfig({...base, 'read-namespace': 'shop.orders'}), /--read-namespace needs --workload-file/)
    await assert.rejects(loadBenchConfig({...base, 'workload-file': path.join(dir, 'missing.yaml')}), /--workload-file .*missing\.yaml does not exist/)
    writeFileSync(path.join(dir, 'bad.yaml'), 'operations: [\n')
    await assert.rejects(loadBenchConfig({...base, 'workload-file': path.join(dir, 'bad.yaml')}), /workload file .*bad\.yaml does not parse/)
    await assert.rejects(loadBenchConfig({...base, 'workload-file': jsonFile, 'read-namespace': 'orders'}), /--read-namespace 'orders' is not db\.collection/)
  })
})

describe('hostile workload files', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pooltool-wf-hostile-'))
  const usage = (message: RegExp) => (e: unknown) => e instanceof PoolToolError && e.exitCode === 2 && !e.message.includes('\n') && message.test(e.message)

  it('a YAML tag is refused: an !!omap hid a $out from the check', async () => {
    const file = path.join(dir, 'omap.yaml')
    // yaml made the !!omap a Map, whose entries the $out walk (Object.entries) did not see; the driver sends a Map as a document.
    writeFileSync(file, ['operations:', '  - name: sneaky', '    namespace: read', '    aggregate:', '      pipeline:', '        - $facet: !!omap', '            - copy: [{$out: stolen}]', ''].join('\n'))
    await assert.rejects(loadWorkloadFile(file, 'shop.orders'), usage(/omap\.yaml: line 6: the YAML tag !!omap is not allowed/))
    for (const [tag, value] of [['!!set', '{a, b}'], ['!!binary', 'aGVsbG8='], ['!!timestamp', '2001-12-14'], ['!custom', 'x']]) {
      writeFileSync(file, `operations:\n  - name: t\n    find: {filter: {x: ${tag} ${value}}}\n`)
      await assert.rejects(loadWorkloadFile(file, undefined), usage(new RegExp(`the YAML tag ${tag} is not allowed`)), tag)
    }
  })

  it('$out and $merge are refused wherever they are nested, in maps and lists', () => {
    refused(op('deep', {aggregate: {pipeline: [{$facet: {a: [{$match: {}}, {$unionWith: {coll: 'x', pipeline: [[{$merge: {into: 'y'}}]]}}]}}]}}), /\$merge writes/)
    // Data a parser made of tags (a Map, a Set, a Date) is not looked into by the walk: refused as not plain data.
    refused(op('map', {aggregate: {pipeline: [{$facet: new Map([['copy', [{$out: 'stolen'}]]])}]}}), /operation 'map' field aggregate\.pipeline\.0\.\$facet: is not plain JSON data/)
  })

  it('a file over the cap is refused from its size, before it is read or parsed', async () => {
    const file = path.join(dir, 'big.json')
    // A valid file, only too big (58 MB of JSON took the YAML parser 91 s and 3.3 GB).
    writeFileSync(file, JSON.stringify(op('p', {find: {filter: {note: 'x'.repeat(MAX_WORKLOAD_FILE_BYTES)}}})))
    await assert.rejects(loadWorkloadFile(file, undefined), usage(/--workload-file .*big\.json is [\d,]+ bytes, over the 1 MiB a workload file may be/))
  })

  it('JSON is read as JSON (by extension or a leading { or [), YAML aliases are bounded', async () => {
    const json = path.join(dir, 'ops.txt')
    writeFileSync(json, `  ${JSON.stringify(op('p', {command: {ping: 1}}))}`)
    assert.equal((await loadWorkloadFile(json, undefined)).operations[0]!.kind, 'command')
    const badJson = path.join(dir, 'bad.json')
    writeFileSync(badJson, 'operations:\n  - name: p\n    command: {ping: 1}\n')
    await assert.rejects(loadWorkloadFile(badJson, undefined), usage(/bad\.json does not parse: not JSON/))
    // Billion laughs: each level names the previous one ten times.
    const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for (let level = 1; level <= 8; level++) laughs.push(`${'b'.repeat(level)}: &${'b'.repeat(level)} [${Array(10).fill(level === 1 ? '*a' : `*${'b'.repeat(level - 1)}`).join(',')}]`)
    const yaml = path.join(dir, 'laughs.yaml')
    writeFileSync(yaml, `${laughs.join('\n')}\noperations: [{name: p, command: {ping: 1}}]\n`)
    await assert.rejects(loadWorkloadFile(yaml, undefined), usage(/laughs\.yaml does not parse: .*alias/i))
  })

  it('a file nested deeper than a walk over it can go is refused, not a crash', async () => {
    const file = path.join(dir, 'deep.json')
    writeFileSync(file, `{"operations": [{"name": "p", "find": {"filter": {"a": ${'['.repeat(200_000)}${']'.repeat(200_000)}}}}]}`)
    await assert.rejects(loadWorkloadFile(file, undefined), usage(/deep\.json nests too deeply/))
  })
})

